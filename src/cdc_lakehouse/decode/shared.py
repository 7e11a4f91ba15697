"""Pieces every CDC decoder shares: the decode error, the structural reasons, the JSON preamble,
typed field getters, time range checks and the error row.

A decoder raises :class:`DecodeError` anywhere while decoding one Kafka value and turns it into
an :func:`error_row` at its entry point, so a bad message becomes a quarantined row instead of a
failed Spark task. Any other exception (a decoder bug) is caught per record by the shared Arrow
loop (:func:`cdc_lakehouse.decode.batches.append_decoded`) and becomes a ``decoder_error`` row.
Each decoder keeps its own public ``REASONS`` dict (the reasons it can produce), usually
``{**STRUCTURAL_REASONS, ...}``.

Getters take the parent object, the key and ``where`` (the key's path prefix, e.g.
``"payload."``, used in the detail text). A JSON null or an absent key reads as ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from cdc_lakehouse.decode.json_text import (
    MAX_JSON_DEPTH,
    DuplicateKeyError,
    JsonFloat,
    loads,
    value_text,
)

DECODER_ERROR = "decoder_error"
"""Reason of a record on which a decoder raised something other than :class:`DecodeError`."""

STRUCTURAL_REASONS = {
    "empty_value": "the Kafka record has no value (NULL or zero bytes)",
    "invalid_utf8": "the value is not UTF-8 text",
    "invalid_json": f"the value is not valid JSON, or nests deeper than {MAX_JSON_DEPTH} levels",
    "duplicate_key": "a JSON object names the same key twice (which value counts would be a guess)",
    "not_an_object": "the JSON value is not an object",
    "missing_required_field": "a field the format requires is absent or null",
    "invalid_field_type": "a field has the wrong JSON type or an invalid value",
    "invalid_field_value": "a field's value is outside what the format allows (e.g. a time "
    "outside the years 1-9999)",
    DECODER_ERROR: "the decoder failed on this record (a bug); the detail names the exception",
}
"""Reasons of the checks shared by the decoders (code -> meaning)."""


class DecodeError(Exception):
    """A Kafka value that cannot be decoded: ``reason`` is a code of the decoder's ``REASONS``,
    ``detail`` a human-readable text of what is wrong where."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


def python_type_name(value: Any) -> str:
    """The Python type name of a parsed JSON value (``list``, ``str``, ``int``, ...)."""
    return type(value).__name__


def parse_json_object(
    raw: bytes | None, *, describe: Callable[[Any], str] = python_type_name
) -> dict[str, Any]:
    """Parse a Kafka value that must be one JSON object (numbers keep their text, see json_text).

    ``describe`` names the type of a parsed non-object in the ``not_an_object`` detail
    (``JSON <describe(value)>, not an object``).

    Raises:
        DecodeError: ``empty_value`` (None or zero bytes), ``invalid_utf8``, ``invalid_json``
            or ``not_an_object``, with the detail texts of :data:`STRUCTURAL_REASONS` checks.
    """
    if not raw:
        raise DecodeError("empty_value", STRUCTURAL_REASONS["empty_value"])
    value = parse_json(bytes(raw))
    if not isinstance(value, dict):
        raise DecodeError("not_an_object", f"JSON {describe(value)}, not an object")
    return value


def parse_json(text: str | bytes, what: str = "") -> Any:
    """Parse JSON text, or its UTF-8 bytes, with :func:`~cdc_lakehouse.decode.json_text.loads`
    (exact numbers, one nesting limit, no duplicate keys). ``what`` names an inner text in the
    detail (e.g. ``"envelope message"``); empty for the record's value itself.

    Raises:
        DecodeError: ``invalid_utf8`` (bytes only; detail ``not UTF-8: <reason> at byte
            <n>``), ``duplicate_key`` (detail ``the key 'id' appears twice in one object[ of
            the <what>]``), or ``invalid_json`` (detail ``[<what> ]not valid JSON: <parser
            message>``, e.g. ``not valid JSON: nested deeper than 128 levels``).
    """
    try:
        return loads(text)
    except UnicodeDecodeError as exc:
        raise DecodeError("invalid_utf8", f"not UTF-8: {exc.reason} at byte {exc.start}") from None
    except DuplicateKeyError as exc:
        where = f" of the {what}" if what else ""
        raise DecodeError("duplicate_key", f"{exc}{where}") from None
    except ValueError as exc:
        prefix = f"{what} " if what else ""
        raise DecodeError("invalid_json", f"{prefix}not valid JSON: {exc}") from None


def obj(parent: dict[str, Any], key: str, where: str = "") -> dict[str, Any] | None:
    """``parent[key]`` as an object, or None.

    Raises:
        DecodeError: ``invalid_field_type`` when the value is not an object.
    """
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DecodeError("invalid_field_type", f"{where}{key} must be an object or null")
    return value


def string(parent: dict[str, Any] | None, key: str, where: str = "") -> str | None:
    """``parent[key]`` as sent when it is a JSON string, or None (also when ``parent`` is None).

    Raises:
        DecodeError: ``invalid_field_type`` for any other JSON type (a number included).
    """
    if parent is None:
        return None
    value = parent.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DecodeError("invalid_field_type", f"{where}{key} must be a string")
    return value


