"""Unit tests of cdc_lakehouse.formats.dts_shareplex.decoder (no Spark): each meta field, the data /
key images, the time and number encodings, and every structural error (docs/formats.md section
4b)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from cdc_lakehouse.formats.dts_shareplex.decoder import (
    FIELDS,
    decode_batches,
    decode_one,
    output_schema_ddl,
)

# Seed 003's insert example, exactly as documented (it is valid JSON once the alignment
# whitespace is gone).
SEED_INSERT = {
    "meta": {
        "time": "2017-06-16T14:24:34",
        "userid": 84,
        "op": "ins",
        "scn": "14589063118712",
        "rowid": "AAATGpAAIAAItcIAAA",
        "trans": "7.0.411499",
        "seq": 1,
        "size": 11,
        "table": "CL_BIZ1.MIO_LOG",
        "idx": "1/11",
        "posttime": "2017-06-16T14:33:52",
    },
    "data": {"MIO_LOG_ID": "32539737"},
}


def decode(message: object) -> dict:
    return decode_one(json.dumps(message).encode())


def test_seed_insert_decodes_every_meta_field():
    row = decode(SEED_INSERT)
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["op_code"] == "ins"
    assert row["meta_time"] == "2017-06-16T14:24:34"
    assert row["event_time_ms"] == 1497623074000  # UTC, the Z is missing
    assert row["post_time_ms"] == 1497623632000
    assert row["userid"] == "84"
    assert row["scn"] == "14589063118712"
    assert row["rowid"] == "AAATGpAAIAAItcIAAA"
    assert row["trans"] == "7.0.411499"
    assert (row["seq"], row["size"], row["idx"]) == (1, 11, "1/11")
    assert row["table_name"] == "CL_BIZ1.MIO_LOG"
    assert (row["source_schema"], row["source_table"]) == ("CL_BIZ1", "MIO_LOG")
    assert row["data_image"] == [("MIO_LOG_ID", "32539737")]
    assert row["key_image"] is None


def test_seed_update_keeps_key_nulls_and_changed_column():
    row = decode(
        {
            "meta": {
                "time": "2017-06-16T15:38:13",
                "userid": 84,
                "op": "upd",
                "table": "CL_BIZ1.MIO_LOG",
            },
            "data": {"CNTR_NO": "1171201606"},
            "key": {
                "MIO_LOG_ID": "32537893",
                "PLNMIO_REC_ID": "31557806",
                "POL_CODE": None,
                "CNTR_TYPE": None,
                "CNTR_NO": "1171201606syui26",
            },
        }
    )
    assert row["decode_error"] is None
    assert row["data_image"] == [("CNTR_NO", "1171201606")]
    assert dict(row["key_image"]) == {
        "MIO_LOG_ID": "32537893",
        "PLNMIO_REC_ID": "31557806",
        "POL_CODE": None,
        "CNTR_TYPE": None,
        "CNTR_NO": "1171201606syui26",
    }
    assert row["scn"] is None and row["seq"] is None


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("2017-06-16T14:24:34", 1497623074000),
        ("2017-06-16T14:24:34Z", 1497623074000),
        ("2017-06-16 14:24:34", 1497623074000),
        ("2017-06-16T14:24:34.250", 1497623074250),
        ("2017-06-16T22:24:34+08:00", 1497623074000),
        ("1969-12-31T23:59:59Z", -1000),
    ],
)
def test_time_encodings(text, millis):
    row = decode({"meta": {"op": "ins", "time": text}})
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["event_time_ms"] == millis
    assert row["meta_time"] == text


def test_numbers_keep_their_digits_and_scn_may_be_a_number():
    row = decode_one(
        b'{"meta": {"op": "ins", "scn": 0014589063118712, "seq": "2", "size": "3"}, '
        b'"data": {"A": 1.50, "B": 12345678901234567890123.456789, "C": "x", "D": null}}'
    )
    # a leading zero is not JSON: that message is invalid; the same without it is fine
    assert row["decode_error"] == "invalid_json"
    row = decode_one(
        b'{"meta": {"op": "ins", "scn": 14589063118712, "seq": "2", "size": "3"}, '
        b'"data": {"A": 1.50, "B": 12345678901234567890123.456789, "C": "x", "D": null}}'
    )
    assert row["decode_error"] is None
    assert row["scn"] == "14589063118712"
    assert (row["seq"], row["size"]) == (2, 3)
    assert row["data_image"] == [
        ("A", "1.50"),
        ("B", "12345678901234567890123.456789"),
        ("C", "x"),
        ("D", None),
    ]


def test_scn_leading_zeros_are_dropped():
    assert decode({"meta": {"op": "ins", "scn": "000123"}})["scn"] == "123"


def test_seq_and_size_from_idx_when_absent():
    row = decode({"meta": {"op": "ins", "idx": "2/4"}})
    assert (row["seq"], row["size"]) == (2, 4)


def test_table_without_schema():
    row = decode({"meta": {"op": "ins", "table": "LONELY"}})
    assert (row["source_schema"], row["source_table"]) == (None, "LONELY")


@pytest.mark.parametrize("op", ["TRUNCATE", "DROP COLUMN", "UPDATE BEFORE", "whatever"])
def test_any_op_text_is_kept_as_sent(op):
    row = decode({"meta": {"op": op, "table": "S.T"}})
    assert row["decode_error"] is None
    assert row["op_code"] == op


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, "empty_value"),
        (b"", "empty_value"),
        (b"\xff\xfe{}", "invalid_utf8"),
        (b"not json", "invalid_json"),
        (b'{"meta": {"op": "ins"', "invalid_json"),
        (b'{"meta": {"op": "ins", "scn": NaN}}', "invalid_json"),
        (b"[1]", "not_an_object"),
        (b'{"data": {}}', "missing_required_field"),
        (b'{"meta": null}', "missing_required_field"),
        (b'{"meta": {"scn": "1"}}', "missing_required_field"),
        (b'{"meta": "ins"}', "invalid_field_type"),
        (b'{"meta": {"op": 1}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "scn": "12a"}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "scn": 1.5}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "seq": true}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "time": "yesterday"}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "posttime": 5}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "idx": "1-2"}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins", "table": ["S", "T"]}}', "invalid_field_type"),
        (b'{"meta": {"op": "ins"}, "data": ["a"]}', "invalid_field_type"),
        (b'{"meta": {"op": "upd"}, "data": {}, "key": "ID=1"}', "invalid_field_type"),
    ],
)
def test_structural_errors(raw, reason):
    row = decode_one(raw)
    assert row["decode_error"] == reason
    assert row["decode_error_detail"]
    assert row["op_code"] is None


def test_decode_batches_keeps_rows_and_passes_columns_through():
    values = [json.dumps(SEED_INSERT).encode(), None, b"{"]
    batch = pa.RecordBatch.from_arrays(
        [pa.array(["t"] * 3), pa.array([1, 2, 3], type=pa.int64()), pa.array(values, pa.binary())],
        names=["topic", "offset", "value"],
    )
    (result,) = list(decode_batches(iter([batch]), keep_value=True))  # the model's option
    assert result.num_rows == 3
    assert result.schema.names == ["topic", "offset", "value"] + [f.name for f in FIELDS]
    assert result.column("value").equals(batch.column("value"))
    (plain,) = list(decode_batches(iter([batch])))
    assert plain.schema.names == ["topic", "offset"] + [f.name for f in FIELDS]
    assert result.column("offset").equals(batch.column("offset"))
    assert result.to_pydict()["decode_error"] == [None, "empty_value", "invalid_json"]


def test_output_schema_ddl():
    ddl = output_schema_ddl("topic string, value binary", keep_value=True)
    assert ddl.startswith("topic string, value binary, decode_error string")
    assert output_schema_ddl("topic string, value binary").startswith(
        "topic string, decode_error string"
    )
    assert "data_image map<string,string>" in ddl
    assert "seq bigint" in ddl
