"""Unit tests of cdc_lakehouse.formats.lindorm.decoder (no Spark): the Debezium V2.0 envelope of
Lindorm data subscription, HBase vs SQL tables, whole-row images and the structural errors, per
docs/formats.md section 3 (seed 001)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pyarrow as pa
import pytest

from cdc_lakehouse.formats.lindorm.decoder import FIELDS, decode_batches, decode_one

SOURCE = {
    "version": "v1.0",
    "db": "ld-xxxx",
    "namespace": "default",
    "table": "customers",
    "ts_ms": 1465491411807,
}

# The format definition example of the Lindorm "Data format" page, English edition
# (https://www.alibabacloud.com/help/en/lindorm/user-guide/data-format, also the first example
# of seed 001): ids are JSON numbers and the schema is a full Kafka Connect struct.
PUBLISHED_DEFINITION = """{
  "payload": {"op": "u", "ts_ms": 1465491411815,
    "before": {"id": 1004, "name": "Jane"}, "after": {"id": 1004, "name": "Anne"},
    "source": {"version": "v1.0", "db": "ld-xxxx", "namespace": "default",
               "table": "customers", "ts_ms": 1465491411807}},
  "schema": {"type": "struct", "fields": [
    {"type": "string", "optional": false, "field": "op"},
    {"type": "int64", "optional": false, "field": "ts_ms"},
    {"type": "struct", "fields": [
      {"type": "int32", "optional": false, "field": "id"},
      {"type": "string", "optional": false, "field": "name"}], "optional": true, "field": "before"},
    {"type": "struct", "fields": [
      {"type": "int32", "optional": false, "field": "id"},
      {"type": "string", "optional": false, "field": "name"}], "optional": true, "field": "after"},
    {"type": "struct", "fields": [
      {"type": "string", "optional": false, "field": "version"},
      {"type": "string", "optional": false, "field": "db"},
      {"type": "string", "optional": false, "field": "namespace"},
      {"type": "string", "optional": false, "field": "table"},
      {"type": "int64", "optional": false, "field": "ts_ms"}],
     "optional": false, "field": "source"}],
    "optional": false}
}"""

# A plain Debezium change event without the schema envelope (JSON converter with schemas
# disabled), as published on https://kafka-options-explorer.conduktor.io/debezium/envelope.
PUBLISHED_DEBEZIUM_NO_SCHEMA = """{"before": null,
"after": {"id": 1001, "first_name": "Alice", "last_name": "Smith",
  "email": "alice@example.com", "created_at": 1714000000000},
"source": {"version": "3.0.5.Final", "connector": "postgresql", "name": "pgserver1",
  "ts_ms": 1714000000000, "snapshot": "false", "db": "inventory",
  "sequence": "[null,\\"24023128\\"]",
  "schema": "public", "table": "customers", "txId": 555, "lsn": 24023128, "xmin": null},
"op": "c", "ts_ms": 1714000000142, "transaction": null}"""

# Seed 001's HBase example: Put("user1") f:name = "lucky".
SEED_HBASE_PUT = (
    '{"schema": {}, "payload": {"op": "c", "ts_ms": 1725258859839, "before": null, '
    '"after": {"ROW": "dXNlcjE=", "f_name": "bHVja3k="}, "source": {"version": "v2.0", '
    '"db": "ld-xxxx", "namespace": "default", "table": "customers", "ts_ms": 1725258833727}}}'
)


def message(op: str, before: Any = None, after: Any = None, **payload: Any) -> bytes:
    body = {"op": op, "ts_ms": 1465491411815, "before": before, "after": after, "source": SOURCE}
    body.update(payload)
    return json.dumps({"schema": {}, "payload": body}).encode()


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def test_published_definition_example():
    row = decode_one(PUBLISHED_DEFINITION.encode())
    assert row["decode_error"] is None
    assert row["op_code"] == "u" and row["table_kind"] == "sql"
    assert (row["source_version"], row["source_database"], row["source_schema"]) == (
        "v1.0",
        "ld-xxxx",
        "default",
    )
    assert row["source_table"] == "customers"
    assert (row["source_ts_ms"], row["payload_ts_ms"]) == (1465491411807, 1465491411815)
    assert row["schema_declared"] is True
    assert row["column_types"] == [("id", "int32"), ("name", "string")]
    assert row["before_image"] == [("id", "1004"), ("name", "Jane")]
    assert row["after_image"] == [("id", "1004"), ("name", "Anne")]
    assert row["removed_columns"] == [] and row["binary_columns"] == []
    assert row["raw_before_image"] is None and row["raw_after_image"] is None


def test_published_debezium_event_without_schema_envelope():
    row = decode_one(PUBLISHED_DEBEZIUM_NO_SCHEMA.encode())
    assert row["decode_error"] is None
    assert row["op_code"] == "c" and row["table_kind"] == "sql"
    assert (row["source_database"], row["source_schema"], row["source_table"]) == (
        "inventory",
        None,  # Debezium's source.schema is not Lindorm's namespace
        "customers",
    )
    assert (row["source_ts_ms"], row["payload_ts_ms"]) == (1714000000000, 1714000000142)
    assert row["schema_declared"] is False and row["column_types"] is None
    assert dict(row["after_image"])["created_at"] == "1714000000000"


def test_seed_sql_examples():
    anne = {"id": "1004", "first_name": "Anne", "last_name": "Kretchmar"}
    marie = {"id": "1004", "first_name": "Anne Marie", "last_name": "Kretchmar"}
    insert = decode_one(message("c", after=anne))
    assert insert["before_image"] is None and dict(insert["after_image"]) == anne
    update = decode_one(message("u", before=marie, after=anne))
    assert dict(update["before_image"]) == marie and dict(update["after_image"]) == anne
    delete = decode_one(message("d", before=marie))
    assert delete["after_image"] is None and dict(delete["before_image"]) == marie
    assert insert["schema_declared"] is False and insert["column_types"] is None


def test_column_delete_is_a_null_in_a_whole_row():
    # seed 001 "删除列": after lacks last_name -> last_name was removed, i.e. NULL
    marie = {"id": "1004", "first_name": "Anne Marie", "last_name": "Kretchmar"}
    row = decode_one(message("u", before=marie, after={"id": "1004", "first_name": "Anne Marie"}))
    assert row["after_image"] == [("id", "1004"), ("first_name", "Anne Marie"), ("last_name", None)]
    assert row["removed_columns"] == ["last_name"]


def test_schema_columns_missing_from_an_image_are_null():
    schema = json.loads(PUBLISHED_DEFINITION)["schema"]
    body = {"op": "c", "ts_ms": 2, "after": {"id": 7}, "source": {**SOURCE, "ts_ms": 1}}
    row = decode_one(json.dumps({"schema": schema, "payload": body}).encode())
    assert row["after_image"] == [("id", "7"), ("name", None)]
    assert row["removed_columns"] == ["name"]
    delete = {"op": "d", "ts_ms": 2, "before": {"id": 7}, "source": {**SOURCE, "ts_ms": 1}}
    row = decode_one(json.dumps({"schema": schema, "payload": delete}).encode())
    assert row["before_image"] == [("id", "7"), ("name", None)]
    assert row["removed_columns"] == []


def test_exact_numbers_nested_values_and_null():
    raw = (
        b'{"schema": {}, "payload": {"op": "r", "ts_ms": 5, "source": {"table": "t", '
        b'"ts_ms": 4}, "after": {"id": 1, "price": 1.50, "big": 12345678901234567890123.456789,'
        b' "e": 1e3, "n": null, "b": false, "j": {"x": [2.50]}}}}'
    )
    row = decode_one(raw)
    assert row["op_code"] == "r"
    assert row["after_image"] == [
        ("id", "1"),
        ("price", "1.50"),
        ("big", "12345678901234567890123.456789"),
        ("e", "1e3"),
        ("n", None),
        ("b", "false"),
        ("j", '{"x":[2.50]}'),
    ]


def test_seed_hbase_put_decodes_base64_to_text():
    row = decode_one(SEED_HBASE_PUT.encode())
    assert row["decode_error"] is None
    assert row["table_kind"] == "hbase"
    assert row["after_image"] == [("ROW", "user1"), ("f_name", "lucky")]
    assert row["raw_after_image"] == [("ROW", "dXNlcjE="), ("f_name", "bHVja3k=")]
    assert row["column_types"] == [("ROW", "bytes"), ("f_name", "bytes")]
    assert row["binary_columns"] == [] and row["source_version"] == "v2.0"


def test_hbase_binary_values_stay_base64():
    long_42 = (42).to_bytes(8, "big")  # Bytes.toBytes(42L): valid UTF-8, but control characters
    after = {
        "f_count": b64(long_42),
        "ROW": b64("user2"),
        "f_blob": b64(b"\xff\xfe"),
        "f_text": b64("line 1\nline 2\t\u00e9"),
        "f_empty": "",
        "f_null": None,
    }
    row = decode_one(message("c", after=after))
    image = dict(row["after_image"])
    assert image["ROW"] == "user2"
    assert image["f_count"] == b64(long_42) and image["f_blob"] == "//4="
    assert image["f_text"] == "line 1\nline 2\t\u00e9"
    assert image["f_empty"] == "" and image["f_null"] is None
    assert row["binary_columns"] == ["f_count", "f_blob"]
    # ROW first in the inferred column types
    assert [c for c, _ in row["column_types"]][:2] == ["ROW", "f_count"]


def test_hbase_column_delete_completes_the_after_image():
    before = {"ROW": b64("user1"), "f_name": b64("lucky"), "f_age": b64("7")}
    after = {"ROW": b64("user1"), "f_name": b64("lucky")}
    row = decode_one(message("u", before=before, after=after))
    assert row["after_image"] == [("ROW", "user1"), ("f_name", "lucky"), ("f_age", None)]
    assert row["removed_columns"] == ["f_age"]
    assert row["raw_after_image"] == list(after.items())


def test_hbase_value_that_is_not_base64_is_an_error():
    row = decode_one(message("c", after={"ROW": b64("user1"), "f_name": "not base64!"}))
    assert row["decode_error"] == "invalid_field_type"
    assert "f_name" in row["decode_error_detail"]
    row = decode_one(message("c", after={"ROW": b64("user1"), "f_n": 5}))
    assert row["decode_error"] == "invalid_field_type"


def test_a_row_column_that_is_not_base64_means_a_sql_table():
    row = decode_one(message("c", after={"ROW": "row #1", "v": 5}))
    assert row["decode_error"] is None and row["table_kind"] == "sql"
    assert row["after_image"] == [("ROW", "row #1"), ("v", "5")]


def test_timestamps_as_digit_strings():
    row = decode_one(message("c", after={"id": 1}, ts_ms="1465491411815"))
    assert row["payload_ts_ms"] == 1465491411815


@pytest.mark.parametrize(
    ("raw", "reason", "detail_part"),
    [
        (None, "empty_value", "no value"),
        (b"", "empty_value", "no value"),
        (b"\xc3\x28", "invalid_utf8", "not UTF-8"),
        (b'{"payload": {"op": "c"', "invalid_json", "not valid JSON"),
        (b'{"payload": {"op": "c", "ts_ms": Infinity}}', "invalid_json", "Infinity"),
        (b"[]", "not_an_object", "list"),
        (b"42", "not_an_object", "int"),
        (b'{"schema": {}}', "missing_required_field", "payload"),
        (b'{"schema": {}, "payload": {"ts_ms": 1}}', "missing_required_field", "payload.op"),
        (b'{"payload": "c"}', "invalid_field_type", "payload"),
        (b'{"payload": {"op": 1}}', "invalid_field_type", "payload.op"),
        (b'{"payload": {"op": "c", "after": [1]}}', "invalid_field_type", "payload.after"),
        (b'{"payload": {"op": "d", "before": "x"}}', "invalid_field_type", "payload.before"),
        (b'{"payload": {"op": "c", "source": 1}}', "invalid_field_type", "payload.source"),
        (
            b'{"payload": {"op": "c", "source": {"ts_ms": 1.5}}}',
            "invalid_field_type",
            "source.ts_ms",
        ),
        (
            b'{"payload": {"op": "c", "source": {"ts_ms": -1}}}',
            "invalid_field_type",
            "source.ts_ms",
        ),
        (b'{"payload": {"op": "c", "ts_ms": "soon"}}', "invalid_field_type", "payload.ts_ms"),
        (b'{"payload": {"op": "c", "source": {"table": 3}}}', "invalid_field_type", "table"),
        (b'{"schema": [], "payload": {"op": "c"}}', "invalid_field_type", "schema"),
        (
            b'{"schema": {"fields": {}}, "payload": {"op": "c"}}',
            "invalid_field_type",
            "schema.fields",
        ),
        (
            b'{"schema": {"fields": [{"field": "after", "fields": [{"type": "int32"}]}]}, '
            b'"payload": {"op": "c"}}',
            "invalid_field_type",
            "after.fields",
        ),
    ],
)
def test_structural_errors(raw, reason, detail_part):
    row = decode_one(raw)
    assert row["decode_error"] == reason
    assert detail_part in row["decode_error_detail"]
    assert row["op_code"] is None and row["after_image"] is None


def test_semantic_problems_are_left_to_sql():
    row = decode_one(b'{"payload": {"op": "x"}}')
    assert row["decode_error"] is None and row["op_code"] == "x"
    assert row["source_table"] is None and row["source_ts_ms"] is None


def test_decode_batches_appends_fields():
    batch = pa.RecordBatch.from_pydict(
        {"offset": [0, 1], "value": [SEED_HBASE_PUT.encode(), None]},
        schema=pa.schema([("offset", pa.int64()), ("value", pa.binary())]),
    )
    (out,) = list(decode_batches(iter([batch])))
    assert out.schema.names == ["offset", *(f.name for f in FIELDS)]  # value left out
    assert out.column("table_kind").to_pylist() == ["hbase", None]
    assert out.column("decode_error").to_pylist() == [None, "empty_value"]