def text(parent: dict[str, Any] | None, key: str, where: str = "") -> str | None:
    """``parent[key]`` as text: a string as sent, a number as its exact JSON digits; or None
    (also when ``parent`` is None).

    Raises:
        DecodeError: ``invalid_field_type`` for a boolean, object, array or (Avro) bytes.
    """
    if parent is None:
        return None
    value = parent.get(key)
    if value is None or type(value) is str:
        return value
    if isinstance(value, bool | dict | list | bytes):
        raise DecodeError("invalid_field_type", f"{where}{key} must be a string")
    return str(value)


def digits(
    parent: dict[str, Any], key: str, where: str = "", *, expected: str = "a string of digits"
) -> str | None:
    """``parent[key]``, a JSON integer or a string of ASCII digits (surrounding blanks allowed),
    as digits without leading zeros (``"0"`` for zero); or None.

    Raises:
        DecodeError: ``invalid_field_type`` (``<where><key> must be <expected>``) for anything
            else: a negative or fractional number, a boolean, an empty or non-digit string.
    """
    value = parent.get(key)
    if value is None:
        return None
    if type(value) is str and value.isdigit() and value.isascii() and value[0] != "0":
        return value  # the usual digits: nothing to strip
    if isinstance(value, bool | JsonFloat) or not isinstance(value, str | int):
        raise DecodeError("invalid_field_type", f"{where}{key} must be {expected}")
    digit_text = value.strip() if isinstance(value, str) else str(int(value))  # -0 reads "0"
    if not digit_text or not digit_text.isascii() or not digit_text.isdigit():
        raise DecodeError("invalid_field_type", f"{where}{key} must be {expected}")
    return digit_text.lstrip("0") or "0"


def value_pairs(values: dict[str, Any] | None) -> list[tuple[str, str | None]] | None:
    """An image object as ``(column, value text)`` pairs in message order (see
    :func:`~cdc_lakehouse.decode.json_text.value_text`; JSON null -> None); None for None."""
    if values is None:
        return None
    # fast paths for the common JSON types; value_text renders the rest
    return [
        (
            name,
            value
            if value is None or type(value) is str
            else str(value)
            if type(value) is int
            else value_text(value),
        )
        for name, value in values.items()
    ]


_KEPT_AS_TEXT = frozenset((str, JsonFloat, type(None)))
"""Types of parsed JSON values whose value is their text: a string, a number with a fraction
or an exponent (its exact text, a ``str``), and null (None)."""


def texts(values: dict[str, Any]) -> dict[str, Any]:
    """An image object as column -> value text in message order (see
    :func:`~cdc_lakehouse.decode.json_text.value_text`; JSON null -> None).

    ``values`` itself when every value is already text (a string, a :class:`JsonFloat`, which
    is one, or None): nothing to copy. The result must not be changed."""
    if _KEPT_AS_TEXT.issuperset(map(type, values.values())):
        return values
    # fast paths for the common JSON types; value_text renders the rest
    return {
        name: value
        if value is None or type(value) is str
        else str(value)
        if type(value) is int
        else value_text(value)
        for name, value in values.items()
    }


def map_pairs(row: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """``row`` with its map fields ``names`` that are dicts as ``(key, item)`` lists (in the
    dicts' order): the shape of a decoder's per-message rows."""
    pairs = {name: list(row[name].items()) for name in names if isinstance(row.get(name), dict)}
    return {**row, **pairs} if pairs else row


EPOCH_LIMITS = {
    "s": (-62_135_596_800, 253_402_300_799),
    "ms": (-62_135_596_800_000, 253_402_300_799_999),
    "us": (-62_135_596_800_000_000, 253_402_300_799_999_999),
}
"""Unit -> (lowest, highest) epoch time in the years 1-9999, Spark's timestamp range: a time
outside it fails ``timestamp_millis()`` in SQL."""


def epoch(value: int | None, unit: str, where: str) -> int | None:
    """``value``, an epoch time in ``unit`` (``"s"``, ``"ms"`` or ``"us"``, UTC), when it lies
    in the years 1-9999 (what a Spark timestamp holds); None stays None.

    Raises:
        DecodeError: ``invalid_field_value`` naming ``where`` and the value.
    """
    if value is None:
        return None
    low, high = EPOCH_LIMITS[unit]
    if not low <= value <= high:
        raise DecodeError(
            "invalid_field_value",
            f"{where} = {value} is not a time in the years 1-9999 (epoch {unit})",
        )
    return value


def error_row(names: Iterable[str], reason: str, detail: str) -> dict[str, Any]:
    """An output row of the fields ``names``: all NULL except ``decode_error`` = ``reason`` and
    ``decode_error_detail`` = ``detail``."""
    row: dict[str, Any] = dict.fromkeys(names)
    row["decode_error"] = reason
    row["decode_error_detail"] = detail
    return row


def bug_detail(exc: Exception) -> str:
    """Detail text of an unexpected exception (a decoder bug), for a catch-all error row."""
    return f"{type(exc).__name__}: {exc}"
