"""Unit tests of the simulator encoders dataworks_json and datahub_blob (no Spark): the
hand-made history of tests/dbt_models/formats/alibaba_history.py (every op and every logical
type) goes out as DataWorks / DataHub Blob JSON, decoded in SQL, so each message is read as
sent by :func:`read_envelope` and comes back with the right ops and images equal to the
encoder's ``value_text``; the topics are registered."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from cdc_lakehouse.decode.json_text import loads, value_text
from cdc_lakehouse.formats.dataworks import encoder_datahub_blob as datahub_blob
from cdc_lakehouse.formats.dataworks import encoder_dataworks_json as dataworks_json
from cdc_lakehouse.tools.simulate.history import Heartbeat, History, Truncate
from tests.dbt_models.formats.alibaba_history import (
    EDGE,
    KINDS,
    check_scale_and_encodings,
    check_topics_are_registered,
    history,
    image,
    pairs,
)


def test_value_texts_pin_units_and_encodings():
    col = {c.name: c for c in KINDS.columns}
    dw = dataworks_json.value_text
    # DATE / timestamps: epoch ms (UTC)
    assert dw(col["day"], dt.date(1900, 1, 1)) == "-2208988800000"
    assert dw(col["at"], EDGE["at"]) == "-2147483647877"
    check_scale_and_encodings(dw)
    assert dataworks_json.source_type(col["amount"]) == "DOUBLE"


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


def test_every_topic_of_the_simulator_is_registered_with_its_format():
    check_topics_are_registered("dataworks_json", "datahub_blob")
