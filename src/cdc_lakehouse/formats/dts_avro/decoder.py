"""Decoder of Alibaba DTS Avro records (docs/formats.md section 4a; seed 003).

Input: Arrow batches with at least ``value binary`` (rows of ``bronze.kafka_records``); every
input column but ``value`` (it too with ``keep_value``) is passed through unchanged. Each value
is one ``com.alibaba.dts.formats.avro.Record`` in plain Avro binary (no schema-registry
header), read with :func:`fastavro.schemaless_reader`.
Either schema revision (the newer one has a trailing ``bornTimestamp``) is accepted when the
read consumes exactly all bytes; at most one can, so the revision that fit the previous value
is tried first (a topic's records share one) without changing any result. Output adds
:data:`DTS_FIELDS`, one row per input row, never dropping one:

- ``decode_error`` / ``decode_error_detail``: NULL when valid, else a reason code
  (:data:`REASONS`) and a detail; all other decoded columns are then NULL.
- ``record_id`` (``id``), ``record_version`` (``version``), ``source_timestamp`` (epoch
  *seconds*), ``source_position``, ``safe_source_position``, ``source_txid``,
  ``source_type`` / ``source_version`` (``source``), ``operation`` (enum symbol as sent).
- ``object_name`` as sent; ``source_database`` / ``source_schema`` / ``source_table`` split
  from it on ``.`` (``db``, ``db.table`` or ``db.schema.table``; the literal text ``\\u002E``
  inside a part is an escaped dot and becomes ``.``). More than three parts is an error.
- ``process_timestamps`` (array<bigint>), ``tags`` (map<string,string>).
- ``key_columns`` / ``key_source`` / ``key_name``: from ``tags["pk_uk_info"]`` JSON
  (``{"PRIMARY":["id"]}`` -> ``["id"]``, ``primary_key``, ``PRIMARY``): the ``PRIMARY`` key
  when it lists columns, else the first unique key (in the JSON's order) that lists columns
  (``unique_key``, its index name); all three NULL when the tag is absent or lists no
  columns (the SQL model then uses all columns).
- ``column_names`` / ``column_type_numbers``: from ``fields`` (``dataTypeNumber`` is the MySQL
  binlog type code for MySQL sources), in order; NULL when ``fields`` is null or a string.
  A column name listed twice is ``invalid_field_value``.
- ``column_types``: column -> type text in column order: for ``sourceType = MySQL`` the binlog
  type name of :data:`MYSQL_TYPE_NAMES` (docs/formats.md 4a; an unlisted code stays a number),
  for every other source the ``dataTypeNumber`` as text (its meaning is source-specific).
- ``before_image`` / ``after_image``: map column -> value text, aligned positionally with
  ``fields``. The map is NULL when the image is Avro null (or a string). Three states per
  column: key absent = EmptyObject ``NONE`` (value not provided); key present with NULL =
  EmptyObject ``NULL`` or an Avro null element (SQL NULL); text otherwise.
- ``after_image_is_partial``: true when ``afterImages`` is an array with at least one ``NONE``
  (the image then holds only the provided columns), false for a full array, NULL when
  there is no after image array.
- ``ddl_text``: ``afterImages`` when ``operation = DDL`` and it is a string.
- ``born_timestamp_ms``: ``bornTimestamp`` of the newer revision as sent; NULL for the older.
  The schema documents epoch milliseconds, but real producers write epoch *seconds*
  (docs/formats.md 4a: the records printed by the public demo cloudkdb/demo,
  aliyun-dts-subscribe-python/dts_subscribe.py, have ``bornTimestamp`` equal to
  ``sourceTimestamp``), so it is kept raw and not used as a time; the SQL model takes the
  capture time from ``tags["readerThroughoutTime"]`` (ms).
- A negative ``id`` or ``sourceTimestamp`` is ``invalid_field_value``: they form the ordering
  key, which is fixed-width non-negative digits. So is a ``sourceTimestamp`` after the year
  9999, or a ``tags["readerThroughoutTime"]`` that is not epoch milliseconds in the years
  1-9999 (Spark's timestamps hold no other time).

A value truncated exactly at the start of ``bornTimestamp`` is a complete record of the older
revision (the older revision is a prefix of the newer one) and decodes as such; any other
truncation leaves an incomplete value and is ``avro_schema_mismatch``.

Value text: Integer -> ``value``; Decimal -> ``value`` exactly; Float -> ``repr`` of the
double; Character -> ``value`` bytes decoded with ``charset`` (utf8/utf8mb3/utf8mb4/utf-8 ->
utf-8, latin1 -> cp1252 as MySQL defines its latin1, the five bytes cp1252 leaves undefined
mapped to the same code points, gbk, gb2312, gb18030, big5, ascii, and the spellings
iso-8859-1, al32utf8, zhs16gbk, MySQL's big-endian utf16 / ucs2 / utf32); an unknown charset or
undecodable bytes give **base64** text of the bytes; Timestamp -> UTC ISO-8601 with
microseconds (``millis`` holds microseconds), e.g. ``2021-03-01T12:00:00.123456Z``;
DateTime -> ``YYYY-MM-DD HH:MM:SS[.ffffff]`` from the non-null parts (date-only or time-only
when the other parts are null; ``.ffffff`` when ``millis``, i.e. microseconds, is not null);
TimestampWithTimeZone -> DateTime text + ``' '`` + timezone; BinaryGeometry / BinaryObject ->
base64 of ``value``; TextGeometry / TextObject -> ``value``.
"""

