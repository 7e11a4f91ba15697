"""Encoder of DTS Avro records (docs/formats.md section 4a; seed 003): the inverse of
:mod:`cdc_lakehouse.formats.dts_avro.decoder`, for sample data, tests and the change simulator.

Build a ``com.alibaba.dts.formats.avro.Record`` dict with :func:`make_record` from a friendly
description (operation, table, columns, before / after values as mappings) and write it with
:func:`encode` (plain Avro binary, no schema-registry header, as DTS writes it to Kafka).

Image values: a mapping column -> value, written positionally in the order of ``columns``.
A column missing from the mapping is written as EmptyObject ``NONE`` (value not provided);
``None`` is EmptyObject ``NULL`` (SQL NULL). Python values map to the value types:

- ``int`` -> Integer (``value`` is the decimal text); ``bool`` -> Integer 1 / 0;
- ``str`` -> Character in ``utf8mb4``; ``bytes`` -> BinaryObject of type ``BLOB``;
- ``decimal.Decimal`` -> Decimal (exact text, precision / scale from the digits);
- ``float`` -> Float;
- anything built by the helpers (:func:`integer`, :func:`character`, :func:`decimal`,
  :func:`floating`, :func:`timestamp`, :func:`date_time`, :func:`timestamp_tz`,
  :func:`binary_geometry`, :func:`text_geometry`, :func:`binary_object`, :func:`text_object`)
  or the constants :data:`NULL` / :data:`NONE` is written as it is.

``born_timestamp=None`` writes the older schema revision (no ``bornTimestamp``); an integer
writes the newer one with that value.
"""

from __future__ import annotations

import enum
import io
import json
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import fastavro

from cdc_lakehouse.formats.dts_avro.avro_schema import NAMESPACE, PARSED_NEW, PARSED_OLD

Element = tuple[str, Any] | str | None
"""One image element in fastavro's union notation: ``(full type name, value)``."""


class EmptyObject(enum.Enum):
    """The EmptyObject symbols (a sentinel, so that the text "NULL" stays a text value)."""

    NULL = "NULL"
    NONE = "NONE"


NULL = EmptyObject.NULL
"""EmptyObject NULL: the column is SQL NULL."""
NONE = EmptyObject.NONE
"""EmptyObject NONE: the column's value is not provided."""


def _typed(name: str, **value: Any) -> tuple[str, dict[str, Any]]:
    return (f"{NAMESPACE}.{name}", value)


def integer(value: int | str, precision: int | None = None) -> Element:
    """An Integer element (``value`` as decimal text; precision defaults to its digit count)."""
    text = str(value)
    return _typed("Integer", precision=precision or len(text.lstrip("-")), value=text)


def character(value: str | bytes, charset: str = "utf8mb4") -> Element:
    """A Character element: text encoded with ``charset`` (a Python codec name or a MySQL
    charset name of the decoder), or raw bytes as given."""
    if isinstance(value, str):
        codec = {"utf8mb4": "utf-8", "utf8": "utf-8", "utf8mb3": "utf-8", "latin1": "cp1252"}
        value = value.encode(codec.get(charset.lower(), charset))
    return _typed("Character", charset=charset, value=value)


def decimal(
    value: str | Decimal, precision: int | None = None, scale: int | None = None
) -> Element:
    """A Decimal element holding ``value``'s exact text."""
    text = str(value)
    digits = text.lstrip("-").replace(".", "")
    frac = len(text.split(".", 1)[1]) if "." in text else 0
    return _typed(
        "Decimal",
        value=text,
        precision=precision if precision is not None else len(digits),
        scale=scale if scale is not None else frac,
    )


def floating(value: float, precision: int = 0, scale: int = 0) -> Element:
    """A Float element (an IEEE double)."""
    return _typed("Float", value=float(value), precision=precision, scale=scale)


def timestamp(seconds: int, micros: int = 0) -> Element:
    """A Timestamp element: epoch seconds plus microseconds (the field is named ``millis``)."""
    return _typed("Timestamp", timestamp=seconds, millis=micros)


def _date_time_value(
    year: int | None = None,
    month: int | None = None,
    day: int | None = None,
    hour: int | None = None,
    minute: int | None = None,
    second: int | None = None,
    micros: int | None = None,
) -> dict[str, int | None]:
    return {
        "year": year,
        "month": month,
        "day": day,
        "hour": hour,
        "minute": minute,
        "second": second,
        "millis": micros,
    }


def date_time(
    year: int | None = None,
    month: int | None = None,
    day: int | None = None,
    hour: int | None = None,
    minute: int | None = None,
    second: int | None = None,
    micros: int | None = None,
) -> Element:
    """A DateTime element; parts left None are Avro null (a DATE or a TIME sets only its
    parts). ``micros`` goes to the field named ``millis``, which holds microseconds."""
    return _typed("DateTime", **_date_time_value(year, month, day, hour, minute, second, micros))


def timestamp_tz(
    timezone: str,
    year: int,
    month: int,
    day: int,
    hour: int = 0,
    minute: int = 0,
    second: int = 0,
    micros: int | None = None,
) -> Element:
    """A TimestampWithTimeZone element: a DateTime plus the zone text (e.g. ``+08:00``)."""
    value = _date_time_value(year, month, day, hour, minute, second, micros)
    return _typed("TimestampWithTimeZone", value=value, timezone=timezone)


def binary_geometry(type_name: str, value: bytes) -> Element:
    """A BinaryGeometry element (e.g. WKB bytes of type ``POINT``)."""
    return _typed("BinaryGeometry", type=type_name, value=value)


