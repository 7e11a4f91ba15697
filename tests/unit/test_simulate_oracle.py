"""The oracle, rule by rule, with a handful of events each: current state and SCD2 versions."""

from __future__ import annotations

import itertools

import pytest

from cdc_lakehouse.tools.simulate.generate import SimulationConfig, generate
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Event,
    Heartbeat,
    History,
    Item,
    Row,
    RowChange,
    TableSpec,
    Transaction,
    Truncate,
)
from cdc_lakehouse.tools.simulate.oracle import OracleError, RowVersion, current_state, row_versions

T = TableSpec(
    database="db",
    schema=None,
    name="t",
    columns=(Column("id", "int", nullable=False), Column("v", "string"), Column("n", "int")),
    key_columns=("id",),
)
K = TableSpec(
    database="db",
    schema=None,
    name="k",
    columns=(Column("a", "int"), Column("b", "string")),
    key_columns=(),
)


def row(id_: int, v: str | None = "x", n: int | None = 0) -> Row:
    return {"id": id_, "v": v, "n": n}


def ins(r: Row, table: TableSpec = T) -> RowChange:
    return RowChange(table, "insert", None, r)


def snap(r: Row) -> RowChange:
    return RowChange(T, "snapshot", None, r)


def upd(before: Row, after: Row, table: TableSpec = T) -> RowChange:
    return RowChange(table, "update", before, after)


def dele(r: Row, table: TableSpec = T) -> RowChange:
    return RowChange(table, "delete", r, None)


def hist(*transactions: list[Event] | str) -> History:
    """One transaction per list (commit times 1000, 2000, ...); "hb" is a heartbeat."""
    items: list[Item] = []
    for i, events in enumerate(transactions, start=1):
        if events == "hb":
            items.append(Heartbeat(sequence=i, commit_time_ms=1000 * i))
        else:
            snapshot = all(isinstance(e, RowChange) and e.op == "snapshot" for e in events)
            items.append(Transaction(str(i), i, 1000 * i, tuple(events), is_snapshot=snapshot))
    return History(tables=(T, K), items=tuple(items))


def test_insert_makes_a_row_live_and_every_table_is_listed():
    assert current_state(hist([ins(row(1))])) == {"t": [row(1)], "k": []}


def test_full_update_replaces_the_row():
    state = current_state(hist([ins(row(1))], [upd(row(1), row(1, "y", 5))]))
    assert state["t"] == [row(1, "y", 5)]


def test_update_setting_null_gives_null_not_the_old_value():
    state = current_state(hist([ins(row(1))], [upd(row(1), row(1, None))]))
    assert state["t"] == [row(1, None)]


def test_primary_key_update_moves_the_row():
    state = current_state(hist([ins(row(1)), ins(row(2))], [upd(row(1), row(7, "moved"))]))
    assert sorted(r["id"] for r in state["t"]) == [2, 7]
    assert row(7, "moved") in state["t"]


def test_delete_removes_and_a_later_reinsert_brings_the_key_back():
    deleted = hist([ins(row(1))], [dele(row(1))])
    assert current_state(deleted)["t"] == []
    back = hist([ins(row(1))], [dele(row(1))], "hb", [ins(row(1, "again"))])
    assert current_state(back)["t"] == [row(1, "again")]


def test_truncate_empties_only_its_table_and_rows_inserted_later_stay():
    h = hist([ins(row(1)), ins(row(2)), ins({"a": 1, "b": "k"}, K)], [Truncate(T)], [ins(row(3))])
    assert current_state(h) == {"t": [row(3)], "k": [{"a": 1, "b": "k"}]}


def test_snapshot_rows_then_changes():
    h = hist([snap(row(1)), snap(row(2))], [upd(row(2), row(2, "z"))], [dele(row(1))])
    assert current_state(h)["t"] == [row(2, "z")]


def test_keyless_rows_are_identified_by_every_column():
    a, b = {"a": 1, "b": "x"}, {"a": 1, "b": "y"}
    h = hist([ins(a, K), ins(b, K)], [upd(a, {"a": 2, "b": "x"}, K)], [dele(b, K)])
    assert current_state(h)["k"] == [{"a": 2, "b": "x"}]


