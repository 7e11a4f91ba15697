"""Unit tests of cdc_lakehouse.decode.dts_avro (no Spark): both schema revisions, every image
value type, the NULL / NONE states and the structural errors, per formats.md section 4a."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from cdc_lakehouse.decode.dts_avro import (
    DTS_FIELDS,
    decode_batches,
    decode_record,
    output_schema_ddl,
)
from cdc_lakehouse.decode.dts_avro_schema import NAMESPACE, PARSED_NEW, PARSED_OLD


def _v(name: str, **value: Any) -> tuple[str, Any]:
    """An image element of union member ``name`` (fastavro's (name, value) union notation)."""
    return (f"{NAMESPACE}.{name}", value)


def _dt(year=None, month=None, day=None, hour=None, minute=None, second=None, millis=None):
    return {
        "year": year,
        "month": month,
        "day": day,
        "hour": hour,
        "minute": minute,
        "second": second,
        "millis": millis,
    }


def encode(born: int | None = 1614600000123, **overrides: Any) -> bytes:
    """ENCODER: one DTS Avro Record; ``born=None`` writes the older revision (no bornTimestamp)."""
    record: dict[str, Any] = {
        "version": 1,
        "id": 42,
        "sourceTimestamp": 1614600000,
        "sourcePosition": "1234@mysql-bin.000001",
        "safeSourcePosition": "1200@mysql-bin.000001",
        "sourceTxid": "txid-1",
        "source": {"sourceType": "MySQL", "version": "5.7.28"},
        "operation": "INSERT",
        "objectName": "shop.orders",
        "processTimestamps": [1614600000500, 1614600000600],
        "tags": {"pk_uk_info": '{"PRIMARY":["id"]}', "thread_id": "7"},
        "fields": [{"name": "id", "dataTypeNumber": 3}, {"name": "note", "dataTypeNumber": 253}],
        "beforeImages": None,
        "afterImages": [
            _v("Integer", precision=4, value="1"),
            _v("Character", charset="utf8mb4", value="héllo".encode()),
        ],
    }
    record.update(overrides)
    schema = PARSED_OLD
    if born is not None:
        record["bornTimestamp"] = born
        schema = PARSED_NEW
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, record)
    return out.getvalue()


def one_value(element: Any) -> dict[str, str | None]:
    row = decode_record(
        encode(fields=[{"name": "c", "dataTypeNumber": 0}], afterImages=[element], tags={})
    )
    assert row["decode_error"] is None, row["decode_error_detail"]
    return dict(row["after_image"])


def test_new_revision_insert_decodes_all_fields():
    row = decode_record(encode())
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["record_id"] == 42
    assert row["record_version"] == 1
    assert row["source_timestamp"] == 1614600000
    assert row["source_position"] == "1234@mysql-bin.000001"
    assert row["safe_source_position"] == "1200@mysql-bin.000001"
    assert row["source_txid"] == "txid-1"
    assert (row["source_type"], row["source_version"]) == ("MySQL", "5.7.28")
    assert row["operation"] == "INSERT"
    assert (row["source_database"], row["source_schema"], row["source_table"]) == (
        "shop",
        None,
        "orders",
    )
    assert row["process_timestamps"] == [1614600000500, 1614600000600]
    assert dict(row["tags"]) == {"pk_uk_info": '{"PRIMARY":["id"]}', "thread_id": "7"}
    assert row["key_columns"] == ["id"]
    assert row["column_names"] == ["id", "note"]
    assert row["column_type_numbers"] == [3, 253]
    assert row["before_image"] is None
    assert row["after_image"] == [("id", "1"), ("note", "héllo")]
    assert row["ddl_text"] is None
    assert row["born_timestamp_ms"] == 1614600000123


def test_old_revision_without_born_timestamp_decodes():
    raw = encode(born=None)
    assert len(raw) < len(encode())
    row = decode_record(raw)
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["record_id"] == 42
    assert row["after_image"] == [("id", "1"), ("note", "héllo")]
    assert row["born_timestamp_ms"] is None


def test_new_revision_with_default_born_timestamp_zero():
    row = decode_record(encode(born=0))
    assert row["decode_error"] is None
    assert row["born_timestamp_ms"] == 0