def text_geometry(type_name: str, value: str) -> Element:
    """A TextGeometry element (e.g. WKT text of type ``POINT``)."""
    return _typed("TextGeometry", type=type_name, value=value)


def binary_object(type_name: str, value: bytes) -> Element:
    """A BinaryObject element (e.g. a ``BLOB``)."""
    return _typed("BinaryObject", type=type_name, value=value)


def text_object(type_name: str, value: str) -> Element:
    """A TextObject element (e.g. ``JSON`` or ``TEXT``)."""
    return _typed("TextObject", type=type_name, value=value)


def element(value: Any) -> Element:
    """The image element of one friendly value (see module doc)."""
    if value is None:
        value = NULL
    if isinstance(value, EmptyObject):
        return value.value
    if isinstance(value, tuple):
        return value
    if isinstance(value, bool):
        return integer(int(value), precision=1)
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, Decimal):
        return decimal(value)
    if isinstance(value, float):
        return floating(value)
    if isinstance(value, str):
        return character(value)
    if isinstance(value, bytes):
        return binary_object("BLOB", value)
    raise TypeError(f"no DTS Avro value type for {type(value).__name__} {value!r}")


def image(columns: Sequence[tuple[str, int]], values: Mapping[str, Any]) -> list[Element]:
    """The positional image array of ``values`` (column -> value) over ``columns``; a column
    missing from ``values`` is NONE.

    Raises:
        ValueError: ``values`` names a column that ``columns`` does not list.
    """
    names = [name for name, _code in columns]
    unknown = sorted(set(values) - set(names))
    if unknown:
        raise ValueError(f"image names columns not in columns: {', '.join(unknown)}")
    return [element(values.get(name, NONE)) for name in names]


def pk_uk_info(
    primary_key: Sequence[str] | None = None,
    unique_keys: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """The ``tags["pk_uk_info"]`` JSON text, e.g. ``{"PRIMARY":["id"]}``."""
    info: dict[str, list[str]] = {}
    if primary_key:
        info["PRIMARY"] = list(primary_key)
    for name, columns in (unique_keys or {}).items():
        info[name] = list(columns)
    return json.dumps(info, separators=(",", ":"))


def make_record(
    operation: str,
    *,
    record_id: int,
    source_timestamp: int,
    object_name: str | None = None,
    columns: Sequence[tuple[str, int]] | None = None,
    before: Mapping[str, Any] | str | None = None,
    after: Mapping[str, Any] | str | None = None,
    primary_key: Sequence[str] | None = None,
    unique_keys: Mapping[str, Sequence[str]] | None = None,
    source_type: str = "MySQL",
    source_version: str = "8.0.28",
    source_position: str | None = None,
    safe_source_position: str | None = None,
    source_txid: str = "0",
    tags: Mapping[str, str] | None = None,
    process_timestamps: Sequence[int] | None = None,
    version: int = 0,
    born_timestamp: int | None = 0,
) -> dict[str, Any]:
    """A DTS Avro ``Record`` dict ready for :func:`encode`.

    Args:
        operation: an Operation symbol (INSERT, UPDATE, DELETE, DDL, BEGIN, COMMIT, ...).
        record_id: ``id`` (unique in the stream). source_timestamp: epoch *seconds*.
        object_name: ``db.table`` / ``db.schema.table`` (escape a dot in a name as ``\\u002E``).
        columns: ``(name, dataTypeNumber)`` pairs (``fields``); None writes ``fields`` null.
        before / after: mappings column -> value (see module doc), a string (the DDL text of
            a DDL record, as ``afterImages``), or None (Avro null).
        primary_key / unique_keys: written as ``tags["pk_uk_info"]`` when given.
        source_position: ``sourcePosition``; defaults to ``"<id>@1"``.
        tags: extra tags (merged after pk_uk_info).
        born_timestamp: ``bornTimestamp`` (newer revision), or None for the older revision.
    """
    all_tags: dict[str, str] = {}
    if primary_key or unique_keys:
        all_tags["pk_uk_info"] = pk_uk_info(primary_key, unique_keys)
    all_tags.update(tags or {})

    def images(values: Mapping[str, Any] | str | None) -> list[Element] | str | None:
        if values is None or isinstance(values, str):
            return values
        if columns is None:
            raise ValueError("an image needs columns")
        return image(columns, values)

    position = source_position if source_position is not None else f"{record_id}@1"
    record: dict[str, Any] = {
        "version": version,
        "id": record_id,
        "sourceTimestamp": source_timestamp,
        "sourcePosition": position,
        "safeSourcePosition": safe_source_position if safe_source_position else position,
        "sourceTxid": source_txid,
        "source": {"sourceType": source_type, "version": source_version},
        "operation": operation,
        "objectName": object_name,
        "processTimestamps": list(process_timestamps) if process_timestamps else None,
        "tags": all_tags,
        "fields": (
            [{"name": n, "dataTypeNumber": c} for n, c in columns] if columns is not None else None
        ),
        "beforeImages": images(before),
        "afterImages": images(after),
    }
    if born_timestamp is not None:
        record["bornTimestamp"] = born_timestamp
    return record


def encode(record: Mapping[str, Any]) -> bytes:
    """Plain Avro binary of a ``Record`` dict: the newer revision when it has
    ``bornTimestamp``, else the older one."""
    schema = PARSED_NEW if "bornTimestamp" in record else PARSED_OLD
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, dict(record))
    return out.getvalue()
