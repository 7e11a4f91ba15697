"""Schema changes (DDL) in simulated streams, no Spark: the ``SchemaChange`` event and
``History.table_versions``, the oracle's lenient rule on a tiny hand-built history, the
``generate_schema_evolution`` history (consistent, deterministic, every DDL kind in order),
and each supporting encoder: DDL messages with the expected statement / MD version, rows after
a DDL declaring the new columns, and a round trip through the project's Python decoders (DTS
Canal JSON and DataWorks / DataHub Blob JSON, decoded in SQL, are checked as sent)."""

from __future__ import annotations

import functools
import itertools
import json
from typing import Any

import pytest

from cdc_lakehouse.decode.json_text import loads, value_text
from cdc_lakehouse.formats.datahub_tuple import encoder_datahub_tuple as datahub_tuple
from cdc_lakehouse.formats.dataworks import encoder_datahub_blob as datahub_blob
from cdc_lakehouse.formats.dataworks import encoder_dataworks_json as dataworks_json
from cdc_lakehouse.formats.dts_avro import decoder as avro_decoder
from cdc_lakehouse.formats.dts_avro import encoder_dts_avro as dts_avro
from cdc_lakehouse.formats.dts_canal import encoder_dts_canal_json as dts_canal_json
from cdc_lakehouse.formats.dts_shareplex import decoder as shareplex_decoder
from cdc_lakehouse.formats.dts_shareplex import encoder_dts_shareplex_json as dts_shareplex_json
from cdc_lakehouse.formats.lindorm import encoder_lindorm_debezium as lindorm_debezium
from cdc_lakehouse.formats.lindorm.decoder import decode_one as decode_lindorm
from cdc_lakehouse.formats.qlik import decoder as qlik
from cdc_lakehouse.formats.qlik import encoder_qlik_avro as qlik_avro
from cdc_lakehouse.formats.qlik import encoder_qlik_json as qlik_json
from cdc_lakehouse.tools.simulate.encoders import ENCODERS, _ddl
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, features_used, generate
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Event,
    History,
    Item,
    Row,
    RowChange,
    SchemaChange,
    TableSpec,
    Transaction,
    Truncate,
)
from cdc_lakehouse.tools.simulate.oracle import OracleError, current_state, row_versions
from cdc_lakehouse.tools.simulate.schema_evolution import (
    NO_TRUNCATE_FORMATS,
    PRODUCTS,
    SCHEMA_CHANGE_FORMATS,
    TOPIC_PREFIX,
    generate_schema_evolution,
    history_for_format,
)
from tests.dbt_models.formats.dataworks.test_encoder import read_envelope

# --------------------------------------------------------------------------- tiny history

V1 = TableSpec(
    "db", None, "t", (Column("id", "int", nullable=False), Column("a", "string")), ("id",)
)
V2 = TableSpec("db", None, "t", (*V1.columns, Column("b", "int")), ("id",))  # ADD b
V3 = TableSpec(
    "db", None, "t", (V1.columns[0], Column("c", "string"), Column("b", "int")), ("id",)
)  # RENAME a -> c
V4 = TableSpec("db", None, "t", (V1.columns[0], Column("c", "string")), ("id",))  # DROP b

ADD = SchemaChange(V2, V1, "add_column", "b")
RENAME = SchemaChange(V3, V2, "rename_column", "a", new_name="c")
DROP = SchemaChange(V4, V3, "drop_column", "b")


def tiny(*transactions: list[Event]) -> History:
    items: list[Item] = [
        Transaction(str(i), i, 1000 * i, tuple(events))
        for i, events in enumerate(transactions, start=1)
    ]
    return History(tables=(V1,), items=tuple(items))


