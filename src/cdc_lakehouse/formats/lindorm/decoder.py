"""Decoder of Lindorm data subscription messages, Debezium format V2.0 (docs/formats.md section 3;
seed 001).

Message: ``{"schema": {...Kafka Connect struct...} | {}, "payload": {"op", "ts_ms", "before",
"after", "source": {"version", "db", "namespace", "table", "ts_ms"}}}``. A message without the
``schema`` / ``payload`` envelope whose top level has ``op`` (Debezium's JSON converter with
schemas disabled) is read as the payload itself.

Output fields (:data:`FIELDS`), one row per Kafka record, never raising:

- ``decode_error`` / ``decode_error_detail``: NULL for a structurally valid message, else a
  reason code (:data:`REASONS`) and what is wrong where. Semantic checks (unknown op, missing
  image, missing timestamps or key columns) are SQL (``stg_lindorm__events``).
- ``op_code``: ``payload.op`` as sent (c, u, d, r; case-sensitive).
- ``table_kind``: ``hbase`` or ``sql``. Seed 001: HBase tables carry every value as base64 of
  the raw bytes, name the row key column ``ROW`` and the other columns
  ``<family>_<qualifier>``. A message is read as an HBase table when an image has a ``ROW``
  column whose value is a valid base64 string; every other value must then be a base64
  string or null (else ``invalid_field_type``). Anything else is a Lindorm SQL (wide) table.
- ``source_version``, ``source_database`` (``source.db``, the cluster), ``source_schema``
  (``source.namespace``), ``source_table`` (``source.table``).
- ``source_ts_ms``: ``source.ts_ms``, epoch ms (UTC) when the row changed in Lindorm.
  ``payload_ts_ms``: ``payload.ts_ms``, epoch ms (UTC) when the message was written to Kafka.
- ``schema_declared``: true when ``schema`` is a struct description, false for ``{}`` / absent.
- ``column_types``: column -> Kafka Connect type (``int32``, ``int64``, ``string``, ...; a
  logical type's ``name`` is appended in parentheses) from the schema's ``after`` (else
  ``before``) struct, in schema order. Without a schema, HBase columns are typed ``bytes``
  (seed 001: HBase stores raw bytes), SQL columns stay NULL.
- ``before_image`` / ``after_image``: column -> value text; NULL map when the image is null or
  absent. SQL tables: JSON numbers keep their exact digits, strings as sent, JSON null = SQL
  NULL. HBase tables: the base64 is decoded; the bytes become UTF-8 text when they are valid
  UTF-8 without control characters other than tab / LF / CR; otherwise the value stays the
  base64 text as sent and the column is listed in ``binary_columns``.
- Full rows: a column absent from ``after`` is "removed / NULL", not "unchanged" (seed 001's
  column delete). So ``after_image`` is completed with NULL for every column the message
  knows of (the before image's columns and the schema's ``after`` fields) but does not carry;
  those columns are listed in ``removed_columns``. ``before_image`` is completed likewise from
  the schema's ``before`` fields.
- ``raw_before_image`` / ``raw_after_image``: HBase only, the base64 values exactly as sent.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from cdc_lakehouse.decode import batches as arrow_batches
from cdc_lakehouse.decode import shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import JsonFloat, value_text
from cdc_lakehouse.decode.shared import DecodeError

REASONS = dict(shared.STRUCTURAL_REASONS)

HBASE_ROW_KEY = "ROW"
_TEXT_CONTROLS = frozenset("\t\n\r")

_STR = pa.string()
_MAP = pa.map_(pa.string(), pa.string())
_LIST = pa.list_(pa.string())
FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("op_code", _STR),
    pa.field("table_kind", _STR),
    pa.field("source_version", _STR),
    pa.field("source_database", _STR),
    pa.field("source_schema", _STR),
    pa.field("source_table", _STR),
    pa.field("source_ts_ms", pa.int64()),
    pa.field("payload_ts_ms", pa.int64()),
    pa.field("schema_declared", pa.bool_()),
    pa.field("column_types", _MAP),
    pa.field("before_image", _MAP),
    pa.field("after_image", _MAP),
    pa.field("removed_columns", _LIST),
    pa.field("binary_columns", _LIST),
    pa.field("raw_before_image", _MAP),
    pa.field("raw_after_image", _MAP),
]
_NAMES = [f.name for f in FIELDS]

Image = dict[str, Any]


def _millis(parent: dict[str, Any] | None, key: str, where: str) -> int | None:
    if parent is None or parent.get(key) is None:
        return None
    value = parent[key]
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return shared.epoch(int(value), "ms", f"{where}{key}")
    if isinstance(value, int) and not isinstance(value, bool | JsonFloat) and value >= 0:
        return shared.epoch(value, "ms", f"{where}{key}")
    raise DecodeError(
        "invalid_field_type", f"{where}{key} must be epoch milliseconds, got {value!r}"
    )


def _struct_fields(schema: dict[str, Any], name: str) -> list[tuple[str, str | None]] | None:
    """The ``(column, type)`` list of the schema's struct field ``name`` (before / after)."""
    fields = schema.get("fields")
    if fields is None:
        return None
    if not isinstance(fields, list):
        raise DecodeError("invalid_field_type", "schema.fields must be an array")
    for field in fields:
        if not isinstance(field, dict):
            raise DecodeError("invalid_field_type", "schema.fields items must be objects")
        if field.get("field") != name:
            continue
        columns = field.get("fields")
        if columns is None:
            return None
        if not isinstance(columns, list):
            raise DecodeError("invalid_field_type", f"schema field {name}.fields must be an array")
        out = []
        for column in columns:
            if not isinstance(column, dict) or not isinstance(column.get("field"), str):
                raise DecodeError(
                    "invalid_field_type", f"schema field {name}.fields items need a string field"
                )
            kind = shared.string(column, "type", f"schema {name}.{column['field']}.")
            logical = shared.string(column, "name", f"schema {name}.{column['field']}.")
            out.append((column["field"], f"{kind} ({logical})" if logical and kind else kind))
        return out
    return None


