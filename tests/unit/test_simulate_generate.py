"""The change generator: deterministic, every feature and edge value present, every rule of
history.py kept, absent features never generated, a second batch that continues the first."""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import math
import time
from collections import Counter
from decimal import Decimal

import pytest

from cdc_lakehouse.tools.simulate.generate import (
    ALL_FEATURES,
    SimulationConfig,
    combine,
    features_used,
    generate,
    keyed_tables,
)
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    RowChange,
    Truncate,
    Value,
)
from cdc_lakehouse.tools.simulate.oracle import current_state


@pytest.fixture(scope="module")
def history() -> History:
    return generate(SimulationConfig(seed=7, changes=10_000))


def _value_ok(column: Column, value: Value) -> bool:
    if value is None:
        return column.nullable
    match column.type:
        case "int":
            return type(value) is int and -(2**31) <= value < 2**31
        case "bigint":
            return type(value) is int and -(2**63) <= value < 2**63
        case "decimal":
            assert isinstance(value, Decimal) and column.precision and column.scale is not None
            _sign, digits, exponent = value.as_tuple()
            return exponent == -column.scale and len(digits) <= column.precision
        case "double":
            return type(value) is float and math.isfinite(value)
        case "boolean":
            return type(value) is bool
        case "string":
            return type(value) is str and (column.length is None or len(value) <= column.length)
        case "binary":
            return type(value) is bytes
        case "date":
            return type(value) is dt.date
        case "timestamp":
            return (
                type(value) is dt.datetime
                and value.tzinfo is None
                and value.microsecond % 1000 == 0
            )
    return False


def check_rules(history: History, *, first_sequence: int = 1) -> None:
    """Every generator rule of history.py's docstring, plus the generator's own promises."""
    items = history.items
    assert [item.sequence for item in items] == list(
        range(first_sequence, first_sequence + len(items))
    )
    times = [item.commit_time_ms for item in items]
    assert all(later - earlier >= 1 for earlier, later in itertools.pairwise(times))

    changed_tables: set[str] = set()
    used_keys: dict[str, set[tuple[Value, ...]]] = {t.name: set() for t in history.tables}
    for item in items:
        if isinstance(item, Heartbeat):
            continue
        assert item.events, "a transaction holds at least one event"
        if any(isinstance(e, Truncate) for e in item.events):
            assert len(item.events) == 1, "a truncate is alone in its transaction"
            changed_tables.add(item.events[0].table.name)
            continue
        touched: set[tuple[str, tuple[Value, ...]]] = set()
        for event in item.events:
            assert isinstance(event, RowChange)
            table = event.table
            assert table in history.tables
            assert (event.op == "snapshot") == item.is_snapshot
            if event.op == "snapshot":
                assert table.name not in changed_tables, "snapshot rows come first"
            else:
                changed_tables.add(table.name)
            assert (event.before is None) == (event.op in {"insert", "snapshot"})
            assert (event.after is None) == (event.op == "delete")
            for image in (event.before, event.after):
                if image is not None:
                    assert tuple(image) == table.column_names, "images are whole rows"
                    for column in table.columns:
                        assert _value_ok(column, image[column.name]), (column, image[column.name])
            keys = {table.key_of(i) for i in (event.before, event.after) if i is not None}
            for key in keys:
                assert (table.name, key) not in touched, "a row changes once per transaction"
                touched.add((table.name, key))
            if event.moves_key and table.key_columns:
                assert event.after is not None
                assert table.key_of(event.after) not in used_keys[table.name], "fresh new key"
            if event.after is not None:
                used_keys[table.name].add(table.key_of(event.after))
    # consistency (insert of a live identity, update of a missing row, duplicate keyless rows
    # all raise); keyless rows stay distinct
    state = current_state(history)
    for table in history.tables:
        rows = state[table.name]
        assert len({table.key_of(row) for row in rows}) == len(rows)


def test_same_seed_same_history_other_seed_other_history():
    config = SimulationConfig(seed=11, changes=2_000)
    assert generate(config) == generate(config)
    assert generate(SimulationConfig(seed=12, changes=2_000)) != generate(config)


def test_exactly_the_requested_changes_fast(history):
    assert len(history.row_changes) == 10_000
    started = time.process_time()
    generate(SimulationConfig(seed=8, changes=10_000))
    assert time.process_time() - started < 3.0  # about 0.3 s; generous for busy machines