from __future__ import annotations

import base64
import codecs
import functools
import io
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from operator import itemgetter
from typing import Any

import fastavro
import pyarrow as pa

from cdc_lakehouse.decode import batches as arrow_batches
from cdc_lakehouse.decode import shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import loads
from cdc_lakehouse.decode.shared import DecodeError
from cdc_lakehouse.formats.dts_avro.avro_schema import NAMESPACE, PARSED_NEW, PARSED_OLD

REASONS = {
    "empty_value": shared.STRUCTURAL_REASONS["empty_value"],
    "avro_schema_mismatch": "the value is not a DTS Avro Record of either schema revision",
    "invalid_field_value": "a field decodes but holds an invalid value",
    shared.DECODER_ERROR: shared.STRUCTURAL_REASONS[shared.DECODER_ERROR],
}

_STR = pa.string()
_MAP = pa.map_(pa.string(), pa.string())
DTS_FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("record_id", pa.int64()),
    pa.field("record_version", pa.int32()),
    pa.field("source_timestamp", pa.int64()),
    pa.field("source_position", _STR),
    pa.field("safe_source_position", _STR),
    pa.field("source_txid", _STR),
    pa.field("source_type", _STR),
    pa.field("source_version", _STR),
    pa.field("operation", _STR),
    pa.field("object_name", _STR),
    pa.field("source_database", _STR),
    pa.field("source_schema", _STR),
    pa.field("source_table", _STR),
    pa.field("process_timestamps", pa.list_(pa.int64())),
    pa.field("tags", _MAP),
    pa.field("key_columns", pa.list_(pa.string())),
    pa.field("key_source", _STR),
    pa.field("key_name", _STR),
    pa.field("column_names", pa.list_(pa.string())),
    pa.field("column_type_numbers", pa.list_(pa.int32())),
    pa.field("column_types", _MAP),
    pa.field("before_image", _MAP),
    pa.field("after_image", _MAP),
    pa.field("after_image_is_partial", pa.bool_()),
    pa.field("ddl_text", _STR),
    pa.field("born_timestamp_ms", pa.int64()),
]
DTS_SCHEMA = pa.schema(DTS_FIELDS)
FIELDS = DTS_FIELDS
"""The decoder's output fields (the name every decoder module exports)."""
_NAMES = [f.name for f in DTS_FIELDS]
_MAP_NAMES = [f.name for f in DTS_FIELDS if pa.types.is_map(f.type)]