def _is_hbase(images: list[Image | None]) -> bool:
    for image in images:
        row = image.get(HBASE_ROW_KEY) if image is not None else None
        if isinstance(row, str) and _b64(row) is not None:
            return True
    return False


def _b64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _bytes_text(data: bytes) -> str | None:
    """The bytes as text when they are UTF-8 without control characters (tab, LF, CR are
    allowed); else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if any((ord(ch) < 32 and ch not in _TEXT_CONTROLS) or ord(ch) == 127 for ch in text):
        return None
    return text


def _hbase_image(
    image: Image | None, where: str, binary: list[str]
) -> dict[str, str | None] | None:
    if image is None:
        return None
    out: dict[str, str | None] = {}
    for column, value in image.items():
        if value is None:
            out[column] = None
            continue
        data = _b64(value) if isinstance(value, str) else None
        if data is None:
            raise DecodeError(
                "invalid_field_type",
                f"{where}.{column}: HBase values must be base64 strings, got {value!r}"[:300],
            )
        text = _bytes_text(data)
        if text is None and column not in binary:
            binary.append(column)
        out[column] = value if text is None else text
    return out


def _sql_image(image: Image | None) -> dict[str, str | None] | None:
    if image is None:
        return None
    return {column: value_text(value) for column, value in image.items()}


def _complete(
    image: dict[str, str | None] | None, known: list[str], removed: list[str] | None
) -> list[tuple[str, str | None]] | None:
    """``image`` as a list, with NULL for each ``known`` column it lacks (noted in
    ``removed``)."""
    if image is None:
        return None
    out = list(image.items())
    for column in known:
        if column not in image:
            image[column] = None
            out.append((column, None))
            if removed is not None:
                removed.append(column)
    return out


def decode_one(raw: bytes | None) -> dict[str, Any]:
    """Decode one Kafka value into :data:`FIELDS` (see the module doc); never raises."""
    row: dict[str, Any] = dict.fromkeys(_NAMES)
    try:
        message = shared.parse_json_object(raw)
        if "payload" not in message and "op" in message:
            message = {"schema": None, "payload": message}
        payload = shared.obj(message, "payload", "")
        if payload is None:
            raise DecodeError("missing_required_field", "payload is missing")
        op = payload.get("op")
        if op is None:
            raise DecodeError("missing_required_field", "payload.op is missing")
        if not isinstance(op, str):
            raise DecodeError("invalid_field_type", "payload.op must be a string")
        schema = shared.obj(message, "schema", "") or {}
        source = shared.obj(payload, "source", "payload.")
        before = shared.obj(payload, "before", "payload.")
        after = shared.obj(payload, "after", "payload.")
        after_fields = _struct_fields(schema, "after")
        before_fields = _struct_fields(schema, "before")
        hbase = _is_hbase([after, before])
        binary: list[str] = []
        if hbase:
            before_image = _hbase_image(before, "payload.before", binary)
            after_image = _hbase_image(after, "payload.after", binary)
        else:
            before_image, after_image = _sql_image(before), _sql_image(after)
        declared = after_fields if after_fields is not None else before_fields
        if declared is not None:
            column_types = declared
        elif hbase:
            names = list(dict.fromkeys([*(after_image or {}), *(before_image or {})]))
            names.sort(key=lambda name: name != HBASE_ROW_KEY)
            column_types = [(name, "bytes") for name in names]
        else:
            column_types = None
        removed: list[str] = []
        known_after = [*(before_image or {}), *(name for name, _ in after_fields or [])]
        known_before = [name for name, _ in before_fields or []]
        row.update(
            op_code=op,
            table_kind="hbase" if hbase else "sql",
            source_version=shared.string(source, "version", "payload.source."),
            source_database=shared.string(source, "db", "payload.source."),
            source_schema=shared.string(source, "namespace", "payload.source."),
            source_table=shared.string(source, "table", "payload.source."),
            source_ts_ms=_millis(source, "ts_ms", "payload.source."),
            payload_ts_ms=_millis(payload, "ts_ms", "payload."),
            schema_declared=bool(schema),
            column_types=column_types,
            before_image=_complete(before_image, known_before, None),
            after_image=_complete(after_image, known_after, removed),
            removed_columns=removed,
            binary_columns=binary,
            raw_before_image=list(before.items()) if hbase and before is not None else None,
            raw_after_image=list(after.items()) if hbase and after is not None else None,
        )
    except DecodeError as invalid:
        row = shared.error_row(_NAMES, invalid.reason, invalid.detail)
    return row


def decode_batches(
    batches: Iterator[pa.RecordBatch], *, keep_value: bool = False
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function: append :data:`FIELDS` to each batch (same row count); the
    input ``value`` is passed through only with ``keep_value``."""
    return append_decoded(batches, decode_one, FIELDS, keep_column=keep_value)


def output_schema_ddl(input_schema_ddl: str, *, keep_value: bool = False) -> str:
    """Spark DDL of :func:`decode_batches`' output for an input with ``input_schema_ddl``
    (``value`` left out unless ``keep_value``)."""
    return arrow_batches.output_schema_ddl(input_schema_ddl, FIELDS, keep_column=keep_value)