@pytest.mark.parametrize(
    ("element", "text"),
    [
        (_v("Integer", precision=20, value="-9223372036854775808"), "-9223372036854775808"),
        (_v("Character", charset="utf8", value="中文".encode()), "中文"),
        (_v("Character", charset="utf8mb4", value="😀".encode()), "😀"),
        (_v("Character", charset="latin1", value=b"caf\xe9"), "café"),
        # MySQL's latin1 is cp1252 (0x80 is the euro sign); 0x81 is undefined there -> U+0081
        (_v("Character", charset="latin1", value=b"\x80\x81"), "\u20ac\x81"),
        (_v("Character", charset="gbk", value="中文".encode("gbk")), "中文"),
        (_v("Character", charset="GB2312", value="中".encode("gb2312")), "中"),
        (_v("Character", charset="big5", value="中".encode("big5")), "中"),
        (_v("Character", charset="ascii", value=b"abc"), "abc"),
        (_v("Character", charset="binary", value=b"\x00\xff"), "AP8="),
        (_v("Character", charset="utf8", value=b"\xff\xfe"), "//4="),
        (_v("Decimal", value="1.50", precision=3, scale=2), "1.50"),
        (_v("Decimal", value="-0.000100", precision=7, scale=6), "-0.000100"),
        (_v("Float", value=1.1, precision=0, scale=0), "1.1"),
        (_v("Float", value=1e300, precision=0, scale=0), "1e+300"),
        (_v("Timestamp", timestamp=1614600000, millis=123456), "2021-03-01T12:00:00.123456Z"),
        (_v("Timestamp", timestamp=0, millis=0), "1970-01-01T00:00:00.000000Z"),
        (_v("DateTime", **_dt(2021, 3, 1, 12, 0, 5, 120)), "2021-03-01 12:00:05.000120"),
        (_v("DateTime", **_dt(2021, 3, 1, 12, 0, 5)), "2021-03-01 12:00:05"),
        (_v("DateTime", **_dt(2021, 3, 1)), "2021-03-01"),
        (_v("DateTime", **_dt(hour=8, minute=30, second=0)), "08:30:00"),
        (_v("DateTime", **_dt(hour=8, minute=30, second=0, millis=5)), "08:30:00.000005"),
        (
            _v("TimestampWithTimeZone", value=_dt(2021, 3, 1, 12, 0, 0), timezone="+08:00"),
            "2021-03-01 12:00:00 +08:00",
        ),
        (_v("BinaryGeometry", type="POINT", value=b"\x01\x02"), "AQI="),
        (_v("TextGeometry", type="POINT", value="POINT(1 2)"), "POINT(1 2)"),
        (_v("BinaryObject", type="BLOB", value=b"\x00abc"), "AGFiYw=="),
        (_v("TextObject", type="JSON", value='{"a": 1}'), '{"a": 1}'),
    ],
)
def test_every_value_type_round_trips_to_its_text(element, text):
    assert one_value(element) == {"c": text}


def test_null_none_three_states():
    row = decode_record(
        encode(
            operation="UPDATE",
            fields=[
                {"name": "a", "dataTypeNumber": 3},
                {"name": "b", "dataTypeNumber": 3},
                {"name": "c", "dataTypeNumber": 3},
                {"name": "d", "dataTypeNumber": 3},
            ],
            beforeImages=[
                _v("Integer", precision=1, value="1"),
                "NONE",
                "NULL",
                None,
            ],
            afterImages=[_v("Integer", precision=1, value="2"), "NONE", "NONE", "NULL"],
        )
    )
    assert row["decode_error"] is None, row["decode_error_detail"]
    before = dict(row["before_image"])
    assert before == {"a": "1", "c": None, "d": None}
    assert "b" not in before
    assert dict(row["after_image"]) == {"a": "2", "d": None}


@pytest.mark.parametrize(
    ("name", "parts"),
    [
        ("shop.orders", ("shop", None, "orders")),
        ("db1.public.t1", ("db1", "public", "t1")),
        ("my\\u002Edb.order\\u002Eitems", ("my.db", None, "order.items")),
        ("d.s\\u002Ex.t", ("d", "s.x", "t")),
        ("onlydb", ("onlydb", None, None)),
        (None, (None, None, None)),
    ],
)
def test_object_name_split(name, parts):
    row = decode_record(encode(objectName=name))
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["object_name"] == name
    assert (row["source_database"], row["source_schema"], row["source_table"]) == parts


def test_object_name_with_too_many_parts_is_invalid():
    row = decode_record(encode(objectName="a.b.c.d"))
    assert row["decode_error"] == "invalid_field_value"
    assert row["record_id"] is None


@pytest.mark.parametrize(
    ("info", "keys"),
    [
        ('{"PRIMARY":["id"]}', ["id"]),
        ('{"PRIMARY":["a","b"],"uk_x":["x"]}', ["a", "b"]),
        ('{"uk_x":["x","y"]}', ["x", "y"]),
        ("{}", None),
    ],
)
def test_pk_uk_info(info, keys):
    row = decode_record(encode(tags={"pk_uk_info": info}))
    assert row["decode_error"] is None
    assert row["key_columns"] == keys