def test_every_rule_of_history_holds(history):
    check_rules(history)


def test_default_tables_and_every_logical_type(history):
    by_name = {table.name: table for table in history.tables}
    assert list(by_name) == ["customers", "orders", "audit_log"]
    assert by_name["customers"].key_columns == ("customer_id",)
    assert by_name["orders"].key_columns == ("order_id", "line_no")
    assert by_name["audit_log"].key_columns == ()
    assert {t.database for t in history.tables} == {"shop"}
    assert {t.schema for t in history.tables} == {None}
    types = {(c.type, c.precision, c.scale) for t in history.tables for c in t.columns}
    assert {"int", "bigint", "double", "boolean", "string", "binary", "date", "timestamp"} <= {
        t[0] for t in types
    }
    assert ("decimal", 12, 2) in types and ("decimal", 38, 10) in types


def test_every_feature_appears_in_a_10k_history(history):
    assert features_used(history) == ALL_FEATURES


def test_every_kind_of_change_and_edge_value_appears(history):
    changes = history.row_changes
    updates = [c for c in changes if c.op == "update"]
    assert any(c.op == "insert" for c in changes) and any(c.op == "delete" for c in changes)
    non_key = {t.name: len(t.columns) - len(t.key_columns) for t in history.tables}
    assert any(
        set(c.changed_columns) >= {col.name for col in c.table.columns} - set(c.table.key_columns)
        for c in updates
        if c.table.key_columns
    ), "full updates"
    assert any(
        c.table.key_columns and len(c.changed_columns) in (1, 2) and non_key[c.table.name] > 2
        for c in updates
    ), "updates of one or two columns"
    assert any(
        c.after is not None and c.before is not None and c.before[n] is not None
        for c in updates
        for n in c.changed_columns
        if c.after[n] is None
    ), "updates that set NULL"
    deleted: set[tuple[str, tuple[Value, ...]]] = set()
    reinserted = 0
    for change in changes:
        if change.op == "delete":
            assert change.before is not None
            deleted.add((change.table.name, change.table.key_of(change.before)))
        elif change.op == "insert":
            assert change.after is not None
            reinserted += (change.table.name, change.table.key_of(change.after)) in deleted
    assert reinserted > 10, "re-inserts of deleted keys"
    assert any(len({e.table.name for e in t.events}) >= 2 for t in history.transactions), (
        "multi-table transactions"
    )

    values = [
        (column, image[column.name])
        for change in changes
        for image in (change.before, change.after)
        if image is not None
        for column in change.table.columns
    ]
    strings = {v for c, v in values if c.type == "string"}
    binaries = {v for c, v in values if c.type == "binary"}
    assert "" in strings
    assert any(any(ord(ch) > 0xFFFF for ch in s) for s in strings if s), "non-BMP"
    assert any(len(s) >= 5_000 for s in strings if s), "very long strings"
    assert any(all(ch in s for ch in "'\"\\\n") for s in strings if s), "quotes, \\, newline"
    assert b"" in binaries
    assert any(_not_utf8(b) for b in binaries if b is not None)
    dates = [v for c, v in values if c.type == "date" and v is not None]
    stamps = [v for c, v in values if c.type == "timestamp" and v is not None]
    assert min(dates) < dt.date(1970, 1, 1) and max(dates).year == 9999
    assert min(stamps) < dt.datetime(1970, 1, 1) and max(stamps).year == 9999
    assert any(s.microsecond for s in stamps), "milliseconds"
    big = [v for c, v in values if c.type == "decimal" and c.precision == 38 and v is not None]
    assert any(len(v.as_tuple().digits) == 38 for v in big), "decimal(38,10) at full precision"
    ints = {v for c, v in values if c.type == "int"}
    bigints = {v for c, v in values if c.type == "bigint"}
    assert {-(2**31), 2**31 - 1} <= ints and {-(2**63), 2**63 - 1} <= bigints
    assert {True, False} <= {v for c, v in values if c.type == "boolean"}
    assert any(v is None for c, v in values if c.type == "double")


def _not_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@pytest.mark.parametrize("feature", sorted(ALL_FEATURES - {"multi_row_message"}))
def test_an_absent_feature_never_appears(feature):
    history = generate(SimulationConfig(seed=3, changes=3_000, features=ALL_FEATURES - {feature}))
    assert feature not in features_used(history)
    check_rules(history)


