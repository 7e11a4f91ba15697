"""Unit tests of the simulator encoders dataworks_json, datahub_blob, datahub_tuple and
lindorm_debezium (no Spark): a hand-made history with every op and every logical type goes
through the project's Python decoders (DataWorks / DataHub Blob JSON, decoded in SQL, is read
as sent by :func:`read_envelope`) and comes back with no decode error, the right ops and images
equal to each encoder's ``value_text``; the topics are registered."""

from __future__ import annotations

import base64
import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.decode.json_text import loads, value_text
from cdc_lakehouse.formats.datahub_tuple import encoder_datahub_tuple as datahub_tuple
from cdc_lakehouse.formats.datahub_tuple.decoder import decode_one as decode_tuple
from cdc_lakehouse.formats.dataworks import encoder_datahub_blob as datahub_blob
from cdc_lakehouse.formats.dataworks import encoder_dataworks_json as dataworks_json
from cdc_lakehouse.formats.lindorm import encoder_lindorm_debezium as lindorm_debezium
from cdc_lakehouse.formats.lindorm.decoder import decode_one as decode_lindorm
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.encoders._alibaba_values import java_double_text
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

EXAMPLE_SEEDS = Path(__file__).resolve().parents[4] / "sample_data" / "seeds"

KINDS = TableSpec(
    "shop",
    None,
    "kinds",
    (
        Column("id", "int", nullable=False),
        Column("big", "bigint"),
        Column("amount", "decimal", precision=38, scale=10),
        Column("ratio", "double"),
        Column("flag", "boolean"),
        Column("name", "string"),
        Column("blob", "binary"),
        Column("day", "date"),
        Column("at", "timestamp"),
    ),
    ("id",),
)
LINES = TableSpec(
    "shop",
    None,
    "lines",
    (Column("order_id", "bigint"), Column("line_no", "int"), Column("note", "string")),
    ("order_id", "line_no"),
)
EVENTS = TableSpec("shop", None, "events", (Column("a", "string"), Column("b", "int")))

EDGE = {
    "id": 2,
    "big": -(2**63),
    "amount": Decimal("1234567890123456789012345678.1234567890"),
    "ratio": 1e-5,
    "flag": False,
    "name": 'héllo 世界 🎉 "quoted" \\ \n tab\t',
    "blob": b"\xff\x00\xfe\x80",
    "day": dt.date(1900, 1, 1),
    "at": dt.datetime(1901, 12, 13, 20, 45, 52, 123000),
}
PLAIN = {
    "id": 1,
    "big": 2**63 - 1,
    "amount": Decimal("-0.0000000001"),
    "ratio": 123456789.0,
    "flag": True,
    "name": "",
    "blob": b"",
    "day": dt.date(2024, 2, 29),
    "at": dt.datetime(2024, 2, 29, 23, 59, 59, 999000),
}


def kinds(**values: Any) -> Row:
    return {**PLAIN, **values}


def change(table: TableSpec, op: str, before: Row | None, after: Row | None) -> RowChange:
    return RowChange(table, op, before, after)  # type: ignore[arg-type]


def history() -> History:
    """Every op: snapshot, heartbeat, insert, update, update setting NULL, key update, delete,
    truncate; a composite-key table and a keyless table; every logical type with edge values."""
    row1 = kinds()
    row1b = kinds(name="x" * 100_000, ratio=0.1, amount=Decimal("0E-10"), flag=False)
    row1_null = {**row1b, **{k: None for k in PLAIN if k != "id"}}
    row2 = dict(EDGE)
    row20 = {**EDGE, "id": 20}
    line = {"order_id": 9_000_000_000, "line_no": 1, "note": "n"}
    line2 = {**line, "line_no": 2, "note": None}
    ev = {"a": "x", "b": 1}
    ev2 = {"a": "x", "b": 2}
    items = [
        Transaction("t1", 1, 1_700_000_000_000, (change(KINDS, "snapshot", None, row1),), True),
        Heartbeat(2, 1_700_000_000_500),
        Transaction(
            "t3",
            3,
            1_700_000_001_000,
            (
                change(KINDS, "insert", None, row2),
                change(LINES, "insert", None, line),
                change(EVENTS, "insert", None, ev),
            ),
        ),
        Transaction("t4", 4, 1_700_000_002_000, (change(KINDS, "update", row1, row1b),)),
        Transaction("t5", 5, 1_700_000_003_000, (change(KINDS, "update", row1b, row1_null),)),
        Transaction(
            "t6",
            6,
            1_700_000_004_000,
            (
                change(KINDS, "update", row2, row20),
                change(LINES, "update", line, line2),
                change(EVENTS, "update", ev, ev2),
            ),
        ),
        Transaction(
            "t7",
            7,
            1_700_000_005_000,
            (change(KINDS, "delete", row20, None), change(EVENTS, "delete", ev2, None)),
        ),
        Transaction("t8", 8, 1_700_000_006_000, (Truncate(LINES),)),
    ]
    return History((KINDS, LINES, EVENTS), tuple(items))