def tiny_history() -> History:
    return tiny(
        [
            RowChange(V1, "insert", None, {"id": 1, "a": "x"}),
            RowChange(V1, "insert", None, {"id": 2, "a": "y"}),
            RowChange(V1, "insert", None, {"id": 3, "a": "z"}),
        ],
        [ADD],
        # before: the row as last written (no b); after: a whole V2 row
        [RowChange(V2, "update", {"id": 1, "a": "x"}, {"id": 1, "a": "x2", "b": 7})],
        [RENAME],
        [
            RowChange(V3, "update", {"id": 1, "a": "x2", "b": 7}, {"id": 1, "c": "x3", "b": 8}),
            RowChange(V3, "insert", None, {"id": 4, "c": "w", "b": None}),
        ],
        [DROP],
        [RowChange(V4, "delete", {"id": 3, "a": "z"}, None)],
    )


def test_oracle_keeps_each_row_as_last_written_across_schema_changes():
    state = current_state(tiny_history())
    assert state == {
        "t": [
            {"id": 2, "a": "y"},  # untouched since v1: old name, no b
            {"id": 1, "c": "x3", "b": 8},  # last written with v3 (b dropped later: kept)
            {"id": 4, "c": "w", "b": None},
        ]
    }


def test_schema_changes_open_no_row_version():
    versions = row_versions(tiny_history())
    by_key: dict[tuple[Any, ...], list[tuple[str, int, bool]]] = {}
    for v in versions:
        by_key.setdefault(v.key, []).append((v.op, v.valid_from_ms, v.is_deleted))
    assert by_key == {
        (1,): [("insert", 1000, False), ("update", 3000, False), ("update", 5000, False)],
        (2,): [("insert", 1000, False)],
        (3,): [("insert", 1000, False), ("delete", 7000, True)],
        (4,): [("insert", 5000, False)],
    }
    assert next(v for v in versions if v.key == (1,) and v.is_current).values == {
        "id": 1,
        "c": "x3",
        "b": 8,
    }


def test_oracle_checks_before_against_the_row_as_last_written():
    # row 2 was written before ADD b: a before image with b is not the live row
    bad = tiny(
        [RowChange(V1, "insert", None, {"id": 2, "a": "y"})],
        [ADD],
        [RowChange(V2, "update", {"id": 2, "a": "y", "b": None}, {"id": 2, "a": "q", "b": 1})],
    )
    with pytest.raises(OracleError, match="before image is not the live row"):
        current_state(bad)
    with pytest.raises(OracleError):
        row_versions(bad)


def test_truncate_after_a_schema_change_empties_the_table():
    history = tiny(
        [RowChange(V1, "insert", None, {"id": 1, "a": "x"})],
        [ADD],
        [Truncate(V2)],
        [RowChange(V2, "insert", None, {"id": 1, "a": "n", "b": 2})],
    )
    assert current_state(history) == {"t": [{"id": 1, "a": "n", "b": 2}]}
    ops = [(v.op, v.is_deleted) for v in row_versions(history)]
    assert ops == [("insert", False), ("truncate", True), ("insert", False)]


def test_changed_columns_counts_a_column_missing_from_before_as_changed():
    change = RowChange(V3, "update", {"id": 1, "a": "x", "b": None}, {"id": 1, "c": "x", "b": None})
    assert change.changed_columns == ("c",)  # b: NULL -> NULL, unchanged; c: absent
    added = RowChange(V2, "update", {"id": 1, "a": "x"}, {"id": 1, "a": "x", "b": None})
    assert added.changed_columns == ("b",)  # absent counts as changed even when after is NULL


def test_changed_columns_of_generated_histories_is_the_strict_comparison():
    history = generate(SimulationConfig(seed=5, changes=800))
    for change in history.row_changes:
        if change.before is None or change.after is None:
            continue
        assert set(change.before) == set(change.after) == set(change.table.column_names)
        strict = tuple(
            n
            for n in change.table.column_names
            if type(change.before[n]) is not type(change.after[n])
            or change.before[n] != change.after[n]
        )
        assert change.changed_columns == strict


def test_table_versions_lists_every_spec_in_order():
    history = tiny_history()
    assert history.tables == (V1,)  # as first declared
    assert history.table_versions("t") == (V1, V2, V3, V4)
    with pytest.raises(KeyError):
        history.table_versions("nope")


# --------------------------------------------------------------------------- the DDL history


@functools.cache
def evolution(seed: int = 0, truncate: bool = True) -> History:
    return generate_schema_evolution(seed, truncate=truncate)