def test_no_features_gives_plain_changes_that_still_keep_every_rule():
    history = generate(SimulationConfig(seed=3, changes=3_000, features=frozenset()))
    # runs of one table and op in a transaction happen by chance; nothing else
    assert features_used(history) <= {"multi_row_message"}
    assert [t.name for t in history.tables] == ["customers", "orders"]
    check_rules(history)


def test_without_partial_update_every_update_changes_every_non_key_column():
    features = ALL_FEATURES - {"partial_update"}
    history = generate(SimulationConfig(seed=5, changes=2_000, features=features))
    for change in history.row_changes:
        if change.op == "update" and change.table.key_columns:
            non_key = [n for n in change.table.column_names if n not in change.table.key_columns]
            assert set(change.changed_columns) >= set(non_key)


def test_unknown_feature_is_refused():
    with pytest.raises(ValueError, match="unknown feature"):
        SimulationConfig(features=frozenset({"snapshots"}))


def test_second_batch_continues_the_same_tables_and_rows(history):
    config = SimulationConfig(seed=7, changes=3_000)
    second = generate(config, after=history)
    assert second == generate(config, after=history)
    assert second.tables == history.tables
    assert len(second.row_changes) == 3_000
    assert second.items[0].sequence == history.items[-1].sequence + 1
    assert second.items[0].commit_time_ms > history.items[-1].commit_time_ms
    assert "snapshot" not in features_used(second)
    both = combine(history, second)
    check_rules(both)  # also: every update / delete of batch 2 hits a live row

    live_after_first = {
        (t.name, t.key_of(row)) for t in history.tables for row in current_state(history)[t.name]
    }
    touched_old = [
        c
        for c in second.row_changes
        if c.before is not None and (c.table.name, c.table.key_of(c.before)) in live_after_first
    ]
    assert len(touched_old) > 100, "batch 2 updates and deletes rows of batch 1"


DEFAULT_DIGEST = "4f7653a3b8e8c02cdf83c1832b745b3ad2cda6f890b28d8b491125098af03796"
"""sha256 of ``repr(generate(SimulationConfig(seed=7, changes=500)))``, taken before
``SimulationConfig.tables`` existed: the default tables' histories must not change."""


def test_the_default_tables_history_is_what_it_was_before_many_tables_came() -> None:
    history = generate(SimulationConfig(seed=7, changes=500))
    assert hashlib.sha256(repr(history).encode()).hexdigest() == DEFAULT_DIGEST


def test_many_tables_spread_the_changes_evenly_over_keyed_tables() -> None:
    history = generate(SimulationConfig(seed=5, changes=3_000, tables=12))
    assert [t.name for t in history.tables] == [f"t{n:04d}" for n in range(1, 13)]
    assert {t.database for t in history.tables} == {"shop"}
    shapes = [t.key_columns for t in history.tables]
    assert shapes == [("customer_id",), ("order_id", "line_no")] * 6
    per_table = Counter(change.table.name for change in history.row_changes)
    assert set(per_table) == {t.name for t in history.tables}, "every table gets changes"
    assert min(per_table.values()) >= 200 and max(per_table.values()) <= 300  # 250 each
    check_rules(history)
    # orders-shaped tables follow orders' rules: ids above 32 bits, several lines per order
    lines = [
        change.after
        for change in history.row_changes
        if change.after is not None and change.table.name == "t0002"
    ]
    assert min(row["order_id"] for row in lines) > 2**32
    assert any(row["line_no"] > 1 for row in lines)


def test_many_tables_oracle_holds_live_rows_of_every_table() -> None:
    config = SimulationConfig(seed=5, changes=2_000, tables=7, features=frozenset())
    history = generate(config)
    second = generate(config, after=history)
    assert second.tables == history.tables
    state = current_state(combine(history, second))
    assert sorted(state) == [f"t{n:04d}" for n in range(1, 8)]
    assert all(state[name] for name in state), "every table has live rows"


def test_many_tables_are_at_least_one() -> None:
    with pytest.raises(ValueError, match="tables must be None"):
        SimulationConfig(tables=0)
    assert [t.name for t in keyed_tables(10_000)[-1:]] == ["t10000"]