def image(encoder: Any, table: TableSpec, row: Row | None) -> dict[str, str | None] | None:
    if row is None:
        return None
    return {c.name: encoder.value_text(c, row[c.name]) for c in table.columns}


def pairs(decoded: list[tuple[str, str | None]] | None) -> dict[str, str | None] | None:
    return None if decoded is None else dict(decoded)


# --- value encodings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (100.0, "100.0"),
        (0.1, "0.1"),
        (0.001, "0.001"),
        (1e-5, "1.0E-5"),
        (123456789.0, "1.23456789E8"),
        (1234567.5, "1234567.5"),
        (-2.5e-300, "-2.5E-300"),
        (0.0, "0.0"),
    ],
)
def test_doubles_are_written_as_java_prints_them(value, text):
    assert java_double_text(value) == text


def test_value_texts_per_format_pin_units_and_encodings():
    col = {c.name: c for c in KINDS.columns}
    dw, tu, ld = dataworks_json.value_text, datahub_tuple.value_text, lindorm_debezium.value_text
    # DATE / timestamps: DataWorks epoch ms (UTC), Tuple TIMESTAMP epoch us, Lindorm Connect
    # Date days and Timestamp ms.
    assert dw(col["day"], dt.date(1900, 1, 1)) == "-2208988800000"
    assert dw(col["at"], EDGE["at"]) == "-2147483647877"
    assert tu(col["at"], EDGE["at"]) == "-2147483647877000"
    assert tu(col["day"], dt.date(1970, 1, 2)) == "86400000000"
    assert ld(col["day"], dt.date(1969, 12, 31)) == "-1"
    assert ld(col["at"], dt.datetime(1970, 1, 1, 0, 0, 1)) == "1000"
    # decimals keep their scale, never an exponent
    for fmt in (dw, tu, ld):
        assert fmt(col["amount"], Decimal("0E-10")) == "0.0000000000"
        assert fmt(col["blob"], b"\xff\x00") == "/wA="
        assert fmt(col["flag"], False) == "false"
        assert fmt(col["name"], None) is None
    assert dataworks_json.source_type(col["amount"]) == "DOUBLE"
    assert datahub_tuple.source_type(col["at"]) == "TIMESTAMP"
    assert lindorm_debezium.source_type(col["day"]) == "int32 (org.apache.kafka.connect.data.Date)"


# --- DataWorks JSON / DataHub Blob -----------------------------------------------------------


def _member(parent: dict[str, Any] | None, key: str, kind: type) -> Any:
    """``parent[key]``: None when the parent or the member is absent or null, else asserted to
    be exactly of ``kind`` (a parsed JSON number is never exactly a ``str``)."""
    value = None if parent is None else parent.get(key)
    assert value is None or type(value) is kind, f"{key}: {value!r} is not a {kind.__name__}"
    return value


def _image_pairs(payload: dict[str, Any], key: str) -> list[tuple[str, str | None]] | None:
    wrapper = _member(payload, key, dict)
    if wrapper is None:
        return None
    columns = _member(wrapper, "dataColumn", dict)
    assert columns is not None, f"payload.{key} carries no dataColumn"
    return [(name, value_text(value)) for name, value in columns.items()]