# MySQL binlog column type code -> type name (docs/formats.md section 4a).
MYSQL_TYPE_NAMES: dict[int, str] = {
    0: "DECIMAL",
    1: "TINY",
    2: "SHORT",
    3: "LONG",
    4: "FLOAT",
    5: "DOUBLE",
    6: "NULL",
    7: "TIMESTAMP",
    8: "LONGLONG",
    9: "INT24",
    10: "DATE",
    11: "TIME",
    12: "DATETIME",
    13: "YEAR",
    15: "VARCHAR",
    16: "BIT",
    17: "TIMESTAMP2",
    18: "DATETIME2",
    19: "TIME2",
    245: "JSON",
    246: "NEWDECIMAL",
    247: "ENUM",
    248: "SET",
    249: "TINY_BLOB",
    250: "MEDIUM_BLOB",
    251: "LONG_BLOB",
    252: "BLOB",
    253: "VAR_STRING",
    254: "STRING",
    255: "GEOMETRY",
}

_CHARSETS = {
    "utf8": "utf-8",
    "utf8mb3": "utf-8",
    "utf8mb4": "utf-8",
    "utf-8": "utf-8",
    "latin1": "cp1252",
    "gbk": "gbk",
    "gb2312": "gb2312",
    "gb18030": "gb18030",
    "big5": "big5",
    "ascii": "ascii",
    # Java / Oracle spellings of the same encodings
    "iso-8859-1": "latin-1",
    "al32utf8": "utf-8",
    "zhs16gbk": "gbk",
    # MySQL's utf16 / ucs2 / utf32 are big-endian without a byte-order mark
    "utf16": "utf-16-be",
    "ucs2": "utf-16-be",
    "utf32": "utf-32-be",
}
_ESCAPED_DOT = "\\u002E"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _read_exact(raw: bytes, schema: Any) -> tuple[dict[str, Any] | None, str]:
    """Read ``raw`` with ``schema``; the record only if every byte is consumed, else why not."""
    stream = io.BytesIO(raw)
    try:
        record = fastavro.schemaless_reader(stream, schema, return_record_name=True)
    except Exception as exc:  # any reader failure means "not this revision"
        return None, f"{type(exc).__name__}: {exc}"
    if stream.tell() != len(raw):
        return None, f"{len(raw) - stream.tell()} of {len(raw)} bytes left unread"
    if not isinstance(record, dict):
        return None, "not a record"
    return record, ""


_REVISIONS: list[tuple[Any, bool]] = [(PARSED_NEW, True), (PARSED_OLD, False)]
"""The parsed schema revisions (and whether each is the newer one), the last that fit first."""


