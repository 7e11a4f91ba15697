"""Decoder of DTS / open-source Canal JSON messages (docs/formats.md section 4c; seed 003).

Input: Arrow batches with at least ``value binary`` (rows of ``bronze.kafka_records``) and
optionally the topic's ``canal_legacy_swap`` (:data:`LEGACY_SWAP_COLUMN`, which meaning to
decode with); every input column but ``value`` (it too with ``keep_value``) is passed through
unchanged (repeated for each row of a multi-row message).

One Canal message carries a ``data`` array: each element is its own row change. The decoder
returns one output row per element, numbered by ``row_index`` (0-based array index; the SQL
model's ``kafka_row_index``). A DDL message, a message whose ``data`` (and ``old``) is null or
empty, and a message that cannot be decoded give exactly one row (``row_index`` 0). If any
element of a message is undecodable, the WHOLE message is one error row: nothing of it is
half-applied, and the raw bytes stay in ``silver.quarantine``.

Output fields (:data:`CANAL_FIELDS`):

- ``decode_error`` / ``decode_error_detail``: NULL when structurally valid, else a reason code
  (:data:`REASONS`) and what is wrong where; every other decoded column is then NULL (except
  ``row_index`` 0 and ``row_count`` 1).
- ``row_index`` / ``row_count``: position of the row in the message, number of rows.
- ``type_code``: ``type`` exactly as sent (INSERT, UPDATE, DELETE, INIT, DDL, ALTER, ...).
- ``is_ddl``: ``isDdl``; when ``isDdl`` is absent or null, true iff ``type`` is a DDL type of
  canal (DDL, CREATE, ALTER, ERASE, QUERY, TRUNCATE, RENAME, CINDEX, DINDEX).
- ``source_database`` / ``source_table``: ``database`` / ``table`` (empty text -> NULL).
- ``pk_names``: ``pkNames`` (array of column names; NULL when null or absent).
- ``column_types``: ``mysqlType`` as column -> MySQL type text (``bigint``, ``varchar(255)``),
  in message order. ``sqlType`` (java.sql.Types codes) is checked (an object of type names or
  codes, else ``invalid_field_type``) but not kept: no model reads it, and ``mysqlType`` names
  the same columns' types.
- ``es_ms``: ``es``, epoch milliseconds (UTC) of the binlog event at the source.
  ``ts_ms``: ``ts``, epoch milliseconds (UTC) when DTS / canal wrote the message. Both accept a
  JSON integer or a string of digits; any other value is ``invalid_field_type``.
- ``canal_id``: ``id`` as digits (the operation serial / DTS cache offset; may be 0).
- ``gtid``: ``gtid`` (MySQL GTID of the transaction), empty text -> NULL.
- ``sql_text``: ``sql`` (the DDL statement; ``""`` for DML).
- ``has_data_row`` / ``has_old_row``: whether the message carries a ``data`` / ``old``
  element for this row (false when the array is null, absent or empty). The elements
  themselves are not output: the images below hold their values, and the SQL model needs only
  whether each was sent (to say why an image is missing). Writing them would store every
  row's values twice more.
- ``before_image`` / ``after_image``: the row before / after the change (see below).

Images are map column -> value text with three states: key with text (value), key with NULL
(SQL NULL), key absent (not provided); a NULL map means the image is not carried. Values keep
their exact text (Canal sends strings; a JSON number keeps its digits, see json_text).

Open-source meaning (``legacy_swap=False``; DTS instances created or restarted from
2022-03-20): ``data`` is the row after the change (the whole row), ``old`` holds only the
*changed* columns' old values, aligned by position with ``data``.

- INSERT / INIT: ``after_image = data[i]``.
- UPDATE: ``after_image = data[i]``; ``before_image = data[i]`` overlaid with ``old[i]``: a
  column absent from ``old`` did not change, so its old value equals ``data``'s; a column
  present in ``old`` with JSON null was changed *from NULL* (canal writes ``old`` only for
  updated columns and puts null for an old SQL NULL). This is the trap of docs/formats.md 4c:
  parsers that read ``old`` into a fixed row type cannot tell "changed from NULL" from "not in
  old" and copy the new value into the before image. An UPDATE without ``old`` (canal omits
  it when no row had an updated column) has ``before_image = data[i]``.
- DELETE: ``before_image = data[i]``.

Legacy meaning (``legacy_swap=True``, the registry's ``canal_legacy_swap``; instances created
before 2022-03-20): ``old`` holds the new row (all columns by default) and ``data`` the old
one; a DELETE carries its row in ``old`` with ``data`` null.

- INSERT / INIT: ``after_image = old[i]``, or ``data[i]`` when ``old`` is not carried.
- UPDATE: ``before_image = data[i]``; ``after_image = data[i]`` overlaid with ``old[i]`` (the
  whole new row even if ``old`` held only changed columns); both arrays are needed, else the
  after image is NULL and the SQL model quarantines the row.
- DELETE: ``before_image = old[i]``, or ``data[i]`` when ``old`` is not carried. Whether the
  legacy ``old`` identifies the row is checked in SQL (missing key -> ``missing_key_column``).

Rows are numbered over ``data``, or over ``old`` when ``data`` is null or empty (legacy
deletes). When both arrays are present they must have the same length: open-source canal
leaves out the ``old`` element of a row without updated columns, and then nothing says which
``old`` element belongs to which row - the message is ``invalid_field_type`` (misaligned).
Other types than INSERT / UPDATE / DELETE / INIT get no images (the SQL model quarantines them
as ``unknown_op``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from cdc_lakehouse.decode import batches as arrow_batches
from cdc_lakehouse.decode import shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import JsonFloat
from cdc_lakehouse.decode.shared import DecodeError

REASONS = {
    **shared.STRUCTURAL_REASONS,
    "invalid_field_type": "a field has the wrong JSON type, an invalid value, or old is "
    "misaligned with data",
}

DDL_TYPES = frozenset(
    ("DDL", "CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX")
)

_STR = pa.string()
_MAP = pa.map_(pa.string(), pa.string())
CANAL_FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("row_index", pa.int32()),
    pa.field("row_count", pa.int32()),
    pa.field("type_code", _STR),
    pa.field("is_ddl", pa.bool_()),
    pa.field("source_database", _STR),
    pa.field("source_table", _STR),
    pa.field("pk_names", pa.list_(pa.string())),
    pa.field("column_types", _MAP),
    pa.field("es_ms", pa.int64()),
    pa.field("ts_ms", pa.int64()),
    pa.field("canal_id", _STR),
    pa.field("gtid", _STR),
    pa.field("sql_text", _STR),
    pa.field("has_data_row", pa.bool_()),
    pa.field("has_old_row", pa.bool_()),
    pa.field("before_image", _MAP),
    pa.field("after_image", _MAP),
]
CANAL_SCHEMA = pa.schema(CANAL_FIELDS)
_NAMES = [f.name for f in CANAL_FIELDS]

LEGACY_SWAP_COLUMN = "canal_legacy_swap"
"""Input column of :func:`decode_batches`: the topic's ``canal_legacy_swap`` registry option
(true for DTS instances created before 2022-03-20: ``data`` / ``old`` swapped)."""

Image = dict[str, str | None]
"""A map field's value in the rows of :func:`decode_rows`: column -> text, in message order."""
_MAP_NAMES = [f.name for f in CANAL_FIELDS if pa.types.is_map(f.type)]
_INTEGER = "a non-negative integer"
_TYPE_NAME_KINDS = frozenset((str, int, JsonFloat, type(None)))
"""JSON types of a ``mysqlType`` / ``sqlType`` value (a type name or code, or null)."""


