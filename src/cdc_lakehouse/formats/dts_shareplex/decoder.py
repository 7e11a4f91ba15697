"""Decoder of DTS Shareplex JSON (docs/formats.md section 4b; seed 003).

Input: Arrow batches with at least ``value binary`` (rows of ``bronze.kafka_records``); every
input column but ``value`` (it too with ``keep_value``) is passed through unchanged. Each value
is one JSON object ``{"meta": {...}, "data": {...}, "key": {...}}``. Output adds
:data:`FIELDS`, one row per input row, never dropping one:

- ``decode_error`` / ``decode_error_detail``: NULL when structurally valid, else a reason code
  (:data:`REASONS`) and a detail; every other decoded column is then NULL.
- ``op_code``: ``meta.op`` exactly as sent (``ins`` / ``upd`` / ``del``, or the documented long
  spellings INSERT, UPDATE, DELETE, UPDATE BEFORE, UPDATE AFTER, TRUNCATE, DROP COLUMN); the
  SQL model maps it, and quarantines anything else as ``unknown_op``.
- ``meta_time``: ``meta.time`` as sent; ``event_time_ms``: it as epoch milliseconds. The text is
  the commit time in UTC, ``yyyy-MM-ddTHH:mm:ss`` with an optional fraction and an optional
  ``Z`` (a missing zone means UTC; an explicit ``+hh:mm`` offset is honoured; a space may
  replace the ``T``). ``post_time_ms``: ``meta.posttime`` the same way (when DTS posted the
  transaction to Kafka).
- ``userid``, ``rowid``, ``trans`` (transaction id), ``idx``: as text (a JSON number keeps its
  digits).
- ``scn``: ``meta.scn`` as digits without leading zeros (a string or an integer; anything else
  is ``invalid_field_type``).
- ``seq`` / ``size``: 1-based position in the transaction and the number of operations in it
  (integers or digit strings); when absent they are taken from ``idx`` (``"seq/size"``, which
  must have that form whenever it is present).
- ``table_name``: ``meta.table`` as sent; ``source_schema`` / ``source_table``: it split at the
  first ``.`` (``SCHEMA.TABLE``; without a dot the schema is NULL).
- ``data_image`` / ``key_image``: ``data`` / ``key`` as column -> value text; the map is NULL when
  the object is absent or null; a key mapping to NULL is SQL NULL. Values are JSON strings or
  null in the format; other JSON values keep their exact text (see json_text).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
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
FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("op_code", _STR),
    pa.field("meta_time", _STR),
    pa.field("event_time_ms", pa.int64()),
    pa.field("post_time_ms", pa.int64()),
    pa.field("userid", _STR),
    pa.field("scn", _STR),
    pa.field("rowid", _STR),
    pa.field("trans", _STR),
    pa.field("seq", pa.int64()),
    pa.field("size", pa.int64()),
    pa.field("idx", _STR),
    pa.field("table_name", _STR),
    pa.field("source_schema", _STR),
    pa.field("source_table", _STR),
    pa.field("data_image", _MAP),
    pa.field("key_image", _MAP),
]
_NAMES = [f.name for f in FIELDS]


def _digits(meta: dict[str, Any], key: str) -> str | None:
    value = meta.get(key)
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(int(value))  # a JSON integer's digits (-0 reads "0")
    else:
        text = ""
    if isinstance(value, JsonFloat) or not text.isascii() or not text.isdigit():
        raise DecodeError("invalid_field_type", f"meta.{key} must be digits, got {value!r}")
    return text.lstrip("0") or "0"


def _count(meta: dict[str, Any], key: str) -> int | None:
    text = _digits(meta, key)
    return int(text) if text is not None else None


def _millis(meta: dict[str, Any], key: str) -> tuple[str | None, int | None]:
    text = shared.text(meta, key, "meta.")
    if text is None:
        return None, None
    iso = text.strip()
    if len(iso) > 10 and iso[10] == " ":
        iso = f"{iso[:10]}T{iso[11:]}"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        raise DecodeError(
            "invalid_field_type", f"meta.{key} is not yyyy-MM-ddTHH:mm:ss[Z]: {text!r}"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return text, delta // datetime.resolution // 1000


def _split_table(name: str | None) -> tuple[str | None, str | None]:
    if name is None:
        return None, None
    schema, dot, table = name.partition(".")
    return (schema, table) if dot else (None, name)


def decode_one(raw: bytes | None) -> dict[str, Any]:
    """Decode one Kafka value into the :data:`FIELDS` values (see module doc); never raises."""
    row: dict[str, Any] = dict.fromkeys(_NAMES)
    try:
        message = shared.parse_json_object(raw)
        meta = message.get("meta")
        if meta is None:
            raise DecodeError("missing_required_field", "meta is missing")
        if not isinstance(meta, dict):
            raise DecodeError("invalid_field_type", "meta must be an object")
        if meta.get("op") is None:
            raise DecodeError("missing_required_field", "meta.op is missing")
        if not isinstance(meta["op"], str):
            raise DecodeError("invalid_field_type", "meta.op must be a string")
        meta_time, event_ms = _millis(meta, "time")
        _post_time, post_ms = _millis(meta, "posttime")
        seq, size = _count(meta, "seq"), _count(meta, "size")
        idx = shared.text(meta, "idx", "meta.")
        if idx is not None:
            pos, slash, total = idx.partition("/")
            if not (slash and f"{pos}{total}".isascii() and pos.isdigit() and total.isdigit()):
                raise DecodeError("invalid_field_type", f"meta.idx must be seq/size, got {idx!r}")
            seq = int(pos) if seq is None else seq
            size = int(total) if size is None else size
        table_name = shared.text(meta, "table", "meta.")
        schema, table = _split_table(table_name)
        row.update(
            op_code=meta["op"],
            meta_time=meta_time,
            event_time_ms=event_ms,
            post_time_ms=post_ms,
            userid=shared.text(meta, "userid", "meta."),
            scn=_digits(meta, "scn"),
            rowid=shared.text(meta, "rowid", "meta."),
            trans=shared.text(meta, "trans", "meta."),
            seq=seq,
            size=size,
            idx=idx,
            table_name=table_name,
            source_schema=schema,
            source_table=table,
            data_image=shared.value_pairs(shared.obj(message, "data")),
            key_image=shared.value_pairs(shared.obj(message, "key")),
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
