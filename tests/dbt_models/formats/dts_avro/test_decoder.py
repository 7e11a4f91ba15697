"""Unit tests of cdc_lakehouse.formats.dts_avro.decoder (no Spark): both schema revisions, every
image value type, the NULL / NONE states and the structural errors, per docs/formats.md section
4a."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pyarrow as pa
import pytest

from cdc_lakehouse.formats.dts_avro.avro_schema import NAMESPACE, PARSED_NEW, PARSED_OLD
from cdc_lakehouse.formats.dts_avro.decoder import (
    DTS_FIELDS,
    decode_batches,
    decode_record,
    output_schema_ddl,
)


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
    assert result.schema.names == ["topic", "partition", "offset"] + [
        f.name for f in DTS_FIELDS
    ]  # value left out
    for name in ["topic", "partition", "offset"]:
        assert result.column(name).equals(batch.column(name))
    table = result.to_pydict()
    assert table["decode_error"] == [None, "empty_value", "avro_schema_mismatch", None]
    assert table["born_timestamp_ms"] == [1614600000123, None, None, None]
    assert table["after_image"][0] == [("id", "1"), ("note", "héllo")]
    assert result.schema.field("after_image").type == pa.map_(pa.string(), pa.string())


def test_output_schema_ddl_lists_every_field_in_order():
    ddl = output_schema_ddl("topic string, value binary, ingest_batch_id bigint")
    names = [part.strip().split(" ")[0] for part in ddl.split(", ")]
    assert names == ["topic", "ingest_batch_id"] + [f.name for f in DTS_FIELDS]
    kept = output_schema_ddl("topic string, value binary", keep_value=True)
    assert [part.split(" ")[0] for part in kept.split(", ")][:3] == [
        "topic",
        "value",
        "decode_error",
    ]


def test_pk_uk_info_json_is_kept_in_tags():
    info = json.dumps({"PRIMARY": ["id"]})
    row = decode_record(encode(tags={"pk_uk_info": info}))
    assert dict(row["tags"])["pk_uk_info"] == info


# --- key source, column types, partial images, invalid values (issue 4) -------------------


@pytest.mark.parametrize(
    ("info", "keys", "source", "name"),
    [
        ('{"PRIMARY":["id"]}', ["id"], "primary_key", "PRIMARY"),
        ('{"uk_x":["x","y"],"uk_z":["z"]}', ["x", "y"], "unique_key", "uk_x"),
        ('{"PRIMARY":[],"uk_x":["x"]}', ["x"], "unique_key", "uk_x"),
        ('{"uk_empty":[],"uk_x":["x"]}', ["x"], "unique_key", "uk_x"),
        ('{"PRIMARY":[]}', None, None, None),
    ],
)
def test_key_source_and_name(info, keys, source, name):
    row = decode_record(encode(tags={"pk_uk_info": info}))
    assert row["decode_error"] is None
    assert (row["key_columns"], row["key_source"], row["key_name"]) == (keys, source, name)


def test_mysql_column_types_are_binlog_type_names_in_order():
    codes = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13, 15, 16, 17, 18, 19]
    codes += [245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 14]
    fields = [{"name": f"c{code}", "dataTypeNumber": code} for code in codes]
    row = decode_record(encode(fields=fields, afterImages=[None] * len(codes), tags={}))
    assert row["decode_error"] is None, row["decode_error_detail"]
    types = row["column_types"]
    assert [name for name, _ in types] == [f"c{code}" for code in codes]
    assert dict(types) == {
        "c0": "DECIMAL",
        "c1": "TINY",
        "c2": "SHORT",
        "c3": "LONG",
        "c4": "FLOAT",
        "c5": "DOUBLE",
        "c7": "TIMESTAMP",
        "c8": "LONGLONG",
        "c9": "INT24",
        "c10": "DATE",
        "c11": "TIME",
        "c12": "DATETIME",
        "c13": "YEAR",
        "c15": "VARCHAR",
        "c16": "BIT",
        "c17": "TIMESTAMP2",
        "c18": "DATETIME2",
        "c19": "TIME2",
        "c245": "JSON",
        "c246": "NEWDECIMAL",
        "c247": "ENUM",
        "c248": "SET",
        "c249": "TINY_BLOB",
        "c250": "MEDIUM_BLOB",
        "c251": "LONG_BLOB",
        "c252": "BLOB",
        "c253": "VAR_STRING",
        "c254": "STRING",
        "c255": "GEOMETRY",
        "c14": "14",  # not in the table: the code as text
    }


def test_other_sources_keep_the_type_number_as_text():
    row = decode_record(encode(source={"sourceType": "Oracle", "version": "19c"}))
    assert row["column_types"] == [("id", "3"), ("note", "253")]


@pytest.mark.parametrize(
    ("after", "partial"),
    [
        ([_v("Integer", precision=1, value="1"), "NONE"], True),
        ([_v("Integer", precision=1, value="1"), "NULL"], False),
        ([_v("Integer", precision=1, value="1"), None], False),
        (None, None),
    ],
)
def test_after_image_is_partial_when_a_value_is_none(after, partial):
    row = decode_record(encode(afterImages=after))
    assert row["decode_error"] is None
    assert row["after_image_is_partial"] is partial


def test_duplicate_column_names_are_invalid():
    row = decode_record(
        encode(
            fields=[{"name": "a", "dataTypeNumber": 3}, {"name": "a", "dataTypeNumber": 3}],
            afterImages=[None, None],
        )
    )
    assert row["decode_error"] == "invalid_field_value"
    assert "twice: a" in row["decode_error_detail"]


@pytest.mark.parametrize("field", ["id", "sourceTimestamp"])
def test_negative_ordering_fields_are_invalid(field):
    row = decode_record(encode(**{field: -1}))
    assert row["decode_error"] == "invalid_field_value"
    assert field in row["decode_error_detail"]


@pytest.mark.parametrize(
    ("charset", "data", "text"),
    [
        ("UTF-8", "é".encode(), "é"),
        ("AL32UTF8", "é".encode(), "é"),
        ("ZHS16GBK", "中".encode("gbk"), "中"),
        ("utf16", "é".encode("utf-16-be"), "é"),
        ("ISO-8859-1", b"\xe9", "é"),
    ],
)
def test_more_charset_spellings(charset, data, text):
    assert one_value(_v("Character", charset=charset, value=data)) == {"c": text}


def test_truncating_exactly_the_born_timestamp_gives_a_valid_old_revision_record():
    # The older revision is a prefix of the newer one: a newer record cut exactly before
    # bornTimestamp cannot be told from an older record. It decodes as the older revision.
    new = encode(born=0)  # bornTimestamp 0 is one byte
    row = decode_record(new[:-1])
    assert row["decode_error"] is None
    assert row["born_timestamp_ms"] is None
    assert decode_record(new)["born_timestamp_ms"] == 0


# --- real records published elsewhere -------------------------------------------------------
# The public demo cloudkdb/demo (aliyun-dts-subscribe-python/dts_subscribe.py) prints four
# records of a real DTS subscription of MySQL 8.0.28 table mydb.t1 (a bigint primary key,
# b varchar(100)): an insert, an update, a delete and the CREATE TABLE. They are re-encoded
# here from the printed dicts with the schema (the bytes themselves are not published).
# Note bornTimestamp: it is equal to sourceTimestamp, i.e. in seconds, not the milliseconds
# the schema documents (docs/formats.md 4a).

_DEMO_TAGS = {
    "metaVersion": "3109599372",
    "pk_uk_info": '{"PRIMARY":["a"]}',
    "server_id": "26957161",
    "thread_id": "163931",
}
_DEMO_FIELDS = [{"dataTypeNumber": 8, "name": "a"}, {"dataTypeNumber": 253, "name": "b"}]


def _demo_image(text: bytes) -> list[Any]:
    return [
        _v("Integer", precision=8, value="123456789"),
        _v("Character", charset="utf8mb4", value=text),
    ]


def _demo(**record: Any) -> bytes:
    base = {
        "version": 0,
        "source": {"sourceType": "MySQL", "version": "8.0.28"},
        "sourceTxid": "0",
        "processTimestamps": None,
        "objectName": "mydb.t1",
        "fields": _DEMO_FIELDS,
        "beforeImages": None,
        "afterImages": None,
    }
    base.update(record)
    out = io.BytesIO()
    fastavro.schemaless_writer(out, PARSED_NEW, base)
    return out.getvalue()


def test_published_demo_records_decode():
    insert = decode_record(
        _demo(
            afterImages=_demo_image(b"test insert statement."),
            bornTimestamp=1696984408,
            id=1700382,
            operation="INSERT",
            safeSourcePosition="72347@78",
            sourcePosition="72469@78",
            sourceTimestamp=1696984408,
            tags={**_DEMO_TAGS, "readerThroughoutTime": "1696984408050"},
        )
    )
    assert insert["decode_error"] is None, insert["decode_error_detail"]
    assert insert["after_image"] == [("a", "123456789"), ("b", "test insert statement.")]
    assert insert["column_types"] == [("a", "LONGLONG"), ("b", "VAR_STRING")]
    assert (insert["key_columns"], insert["key_source"]) == (["a"], "primary_key")
    assert (insert["source_database"], insert["source_table"]) == ("mydb", "t1")
    assert insert["born_timestamp_ms"] == insert["source_timestamp"] == 1696984408

    update = decode_record(
        _demo(
            afterImages=_demo_image(b"test update statement."),
            beforeImages=_demo_image(b"test insert statement."),
            bornTimestamp=1696984517,
            id=1700504,
            operation="UPDATE",
            safeSourcePosition="75103@78",
            sourcePosition="75259@78",
            sourceTimestamp=1696984517,
            tags={**_DEMO_TAGS, "readerThroughoutTime": "1696984517078"},
        )
    )
    assert update["before_image"] == [("a", "123456789"), ("b", "test insert statement.")]
    assert update["after_image"] == [("a", "123456789"), ("b", "test update statement.")]
    assert update["after_image_is_partial"] is False

    delete = decode_record(
        _demo(
            beforeImages=_demo_image(b"test update statement."),
            bornTimestamp=1696984560,
            id=1700553,
            operation="DELETE",
            safeSourcePosition="76054@78",
            sourcePosition="76176@78",
            sourceTimestamp=1696984560,
            tags={**_DEMO_TAGS, "readerThroughoutTime": "1696984560421"},
        )
    )
    assert delete["operation"] == "DELETE" and delete["after_image"] is None
    assert delete["before_image"] == [("a", "123456789"), ("b", "test update statement.")]

    ddl = decode_record(
        _demo(
            afterImages="create table t1(a bigint primary key, b varchar(100))",
            bornTimestamp=1696984152,
            fields=None,
            id=1700104,
            objectName="mydb",
            operation="DDL",
            safeSourcePosition="67008@78",
            sourcePosition="67008@78",
            sourceTimestamp=1696984152,
            tags={
                "GTID": "281c62dc-590c-11ee-a295-00163e390c7c:108156",
                "commitTimestamp": "1696984152",
                "readerThroughoutTime": "1696984152751",
            },
        )
    )
    assert ddl["decode_error"] is None
    assert ddl["ddl_text"] == "create table t1(a bigint primary key, b varchar(100))"
    assert (ddl["source_database"], ddl["source_table"]) == ("mydb", None)
    assert ddl["key_columns"] is None
