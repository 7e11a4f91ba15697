"""Unit tests of cdc_lakehouse.decode.dataworks (no Spark): the envelope fields and the
structural errors, per docs/formats.md section 1."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa
import pytest

from cdc_lakehouse.decode.dataworks import ENVELOPE_FIELDS, decode_batches, decode_envelope
from cdc_lakehouse.decode.json_text import loads, value_text

SEED_000_INSERT = (
    '{ "schema": { "dataColumn": [ { "name": "name", "type": "STRING" }, { "name": "job", '
    '"type": "STRING" }, { "name": "sex", "type": "STRING" }, { "name": "#alibaba_rds_row_id#", '
    '"type": "LONG" } ], "primaryKey": null, "source": { "dbType": "MySQL", "dbName": '
    '"pkset_test", "tableName": "pkset_test_no_pk" } }, "payload": { "before": null, "after": '
    '{ "dataColumn": { "name": "name11", "job": "job11", "sex": "man", "#alibaba_rds_row_id#": '
    '15 } }, "sequenceId": "1620457642589000000", "timestamp": { "eventTime": 1620457896000, '
    '"systemTime": 1620457896977, "checkpointTime": 1620457896000 }, "op": "INSERT", "ddl": '
    'null }, "version": "0.0.1" }'
)


def test_seed_000_insert_decodes_to_its_fields():
    row = decode_envelope(SEED_000_INSERT.encode())
    assert row["decode_error"] is None
    assert row["op_code"] == "INSERT"
    assert (row["source_db_type"], row["source_database"], row["source_table"]) == (
        "MySQL",
        "pkset_test",
        "pkset_test_no_pk",
    )
    assert row["source_schema"] is None
    assert row["primary_key"] is None
    assert row["column_types"] == [
        ("name", "STRING"),
        ("job", "STRING"),
        ("sex", "STRING"),
        ("#alibaba_rds_row_id#", "LONG"),
    ]
    assert row["sequence_id"] == "1620457642589000000"
    assert (row["event_time_ms"], row["system_time_ms"], row["checkpoint_time_ms"]) == (
        1620457896000,
        1620457896977,
        1620457896000,
    )
    assert row["before_image"] is None
    assert row["after_image"] == [
        ("name", "name11"),
        ("job", "job11"),
        ("sex", "man"),
        ("#alibaba_rds_row_id#", "15"),
    ]
    assert row["envelope_version"] == "0.0.1"


@pytest.mark.parametrize(
    ("json_number", "text"),
    [
        ("1.50", "1.50"),
        ("12345678901234567890123.456789", "12345678901234567890123.456789"),
        ("1e3", "1e3"),
        ("-0.0", "-0.0"),
        ("123456789012345678901234567890", "123456789012345678901234567890"),
    ],
)
def test_numbers_keep_their_exact_text(json_number, text):
    assert value_text(loads(json_number)) == text


def test_value_text_of_other_json_values():
    assert value_text(loads("true")) == "true"
    assert value_text(loads("null")) is None
    assert value_text(loads('"1.100000"')) == "1.100000"
    assert value_text(loads('{"a": [1, 2.50, null, "x"]}')) == '{"a":[1,2.50,null,"x"]}'


def test_sequence_id_as_number_and_with_leading_zeros():
    message = {
        "payload": {
            "op": "INSERT",
            "sequenceId": 1605339516000000001,
            "after": {"dataColumn": {"id": 1}},
        }
    }
    assert decode_envelope(json.dumps(message).encode())["sequence_id"] == "1605339516000000001"
    message["payload"]["sequenceId"] = "000123"
    assert decode_envelope(json.dumps(message).encode())["sequence_id"] == "123"


def test_heartbeat_with_empty_schema():
    row = decode_envelope(
        b'{"schema": {}, "payload": {"op": "MHEARTBEAT", "timestamp": '
        b'{"eventTime": 1605339953629, "checkpointTime": 1605339953629}}}'
    )
    assert row["decode_error"] is None
    assert row["op_code"] == "MHEARTBEAT"
    assert row["event_time_ms"] == 1605339953629
    assert row["sequence_id"] is None and row["source_table"] is None


def test_ddl_text_is_kept():
    row = decode_envelope(
        b'{"schema": {"source": {"tableName": "t"}}, "payload": {"op": '
        b'"ALTER", "sequenceId": "35", "ddl": {"text": "alter table t add '
        b'column holo text", "ddlMeta": "rO0AB"}}}'
    )
    assert row["ddl_text"] == "alter table t add column holo text"


@pytest.mark.parametrize(
    ("raw", "reason", "detail_part"),
    [
        (None, "empty_value", "no value"),
        (b"", "empty_value", "no value"),
        (b"\xff\xfe", "invalid_utf8", "not UTF-8"),
        (b'{"payload": ', "invalid_json", "not valid JSON"),
        (b'{"payload": {"op": "INSERT", "x": NaN}}', "invalid_json", "NaN"),
        (b"[1]", "not_an_object", "list"),
        (b'"text"', "not_an_object", "str"),
        (b'{"schema": {}}', "missing_required_field", "payload"),
        (b'{"payload": {"sequenceId": "1"}}', "missing_required_field", "payload.op"),
        (b'{"payload": {"op": 5}}', "invalid_field_type", "payload.op"),
        (b'{"payload": []}', "invalid_field_type", "payload"),
        (b'{"payload": {"op": "INSERT", "sequenceId": "12a"}}', "invalid_field_type", "sequenceId"),
        (b'{"payload": {"op": "INSERT", "sequenceId": 1.5}}', "invalid_field_type", "sequenceId"),
        (
            b'{"payload": {"op": "INSERT", "after": {"dataColumn": [1]}}}',
            "invalid_field_type",
            "dataColumn",
        ),
        (
            b'{"schema": {"primaryKey": "id"}, "payload": {"op": "INSERT"}}',
            "invalid_field_type",
            "primaryKey",
        ),
        (
            b'{"payload": {"op": "INSERT", "timestamp": {"eventTime": "soon"}}}',
            "invalid_field_type",
            "eventTime",
        ),
    ],
)
def test_structural_errors_have_a_reason_and_detail(raw, reason, detail_part):
    row = decode_envelope(raw)
    assert row["decode_error"] == reason
    assert detail_part in row["decode_error_detail"]
    assert row["op_code"] is None  # nothing half-decoded leaks out


def test_decode_batches_keeps_every_row_and_passes_columns_through():
    batch = pa.RecordBatch.from_pydict(
        {"offset": [7, 8], "value": [SEED_000_INSERT.encode(), b"oops"]},
        schema=pa.schema([("offset", pa.int64()), ("value", pa.binary())]),
    )
    (out,) = list(decode_batches(iter([batch])))
    assert out.num_rows == 2
    assert out.schema.names == ["offset"] + [f.name for f in ENVELOPE_FIELDS]  # value left out
    assert out.column("offset").to_pylist() == [7, 8]
    assert out.column("decode_error").to_pylist() == [None, "invalid_json"]


def test_the_column_types_of_a_schema_seen_before_are_checked_again_when_a_type_differs():
    """A schema equal to one seen before reuses its column types; true equals 1 in Python, so
    a schema with a number type is never reused."""

    def message(type_: Any) -> bytes:
        schema = {"dataColumn": [{"name": "id", "type": type_}, {"name": "n", "type": "LONG"}]}
        return json.dumps({"schema": schema, "payload": {"op": "INSERT"}}).encode()

    types = [1, True, "LONG", "LONG", 1, 1.5, None, "1"]
    batch = pa.RecordBatch.from_pydict({"value": [message(t) for t in types]})
    (out,) = list(decode_batches(iter([batch])))
    assert out.column("decode_error").to_pylist() == [None, "invalid_field_type", *[None] * 6]
    got = out.column("column_types").to_pylist()
    assert [dict(t)["id"] if t else None for t in got] == [
        "1",
        None,
        "LONG",
        "LONG",
        "1",
        "1.5",
        None,
        "1",
    ]
