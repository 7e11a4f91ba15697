"""Decoder of the DataWorks / DataHub Blob JSON envelope (docs/formats.md section 1; seeds 000
and 002).

Input: Arrow batches with at least ``topic string, partition int, offset bigint, value binary``
(rows of ``bronze.kafka_records``); every input column but ``value`` (it too with
``keep_value``) is passed through unchanged. Output adds the envelope's fields
(:data:`ENVELOPE_SCHEMA`), one row per input row, never dropping one:

- ``decode_error`` / ``decode_error_detail``: NULL when the message is structurally valid, else
  a reason code (:data:`REASONS`) and a human-readable detail. Rows with an error are routed
  to ``silver.quarantine`` by the SQL models.
- ``op_code``: ``payload.op`` as sent (case-sensitive; mapped to the normalized op in SQL).
- ``source_db_type`` .. ``source_table``: ``schema.source`` fields (any may be NULL).
- ``primary_key``: ``schema.primaryKey`` (NULL when null or absent).
- ``column_types``: ``schema.dataColumn`` as column -> DataWorks type (BOOLEAN, DOUBLE, DATE,
  BYTES, LONG, STRING), in message order.
- ``sequence_id``: ``payload.sequenceId`` as digits (JSON string or number accepted).
- ``scn``: Oracle SCN text. ``event_time_ms`` / ``system_time_ms`` / ``checkpoint_time_ms``:
  epoch milliseconds (UTC) from ``payload.timestamp``.
- ``before_image`` / ``after_image``: ``payload.before.dataColumn`` / ``after.dataColumn`` as
  column -> value text; the map is NULL when the image is not carried, a key maps to NULL for
  SQL NULL, and a column that is not provided is absent. Value text is exact: JSON numbers keep
  their digits (``1.50`` stays ``1.50``), BYTES stay base64 text, DATE stays epoch-ms digits,
  BOOLEAN is ``true`` / ``false``, DOUBLE sent as a string (``"1.100000"``) stays as sent.
- ``ddl_text``: ``payload.ddl.text`` (``ddlMeta`` is an opaque Java serialization; not kept).
- ``envelope_version``: top-level ``version``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from cdc_lakehouse.decode import batches as arrow_batches
from cdc_lakehouse.decode import shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import JsonFloat
from cdc_lakehouse.decode.shared import DecodeError

REASONS = dict(shared.STRUCTURAL_REASONS)

_STR = pa.string()
_MAP = pa.map_(pa.string(), pa.string())
ENVELOPE_FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("envelope_version", _STR),
    pa.field("op_code", _STR),
    pa.field("source_db_type", _STR),
    pa.field("source_db_version", _STR),
    pa.field("source_database", _STR),
    pa.field("source_schema", _STR),
    pa.field("source_table", _STR),
    pa.field("primary_key", pa.list_(pa.string())),
    pa.field("column_types", _MAP),
    pa.field("sequence_id", _STR),
    pa.field("scn", _STR),
    pa.field("event_time_ms", pa.int64()),
    pa.field("system_time_ms", pa.int64()),
    pa.field("checkpoint_time_ms", pa.int64()),
    pa.field("before_image", _MAP),
    pa.field("after_image", _MAP),
    pa.field("ddl_text", _STR),
]
ENVELOPE_SCHEMA = pa.schema(ENVELOPE_FIELDS)
_NAMES = [f.name for f in ENVELOPE_FIELDS]


_MAP_NAMES = [f.name for f in ENVELOPE_FIELDS if pa.types.is_map(f.type)]
TextMap = dict[str, str | None] | list[tuple[str, str | None]]
"""A map field's value in :func:`decode_row`: column -> text, a list of ``(column, text)``
pairs when a column is named twice."""


_MS_LOW, _MS_HIGH = shared.EPOCH_LIMITS["ms"]


def _millis(parent: dict[str, Any] | None, key: str) -> int | None:
    if parent is None:
        return None
    value = parent.get(key)
    if value is None or (type(value) is int and _MS_LOW <= value <= _MS_HIGH):
        return value
    where = f"payload.timestamp.{key}"
    if isinstance(value, int) and not isinstance(value, bool):
        return shared.epoch(value, "ms", where)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return shared.epoch(int(value), "ms", where)
    raise DecodeError("invalid_field_type", f"{where} must be epoch milliseconds")


def _image(payload: dict[str, Any], key: str) -> dict[str, str | None] | None:
    wrapper = shared.obj(payload, key, "payload.")
    if wrapper is None:
        return None
    columns = shared.obj(wrapper, "dataColumn", f"payload.{key}.")
    return shared.texts(columns) if columns is not None else None


_NAME_KINDS = frozenset((str, JsonFloat))
"""Types :func:`isinstance` takes for ``str`` in a parsed message."""


def _column_types(schema: dict[str, Any] | None) -> TextMap | None:
    if schema is None or schema.get("dataColumn") is None:
        return None
    columns = schema["dataColumn"]
    if not isinstance(columns, list):
        raise DecodeError("invalid_field_type", "schema.dataColumn must be an array")
    first = columns[0].get("name") if columns and type(columns[0]) is dict else None
    key = (len(columns), first if type(first) is str else None)
    seen = _SEEN_COLUMNS.get(key)
    if seen is not None and seen[0] == columns:
        return seen[1]
    column_types = _checked_column_types(columns)
    if not any(type(column.get("type")) is int for column in columns):
        if len(_SEEN_COLUMNS) >= 256:
            _SEEN_COLUMNS.clear()
        _SEEN_COLUMNS[key] = (columns, column_types)
    return column_types


_SEEN_COLUMNS: dict[tuple[int, str | None], tuple[list[Any], TextMap]] = {}
"""Recent checked ``schema.dataColumn`` lists (by length and first name) and their column
types.