def _millis(message: dict[str, Any], key: str) -> int | None:
    value = message.get(key)
    if type(value) is int and value >= 0:  # the usual JSON integer, no detour through text
        return shared.epoch(value, "ms", key)
    digits = shared.digits(message, key, expected=_INTEGER)
    if digits is None:
        return None
    return shared.epoch(int(digits), "ms", key)


def _names(message: dict[str, Any], key: str) -> list[str] | None:
    value = message.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DecodeError("invalid_field_type", f"{key} must be an array of column names")
    return list(value)


def _type_map(message: dict[str, Any], key: str) -> Image | None:
    value = message.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DecodeError("invalid_field_type", f"{key} must be an object of column -> type")
    if not _TYPE_NAME_KINDS.issuperset(map(type, value.values())):
        for name, type_value in value.items():
            if isinstance(type_value, dict | list | bool):
                raise DecodeError("invalid_field_type", f"{key}.{name} must be a type name or code")
    return _type_texts(tuple(value.items()))


@functools.lru_cache(maxsize=1024)
def _type_texts(items: tuple[tuple[str, str | int | None], ...]) -> Image:
    """A type map's ``(column, type name or code)`` items as column -> text.

    Cached: a table sends the same types in every message, and one shared dict per distinct
    map is converted to Arrow once per batch (the loop converts each map object once). Equal
    items give equal texts (a string and a number with the same text both stay that text)."""
    return shared.texts(dict(items))