def test_no_pk_uk_info_tag():
    row = decode_record(encode(tags={}))
    assert row["decode_error"] is None
    assert row["key_columns"] is None
    assert row["tags"] == []


@pytest.mark.parametrize("info", ["{not json", '["id"]', '{"PRIMARY":"id"}'])
def test_bad_pk_uk_info_is_invalid_field_value(info):
    row = decode_record(encode(tags={"pk_uk_info": info}))
    assert row["decode_error"] == "invalid_field_value"
    assert "pk_uk_info" in row["decode_error_detail"]


def test_ddl_record_with_string_after_images():
    ddl = "ALTER TABLE `orders` ADD COLUMN `x` int"
    row = decode_record(
        encode(
            operation="DDL",
            fields=None,
            beforeImages=None,
            afterImages=ddl,
            tags={},
            objectName="shop",
        )
    )
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["operation"] == "DDL"
    assert row["ddl_text"] == ddl
    assert row["after_image"] is None
    assert row["column_names"] is None
    assert row["source_database"] == "shop"


@pytest.mark.parametrize("op", ["BEGIN", "COMMIT", "HEARTBEAT"])
@pytest.mark.parametrize("born", [None, 1614600000999])
def test_records_without_images(op, born):
    row = decode_record(
        encode(
            born=born,
            operation=op,
            objectName=None,
            processTimestamps=None,
            tags={},
            fields=None,
            beforeImages=None,
            afterImages=None,
        )
    )
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert row["operation"] == op
    assert row["before_image"] is None
    assert row["after_image"] is None
    assert row["ddl_text"] is None
    assert row["process_timestamps"] is None
    assert row["born_timestamp_ms"] == born


def test_image_length_not_matching_fields_is_invalid():
    row = decode_record(encode(afterImages=[_v("Integer", precision=1, value="1")]))
    assert row["decode_error"] == "invalid_field_value"
    assert "1 values for 2 fields" in row["decode_error_detail"]


@pytest.mark.parametrize("raw", [None, b""])
def test_empty_value(raw):
    row = decode_record(raw)
    assert row["decode_error"] == "empty_value"


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        b'{"not": "avro"}',
        b"\x02",
    ],
)
def test_garbage_bytes_are_schema_mismatch(raw):
    row = decode_record(raw)
    assert row["decode_error"] == "avro_schema_mismatch"
    assert row["decode_error_detail"]
    assert row["record_id"] is None


@pytest.mark.parametrize("born", [None, 1614600000123])
def test_truncated_records_are_schema_mismatch(born):
    raw = encode(born=born)
    for cut in (1, 5, len(raw) // 2, len(raw) - 1):
        row = decode_record(raw[:-cut])
        assert row["decode_error"] == "avro_schema_mismatch", (cut, row)


def test_trailing_bytes_are_schema_mismatch():
    row = decode_record(encode() + b"\x00\x00\x00")
    assert row["decode_error"] == "avro_schema_mismatch"
    assert "left unread" in row["decode_error_detail"]


def test_decode_batches_keeps_rows_and_passes_columns_through():
    values = [encode(), None, b"garbage!", encode(born=None)]
    batch = pa.RecordBatch.from_arrays(
        [
            pa.array(["t"] * 4),
            pa.array([0, 0, 1, 1], type=pa.int32()),
            pa.array([10, 11, 12, 13], type=pa.int64()),
            pa.array(values, type=pa.binary()),
        ],
        names=["topic", "partition", "offset", "value"],
    )
    out = list(decode_batches(iter([batch])))
    assert len(out) == 1
    result = out[0]
    assert result.num_rows == 4
    assert result.schema.names == ["topic", "partition", "offset", "value"] + [
        f.name for f in DTS_FIELDS
    ]
    for name in ["topic", "partition", "offset", "value"]:
        assert result.column(name).equals(batch.column(name))
    table = result.to_pydict()
    assert table["decode_error"] == [None, "empty_value", "avro_schema_mismatch", None]
    assert table["born_timestamp_ms"] == [1614600000123, None, None, None]
    assert table["after_image"][0] == [("id", "1"), ("note", "héllo")]
    assert result.schema.field("after_image").type == pa.map_(pa.string(), pa.string())


def test_output_schema_ddl_lists_every_field_in_order():
    ddl = output_schema_ddl("topic string, value binary")
    names = [part.strip().split(" ")[0] for part in ddl.split(", ")]
    assert names == ["topic", "value"] + [f.name for f in DTS_FIELDS]


def test_pk_uk_info_json_is_kept_in_tags():
    info = json.dumps({"PRIMARY": ["id"]})
    row = decode_record(encode(tags={"pk_uk_info": info}))
    assert dict(row["tags"])["pk_uk_info"] == info
