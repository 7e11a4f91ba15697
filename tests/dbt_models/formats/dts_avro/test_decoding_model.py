"""The DTS Avro decoding model's work on one bronze batch, through Spark: what
``stg_dts_avro__decoded`` appends (``cdc_lakehouse.decode.staging_model.decode_records``, fastavro
in ``mapInArrow``) for records of both schema revisions that hold every value type, SQL NULLs,
EmptyObject NONE, and undecodable records beside the good ones.

It pins the values that decided issue 49 point 7 (docs/formats.md 4a, "Why fastavro and not
``from_avro``"): where Spark's own rendering differs from the text the decoder promises
(doubles as Python's ``repr``, ``1e-05`` and ``5e-324`` where Spark's cast gives ``1.0E-5``
and ``4.9E-324``; charsets Spark does not decode by default; bytes that do not decode in their
charset kept as base64), and where ``from_avro`` would not see a bad record (it ignores
trailing bytes, so a truncated newer record reads as an older one). Whatever decodes DTS Avro
must give these rows.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest

from cdc_lakehouse.decode.staging_model import BRONZE_COLUMN_TYPES, decode_records, schema_ddl
from cdc_lakehouse.formats.dts_avro import avro_writer as dts

TOPIC = "dts.hard_values.avro"
BORN = 1_696_984_408

# (column, MySQL binlog type code, image element, the text the decoder gives)
HARD_VALUES: list[tuple[str, int, Any, str | None]] = [
    ("int_min", 8, dts.integer(-(2**63)), "-9223372036854775808"),
    ("bigint_unsigned_max", 8, dts.integer(2**64 - 1), "18446744073709551615"),
    (
        "decimal_wide",
        246,
        dts.decimal("12345678901234567890.123450"),
        "12345678901234567890.123450",
    ),
    ("decimal_small", 246, dts.decimal("-0.000100"), "-0.000100"),
    ("double_small", 5, dts.floating(1e-05), "1e-05"),
    ("double_large", 5, dts.floating(1e16), "1e+16"),
    ("double_fixed", 5, dts.floating(12345678.0), "12345678.0"),
    ("double_sum", 5, dts.floating(0.1 + 0.2), "0.30000000000000004"),
    ("double_denormal", 5, dts.floating(5e-324), "5e-324"),
    ("double_negative_zero", 5, dts.floating(-0.0), "-0.0"),
    ("double_nan", 5, dts.floating(math.nan), "nan"),
    ("double_minus_inf", 5, dts.floating(-math.inf), "-inf"),
    ("float_widened", 4, dts.floating(1.100000023841858), "1.100000023841858"),
    ("utf8mb4", 253, dts.character("中文 😀"), "中文 😀"),
    # MySQL's latin1 is cp1252 (0x80 the euro sign); 0x81, undefined there, stays U+0081
    ("latin1", 254, dts.character(b"caf\xe9 \x80\x81", "latin1"), "café €\x81"),
    ("gbk", 253, dts.character("中文".encode("gbk"), "gbk"), "中文"),
    ("big5", 253, dts.character("中".encode("big5"), "big5"), "中"),
    ("utf16", 253, dts.character("é".encode("utf-16-be"), "utf16"), "é"),
    ("not_utf8", 253, dts.character(b"\xff\xfe", "utf8"), "//4="),
    ("unknown_charset", 254, dts.character(b"\x00\xff", "binary"), "AP8="),
    ("timestamp", 17, dts.timestamp(1_614_600_000, 123_456), "2021-03-01T12:00:00.123456Z"),
    ("timestamp_before_1970", 17, dts.timestamp(-1, 999_999), "1969-12-31T23:59:59.999999Z"),
    ("datetime", 18, dts.date_time(2021, 3, 1, 12, 0, 5, 120), "2021-03-01 12:00:05.000120"),
    ("date", 10, dts.date_time(2024, 2, 29), "2024-02-29"),
    ("time", 19, dts.date_time(hour=8, minute=30, second=0, micros=5), "08:30:00.000005"),
    ("with_zone", 18, dts.timestamp_tz("+08:00", 2021, 3, 1, 12), "2021-03-01 12:00:00 +08:00"),
    ("wkb", 255, dts.binary_geometry("POINT", b"\x01\x02"), "AQI="),
    ("wkt", 255, dts.text_geometry("POINT", "POINT(1 2)"), "POINT(1 2)"),
    ("blob", 252, dts.binary_object("BLOB", b"\x00abc"), "AGFiYw=="),
    ("json", 245, dts.text_object("JSON", '{"size": 1.50}'), '{"size": 1.50}'),
    ("sql_null", 3, dts.NULL, None),
]
COLUMNS = [("id", 8)] + [(name, code) for name, code, _, _ in HARD_VALUES]
HARD_TEXTS = {"id": "1"} | {name: text for name, _, _, text in HARD_VALUES}
HARD_IMAGE = {"id": dts.integer(1)} | {name: element for name, _, element, _ in HARD_VALUES}


def _record(operation: str, record_id: int, born: int | None, **images: Any) -> dict[str, Any]:
    return dts.make_record(
        operation,
        record_id=record_id,
        source_timestamp=1_700_000_000 + record_id,
        object_name="shop.hard_values",
        columns=COLUMNS,
        primary_key=["id"],
        born_timestamp=born,
        **images,
    )


NEW_INSERT = dts.encode(_record("INSERT", 1, BORN, after=HARD_IMAGE))
"""Newer revision, every value type in the after image."""
_old_update = _record(
    "UPDATE",
    2,
    None,
    before=HARD_IMAGE,
    # only id and two changed columns provided (NONE elsewhere); one SQL NULL
    after={"id": dts.integer(1), "utf8mb4": dts.character("changed"), "decimal_small": dts.NULL},
)
_old_update["afterImages"][1] = None  # an Avro null element (not EmptyObject): SQL NULL too
OLD_UPDATE = dts.encode(_old_update)
"""Older revision (no bornTimestamp), every value type in the before image, a partial after."""
OLD_DELETE = dts.encode(_record("DELETE", 3, None, before={"id": dts.integer(1)}))
GARBAGE = b"\x13\x37not avro at all\xff" * 4

BATCH: list[tuple[str, bytes | None]] = [
    ("new insert", NEW_INSERT),
    ("garbage", GARBAGE),
    ("old update", OLD_UPDATE),
    ("newer record cut by a byte", NEW_INSERT[:-1]),
    ("old delete", OLD_DELETE),
    ("newer record with 3 trailing bytes", NEW_INSERT + b"\x00\x00\x00"),
    ("Kafka NULL value", None),
    ("newer record with bornTimestamp 0 cut before it", dts.encode(_record("DELETE", 4, 0))[:-1]),
]
"""One bronze batch: every bad record stands between good ones."""


@pytest.fixture(scope="module")
def decoded(spark) -> dict[str, dict[str, Any]]:
    """What the decoding model appends for :data:`BATCH` (one ingest batch), by case name."""
    rows = [
        ("dts_avro", TOPIC, 0, offset, None, value, 1) for offset, (_, value) in enumerate(BATCH)
    ]
    bronze = spark.createDataFrame(rows, schema_ddl(BRONZE_COLUMN_TYPES))
    dbt = SimpleNamespace(is_incremental=False, this="silver.stg_dts_avro__decoded")
    out = decode_records(dbt, spark, bronze, folder="dts_avro").collect()
    names = [name for name, _ in BATCH]
    return {names[row["offset"]]: row.asDict() for row in out}


def test_one_row_per_record_and_each_bad_record_has_its_reason(decoded):
    assert len(decoded) == len(BATCH)
    assert {name: row["decode_error"] for name, row in decoded.items()} == {
        "new insert": None,
        "garbage": "avro_schema_mismatch",
        "old update": None,
        "newer record cut by a byte": "avro_schema_mismatch",
        "old delete": None,
        "newer record with 3 trailing bytes": "avro_schema_mismatch",
        "Kafka NULL value": "empty_value",
        # the older revision is a prefix of the newer one: a record of the older revision
        "newer record with bornTimestamp 0 cut before it": None,
    }
    assert "3 of" in decoded["newer record with 3 trailing bytes"]["decode_error_detail"]
    for name in ("garbage", "newer record cut by a byte", "Kafka NULL value"):
        row = decoded[name]
        assert row["decode_error_detail"]
        assert (row["record_id"], row["after_image"], row["before_image"]) == (None, None, None)


def test_newer_revision_keeps_every_value_type_exact(decoded):
    row = decoded["new insert"]
    assert row["after_image"] == HARD_TEXTS
    assert row["before_image"] is None
    assert row["after_image_is_partial"] is False
    assert (row["record_id"], row["born_timestamp_ms"]) == (1, BORN)
    expected_types = {
        "id": "LONGLONG",
        "int_min": "LONGLONG",
        "bigint_unsigned_max": "LONGLONG",
        "decimal_wide": "NEWDECIMAL",
        "decimal_small": "NEWDECIMAL",
        "double_small": "DOUBLE",
    }
    assert {name: row["column_types"].get(name) for name in expected_types} == expected_types


def test_older_revision_keeps_every_value_type_nulls_and_not_provided(decoded):
    row = decoded["old update"]
    assert row["before_image"] == HARD_TEXTS
    # NONE columns are absent; EmptyObject NULL and an Avro null element are SQL NULL
    assert row["after_image"] == {
        "id": "1",
        "int_min": None,
        "decimal_small": None,
        "utf8mb4": "changed",
    }
    assert row["after_image_is_partial"] is True
    assert (row["record_id"], row["born_timestamp_ms"]) == (2, None)
    assert decoded["old delete"]["before_image"] == {"id": "1"}
    assert decoded["newer record with bornTimestamp 0 cut before it"]["born_timestamp_ms"] is None
