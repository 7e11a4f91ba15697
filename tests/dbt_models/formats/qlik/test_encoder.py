"""Unit tests of the simulator's Qlik encoders (``qlik_json``, ``qlik_avro``): a hand-made history
with every op and every logical type goes through the project's decoder
(``cdc_lakehouse.formats.qlik.decoder``, MD messages collected first as the dbt model does) and
comes back with the right ops, images, masks, key columns and column types (docs/formats.md section
5, seed 004). No Spark."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.formats.qlik import decoder as qlik
from cdc_lakehouse.formats.qlik import encoder_common as _qlik
from cdc_lakehouse.formats.qlik import encoder_qlik_avro as qlik_avro
from cdc_lakehouse.formats.qlik import encoder_qlik_json as qlik_json
from cdc_lakehouse.formats.registry import load_registry
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    Row,
    RowChange,
    TableSpec,
    Transaction,
    Truncate,
)
from cdc_lakehouse.tools.simulate.messages import Message

ROOT = Path(__file__).resolve().parents[4]
PREFIX = "sim"
MODULES = [qlik_json, qlik_avro]

TYPES = TableSpec(
    "shop",
    None,
    "all_types",
    (
        Column("id", "int", nullable=False),
        Column("big", "bigint"),
        Column("amount", "decimal", precision=38, scale=10),
        Column("ratio", "double"),
        Column("flag", "boolean"),
        Column("name", "string", length=200),
        Column("body", "string"),
        Column("raw", "binary", length=16),
        Column("blob", "binary"),
        Column("born", "date"),
        Column("seen", "timestamp"),
    ),
    ("id",),
)
LINES = TableSpec(
    "shop",
    None,
    "lines",
    (
        Column("order_id", "bigint", nullable=False),
        Column("line_no", "int", nullable=False),
        Column("qty", "int"),
        Column("note", "string", length=50),
    ),
    ("order_id", "line_no"),
)
NOKEY = TableSpec(
    "shop", None, "audit", (Column("event", "string", length=30), Column("at", "timestamp"))
)


def typed(id_: int, **values: Any) -> Row:
    row: Row = {
        "id": id_,
        "big": 1,
        "amount": Decimal("1.0000000000"),
        "ratio": 0.5,
        "flag": False,
        "name": "n",
        "body": "b",
        "raw": b"\x01",
        "blob": b"\x02",
        "born": dt.date(2000, 1, 1),
        "seen": dt.datetime(2024, 1, 1, 12, 0, 0, 123000),
    }
    row.update(values)
    return row


UNICODE = 'na\u00efve \u2013 \u65e5\u672c\u8a9e \U0001f389 "quoted" \\ back'
EDGE = typed(
    3,
    big=-(2**63),
    amount=Decimal("-1234567890123456789012345678.0123456789"),
    ratio=1e100,
    flag=True,
    name=UNICODE,
    body="x" * 100_000,
    raw=b"\xff\xfe\x00\x80",
    blob=b"",
    born=dt.date(1, 1, 1),
    seen=dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
)
EDGE_2 = typed(
    4,
    big=2**63 - 1,
    amount=Decimal("99999999999999999999999999.9999999999"),
    ratio=-0.0,
    name="",
    body="",
    raw=b"",
    blob=bytes(range(256)),
    born=dt.date(1900, 2, 28),
    seen=dt.datetime(1900, 1, 1, 0, 0, 0),
)
NULLS = {name: None for name in TYPES.column_names if name != "id"}


def change(table: TableSpec, op: str, before: Row | None, after: Row | None) -> RowChange:
    return RowChange(table, op, before, after)  # type: ignore[arg-type]


def tx(seq: int, *events: RowChange | Truncate, snapshot: bool = False) -> Transaction:
    return Transaction(f"tx-{seq}", seq, 1_700_000_000_000 + seq * 7, events, snapshot)


ROW_1 = typed(1)
ROW_1_UPDATED = {**ROW_1, "name": "renamed", "ratio": 5e-324}  # unchanged: amount, body, ...
ROW_1_NULLED = {**ROW_1_UPDATED, "name": None, "blob": None}
ROW_2 = typed(2, amount=Decimal("0E-10"))
ROW_20 = {**ROW_2, "id": 20, "flag": True}  # primary-key update 2 -> 20
LINE = {"order_id": 2**40, "line_no": 1, "qty": 3, "note": "a"}
LINE_2 = {**LINE, "line_no": 2, "qty": None}
AUDIT = {"event": "login", "at": dt.datetime(1950, 6, 1, 8, 30, 0, 5000)}
AUDIT_2 = {**AUDIT, "event": "logout"}


def history() -> History:
    """Every op on every table; every update shape (full, partial, set NULL, key move)."""
    items: list[Transaction | Heartbeat] = [
        tx(1, change(TYPES, "snapshot", None, ROW_1), change(TYPES, "snapshot", None, ROW_2),
           snapshot=True),
        tx(2, change(LINES, "snapshot", None, LINE), change(NOKEY, "snapshot", None, AUDIT),
           snapshot=True),
        tx(3, change(TYPES, "insert", None, EDGE), change(TYPES, "insert", None, EDGE_2),
           change(TYPES, "insert", None, {"id": 5, **NULLS})),
        Heartbeat(4, 1_700_000_000_000 + 4 * 7),
        tx(5, change(TYPES, "update", ROW_1, ROW_1_UPDATED)),
        tx(6, change(TYPES, "update", ROW_1_UPDATED, ROW_1_NULLED),
           change(LINES, "insert", None, LINE_2)),
        tx(7, change(TYPES, "update", ROW_2, ROW_20), change(NOKEY, "update", AUDIT, AUDIT_2)),
        tx(8, change(TYPES, "delete", EDGE, None),
           change(LINES, "update", LINE, {**LINE, "qty": 4})),
        tx(9, change(TYPES, "insert", None, EDGE), change(NOKEY, "delete", AUDIT_2, None),
           change(LINES, "delete", LINE_2, None)),
    ]  # fmt: skip
    return History((TYPES, LINES, NOKEY), tuple(items))


def partial_updates(hist: History) -> list[bool]:
    """Per UPDATE of the history, in order: whether the encoders send it partially."""
    flags = []
    for item in hist.transactions:
        changes = [e for e in item.events if isinstance(e, RowChange)]
        for index, event in enumerate(changes, start=1):
            if event.op == "update":
                flags.append(_qlik.is_partial(event, item, index))
    return flags


def decode_all(module: Any, messages: list[Message]) -> list[dict[str, Any]]:
    """Decode like stg_qlik__decoded: collect the MD entries first, then every record."""
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


def image(row: dict[str, Any], name: str) -> dict[str, str | None] | None:
    value = row[name]
    return None if value is None else dict(value)


def rendered(module: Any, table: TableSpec, row: Row | None, only: set[str] | None = None):
    if row is None:
        return None
    return {
        c.name: module.value_text(c, row[c.name])
        for c in table.columns
        if only is None or c.name in only
    }


@pytest.fixture(params=MODULES, ids=lambda m: m.FORMAT)
def module(request: pytest.FixtureRequest) -> Any:
    return request.param


def test_the_fixture_history_has_both_full_and_partial_updates() -> None:
    flags = partial_updates(history())
    assert True in flags and False in flags


def test_every_message_decodes_with_the_right_op_and_images(module: Any) -> None:
    hist = history()
    messages = module.encode(hist, PREFIX)
    decoded = decode_all(module, messages)
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded), [
        d["decode_error_detail"] for d in decoded if d["decode_error"]
    ]
    # one MD per table up front, then one DT per row change (heartbeats send nothing)
    assert [d["message_type"] for d in decoded] == ["MD"] * 3 + ["DT"] * len(hist.row_changes)
    assert [d["source_table"] for d in decoded[:3]] == ["all_types", "lines", "audit"]
    ops = {"snapshot": "REFRESH", "insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}
    partial = iter(partial_updates(hist))
    for event, row in zip(hist.row_changes, decoded[3:], strict=True):
        table = event.table
        assert (row["source_table"], row["operation"]) == (table.name, ops[event.op])
        assert row["source_schema"] == "shop"
        assert row["key_columns"] == list(table.key_columns)
        if event.op == "update" and next(partial):
            provided = set(table.key_columns) | set(event.changed_columns)
            assert row["after_image_is_partial"] is True
            assert image(row, "after_image") == rendered(module, table, event.after, provided)
            assert image(row, "before_image") == rendered(module, table, event.before, provided)
            assert set(row["not_provided_columns"]) == set(table.column_names) - provided
        elif event.op == "delete":
            assert image(row, "after_image") is None
            assert image(row, "before_image") == rendered(module, table, event.before)
        else:
            assert row["after_image_is_partial"] is False
            assert image(row, "after_image") == rendered(module, table, event.after)
            assert image(row, "before_image") == rendered(module, table, event.before)
            assert row["not_provided_columns"] == []


def test_edge_values_render_as_documented(module: Any) -> None:
    decoded = decode_all(module, module.encode(history(), PREFIX))
    edge = image(next(d for d in decoded if d["operation"] == "INSERT"), "after_image")
    assert edge == {
        "id": "3",
        "big": "-9223372036854775808",
        "amount": "-1234567890123456789012345678.0123456789",
        "ratio": "1e+100",
        "flag": "true",
        "name": UNICODE,
        "body": "x" * 100_000,
        "raw": "FFFE0080",
        "blob": "",
        "born": "0001-01-01",
        "seen": "1969-12-31 23:59:59.999000",
    }
    nulls = image([d for d in decoded if d["operation"] == "INSERT"][2], "after_image")
    assert nulls == {"id": "5", **dict.fromkeys(NULLS)}
    zero = image(next(d for d in decoded if d["operation"] == "REFRESH"
                      and dict(d["after_image"])["id"] == "2"), "after_image")  # fmt: skip
    assert zero is not None and zero["amount"] == "0.0000000000"


def test_set_null_stays_provided_and_key_update_carries_the_old_key(module: Any) -> None:
    decoded = decode_all(module, module.encode(history(), PREFIX))
    updates = [d for d in decoded if d["operation"] == "UPDATE"]
    nulled = next(d for d in updates if dict(d["after_image"]).get("name", "x") is None)
    assert dict(nulled["after_image"])["blob"] is None  # SQL NULL, present in the image
    # changeMask: name changed; blob (a BLOB) changed too, but LOBs never appear in it
    assert "name" in nulled["changed_columns"] and "blob" not in nulled["changed_columns"]
    moved = next(d for d in updates if dict(d["after_image"])["id"] == "20")
    assert dict(moved["before_image"])["id"] == "2"
    assert "id" in moved["changed_columns"]


def test_masks_headers_and_transaction_fields(module: Any) -> None:
    hist = history()
    decoded = decode_all(module, module.encode(hist, PREFIX))[3:]
    refresh = [d for d in decoded if d["operation"] == "REFRESH"]
    cdc = [d for d in decoded if d["operation"] != "REFRESH"]
    assert {(d["change_sequence"], d["transaction_id"], d["change_mask"]) for d in refresh} == {
        ("", "", None)
    }
    sequences = [d["change_sequence"] for d in cdc]
    assert all(len(s) == 35 and s.isdigit() for s in sequences)
    assert sequences == sorted(sequences) and len(set(sequences)) == len(sequences)
    assert sequences[0].startswith("2023111422")  # 1_700_000_000_021 ms = 2023-11-14T22:13:20
    by_tx: dict[str, list[dict[str, Any]]] = {}
    for d in cdc:
        by_tx.setdefault(d["transaction_id"], []).append(d)
    for rows in by_tx.values():
        assert [r["transaction_event_counter"] for r in rows] == list(range(1, len(rows) + 1))
        assert [r["transaction_last_event"] for r in rows] == [False] * (len(rows) - 1) + [True]
    assert all(d["event_time_us"] % 1000 == 0 and d["event_time_us"] > 0 for d in cdc)
    # changeMask: DELETE = key columns; INSERT = every column but the LOBs (body, blob)
    delete = next(d for d in cdc if d["operation"] == "DELETE" and d["source_table"] == "lines")
    assert delete["changed_columns"] == ["order_id", "line_no"]
    insert = next(d for d in cdc if d["operation"] == "INSERT" and d["source_table"] == "all_types")
    assert insert["changed_columns"] == [n for n in TYPES.column_names if n not in ("body", "blob")]
    assert insert["column_mask"] == "07FF"  # 11 columns, all provided


def test_metadata_declares_mysql_qlik_types_and_keys(module: Any) -> None:
    decoded = decode_all(module, module.encode(history(), PREFIX))
    types = dict(decoded[0]["column_types"])
    assert types == {c.name: module.source_type(c) for c in TYPES.columns}
    assert types == {
        "id": "INT4",
        "big": "INT8",
        "amount": "NUMERIC(38,10)",
        "ratio": "REAL8",
        "flag": "BOOLEAN",
        "name": "WSTRING(200)",
        "body": "NCLOB",
        "raw": "BYTES(16)",
        "blob": "BLOB",
        "born": "DATE",
        "seen": "DATETIME",
    }
    assert [d["key_columns"] for d in decoded[:3]] == [["id"], ["order_id", "line_no"], []]
    assert {d["qlik_task"] for d in decoded} == {"shop"}
    assert {d["table_version"] for d in decoded} == {1}


def test_kafka_keys_timestamps_and_sequences(module: Any) -> None:
    hist = history()
    messages = module.encode(hist, PREFIX)
    assert {m.topic for m in messages} == {f"{PREFIX}.{module.FORMAT}"}
    assert [(m.key, m.sequence) for m in messages[:3]] == [(None, 0)] * 3
    data = messages[3:]
    assert [m.sequence for m in data] == sorted(m.sequence for m in data)
    assert data[0].key == b"1"
    keys = [m.key for m in data if m.sequence == 2]
    assert keys == [b"1099511627776+1", b"login+1950-06-01 08:30:00.005000"]
    assert all(m.timestamp_ms == 1_700_000_000_000 + m.sequence * 7 for m in data)


def test_json_values_use_json_types_and_hex() -> None:
    message = json.loads(qlik_json.encode(history(), PREFIX)[4].value)  # REFRESH of ROW_2
    data = message["message"]["data"]
    assert message["magic"] == "atMSG" and message["type"] == "DT"
    assert data["id"] == 2 and isinstance(data["ratio"], float) and data["flag"] is False
    assert data["amount"] == "0.0000000000" and data["raw"] == "01"
    assert message["message"]["headers"]["columnMask"] == "07FF"
    assert message["message"]["headers"]["changeMask"] is None


def test_truncate_is_refused(module: Any) -> None:
    hist = History((TYPES,), (tx(1, Truncate(TYPES)),))
    with pytest.raises(ValueError, match="truncate"):
        module.encode(hist, PREFIX)


def test_registry_interface_and_topics() -> None:
    assert set(ENCODERS) >= {"qlik_json", "qlik_avro"}
    registry = load_registry(project_dir=ROOT)
    for fmt in ("qlik_json", "qlik_avro"):
        module = ENCODERS[fmt]
        assert fmt == module.FORMAT
        assert {"snapshot", "key_update", "keyless_table", "partial_update"} == module.FEATURES
        for topic in module.topics(history(), "sim"):
            assert registry[topic].format == fmt
            assert registry[topic].description.startswith("change simulator (issue 5)")


# --------------------------------------------------------------------------- stream shapes


def decode_in_batches(module: Any, messages: list[Message], batch_of: Any) -> list[dict[str, Any]]:
    """:func:`decode_all` with each message in ingest batch ``batch_of(message)`` (the MD
    entries keep theirs; each record is decoded as of its own)."""
    fmt = module.FORMAT
    entries = [
        entry
        for offset, m in enumerate(messages)
        if (entry := qlik.metadata_entries(m.value, fmt, m.topic, 0, offset, batch_of(m)))
        is not None
    ]
    catalog = qlik.MetadataCatalog(entries)
    return [
        qlik.decode_one(
            m.value, source_format=fmt, topic=m.topic, catalog=catalog, batch=batch_of(m)
        )
        for m in messages
    ]


def test_the_real_stream_shape_is_the_issue_48_stream() -> None:
    """externalSchemaId null, a DT envelope id no MD carries, one topic per table."""
    hist = history()
    messages = qlik_json.encode(hist, PREFIX, _qlik.REAL_STREAM)
    assert qlik_json.topics(hist, PREFIX, _qlik.REAL_STREAM) == [
        "sim.qlik_json.shop.all_types",
        "sim.qlik_json.shop.lines",
        "sim.qlik_json.shop.audit",
    ]
    assert {m.topic for m in messages} == set(qlik_json.topics(hist, PREFIX, _qlik.REAL_STREAM))
    values = [json.loads(m.value) for m in messages]
    md_ids = {v["message"]["schemaId"] for v in values if v["type"] == "MD"}
    data = [v for v in values if v["type"] == "DT"]
    assert len(md_ids) == 3 and len(data) == len(hist.row_changes)
    assert all(v["message"]["headers"]["externalSchemaId"] is None for v in data)
    assert all(v["messageSchemaId"] and v["messageSchemaId"] not in md_ids for v in data)
    refresh = [v for v in data if v["message"]["headers"]["operation"] == "REFRESH"]
    assert refresh and {v["message"]["headers"]["changeSequence"] for v in refresh} == {""}


@pytest.mark.parametrize("md_batch", [0, 1, 2], ids=["earlier", "same", "later"])
def test_a_real_stream_decodes_as_the_default_stream_does(md_batch: int) -> None:
    """Every DT of the real-stream shape finds its table's MD by its topic, delivered in an
    earlier, the same or a later ingest batch than the DTs (batch 1), and decodes to the same
    rows as the default shape, whose DTs name their MD exactly."""
    hist = history()
    default = decode_all(qlik_json, qlik_json.encode(hist, PREFIX))
    messages = qlik_json.encode(hist, PREFIX, _qlik.REAL_STREAM)
    decoded = decode_in_batches(qlik_json, messages, lambda m: md_batch if m.key is None else 1)
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded), [
        d["decode_error_detail"] for d in decoded if d["decode_error"]
    ]
    data = decoded[3:]
    assert {d["metadata_match"] for d in data} == {"topic"}
    assert {d["resolved_batch_id"] for d in data} == {max(md_batch, 1)}
    fields = ("source_table", "schema_id", "operation", "key_columns", "column_types")
    images = ("after_image", "before_image", "changed_columns", "not_provided_columns")
    assert [tuple(d[f] for f in fields + images) for d in data] == [
        tuple(d[f] for f in fields + images) for d in default[3:]
    ]


def test_a_real_stream_data_message_waits_while_its_topic_has_no_metadata() -> None:
    messages = qlik_json.encode(history(), PREFIX, _qlik.REAL_STREAM)
    data = [m for m in messages if m.key is not None]
    decoded = decode_in_batches(qlik_json, data, lambda m: 1)
    assert {d["decode_error"] for d in decoded} == {"missing_table_metadata"}


def test_avro_data_whose_envelope_id_names_no_metadata_waits_unless_self_describing() -> None:
    """qlik_avro: a DT read by reference is read with the MD its messageSchemaId names and no
    other (docs/formats.md 5); embedding the writer schema makes it readable without one."""
    hist = history()
    by_reference = qlik_avro.encode(hist, PREFIX, _qlik.REAL_STREAM)
    waiting = decode_all(qlik_avro, by_reference)[3:]
    assert {d["decode_error"] for d in waiting} == {"missing_table_metadata"}
    shape = _qlik.StreamShape(
        external_schema_id=False,
        envelope_schema_id=False,
        topic_per_table=True,
        embedded_schema=True,
    )
    decoded = decode_all(qlik_avro, qlik_avro.encode(hist, PREFIX, shape))[3:]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    assert {d["metadata_match"] for d in decoded} == {"topic"}
    default = decode_all(qlik_avro, qlik_avro.encode(hist, PREFIX))[3:]
    assert [d["after_image"] for d in decoded] == [d["after_image"] for d in default]