A table sends the same columns in every message. A list equal to a checked one has the same
column types, which saves checking it again, and its rows share one map object, converted to
Arrow once per batch (the loop converts each map object once). Equal means the same: names
are strings, and a type is a string or null, since a list with a number type (to which
``true`` is equal) is not kept."""


def _checked_column_types(columns: list[Any]) -> TextMap:
    """``schema.dataColumn`` items as column -> type text, or as a list of pairs when a name
    repeats.

    Raises:
        DecodeError: ``invalid_field_type`` for the first item without a string name or with
            a type that is not a string, number or null.
    """
    pairs = []
    for column in columns:
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            raise DecodeError("invalid_field_type", "schema.dataColumn items need a string name")
        pairs.append((column["name"], shared.text(column, "type", "schema.dataColumn[].")))
    as_dict = dict(pairs)
    return as_dict if len(as_dict) == len(pairs) else pairs


def _primary_key(schema: dict[str, Any] | None) -> list[str] | None:
    if schema is None or schema.get("primaryKey") is None:
        return None
    keys = schema["primaryKey"]
    if not isinstance(keys, list) or not _NAME_KINDS.issuperset(map(type, keys)):
        raise DecodeError("invalid_field_type", "schema.primaryKey must be an array of names")
    return list(keys)


def decode_envelope(raw: bytes | None) -> dict[str, Any]:
    """Decode one Kafka value into the envelope fields (see module doc), map fields as
    ``(column, text)`` pairs in message order; never raises."""
    return shared.map_pairs(decode_row(raw), _MAP_NAMES)


def decode_row(raw: bytes | None) -> dict[str, Any]:
    """:func:`decode_envelope` with map fields as :data:`TextMap` values (what
    :func:`decode_batches` converts to Arrow)."""
    try:
        message = shared.parse_json_object(raw)
        payload = shared.obj(message, "payload", "")
        if payload is None:
            raise DecodeError("missing_required_field", "payload is missing")
        if payload.get("op") is None:
            raise DecodeError("missing_required_field", "payload.op is missing")
        if not isinstance(payload["op"], str):
            raise DecodeError("invalid_field_type", "payload.op must be a string")
        schema = shared.obj(message, "schema", "")
        source = shared.obj(schema, "source", "schema.") if schema is not None else None
        timestamp = shared.obj(payload, "timestamp", "payload.")
        ddl = shared.obj(payload, "ddl", "payload.")
        return {
            "decode_error": None,
            "decode_error_detail": None,
            "envelope_version": shared.text(message, "version", ""),
            "op_code": payload["op"],
            "source_db_type": shared.text(source, "dbType", "schema.source."),
            "source_db_version": shared.text(source, "dbVersion", "schema.source."),
            "source_database": shared.text(source, "dbName", "schema.source."),
            "source_schema": shared.text(source, "schemaName", "schema.source."),
            "source_table": shared.text(source, "tableName", "schema.source."),
            "primary_key": _primary_key(schema),
            "column_types": _column_types(schema),
            "sequence_id": shared.digits(payload, "sequenceId", "payload."),
            "scn": shared.text(payload, "scn", "payload."),
            "event_time_ms": _millis(timestamp, "eventTime"),
            "system_time_ms": _millis(timestamp, "systemTime"),
            "checkpoint_time_ms": _millis(timestamp, "checkpointTime"),
            "before_image": _image(payload, "before"),
            "after_image": _image(payload, "after"),
            "ddl_text": shared.text(ddl, "text", "payload.ddl."),
        }
    except DecodeError as invalid:
        return shared.error_row(_NAMES, invalid.reason, invalid.detail)


def decode_batches(
    batches: Iterator[pa.RecordBatch], *, keep_value: bool = False
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function: append the envelope columns to each batch (same row count); the
    input ``value`` is passed through only with ``keep_value``."""
    return append_decoded(batches, decode_row, ENVELOPE_FIELDS, keep_column=keep_value)


def output_schema_ddl(input_schema_ddl: str, *, keep_value: bool = False) -> str:
    """Spark DDL of :func:`decode_batches`' output for an input with ``input_schema_ddl``
    (``value`` left out unless ``keep_value``)."""
    return arrow_batches.output_schema_ddl(
        input_schema_ddl, ENVELOPE_FIELDS, keep_column=keep_value
    )