def schema_changes(history: History) -> list[SchemaChange]:
    return [e for t in history.transactions for e in t.events if isinstance(e, SchemaChange)]


@pytest.mark.parametrize("truncate", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_history_is_consistent_and_ordered(seed: int, truncate: bool):
    history = evolution(seed, truncate)
    current_state(history)  # raises OracleError when inconsistent
    row_versions(history)
    items = history.items
    assert [i.sequence for i in items] == list(range(1, len(items) + 1))
    assert all(isinstance(i, Transaction) and i.transaction_id == str(i.sequence) for i in items)
    times = [i.commit_time_ms for i in items]
    assert all(0 < b - a <= 1500 for a, b in itertools.pairwise(times))
    kinds = [(c.kind, c.column, c.new_name) for c in schema_changes(history)]
    assert kinds == [
        ("add_column", "stock", None),
        ("rename_column", "name", "title"),
        ("widen_column", "stock", None),
        ("drop_column", "note", None),
    ]
    truncates = [e for t in history.transactions for e in t.events if isinstance(e, Truncate)]
    assert len(truncates) == (1 if truncate else 0)
    for transaction in history.transactions:
        if any(not isinstance(e, RowChange) for e in transaction.events):
            assert len(transaction.events) == 1, "a DDL / truncate is alone in its transaction"
        changes = [e for e in transaction.events if isinstance(e, RowChange)]
        keys = [c.table.key_of(c.before or c.after or {}) for c in changes]
        assert len(keys) == len(set(keys)), "a row changes at most once per transaction"


def test_row_changes_carry_the_current_spec_and_whole_after_rows():
    history = evolution()
    versions = history.table_versions("products")
    assert history.tables == (PRODUCTS,)
    assert [v.column_names for v in versions] == [
        ("id", "name", "price", "note", "created_at"),
        ("id", "name", "price", "stock", "note", "created_at"),
        ("id", "title", "price", "stock", "note", "created_at"),
        ("id", "title", "price", "stock", "note", "created_at"),
        ("id", "title", "price", "stock", "created_at"),
    ]
    assert [v.column("stock").type for v in versions[1:]] == ["int", "int", "bigint", "bigint"]
    spec = PRODUCTS
    for transaction in history.transactions:
        for event in transaction.events:
            if isinstance(event, SchemaChange):
                assert event.previous == spec
                assert event.table.key_columns == ("id",)
                spec = event.table
                continue
            assert event.table == spec
            if isinstance(event, RowChange):
                if event.after is not None:
                    assert tuple(event.after) == spec.column_names
                if event.op == "update":
                    non_key = set(spec.column_names) - {"id"}
                    assert set(event.changed_columns) == non_key, "whole-row updates"


def test_updates_cross_each_schema_change():
    history = evolution(0, truncate=False)
    updates = [c for c in history.row_changes if c.op == "update"]
    assert any("stock" in c.table.column_names and "stock" not in c.before for c in updates)
    assert any("title" in c.after and "name" in c.before for c in updates)
    assert any("note" not in c.after and "note" in c.before for c in updates)
    widened = [
        c.after["stock"]
        for c in history.row_changes
        if c.after is not None
        and "stock" in c.table.column_names
        and c.table.column("stock").type == "bigint"
        and c.after["stock"] is not None
    ]
    assert any(abs(v) >= 2**31 for v in widened)  # type: ignore[arg-type]
    before_widen = [
        c.after["stock"]
        for c in history.row_changes
        if c.after is not None
        and "stock" in c.table.column_names
        and c.table.column("stock").type == "int"
        and c.after["stock"] is not None
    ]
    assert before_widen and all(-(2**31) <= v < 2**31 for v in before_widen)  # type: ignore[operator]
    shapes = {tuple(sorted(r)) for r in current_state(history)["products"]}
    assert ("created_at", "id", "name", "note", "price") in shapes  # untouched since v1
    assert ("created_at", "id", "price", "stock", "title") in shapes  # written with v5


def test_truncate_comes_after_the_ddl_and_final_updates_touch_half():
    history = evolution()
    kinds = [type(t.events[0]).__name__ for t in history.transactions]
    assert kinds.index("Truncate") > max(i for i, k in enumerate(kinds) if k == "SchemaChange")
    live = current_state(history)["products"]
    final = history.table_versions("products")[-1].column_names
    assert live and all(tuple(r) == final for r in live)  # only rows inserted after it
    last = history.transactions[kinds.index("Truncate") :]
    updated = {
        c.table.key_of(c.before)
        for t in last
        for c in t.events
        if isinstance(c, RowChange) and c.op == "update" and c.before is not None
    }
    assert len(live) // 2 <= len(updated) <= len(live) // 2 + 1


def test_history_is_deterministic():
    assert generate_schema_evolution(4) == generate_schema_evolution(4)
    assert generate_schema_evolution(4) != generate_schema_evolution(5)
    assert generate_schema_evolution(4, 12, truncate=False) == generate_schema_evolution(
        4, 12, truncate=False
    )
    small = generate_schema_evolution(1, 1)
    current_state(small)
    assert len(schema_changes(small)) == 4
    with pytest.raises(ValueError):
        generate_schema_evolution(0, 0)


def test_formats_and_history_for_format():
    assert set(ENCODERS) >= SCHEMA_CHANGE_FORMATS
    assert "datahub_tuple" not in SCHEMA_CHANGE_FORMATS
    assert NO_TRUNCATE_FORMATS <= SCHEMA_CHANGE_FORMATS
    assert history_for_format("qlik_json") == evolution(0, False)
    assert history_for_format("dataworks_json") == evolution(0, True)
    with pytest.raises(ValueError):
        history_for_format("datahub_tuple")
    with pytest.raises(ValueError):
        history_for_format("qlik_avro", truncate=True)
    for name in SCHEMA_CHANGE_FORMATS:
        assert ENCODERS[name].topics(history_for_format(name), TOPIC_PREFIX) == [f"simddl.{name}"]


def test_datahub_tuple_refuses_schema_changes():
    with pytest.raises(ValueError, match="fixed"):
        datahub_tuple.encode(evolution(), "simddl")


# --------------------------------------------------------------------------- statements

STATEMENTS = {
    "add_column": "ALTER TABLE `ddl_shop`.`products` ADD COLUMN `stock` int(11) DEFAULT NULL "
    "COMMENT 'units in stock' AFTER `price`",
    "widen_column": "ALTER TABLE `ddl_shop`.`products` MODIFY COLUMN `stock` bigint(20) "
    "DEFAULT NULL",
    "drop_column": "ALTER TABLE `ddl_shop`.`products` DROP COLUMN `note`",
}
RENAME_CHANGE = (
    "ALTER TABLE `ddl_shop`.`products` CHANGE COLUMN `name` `title` varchar(100) DEFAULT NULL"
)
RENAME_TO = "ALTER TABLE `ddl_shop`.`products` RENAME COLUMN `name` TO `title`"


def expected_statement(change: SchemaChange, style: str) -> str:
    if change.kind == "rename_column":
        return RENAME_CHANGE if style == "change" else RENAME_TO
    return STATEMENTS[change.kind]


def test_statement_texts():
    changes = schema_changes(evolution())
    assert [_ddl.statement(c, rename="change") for c in changes] == [
        STATEMENTS["add_column"],
        RENAME_CHANGE,
        STATEMENTS["widen_column"],
        STATEMENTS["drop_column"],
    ]
    assert _ddl.statement(changes[1], rename="rename") == RENAME_TO
    first = SchemaChange(V2, V1, "add_column", "b")  # last column: no position clause
    assert _ddl.statement(first, rename="change") == (
        "ALTER TABLE `db`.`t` ADD COLUMN `b` int(11) DEFAULT NULL"
    )


# --------------------------------------------------------------------------- encoders


def rendered(module: Any, spec: TableSpec, row: Row | None, names: Any = None) -> Any:
    """Each column of ``spec`` (or ``names``) as ``module.value_text`` renders it (a column the
    row lacks is NULL)."""
    if row is None:
        return None
    names = spec.column_names if names is None else names
    return {n: module.value_text(spec.column(n), row.get(n)) for n in names}


def pairs(value: Any) -> dict[str, Any] | None:
    return None if value is None else dict(value)


def events(history: History) -> list[tuple[Transaction, Event]]:
    return [(t, e) for t in history.transactions for e in t.events]


@pytest.mark.parametrize("module", [dataworks_json, datahub_blob], ids=lambda m: m.FORMAT)
def test_dataworks_envelopes_round_trip(module: Any):
    history = evolution()
    messages = module.encode(history, TOPIC_PREFIX)
    assert {m.topic for m in messages} == {f"simddl.{module.FORMAT}"}
    decoded = [read_envelope(m.value) for m in messages]  # as sent; asserts each one's shape
    expected: list[tuple[Any, ...]] = []
    for _t, event in events(history):
        if isinstance(event, SchemaChange):
            expected.append(("ALTER", expected_statement(event, "change"), None, None, None))
        elif isinstance(event, Truncate):
            expected.append(("TRUNCATE", "TRUNCATE TABLE `products`", None, None, None))
        else:
            spec = event.table
            types = {c.name: module.source_type(c) for c in spec.columns}
            before = rendered(module, spec, event.before)
            after = rendered(module, spec, event.after)
            if event.op == "insert":
                expected.append(("INSERT", None, types, None, after))
            elif event.op == "delete":
                expected.append(("DELETE", None, types, before, None))
            else:
                expected.append(("UPDATE_BEFOR", None, types, before, None))
                expected.append(("UPDATE_AFTER", None, types, None, after))
    got = [
        (
            d["op_code"],
            d["ddl_text"],
            pairs(d["column_types"]),
            pairs(d["before_image"]),
            pairs(d["after_image"]),
        )
        for d in decoded
    ]
    assert got == expected
    ddl = [(m, d) for m, d in zip(messages, decoded, strict=True) if d["op_code"] == "ALTER"]
    assert len(ddl) == 4
    for message, row in ddl:
        assert message.key is None
        assert (row["source_database"], row["source_table"]) == ("ddl_shop", "products")
        assert json.loads(message.value)["payload"]["ddl"]["ddlMeta"]  # opaque, present
    ids = [int(d["sequence_id"]) for d in decoded]
    assert ids == sorted(ids)


def test_dts_canal_round_trip():
    """Canal JSON is decoded in SQL (stg_dts_canal__events): its messages are checked as sent,
    one row per element of ``data`` (one for a DDL message), with ``data`` / ``old`` as value
    texts: an update sends the whole after row in ``data`` and the changed columns' before
    values in ``old``, a delete the before row in ``data``."""
    history = evolution()
    messages = dts_canal_json.encode(history, TOPIC_PREFIX)
    expected: list[tuple[Any, ...]] = []
    for _t, event in events(history):
        if isinstance(event, SchemaChange):
            expected.append(("ALTER", True, expected_statement(event, "rename"), None, None, None))
        elif isinstance(event, Truncate):
            expected.append(("TRUNCATE", True, "TRUNCATE TABLE `products`", None, None, None))
        else:
            spec = event.table
            m = dts_canal_json
            types = {c.name: m.source_type(c) for c in spec.columns}
            if event.op == "insert":
                expected.append(("INSERT", False, "", types, rendered(m, spec, event.after), None))
            elif event.op == "delete":
                expected.append(("DELETE", False, "", types, rendered(m, spec, event.before), None))
            else:
                old = rendered(m, spec, event.before, event.changed_columns)
                expected.append(("UPDATE", False, "", types, rendered(m, spec, event.after), old))

    def texts(row: dict[str, Any] | None) -> dict[str, str | None] | None:
        return None if row is None else {k: value_text(v) for k, v in row.items()}

    got: list[tuple[Any, ...]] = []
    for raw in messages:
        message = loads(raw.value)  # exact JSON: refuses duplicate keys, keeps number text
        data, old = message.get("data"), message.get("old")
        if old is not None:
            assert data is not None and len(old) == len(data)  # aligned with data
        for index in range(len(data) if data else 1):
            got.append(
                (
                    message["type"],
                    message["isDdl"],
                    message["sql"],
                    message.get("mysqlType"),
                    texts(data[index]) if data else None,
                    texts(old[index]) if old else None,
                )
            )
    assert got == expected
    alter = [json.loads(m.value) for m in messages if json.loads(m.value)["type"] == "ALTER"]
    assert [a["data"] for a in alter] == [None] * 4
    assert {(a["database"], a["table"]) for a in alter} == {("ddl_shop", "products")}


def test_dts_avro_round_trip():
    history = evolution()
    messages = dts_avro.encode(history, TOPIC_PREFIX)
    decoded = [avro_decoder.decode_one(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected: list[tuple[Any, ...]] = []
    for transaction in history.transactions:
        has_rows = any(isinstance(e, RowChange) for e in transaction.events)
        if has_rows:
            expected.append(("BEGIN", None, None, None, None))
        minimal = transaction.sequence % 2 == 1
        for event in transaction.events:
            if isinstance(event, SchemaChange):
                expected.append(("DDL", expected_statement(event, "rename"), None, None, None))
            elif isinstance(event, Truncate):
                expected.append(("DDL", "TRUNCATE TABLE `products`", None, None, None))
            else:
                spec, m = event.table, dts_avro
                before_names = ("id",) if minimal else spec.column_names
                after_names = (
                    event.changed_columns if minimal and event.before is not None else None
                )
                expected.append(
                    (
                        event.op.upper(),
                        None,
                        list(spec.column_names),
                        rendered(m, spec, event.before, before_names),
                        rendered(m, spec, event.after, after_names),
                    )
                )
        if has_rows:
            expected.append(("COMMIT", None, None, None, None))
    got = [
        (
            d["operation"],
            d["ddl_text"],
            d["column_names"],
            pairs(d["before_image"]),
            pairs(d["after_image"]),
        )
        for d in decoded
    ]
    assert got == expected
    ddl = [d for d in decoded if d["operation"] == "DDL"]
    assert {d["object_name"] for d in ddl} == {"ddl_shop.products"}
    # column types follow the DDL: stock LONG (int) until the widen, then LONGLONG
    stock_types = [dict(d["column_types"]).get("stock") for d in decoded if d["column_types"]]
    assert stock_types[0] is None and stock_types[-1] == "LONGLONG"
    assert "LONG" in stock_types


def test_dts_shareplex_sends_drop_column_only():
    history = evolution()
    messages = dts_shareplex_json.encode(history, TOPIC_PREFIX)
    decoded = [shareplex_decoder.decode_one(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    m = dts_shareplex_json
    expected: list[tuple[Any, ...]] = []
    for _t, event in events(history):
        if isinstance(event, SchemaChange):
            if event.kind == "drop_column":
                expected.append(("DROP COLUMN", {"note": None}, None))
        elif isinstance(event, Truncate):
            expected.append(("TRUNCATE", None, None))
        else:
            spec = event.table
            if event.op == "insert":
                expected.append(("ins", rendered(m, spec, event.after), None))
            elif event.op == "delete":
                expected.append(("del", rendered(m, spec, event.before, ("id",)), None))
            else:
                data = rendered(m, spec, event.after, event.changed_columns)
                expected.append(("upd", data, rendered(m, spec, event.before, ("id",))))
    got = [(d["op_code"], pairs(d["data_image"]), pairs(d["key_image"])) for d in decoded]
    assert got == expected
    drop = next(d for d in decoded if d["op_code"] == "DROP COLUMN")
    assert drop["table_name"] == "ddl_shop.products"
    assert any("title" in (pairs(d["data_image"]) or {}) for d in decoded)  # new name appears


def test_lindorm_skips_ddl_and_follows_the_new_schema():
    history = evolution(0, truncate=False)
    messages = lindorm_debezium.encode(history, TOPIC_PREFIX)
    decoded = [decode_lindorm(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    m = lindorm_debezium
    expected = []
    for change in history.row_changes:
        spec = change.table
        before, after = rendered(m, spec, change.before), rendered(m, spec, change.after)
        op = {"insert": "c", "update": "u", "delete": "d"}[change.op]
        types = [(c.name, m.source_type(c)) for c in spec.columns]
        expected.append((op, types, before, after))
    got = [
        (d["op_code"], d["column_types"], pairs(d["before_image"]), pairs(d["after_image"]))
        for d in decoded
    ]
    assert got == expected


def decode_qlik(module: Any, messages: list[Any]) -> list[dict[str, Any]]:
    fmt = module.FORMAT
    entries = [
        entry
        for offset, m in enumerate(messages)
        if (entry := qlik.metadata_entries(m.value, fmt, m.topic, 0, offset)) is not None
    ]
    catalog = qlik.MetadataCatalog(entries)
    return [
        qlik.decode_one(m.value, source_format=fmt, topic=m.topic, catalog=catalog)
        for m in messages
    ]


@pytest.mark.parametrize("module", [qlik_json, qlik_avro], ids=lambda m: m.FORMAT)
def test_qlik_sends_a_new_md_version_and_dt_follow_it(module: Any):
    history = evolution(0, truncate=False)
    with pytest.raises(ValueError, match="truncate"):
        module.encode(evolution(), TOPIC_PREFIX)
    messages = module.encode(history, TOPIC_PREFIX)
    decoded = decode_qlik(module, messages)
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded), [
        d["decode_error_detail"] for d in decoded if d["decode_error"]
    ]
    versions = history.table_versions("products")
    ddl_sequences = [
        t.sequence for t in history.transactions if not isinstance(t.events[0], RowChange)
    ]
    md = [(m, d) for m, d in zip(messages, decoded, strict=True) if d["message_type"] == "MD"]
    assert [d["table_version"] for _m, d in md] == [1, 2, 3, 4, 5]
    assert [m.sequence for m, _d in md] == [0, *ddl_sequences]
    assert len({d["schema_id"] for _m, d in md}) == 5
    for (_m, d), spec in zip(md, versions, strict=True):
        assert [name for name, _t in d["column_types"]] == list(spec.column_names)
        assert d["column_types"] == [(c.name, module.source_type(c)) for c in spec.columns]
        assert d["key_columns"] == ["id"]
    # ordinals: stock added after price shifts note / created_at; title keeps name's ordinal
    md_json = [
        json.loads(m.value)["message"]["tableStructure"]["tableColumns"]
        for m in qlik_json.encode(history, "x")
        if json.loads(m.value)["type"] == "MD"
    ]
    assert {n: c["ordinal"] for n, c in md_json[1].items()} == {
        "id": 1, "name": 2, "price": 3, "stock": 4, "note": 5, "created_at": 6,
    }  # fmt: skip
    assert md_json[2]["title"]["ordinal"] == 2 and "name" not in md_json[2]
    assert "note" not in md_json[4] and md_json[4]["created_at"]["ordinal"] == 5
    assert md_json[3]["stock"]["type"] == "INT8" and md_json[2]["stock"]["type"] == "INT4"
    # data messages: each pairs with the version of its spec, images follow the new structure
    schema_ids = {spec: d["schema_id"] for spec, (_m, d) in zip(versions, md, strict=True)}
    dt = [d for d in decoded if d["message_type"] == "DT"]
    ops = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}
    for change, row in zip(history.row_changes, dt, strict=True):
        spec = change.table
        assert row["operation"] == ops[change.op]
        assert row["metadata_match"] == "schema_id"
        assert row["schema_id"] == schema_ids[spec]
        assert row["table_version"] == versions.index(spec) + 1
        assert [n for n, _t in row["column_types"]] == list(spec.column_names)
        if change.op == "delete":
            assert pairs(row["before_image"]) == rendered(module, spec, change.before)
            assert row["after_image"] is None
        else:
            assert pairs(row["after_image"]) == rendered(module, spec, change.after)
            assert pairs(row["before_image"]) == rendered(module, spec, change.before)
            assert row["not_provided_columns"] == []


def test_features_used_counts_schema_changes_as_nothing():
    assert features_used(generate_schema_evolution(seed=3)) >= {"truncate"}
    assert "truncate" not in features_used(generate_schema_evolution(seed=3, truncate=False))