def _rows(message: dict[str, Any], key: str) -> list[dict[str, Any]] | None:
    value = message.get(key)
    if value is None:
        return None
    if not isinstance(value, list):
        raise DecodeError(
            "invalid_field_type", f"{key} must be an array of row objects, not {_json_type(value)}"
        )
    if not {dict}.issuperset(map(type, value)):
        for index, element in enumerate(value):
            if not isinstance(element, dict):
                raise DecodeError(
                    "invalid_field_type",
                    f"{key}[{index}] must be a row object, not {_json_type(element)}",
                )
    return value


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str) and not isinstance(value, JsonFloat):
        return "a string"
    if isinstance(value, int | JsonFloat):
        return "a number"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _overlay(base: dict[str, Any], changes: dict[str, Any]) -> Image:
    """``base`` with the values of ``changes`` (keys of ``changes`` win, JSON null included);
    columns only in ``changes`` are appended."""
    merged = dict(base)
    merged.update(changes)
    return shared.texts(merged)


def _images(
    type_code: str,
    data_row: dict[str, Any] | None,
    old_row: dict[str, Any] | None,
    data_texts: Image | None,
    old_texts: Image | None,
    *,
    legacy_swap: bool,
) -> tuple[Image | None, Image | None]:
    """(before_image, after_image) of one row (see module doc).

    ``data_texts`` / ``old_texts`` are ``data_row`` / ``old_row`` as texts, converted once by
    the caller: an image that equals ``data`` or ``old`` as sent is that same dict.
    """
    if not legacy_swap:
        if type_code in ("INSERT", "INIT"):
            return None, data_texts
        if type_code == "UPDATE":
            if data_row is None:
                return None, None
            before = _overlay(data_row, old_row) if old_row is not None else data_texts
            return before, data_texts
        if type_code == "DELETE":
            return data_texts, None
        return None, None
    new_texts = old_texts if old_row is not None else data_texts
    if type_code in ("INSERT", "INIT"):
        return None, new_texts
    if type_code == "UPDATE":
        if data_row is None or old_row is None:
            return data_texts, None
        return data_texts, _overlay(data_row, old_row)
    if type_code == "DELETE":
        return new_texts, None
    return None, None


def decode_message(raw: bytes | None, *, legacy_swap: bool = False) -> list[dict[str, Any]]:
    """Decode one Kafka value into rows of :data:`CANAL_FIELDS` (see module doc); map fields
    as ``(column, text)`` pairs in message order.

    Args:
        raw: the Kafka record value.
        legacy_swap: the topic's ``canal_legacy_swap`` registry option (pre-2022-03-20 DTS
            instances: ``old`` holds the new row, ``data`` the old one).

    Returns:
        One row per ``data`` element (or ``old`` element when ``data`` is null or empty), or a
        single row for DDL, row-less and undecodable messages. Raises only on a decoder bug,
        which :func:`decode_batches` turns into a ``decoder_error`` row.
    """
    return [shared.map_pairs(row, _MAP_NAMES) for row in decode_rows(raw, legacy_swap)]


def decode_rows(raw: bytes | None, legacy_swap: bool = False) -> list[dict[str, Any]]:
    """:func:`decode_message` with map fields as :data:`Image` dicts (what
    :func:`decode_batches` converts to Arrow)."""
    try:
        return _decode(raw, legacy_swap)
    except DecodeError as invalid:
        return [error_row(invalid.reason, invalid.detail)]


def error_row(reason: str, detail: str) -> dict[str, Any]:
    """The one output row of an undecodable message (``row_index`` 0, ``row_count`` 1)."""
    return {**shared.error_row(_NAMES, reason, detail), "row_index": 0, "row_count": 1}