def read_envelope(raw: bytes) -> dict[str, Any]:
    """One DataWorks / DataHub Blob message as sent (DataWorks envelopes are decoded in SQL),
    in the fields the tests compare; asserts the envelope's shape on the way.

    The message is parsed by the exact JSON parser (UTF-8, no repeated key, numbers keep their
    text). Fields: ``envelope_version``, ``op_code``, ``source_*`` (``schema.source``),
    ``primary_key``, ``column_types`` (``(name, type)`` pairs of ``schema.dataColumn`` in
    message order), ``sequence_id`` (a string of digits without leading zeros), ``scn``,
    ``*_time_ms`` (JSON integers), ``before_image`` / ``after_image`` (``(column, value text)``
    pairs in message order, as :func:`~cdc_lakehouse.decode.json_text.value_text` renders
    them) and ``ddl_text``; None for what is absent or null.
    """
    message = loads(raw)
    assert type(message) is dict, "the message is not a JSON object"
    payload = _member(message, "payload", dict)
    assert payload is not None, "payload is missing"
    op = _member(payload, "op", str)
    assert op is not None, "payload.op is missing"
    schema = _member(message, "schema", dict)
    source = _member(schema, "source", dict)
    timestamp = _member(payload, "timestamp", dict)
    columns = _member(schema, "dataColumn", list)
    column_types = None
    if columns is not None:
        assert all(type(column) is dict for column in columns)
        column_types = [(_member(c, "name", str), _member(c, "type", str)) for c in columns]
        assert all(name is not None for name, _type in column_types)
    primary_key = _member(schema, "primaryKey", list)
    assert primary_key is None or all(type(name) is str for name in primary_key)
    sequence_id = _member(payload, "sequenceId", str)
    assert sequence_id is None or (
        sequence_id.isascii() and sequence_id.isdigit() and sequence_id[0] != "0"
    ), f"payload.sequenceId {sequence_id!r} is not digits without leading zeros"
    return {
        "envelope_version": _member(message, "version", str),
        "op_code": op,
        "source_db_type": _member(source, "dbType", str),
        "source_db_version": _member(source, "dbVersion", str),
        "source_database": _member(source, "dbName", str),
        "source_schema": _member(source, "schemaName", str),
        "source_table": _member(source, "tableName", str),
        "primary_key": primary_key,
        "column_types": column_types,
        "sequence_id": sequence_id,
        "scn": _member(payload, "scn", str),
        "event_time_ms": _member(timestamp, "eventTime", int),
        "system_time_ms": _member(timestamp, "systemTime", int),
        "checkpoint_time_ms": _member(timestamp, "checkpointTime", int),
        "before_image": _image_pairs(payload, "before"),
        "after_image": _image_pairs(payload, "after"),
        "ddl_text": _member(_member(payload, "ddl", dict), "text", str),
    }


def dataworks_expected(
    encoder: Any, hist: History, *, split: bool = True
) -> list[tuple[str, dict | None, dict | None]]:
    """(op, before image, after image) of every message the format must carry, in order."""
    out: list[tuple[str, dict | None, dict | None]] = []
    for item in hist.items:
        if isinstance(item, Heartbeat):
            out.append(("MHEARTBEAT", None, None))
            continue
        for event in item.events:
            if isinstance(event, Truncate):
                out.append(("TRUNCATE", None, None))
                continue
            before = image(encoder, event.table, event.before)
            after = image(encoder, event.table, event.after)
            if event.op in ("insert", "snapshot"):
                out.append(("INSERT", None, after))
            elif event.op == "delete":
                out.append(("DELETE", before, None))
            elif split:
                out += [("UPDATE_BEFOR", before, None), ("UPDATE_AFTER", None, after)]
            else:
                out.append(("UPDATE_AFTER", before, after))
    return out


