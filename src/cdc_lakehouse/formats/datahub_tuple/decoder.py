"""Decoder of DataHub Tuple records on Kafka (docs/formats.md section 2; seed 002).

A DataWorks real-time sync to a DataHub Tuple topic writes one table per topic; each record
is the table's columns plus the meta columns of DataWorks Data Integration. When the record
reaches Kafka it is one flat JSON object, e.g. ``{"_sequence_id_": "1649991610688000001",
"_operation_type_": "U", "_excute_time_": 1649991756000, "_source_table_": "orders",
"_before_image_": "Y", "_after_image_": "N", "id": 1, "status": "new"}``.

Output fields (:data:`FIELDS`), one row per Kafka record, never raising:

- ``decode_error`` / ``decode_error_detail``: NULL for a structurally valid record, else a
  reason code (:data:`REASONS`) and what is wrong where. Semantic checks (unknown op, missing
  sequence id, image flags that contradict the op, missing key columns) are SQL
  (``stg_datahub_tuple__events``).
- ``op_code``: ``_operation_type_`` as sent (I / U / D; anything else is an unknown op).
- ``sequence_id``: ``_sequence_id_`` as digits without leading zeros (JSON string or integer);
  the update-before and update-after halves of one update share it.
- ``execute_time_ms``: ``_excute_time_`` (the seed's spelling) or, when absent,
  ``_execute_time_`` (other pages' spelling): epoch milliseconds, UTC, when the change
  happened. A JSON integer or a string of digits; a value of 15 or more digits is taken as
  microseconds (DataHub's TIMESTAMP type) and divided by 1000.
- ``source_table``: ``_source_table_`` as sent (NULL when absent; the SQL model then falls
  back to the last dot-separated part of the topic name).
- ``before_image_flag`` / ``after_image_flag``: ``_before_image_`` / ``_after_image_``, ``Y``
  or ``N`` (NULL when absent).
- ``row_image``: every non-meta column -> exact value text (map). Numbers keep their JSON
  digits (``12.50`` stays ``12.50``), strings are as sent, JSON null is SQL NULL, booleans are
  ``true`` / ``false``. Whether it is a before or an after image is told by the flags.
- ``column_names``: the non-meta columns in message order (Tuple JSON carries no types).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from cdc_lakehouse.decode import batches as arrow_batches
from cdc_lakehouse.decode import shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import JsonFloat, value_text
from cdc_lakehouse.decode.shared import DecodeError

_STRUCTURAL = (
    "empty_value",
    "invalid_utf8",
    "invalid_json",
    "duplicate_key",
    "not_an_object",
    "invalid_field_value",
    shared.DECODER_ERROR,
)
REASONS = {
    **{reason: shared.STRUCTURAL_REASONS[reason] for reason in _STRUCTURAL},
    "invalid_field_type": "a meta column has the wrong JSON type or an invalid value",
}

SEQUENCE_ID = "_sequence_id_"
OPERATION_TYPE = "_operation_type_"
EXECUTE_TIME_SPELLINGS = ("_excute_time_", "_execute_time_")
SOURCE_TABLE = "_source_table_"
BEFORE_IMAGE = "_before_image_"
AFTER_IMAGE = "_after_image_"
META_COLUMNS = frozenset(
    {SEQUENCE_ID, OPERATION_TYPE, *EXECUTE_TIME_SPELLINGS, SOURCE_TABLE, BEFORE_IMAGE, AFTER_IMAGE}
)
_MICROS_FROM = 10**14  # 15+ digits: microseconds (10**14 ms would be the year 5138)

_STR = pa.string()
FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("op_code", _STR),
    pa.field("sequence_id", _STR),
    pa.field("execute_time_ms", pa.int64()),
    pa.field("source_table", _STR),
    pa.field("before_image_flag", _STR),
    pa.field("after_image_flag", _STR),
    pa.field("row_image", pa.map_(pa.string(), pa.string())),
    pa.field("column_names", pa.list_(pa.string())),
]
_NAMES = [f.name for f in FIELDS]


def _digits(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if isinstance(value, bool | JsonFloat) or not isinstance(value, str | int):
        raise DecodeError("invalid_field_type", f"{key} must be a string of digits")
    text = value.strip() if isinstance(value, str) else str(int(value))  # -0 reads "0"
    if not text or not text.isascii() or not text.isdigit():
        raise DecodeError("invalid_field_type", f"{key} must be a string of digits, got {text!r}")
    return text.lstrip("0") or "0"


def _execute_time_ms(record: dict[str, Any]) -> int | None:
    for key in EXECUTE_TIME_SPELLINGS:
        digits = _digits(record, key)
        if digits is not None:
            value = int(digits)
            millis = value // 1000 if value >= _MICROS_FROM else value
            return shared.epoch(millis, "ms", key)
    return None


def _flag(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if value not in ("Y", "N"):
        raise DecodeError("invalid_field_type", f"{key} must be 'Y' or 'N', got {value!r}")
    return str(value)


def decode_one(raw: bytes | None) -> dict[str, Any]:
    """Decode one Kafka value into :data:`FIELDS` (see the module doc); never raises."""
    row: dict[str, Any] = dict.fromkeys(_NAMES)
    try:
        record = shared.parse_json_object(raw)
        image = [(k, value_text(v)) for k, v in record.items() if k not in META_COLUMNS]
        row.update(
            op_code=shared.string(record, OPERATION_TYPE),
            sequence_id=_digits(record, SEQUENCE_ID),
            execute_time_ms=_execute_time_ms(record),
            source_table=shared.string(record, SOURCE_TABLE),
            before_image_flag=_flag(record, BEFORE_IMAGE),
            after_image_flag=_flag(record, AFTER_IMAGE),
            row_image=image,
            column_names=[name for name, _ in image],
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