def _decode(raw: bytes | None, legacy_swap: bool) -> list[dict[str, Any]]:
    message = shared.parse_json_object(raw, describe=_json_type)
    if message.get("type") is None:
        raise DecodeError("missing_required_field", "type is missing")
    type_code = shared.string(message, "type") or ""
    is_ddl_value = message.get("isDdl")
    if is_ddl_value is not None and not isinstance(is_ddl_value, bool):
        raise DecodeError("invalid_field_type", "isDdl must be true or false")
    is_ddl = is_ddl_value if is_ddl_value is not None else type_code in DDL_TYPES
    _type_map(message, "sqlType")  # checked, not kept (module doc)
    common: dict[str, Any] = {
        "decode_error": None,
        "decode_error_detail": None,
        "type_code": type_code,
        "is_ddl": is_ddl,
        "source_database": shared.string(message, "database") or None,
        "source_table": shared.string(message, "table") or None,
        "pk_names": _names(message, "pkNames"),
        "column_types": _type_map(message, "mysqlType"),
        "es_ms": _millis(message, "es"),
        "ts_ms": _millis(message, "ts"),
        "canal_id": shared.digits(message, "id", expected=_INTEGER),
        "gtid": shared.string(message, "gtid") or None,
        "sql_text": shared.string(message, "sql"),
    }
    if is_ddl:
        return [_row(common, 0, 1, False, False, None, None)]
    data = _rows(message, "data")
    old = _rows(message, "old")
    if data is not None and old is not None and len(data) != len(old):
        raise DecodeError(
            "invalid_field_type",
            f"old is misaligned with data: {len(old)} old element(s) for {len(data)} data "
            "element(s), so no old element can be matched to its row",
        )
    count = len(data) if data else len(old) if old else 1
    out = []
    for index in range(count):
        data_row = data[index] if data else None
        old_row = old[index] if old else None
        data_texts = shared.texts(data_row) if data_row is not None else None
        old_texts = shared.texts(old_row) if old_row is not None else None
        before, after = _images(
            type_code, data_row, old_row, data_texts, old_texts, legacy_swap=legacy_swap
        )
        out.append(
            _row(common, index, count, data_row is not None, old_row is not None, before, after)
        )
    return out


def _row(
    common: dict[str, Any],
    index: int,
    count: int,
    has_data_row: bool,
    has_old_row: bool,
    before: Image | None,
    after: Image | None,
) -> dict[str, Any]:
    """One output row: the message's ``common`` fields and those of row ``index``."""
    return {
        **common,
        "row_index": index,
        "row_count": count,
        "has_data_row": has_data_row,
        "has_old_row": has_old_row,
        "before_image": before,
        "after_image": after,
    }


def decode_batches(
    batches: Iterator[pa.RecordBatch], legacy_swap: bool = False, *, keep_value: bool = False
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function: append :data:`CANAL_FIELDS`, one output row per Canal row.

    Each record is decoded with the meaning its topic's registry row gives: a batch with a
    boolean :data:`LEGACY_SWAP_COLUMN` column is split by it (NULL = false, the registry's
    default), so one pass over bronze decodes both kinds of topic; a batch without the column
    is decoded with ``legacy_swap``. Rows come out grouped by meaning within each batch.

    Args:
        batches: input Arrow batches with a ``value`` column (and optionally
            :data:`LEGACY_SWAP_COLUMN`).
        legacy_swap: the pre-2022-03-20 DTS data / old meaning for batches without the column.
        keep_value: pass ``value`` through too (repeated per row, like the other columns).
    """
    meanings: dict[bool, Callable[[Any], list[dict[str, Any]]]] = {
        swap: functools.partial(decode_rows, legacy_swap=swap) for swap in (False, True)
    }
    for batch in batches:
        for swap, part in _by_meaning(batch, legacy_swap):
            yield from append_decoded(
                iter([part]), meanings[swap], CANAL_FIELDS, error=error_row, keep_column=keep_value
            )


def _by_meaning(batch: pa.RecordBatch, default: bool) -> list[tuple[bool, pa.RecordBatch]]:
    """``(legacy_swap, rows)`` parts of ``batch``: by its :data:`LEGACY_SWAP_COLUMN` (NULL =
    false) when it has one, else the whole batch with ``default``; empty parts left out."""
    if LEGACY_SWAP_COLUMN not in batch.schema.names:
        return [(default, batch)]
    swapped = pc.fill_null(batch.column(LEGACY_SWAP_COLUMN), False)
    parts = [(False, batch.filter(pc.invert(swapped))), (True, batch.filter(swapped))]
    return [(swap, part) for swap, part in parts if part.num_rows]


def output_schema_ddl(input_schema_ddl: str, *, keep_value: bool = False) -> str:
    """Spark DDL of :func:`decode_batches`' output for an input with ``input_schema_ddl``
    (``value`` left out unless ``keep_value``)."""
    return arrow_batches.output_schema_ddl(input_schema_ddl, CANAL_FIELDS, keep_column=keep_value)