@pytest.mark.parametrize("encoder", [dataworks_json, datahub_blob])
def test_dataworks_envelopes_round_trip_through_the_decoder(encoder):
    hist = history()
    messages = encoder.encode(hist, "sim")
    decoded = [read_envelope(m.value) for m in messages]  # asserts each envelope's shape
    got = [(d["op_code"], pairs(d["before_image"]), pairs(d["after_image"])) for d in decoded]
    assert got == dataworks_expected(encoder, hist)
    assert {m.topic for m in messages} == {f"sim.{encoder.FORMAT}"}
    changes = [d for d in decoded if d["op_code"] not in ("MHEARTBEAT",)]
    # sequence ids: 19 digits, increasing, shared by the two halves of an update
    seqs = [int(d["sequence_id"]) for d in changes]
    assert all(len(d["sequence_id"]) == 19 for d in changes)
    assert seqs == sorted(seqs)
    halves = [d for d in changes if d["op_code"].startswith("UPDATE")]
    assert len({d["sequence_id"] for d in halves}) == len(halves) // 2
    kinds_msg = next(d for d in decoded if d["source_table"] == "kinds")
    assert kinds_msg["primary_key"] == ["id"]
    assert dict(kinds_msg["column_types"]) == {
        c.name: encoder.source_type(c) for c in KINDS.columns
    }
    assert (kinds_msg["source_db_type"], kinds_msg["source_database"]) == ("MySQL", "shop")
    truncate = next(d for d in decoded if d["op_code"] == "TRUNCATE")
    assert truncate["ddl_text"] == "TRUNCATE TABLE `lines`"
    assert truncate["source_table"] == "lines"
    heartbeat = next(d for d in decoded if d["op_code"] == "MHEARTBEAT")
    assert heartbeat["event_time_ms"] == 1_700_000_000_500
    assert heartbeat["sequence_id"] is None
    first = decoded[0]
    assert first["event_time_ms"] == 1_700_000_000_000
    assert messages[0].sequence == 1 and messages[0].timestamp_ms >= 1_700_000_000_000


def test_dataworks_kafka_keys_follow_the_row_and_keyless_tables_differ_per_producer():
    hist = history()
    dw = dataworks_json.encode(hist, "sim")
    blob = datahub_blob.encode(hist, "sim")
    keys = {
        (json.loads(m.value)["payload"]["op"], json.loads(m.value)["schema"]["source"]["tableName"])
        if json.loads(m.value)["schema"].get("source")
        else ("-", "-"): m.key
        for m in dw
    }
    assert keys[("INSERT", "lines")] == b"9000000000,1"
    # a key update: the before half under the old key, the after half under the new one
    halves = [m.key for m in dw if b'"UPDATE_' in m.value and b'"kinds"' in m.value]
    assert halves[-2:] == [b"2", b"20"]
    # rows of the keyless table: no key (DataWorks), the table name (DataHub Blob sharding)
    assert {
        m.key for m in dw if b'"tableName":"events"' in m.value and b"TRUNCATE" not in m.value
    } == {None}
    assert {m.key for m in blob if b'"tableName":"events"' in m.value} == {b"events"}
    assert all(m.key is None for m in dw if b"MHEARTBEAT" in m.value)


def test_blob_leaves_null_envelope_fields_out_and_dataworks_writes_them():
    hist = history()
    blob_heartbeat = next(m for m in datahub_blob.encode(hist, "p") if b"MHEARTBEAT" in m.value)
    dw_heartbeat = next(m for m in dataworks_json.encode(hist, "p") if b"MHEARTBEAT" in m.value)
    assert json.loads(blob_heartbeat.value) == {
        "schema": {},
        "payload": {
            "op": "MHEARTBEAT",
            "timestamp": {"eventTime": 1_700_000_000_500, "checkpointTime": 1_700_000_000_500},
        },
        "version": "0.0.1",
    }
    assert json.loads(dw_heartbeat.value)["schema"] == {
        "dataColumn": None,
        "primaryKey": None,
        "source": None,
    }