def _read_record(raw: bytes) -> tuple[dict[str, Any], int | None]:
    """The record in ``raw`` and its ``bornTimestamp`` (None for the older revision).

    Each revision reads the bytes on its own, so trying first the one that fit last changes
    nothing but the time: the older revision is a prefix of the newer one, and at most one of
    them consumes exactly all bytes.

    Raises:
        DecodeError: ``avro_schema_mismatch`` naming why each revision does not fit.
    """
    why: dict[bool, str] = {}
    for schema, newer in list(_REVISIONS):
        record, why[newer] = _read_exact(raw, schema)
        if record is not None:
            if _REVISIONS[0][1] is not newer:
                _REVISIONS.reverse()
            return record, record["bornTimestamp"] if newer else None
    raise DecodeError(
        "avro_schema_mismatch", f"with bornTimestamp: {why[True]}; without: {why[False]}"
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _undefined_as_latin1(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: a byte cp1252 leaves undefined maps to the same code point (MySQL)."""
    if not isinstance(error, UnicodeDecodeError):  # a decoding handler only
        raise error
    return error.object[error.start : error.end].decode("latin-1"), error.end


codecs.register_error("cdc_mysql_latin1", _undefined_as_latin1)


def _character(value: dict[str, Any]) -> str:
    data = value["value"]
    codec = _CHARSETS.get(str(value["charset"]).strip().lower())
    if codec is None:
        return _b64(data)
    try:
        if codec == "cp1252":
            return data.decode(codec, errors="cdc_mysql_latin1")
        return data.decode(codec)
    except UnicodeDecodeError:
        return _b64(data)


def _timestamp(value: dict[str, Any]) -> str:
    try:
        moment = _EPOCH + timedelta(seconds=value["timestamp"], microseconds=value["millis"])
    except OverflowError:
        raise DecodeError(
            "invalid_field_value",
            f"Timestamp out of range: {value['timestamp']}s {value['millis']}us",
        ) from None
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_DATE_TIME_PARTS = itemgetter("year", "month", "day", "hour", "minute", "second", "millis")


def _date_time(value: dict[str, Any]) -> str:
    year, month, day, hour, minute, second, millis = _DATE_TIME_PARTS(value)
    if None not in (year, month, day, hour, minute, second):  # the usual full date-time
        text = f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}"
        return text if millis is None else f"{text}.{millis:06d}"
    date_parts = [
        (f"{value[k]:04d}" if k == "year" else f"{value[k]:02d}")
        for k in ("year", "month", "day")
        if value[k] is not None
    ]
    time_parts = [f"{value[k]:02d}" for k in ("hour", "minute", "second") if value[k] is not None]
    time_text = ":".join(time_parts)
    if millis is not None:
        time_text += f".{millis:06d}"
    return " ".join(p for p in ("-".join(date_parts), time_text) if p)


def _timestamp_with_time_zone(value: dict[str, Any]) -> str:
    return f"{_date_time(value['value'])} {value['timezone']}"


_TEXT_OF: dict[str, Callable[[dict[str, Any]], str]] = {
    "Integer": itemgetter("value"),
    "Decimal": itemgetter("value"),
    "TextGeometry": itemgetter("value"),
    "TextObject": itemgetter("value"),
    "Float": lambda value: repr(value["value"]),
    "Character": _character,
    "Timestamp": _timestamp,
    "DateTime": _date_time,
    "TimestampWithTimeZone": _timestamp_with_time_zone,
    "BinaryGeometry": lambda value: _b64(value["value"]),
    "BinaryObject": lambda value: _b64(value["value"]),
}
"""Image value type (the last part of its full name) -> the text of its value."""


@functools.lru_cache(maxsize=64)
def _text_of(full_name: str) -> Callable[[dict[str, Any]], str]:
    """The text function of an image value type by full name (a few names, looked up often).

    Raises:
        DecodeError: ``invalid_field_value`` for a type that is no value type.
    """
    text_of = _TEXT_OF.get(full_name.rsplit(".", 1)[-1])
    if text_of is None:
        raise DecodeError("invalid_field_value", f"unexpected image value type {full_name}")
    return text_of


def _value_text(element: Any) -> str | None:
    """Text of one image element (``None`` = SQL NULL); raises only DecodeError."""
    if element is None:
        return None
    if isinstance(element, tuple):
        full_name, value = element
    else:  # an enum symbol outside a named-type tuple
        full_name, value = f"{NAMESPACE}.EmptyObject", element
    return _text_of(full_name)(value)


def _image(images: Any, names: list[str] | None, which: str) -> dict[str, str | None] | None:
    """The image as column -> text without the NONE (not provided) columns (``names`` are
    distinct)."""
    if images is None or isinstance(images, str):
        return None
    if names is None:
        raise DecodeError("invalid_field_value", f"{which} is an array but fields is not")
    if len(images) != len(names):
        raise DecodeError(
            "invalid_field_value",
            f"{which} has {len(images)} values for {len(names)} fields",
        )
    out: dict[str, str | None] = {}
    for name, element in zip(names, images, strict=True):
        if type(element) is tuple:
            full_name, value = element
            if not full_name.endswith(".EmptyObject"):  # a value
                out[name] = _text_of(full_name)(value)
                continue
            element = value
        if element == "NONE":
            continue
        out[name] = None if element == "NULL" else _value_text(element)
    return out


@functools.lru_cache(maxsize=1024)
def _split_object_name(name: str | None) -> tuple[str | None, str | None, str | None]:
    """(database, schema, table) of ``objectName`` (cached: a topic has few tables).

    Raises:
        DecodeError: ``invalid_field_value`` for more than three parts.
    """
    if not name:
        return None, None, None
    parts = [p.replace(_ESCAPED_DOT, ".") for p in name.split(".")]
    if len(parts) == 1:
        return parts[0], None, None
    if len(parts) == 2:
        return parts[0], None, parts[1]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    raise DecodeError("invalid_field_value", f"objectName has {len(parts)} dot-separated parts")


def _has_none(images: Any) -> bool | None:
    """Whether an image array holds an EmptyObject NONE; None when it is not an array."""
    if not isinstance(images, list):
        return None
    return any(
        element == "NONE" or (isinstance(element, tuple) and element[1] == "NONE")
        for element in images
    )


def _reader_time(tags: dict[str, str]) -> None:
    """Check ``tags["readerThroughoutTime"]`` (epoch ms, read as the capture time in SQL)."""
    text = tags.get("readerThroughoutTime")
    if text is None:
        return
    if text.isascii() and text.isdigit():  # the usual plain digits
        shared.epoch(int(text), "ms", "tags.readerThroughoutTime")
        return
    if not text.strip().isascii() or not text.strip().lstrip("-").isdigit():
        raise DecodeError(
            "invalid_field_value", f"tags.readerThroughoutTime is not epoch milliseconds: {text!r}"
        )
    shared.epoch(int(text), "ms", "tags.readerThroughoutTime")


def _key(tags: dict[str, str]) -> tuple[list[str] | None, str | None, str | None]:
    """(key columns, key source, key name) from ``tags["pk_uk_info"]``; see module doc."""
    text = tags.get("pk_uk_info")
    if text is None:
        return None, None, None
    return _key_of(text)


@functools.lru_cache(maxsize=1024)
def _key_of(text: str) -> tuple[list[str] | None, str | None, str | None]:
    """:func:`_key` of a ``pk_uk_info`` text (cached: a table sends the same text every time;
    the result is shared and must not be changed).

    Raises:
        DecodeError: ``invalid_field_value`` when the text is not JSON mapping key names to
            arrays of column names.
    """
    try:
        info = loads(text)
    except ValueError as exc:
        raise DecodeError("invalid_field_value", f"tags.pk_uk_info is not JSON: {exc}") from None
    if not isinstance(info, dict) or not all(
        isinstance(cols, list) and all(isinstance(c, str) for c in cols) for cols in info.values()
    ):
        raise DecodeError(
            "invalid_field_value", "tags.pk_uk_info must map key names to arrays of column names"
        )
    if info.get("PRIMARY"):
        return list(info["PRIMARY"]), "primary_key", "PRIMARY"
    for name, columns in info.items():
        if columns and name != "PRIMARY":
            return list(columns), "unique_key", name
    return None, None, None


@functools.lru_cache(maxsize=1024)
def _column_types(
    names: tuple[str, ...], codes: tuple[int, ...], source_type: str
) -> dict[str, str]:
    """Column -> type text (see module doc) of distinct column ``names`` and their type codes.

    Cached: a table sends the same fields in every record, and one shared dict per distinct
    list is converted to Arrow once per batch (the loop converts each map object once)."""
    if source_type == "MySQL":
        return {n: MYSQL_TYPE_NAMES.get(c, str(c)) for n, c in zip(names, codes, strict=True)}
    return {n: str(c) for n, c in zip(names, codes, strict=True)}


def decode_record(raw: bytes | None) -> dict[str, Any]:
    """Decode one Kafka value into the :data:`DTS_FIELDS` values (see module doc), map fields
    as ``(column, text)`` pairs; raises only on a decoder bug, which :func:`decode_batches`
    turns into a ``decoder_error`` row."""
    return shared.map_pairs(decode_row(raw), _MAP_NAMES)


def decode_row(raw: bytes | None) -> dict[str, Any]:
    """:func:`decode_record` with map fields as column -> text dicts (what
    :func:`decode_batches` converts to Arrow)."""
    try:
        if not raw:
            raise DecodeError("empty_value", REASONS["empty_value"])
        raw = bytes(raw)
        record, born = _read_record(raw)
        for name in ("id", "sourceTimestamp"):
            if record[name] < 0:
                raise DecodeError("invalid_field_value", f"{name} is negative: {record[name]}")
        shared.epoch(record["sourceTimestamp"], "s", "sourceTimestamp")
        tags = record["tags"]
        _reader_time(tags)
        fields = record["fields"]
        names = types = None
        if isinstance(fields, list):
            names = list(map(_FIELD_NAME, fields))
            types = list(map(_FIELD_TYPE, fields))
            if len(set(names)) != len(names):
                twice = sorted({n for n in names if names.count(n) > 1})
                raise DecodeError(
                    "invalid_field_value", f"fields lists column(s) twice: {', '.join(twice)}"
                )
        database, schema, table = _split_object_name(record["objectName"])
        after = record["afterImages"]
        key_columns, key_source, key_name = _key(tags)
        source_type = record["source"]["sourceType"]
        return {
            "decode_error": None,
            "decode_error_detail": None,
            "record_id": record["id"],
            "record_version": record["version"],
            "source_timestamp": record["sourceTimestamp"],
            "source_position": record["sourcePosition"],
            "safe_source_position": record["safeSourcePosition"],
            "source_txid": record["sourceTxid"],
            "source_type": source_type,
            "source_version": record["source"]["version"],
            "operation": record["operation"],
            "object_name": record["objectName"],
            "source_database": database,
            "source_schema": schema,
            "source_table": table,
            "process_timestamps": record["processTimestamps"],
            "tags": tags,
            "key_columns": key_columns,
            "key_source": key_source,
            "key_name": key_name,
            "column_names": names,
            "column_type_numbers": types,
            "column_types": None
            if names is None or types is None
            else _column_types(tuple(names), tuple(types), source_type),
            "before_image": _image(record["beforeImages"], names, "beforeImages"),
            "after_image": _image(after, names, "afterImages"),
            "after_image_is_partial": _has_none(after),
            "ddl_text": after if record["operation"] == "DDL" and isinstance(after, str) else None,
            "born_timestamp_ms": born,
        }
    except DecodeError as invalid:
        return shared.error_row(_NAMES, invalid.reason, invalid.detail)


_FIELD_NAME = itemgetter("name")
_FIELD_TYPE = itemgetter("dataTypeNumber")
decode_one = decode_record
"""Alias of :func:`decode_record` (the name every decoder module exports)."""


def decode_batches(
    batches: Iterator[pa.RecordBatch], *, keep_value: bool = False
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function: append :data:`DTS_FIELDS` to each batch (same row count); the
    input ``value`` is passed through only with ``keep_value``."""
    return append_decoded(batches, decode_row, DTS_FIELDS, keep_column=keep_value)


def output_schema_ddl(input_schema_ddl: str, *, keep_value: bool = False) -> str:
    """Spark DDL of :func:`decode_batches`' output for an input with ``input_schema_ddl``
    (``value`` left out unless ``keep_value``)."""
    return arrow_batches.output_schema_ddl(input_schema_ddl, DTS_FIELDS, keep_column=keep_value)
