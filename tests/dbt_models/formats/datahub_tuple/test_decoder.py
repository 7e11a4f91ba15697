"""Unit tests of cdc_lakehouse.formats.datahub_tuple.decoder (no Spark): the meta columns, the data
columns' exact text and the structural errors, per docs/formats.md section 2 (seed 002)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from cdc_lakehouse.formats.datahub_tuple.decoder import FIELDS, decode_batches, decode_one

# The Insert / Update / Delete table of the DataHub message format appendix (seed 002; the same
# table is on https://help.aliyun.com/document_detail/432484.htm and the English page
# https://www.alibabacloud.com/help/en/dataworks/user-guide/datahub-message-formats):
# _sequence_id_, _operation_type_, _excute_time_, _before_image_, _after_image_ per row.
PUBLISHED_ROWS = [
    ("1649991610688000000", "I", 1649991726000, "N", "Y"),
    ("1649991610688000001", "U", 1649991756000, "Y", "N"),
    ("1649991610688000001", "U", 1649991756000, "N", "Y"),
    ("1649991610688000002", "D", 1649991774000, "Y", "N"),
]


def record(**fields: object) -> bytes:
    return json.dumps(fields).encode()


@pytest.mark.parametrize(("seq", "op", "time_ms", "before", "after"), PUBLISHED_ROWS)
def test_published_example_rows_decode_as_printed(seq, op, time_ms, before, after):
    # The published table shows only the meta columns: the record has no data column.
    raw = record(
        _sequence_id_=seq,
        _operation_type_=op,
        _excute_time_=time_ms,
        _before_image_=before,
        _after_image_=after,
    )
    row = decode_one(raw)
    assert row["decode_error"] is None
    assert (row["sequence_id"], row["op_code"], row["execute_time_ms"]) == (seq, op, time_ms)
    assert (row["before_image_flag"], row["after_image_flag"]) == (before, after)
    assert row["source_table"] is None
    assert row["row_image"] == [] and row["column_names"] == []


def test_data_columns_keep_exact_text_and_null():
    raw = (
        b'{"_sequence_id_": "7", "_operation_type_": "I", "_excute_time_": 1649991726000, '
        b'"_source_table_": "orders", "_before_image_": "N", "_after_image_": "Y", '
        b'"id": 1, "amount": 12.50, "big": 12345678901234567890123.456789, "note": null, '
        b'"flag": true, "name": "joe", "ts": 1649991726000123, "json": {"a": [1.0]}}'
    )
    row = decode_one(raw)
    assert row["decode_error"] is None
    assert row["source_table"] == "orders"
    assert row["row_image"] == [
        ("id", "1"),
        ("amount", "12.50"),
        ("big", "12345678901234567890123.456789"),
        ("note", None),
        ("flag", "true"),
        ("name", "joe"),
        ("ts", "1649991726000123"),
        ("json", '{"a":[1.0]}'),
    ]
    assert row["column_names"] == ["id", "amount", "big", "note", "flag", "name", "ts", "json"]


def test_both_spellings_of_execute_time_are_accepted():
    assert decode_one(record(_operation_type_="I", _execute_time_=5))["execute_time_ms"] == 5
    assert decode_one(record(_operation_type_="I", _excute_time_="6"))["execute_time_ms"] == 6
    # the seed's spelling wins when both are present
    both = record(_operation_type_="I", _excute_time_=7, _execute_time_=8)
    assert decode_one(both)["execute_time_ms"] == 7
    # neither: NULL, not an error
    assert decode_one(record(_operation_type_="I"))["execute_time_ms"] is None


def test_microsecond_execute_time_becomes_milliseconds():
    row = decode_one(record(_operation_type_="I", _excute_time_=1649991726000123))
    assert row["execute_time_ms"] == 1649991726000


def test_sequence_id_as_number_and_with_leading_zeros():
    assert decode_one(record(_sequence_id_=1649991610688000001))["sequence_id"] == (
        "1649991610688000001"
    )
    assert decode_one(record(_sequence_id_="000123"))["sequence_id"] == "123"


def test_meta_columns_are_not_data_columns():
    row = decode_one(
        record(
            _sequence_id_="1",
            _operation_type_="D",
            _excute_time_=1,
            _execute_time_=1,
            _source_table_="t",
            _before_image_="Y",
            _after_image_="N",
            id=3,
            _other_="kept",
        )
    )
    assert row["row_image"] == [("id", "3"), ("_other_", "kept")]


@pytest.mark.parametrize(
    ("raw", "reason", "detail_part"),
    [
        (None, "empty_value", "no value"),
        (b"", "empty_value", "no value"),
        (b"\xff\xfe", "invalid_utf8", "not UTF-8"),
        (b'{"_sequence_id_": "1", ', "invalid_json", "not valid JSON"),
        (b'{"id": NaN}', "invalid_json", "NaN"),
        (b"[1]", "not_an_object", "list"),
        (b'"I"', "not_an_object", "str"),
        (b'{"_sequence_id_": "12a"}', "invalid_field_type", "_sequence_id_"),
        (b'{"_sequence_id_": 1.5}', "invalid_field_type", "_sequence_id_"),
        (b'{"_sequence_id_": true}', "invalid_field_type", "_sequence_id_"),
        (b'{"_operation_type_": 1}', "invalid_field_type", "_operation_type_"),
        (b'{"_excute_time_": "yesterday"}', "invalid_field_type", "_excute_time_"),
        (b'{"_execute_time_": -5}', "invalid_field_type", "_execute_time_"),
        (b'{"_before_image_": "y"}', "invalid_field_type", "_before_image_"),
        (b'{"_after_image_": true}', "invalid_field_type", "_after_image_"),
        (b'{"_source_table_": ["a"]}', "invalid_field_type", "_source_table_"),
    ],
)
def test_structural_errors(raw, reason, detail_part):
    row = decode_one(raw)
    assert row["decode_error"] == reason
    assert detail_part in row["decode_error_detail"]
    assert row["op_code"] is None and row["row_image"] is None


def test_semantic_problems_are_left_to_sql():
    # unknown op, missing sequence id, contradictory flags: decoded, judged in SQL
    row = decode_one(record(_operation_type_="X", _before_image_="Y", _after_image_="Y", id=1))
    assert row["decode_error"] is None
    assert (row["op_code"], row["sequence_id"]) == ("X", None)


def test_decode_batches_appends_fields():
    batch = pa.RecordBatch.from_pydict(
        {"offset": [0, 1], "value": [record(_operation_type_="I", id=1), b"nope"]}
    )
    (out,) = list(decode_batches(iter([batch])))
    assert out.schema.names == ["offset", *(f.name for f in FIELDS)]  # value left out
    assert out.column("op_code").to_pylist() == ["I", None]
    assert out.column("decode_error").to_pylist() == [None, "invalid_json"]