def test_dataworks_one_message_updates_and_update_before_spelling():
    hist = history()
    one = dataworks_json.encode(hist, "sim", one_message_updates=True)
    decoded = [read_envelope(m.value) for m in one]
    got = [(d["op_code"], pairs(d["before_image"]), pairs(d["after_image"])) for d in decoded]
    assert got == dataworks_expected(dataworks_json, hist, split=False)
    spelled = dataworks_json.encode(hist, "sim", update_before_op="UPDATE_BEFORE")
    ops = [read_envelope(m.value)["op_code"] for m in spelled]
    assert "UPDATE_BEFORE" in ops and "UPDATE_BEFOR" not in ops


def test_hidden_row_id_is_stable_across_updates_of_a_keyless_row():
    decoded = [
        read_envelope(m.value) for m in dataworks_json.encode(history(), "sim", row_id_column=True)
    ]
    events = [d for d in decoded if d["source_table"] == "events"]
    assert [d["op_code"] for d in events] == ["INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE"]
    ids = [pairs(d["after_image"] or d["before_image"])["#alibaba_rds_row_id#"] for d in events]
    assert ids == ["1", "1", "1", "1"]
    assert ("#alibaba_rds_row_id#", "LONG") in events[0]["column_types"]
    kinds_row = next(d for d in decoded if d["source_table"] == "kinds")
    assert "#alibaba_rds_row_id#" not in pairs(kinds_row["after_image"])


# --- DataHub Tuple ---------------------------------------------------------------------------