def test_a_duplicate_keyless_row_or_insert_of_a_live_key_is_an_inconsistent_history():
    with pytest.raises(OracleError, match="live"):
        current_state(hist([ins({"a": 1, "b": "x"}, K)], [ins({"a": 1, "b": "x"}, K)]))
    with pytest.raises(OracleError, match="live"):
        current_state(hist([ins(row(1))], [ins(row(1, "again"))]))


def test_changes_of_missing_rows_or_wrong_before_images_are_refused():
    with pytest.raises(OracleError, match="not live"):
        current_state(hist([dele(row(1))]))
    with pytest.raises(OracleError, match="before image"):
        current_state(hist([ins(row(1))], [upd(row(1, "other"), row(1, "y"))]))
    with pytest.raises(OracleError, match="onto"):
        current_state(hist([ins(row(1)), ins(row(2))], [upd(row(1), row(2))]))


def _versions(h: History, key: tuple[object, ...]) -> list[tuple[object, ...]]:
    return [
        (v.op, v.valid_from_ms, v.valid_to_ms, v.is_current, v.is_deleted, v.values.get("v"))
        for v in row_versions(h)
        if v.table == "t" and v.key == key
    ]


def test_versions_of_one_row_chain_their_valid_times():
    h = hist(
        [snap(row(1))],
        [upd(row(1), row(1, "b"))],
        "hb",
        [dele(row(1, "b"))],
        [ins(row(1, "c"))],
    )
    assert _versions(h, (1,)) == [
        ("snapshot", 1000, 2000, False, False, "x"),
        ("update", 2000, 4000, False, False, "b"),
        ("delete", 4000, 5000, False, True, "b"),  # the deleted row's last values
        ("insert", 5000, None, True, False, "c"),
    ]


def test_primary_key_update_closes_the_old_identity_with_a_deleted_version():
    h = hist([ins(row(1))], [upd(row(1), row(2, "moved"))])
    assert _versions(h, (1,)) == [
        ("insert", 1000, 2000, False, False, "x"),
        ("update", 2000, None, True, True, "x"),
    ]
    assert _versions(h, (2,)) == [("update", 2000, None, True, False, "moved")]


def test_truncate_gives_every_live_row_a_deleted_version():
    h = hist([ins(row(1)), ins(row(2))], [dele(row(2))], [Truncate(T)])
    assert _versions(h, (1,))[-1] == ("truncate", 3000, None, True, True, "x")
    assert _versions(h, (2,))[-1] == ("delete", 2000, None, True, True, "x")  # not truncated again


def test_versions_carry_table_key_sequence_and_whole_rows():
    h = hist([ins({"a": 1, "b": "x"}, K)], [upd({"a": 1, "b": "x"}, {"a": 1, "b": "y"}, K)])
    assert row_versions(h) == [
        RowVersion("k", (1, "x"), {"a": 1, "b": "x"}, "insert", 1000, 2000, False, False, 1),
        RowVersion("k", (1, "x"), {"a": 1, "b": "x"}, "update", 2000, None, True, True, 2),
        RowVersion("k", (1, "y"), {"a": 1, "b": "y"}, "update", 2000, None, True, False, 2),
    ]


def test_current_versions_equal_current_state_on_a_generated_history():
    h = generate(SimulationConfig(seed=2, changes=3_000))
    versions = row_versions(h)
    state = current_state(h)
    for table in h.tables:
        live = [
            v.values
            for v in versions
            if v.table == table.name and v.is_current and not v.is_deleted
        ]
        assert sorted(map(repr, live)) == sorted(map(repr, state[table.name]))
    assert any(v.is_deleted for v in versions)
    for earlier, later in itertools.pairwise(versions):
        if (earlier.table, earlier.key) == (later.table, later.key):
            assert earlier.valid_to_ms == later.valid_from_ms
            assert earlier.valid_from_ms < later.valid_from_ms
            assert not earlier.is_current