def test_tuple_records_round_trip_through_the_decoder():
    hist = history()
    messages = datahub_tuple.encode(hist, "sim")
    decoded = [decode_tuple(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected = []
    for event in hist.row_changes:
        before = image(datahub_tuple, event.table, event.before)
        after = image(datahub_tuple, event.table, event.after)
        topic = f"sim.datahub_tuple.{event.table.name}"
        if event.op in ("insert", "snapshot"):
            expected.append((topic, "I", "N", "Y", after))
        elif event.op == "delete":
            expected.append((topic, "D", "Y", "N", before))
        else:
            expected += [(topic, "U", "Y", "N", before), (topic, "U", "N", "Y", after)]
    got = [
        (
            m.topic,
            d["op_code"],
            d["before_image_flag"],
            d["after_image_flag"],
            pairs(d["row_image"]),
        )
        for m, d in zip(messages, decoded, strict=True)
    ]
    assert got == expected  # the truncate and the heartbeat produce nothing
    assert [d["source_table"] for d in decoded][:2] == ["kinds", "kinds"]
    assert decoded[0]["execute_time_ms"] == 1_700_000_000_000
    update = [d for d in decoded if d["op_code"] == "U"]
    assert update[0]["sequence_id"] == update[1]["sequence_id"]
    assert {m.key for m in messages if m.topic.endswith(".events")} == {None}
    assert datahub_tuple.topics(hist, "sim") == [
        "sim.datahub_tuple.kinds",
        "sim.datahub_tuple.lines",
        "sim.datahub_tuple.events",
    ]


# --- Lindorm ---------------------------------------------------------------------------------


def test_lindorm_sql_messages_round_trip_through_the_decoder():
    hist = history()
    messages = lindorm_debezium.encode(hist, "sim")
    decoded = [decode_lindorm(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected = []
    for event in hist.row_changes:
        before = image(lindorm_debezium, event.table, event.before)
        after = image(lindorm_debezium, event.table, event.after)
        if event.op in ("insert", "snapshot"):
            expected.append(("c", None, after))
        elif event.op == "delete":
            expected.append(("d", before, None))
        elif event.moves_key:  # Lindorm upserts by key: a key change is delete + insert
            expected += [("d", before, None), ("c", None, after)]
        else:
            expected.append(("u", before, after))
    got = [(d["op_code"], pairs(d["before_image"]), pairs(d["after_image"])) for d in decoded]
    assert got == expected
    assert all(d["table_kind"] == "sql" for d in decoded)
    first = decoded[0]
    assert (first["source_database"], first["source_schema"], first["source_table"]) == (
        "ld-sim",
        "shop",
        "kinds",
    )
    assert (first["source_ts_ms"], first["payload_ts_ms"]) == (1_700_000_000_000, 1_700_000_000_008)
    assert dict(first["column_types"]) == {
        c.name: lindorm_debezium.source_type(c) for c in KINDS.columns
    }
    # NULL columns are left out of the message (no cell) and completed by the schema
    null_update = decoded[5]  # t5: every column but id set to NULL
    assert null_update["removed_columns"] == [c for c in PLAIN if c != "id"]
    assert b'"name":null' not in messages[5].value


def test_lindorm_without_schema_and_with_snapshot_reads():
    hist = history()
    messages = lindorm_debezium.encode(hist, "sim", include_schema=False, snapshot_op="r")
    decoded = [decode_lindorm(m.value) for m in messages]
    assert decoded[0]["op_code"] == "r" and decoded[0]["schema_declared"] is False
    # without a schema a NULL set by an update is still NULL: the before image names it
    assert pairs(decoded[5]["after_image"])["name"] is None


def test_lindorm_hbase_tables_are_base64_with_row_and_family_columns():
    hist = history()
    messages = lindorm_debezium.encode(hist, "sim", hbase_tables=frozenset({"kinds"}))
    kinds_messages = [m for m in messages if b'"table":"kinds"' in m.value]
    decoded = [decode_lindorm(m.value) for m in kinds_messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    assert all(d["table_kind"] == "hbase" for d in decoded)
    raw = json.loads(kinds_messages[0].value)["payload"]["after"]
    assert next(iter(raw)) == "ROW" and base64.b64decode(raw["ROW"]) == b"\x00\x00\x00\x01"
    assert base64.b64decode(raw["f_name"]) == b""
    expected = {
        lindorm_debezium.hbase_column_name(KINDS, c.name): lindorm_debezium.hbase_value_text(
            c, PLAIN[c.name]
        )
        for c in KINDS.columns
    }
    assert pairs(decoded[0]["after_image"]) == expected
    edge = pairs(decoded[1]["after_image"])
    assert edge["f_name"] == EDGE["name"]  # UTF-8 text comes back as text
    assert edge["f_blob"] == "/wD+gA=="  # non-UTF-8 bytes stay base64
    assert (
        edge["f_amount"]
        == base64.b64encode(
            b"\x00\x00\x00\x0a" + (12345678901234567890123456781234567890).to_bytes(16, "big")
        ).decode()
    )
    assert edge["f_flag"] == "AA=="
    # HBase NULL = no cell; the schema completes it
    assert pairs(decoded[3]["after_image"])["f_name"] is None


# --- registry --------------------------------------------------------------------------------

SIM_TABLES = (
    TableSpec("shop", None, "customers", (Column("customer_id", "int"),), ("customer_id",)),
    TableSpec(
        "shop",
        None,
        "orders",
        (Column("order_id", "bigint"), Column("line_no", "int")),
        ("order_id", "line_no"),
    ),
    TableSpec("shop", None, "audit_log", (Column("event", "string"),)),
)


def test_every_topic_of_the_simulator_is_registered_with_its_format():
    with (EXAMPLE_SEEDS / "cdc_example_topics.csv").open(encoding="utf-8") as handle:
        registry = {row["topic"]: row["format"] for row in csv.DictReader(handle)}
    hist = History(SIM_TABLES)
    for name in ("dataworks_json", "datahub_blob", "datahub_tuple", "lindorm_debezium"):
        encoder = ENCODERS[name]
        assert name == encoder.FORMAT
        for topic in encoder.topics(hist, "sim"):
            assert registry.get(topic) == name, topic


def test_tables_whose_messages_carry_no_key_have_declared_keys():
    with (EXAMPLE_SEEDS / "cdc_example_declared_keys.csv").open(encoding="utf-8") as handle:
        declared = {
            (r["topic"], r["source_table"]): r["key_columns"] for r in csv.DictReader(handle)
        }
    hist = History(SIM_TABLES)
    for table in SIM_TABLES:
        keys = "|".join(table.key_columns) or None
        tuple_topic = datahub_tuple.topic_of(table, "sim")
        assert declared.get((tuple_topic, table.name)) == keys
        assert declared.get(("sim.lindorm_debezium", table.name)) == keys
    assert lindorm_debezium.topics(hist, "sim") == ["sim.lindorm_debezium"]
