"""JSON parsing that keeps every number's exact text, and refuses what would be ambiguous.

Spark's JSON functions turn ``1.50`` into ``1.5`` and ``12345678901234567890123.456789`` into
``1.2345678901234568E22``. CDC values must keep their text as sent, so decoders parse with
:func:`loads`, which returns numbers with a fraction or an exponent as :class:`JsonFloat` (a
``str`` subclass holding the original text) and integers as ``int`` (exact in Python, and
``str(int)`` is the integer's JSON text), with two exceptions: ``-0``, which Python reads as
``0``, is :data:`NEGATIVE_ZERO` (an ``int`` equal to 0 whose text is ``-0``), and an integer
longer than Python's int conversion limit (4,300 digits) is a :class:`JsonFloat` of its text.
:func:`value_text` renders any parsed value as the text stored in images: every JSON number
form (``-0``, ``-0.0``, ``-0E+0``, ``0e0``, ``1E400``, 4,301 digits, ...) as sent.

:func:`loads` also refuses, with a :class:`ValueError` subclass that names the problem:

- nesting deeper than :data:`MAX_JSON_DEPTH` levels (:class:`JsonTooDeepError`), the one
  nesting limit of every decoder. Without it a message of a thousand ``[`` raises
  ``RecursionError`` somewhere in the parser or in :func:`value_text`;
- an object that names the same key twice (:class:`DuplicateKeyError`): RFC 8259 leaves the
  meaning to the reader and Python would silently keep the last value, so a record saying
  two things about one field is refused rather than guessed;
- the non-standard constants ``NaN``, ``Infinity`` and ``-Infinity``.

Two parsers, one result. :func:`loads` first parses with msgspec (C, about 3x faster than the
stdlib parser with its per-object duplicate-key hook), which keeps number text through its
``float_hook`` but silently keeps the last value of a repeated key, and reads ``-0`` as ``0``.
Cheap counts tell whether the text may repeat a key or hold the integer ``-0``
(:func:`_may_differ`); only then, or when msgspec refuses the text (e.g. an integer beyond
4,300 digits), is the text parsed again by the exact stdlib path (:func:`_exact_loads`),
whose result and error messages are the reference. So every text gets the value or the error
the stdlib path gives it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

import msgspec
import orjson

MAX_JSON_DEPTH = 128
"""Deepest nesting of objects and arrays a decoder accepts (the document itself is level 1).

MySQL refuses JSON documents deeper than 100 levels, so a MySQL JSON column value (at most
100) inside any vendor envelope (at most 5 more) fits; a deeper value is refused as
``invalid_json``. It also keeps every recursive step (the C parser, :func:`value_text`) far
below Python's recursion limit (1,000 frames)."""


class JsonFloat(str):
    """The exact source text of a JSON number with a fraction or an exponent, or of an integer
    longer than Python's int conversion limit (4,300 digits: ``int()`` refuses it)."""

    __slots__ = ()


class JsonNegativeZero(int):
    """The JSON integer ``-0``: equal to 0 (an ``int``, so a field that reads an integer reads
    0, as for ``0``), with ``-0`` as its text (``str``, ``repr``, :func:`value_text`), so a
    value keeps what was sent. Use :data:`NEGATIVE_ZERO`."""

    __slots__ = ()

    def __new__(cls) -> JsonNegativeZero:
        return super().__new__(cls, 0)

    def __repr__(self) -> str:
        return "-0"

    __str__ = __repr__


NEGATIVE_ZERO = JsonNegativeZero()
"""What :func:`loads` returns for the JSON integer ``-0``."""


class JsonTooDeepError(ValueError):
    """The text nests objects / arrays deeper than :data:`MAX_JSON_DEPTH` levels."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_JSON_DEPTH} levels")


class DuplicateKeyError(ValueError):
    """A JSON object names the same key twice; ``key`` is the first repeated one."""

    def __init__(self, key: str) -> None:
        super().__init__(f"the key {key!r} appears twice in one object")
        self.key = key


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return obj


def _json_int(text: str) -> int | JsonFloat:
    """An integer token's value: ``int``, :data:`NEGATIVE_ZERO` for ``-0`` and, beyond
    Python's int conversion limit, the :class:`JsonFloat` of its text."""
    if text == "-0":
        return NEGATIVE_ZERO
    try:
        return int(text)
    except ValueError:  # longer than sys.get_int_max_str_digits() (4,300 by default)
        return JsonFloat(text)


_DECODER = json.JSONDecoder(
    parse_float=JsonFloat,
    parse_int=_json_int,
    parse_constant=_reject_constant,
    object_pairs_hook=_unique_object,
)


def loads(text: str | bytes) -> Any:
    """Parse JSON text; numbers keep their exact text (see module doc).

    ``text`` may be the UTF-8 bytes of the text; bytes that are not UTF-8 raise the
    ``UnicodeDecodeError`` of ``bytes.decode`` (before any JSON error). msgspec refuses
    whatever is not UTF-8, so its parse needs no check of its own.

    Raises:
        UnicodeDecodeError: ``text`` is bytes that are not UTF-8.
        JsonTooDeepError: nested deeper than :data:`MAX_JSON_DEPTH` levels.
        DuplicateKeyError: an object repeats a key.
        ValueError: any other invalid JSON (``json.JSONDecodeError`` included), or the
            non-standard constants NaN / Infinity.
    """
    try:
        value = _FAST_DECODER.decode(text)
    except Exception:  # whatever msgspec refuses, the stdlib parser names what is wrong
        return _exact_loads(text)
    colons, brackets, minus_signs = _counts(text)
    if _may_differ(text, value, colons, minus_signs):
        return _exact_loads(text)
    _check_depth(brackets, value)
    return value


def _exact_loads(text: str | bytes) -> Any:
    """:func:`loads` by the stdlib parser alone (the reference: exact errors, every key seen)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        value = _DECODER.decode(text)
    except RecursionError:
        raise JsonTooDeepError() from None
    _check_depth(_counts(text)[1], value)
    return value


_FAST_DECODER = msgspec.json.Decoder(float_hook=JsonFloat)
_KEEP_COUNTED = (
    bytes(range(256)).replace(b"{", b"["),  # "{" counts as "["
    bytes(byte for byte in range(256) if byte not in b":[{-"),  # every other byte goes
)


def _counts(text: str | bytes) -> tuple[int, int, int]:
    """How many ``:``, how many ``[`` / ``{`` and how many ``-`` the text holds (bytes: in one
    pass)."""
    if isinstance(text, bytes):
        kept = text.translate(*_KEEP_COUNTED)
        colons = kept.count(b":")
        minus_signs = kept.count(b"-")
        return colons, len(kept) - colons - minus_signs, minus_signs
    return text.count(":"), text.count("[") + text.count("{"), text.count("-")


def _check_depth(brackets: int, value: Any) -> None:
    """Raise :class:`JsonTooDeepError` when ``value`` nests deeper than :data:`MAX_JSON_DEPTH`.

    ``brackets`` (of the text ``value`` was parsed from) bound its depth: a text with few
    (nearly every CDC message) needs no walk."""
    if brackets > MAX_JSON_DEPTH and depth(value) > MAX_JSON_DEPTH:
        raise JsonTooDeepError()


def _may_differ(text: str | bytes, value: Any, colons: int, minus_signs: int) -> bool:
    """Whether ``value``, msgspec's parse of ``text`` (which holds ``colons`` ``:`` and
    ``minus_signs`` ``-``), may differ from the exact parse: ``text`` may name a key twice in
    one object (msgspec keeps one entry per key) or hold the integer ``-0`` (msgspec reads 0).
    False means it certainly does not.

    Both are found by re-encoding ``value`` (orjson: the fastest encoder, which writes a
    :class:`JsonFloat` as the string it is) and counting. Every ``:`` of a JSON text separates
    a key from its value or lies inside a string, and a string's ``:`` stays one ``:`` once
    parsed, unless it is written ``\\u003a``; the re-encoding writes one ``:`` per object
    entry kept plus those of its strings. A repeated key drops an entry (and all of the dropped
    value's ``:``), so without escaped colons the text has more ``:`` than the re-encoding
    exactly when a key repeats. Likewise every ``-`` of a text without escapes lies in a string
    or a number token and is written again as it was, except that of the integer ``-0``
    (written ``0``) and those of a dropped entry: the re-encoding has fewer ``-`` exactly
    then. A text with escapes may hide either: it may repeat a key when it holds ``\\u003``,
    and may hold ``-0`` when :func:`_may_hold_negative_zero` says so.
    """
    try:
        encoded = orjson.dumps(value)
    except Exception:  # e.g. an integer beyond 64 bits: nothing to count, so maybe
        return True
    if colons != encoded.count(b":") or minus_signs != encoded.count(b"-"):
        return True
    # a text without a backslash (found fast) has no escape at all; "\\u003" also matches
    # other escapes (rare): they only cost the exact parse
    if isinstance(text, bytes):
        return b"\\" in text and (b"\\u003" in text or _may_hold_negative_zero(text))
    return "\\" in text and ("\\u003" in text or _may_hold_negative_zero(text))


# "-" (found fast, the pattern starting with it) after "[", ":", "," or blank space, then "0"
# not followed by a digit, "." or an exponent
_NEGATIVE_ZERO_BYTES = re.compile(rb"-(?<=[\s\[:,]-)0(?![0-9.eE])")
_NEGATIVE_ZERO_TEXT = re.compile(r"-(?<=[\s\[:,]-)0(?![0-9.eE])")


def _may_hold_negative_zero(text: str | bytes) -> bool:
    """Whether ``text`` may hold the JSON integer ``-0``, from the text alone (escapes
    included). False means it certainly does not.

    A number token starts the text or follows ``[``, ``:``, ``,`` or blank space, and the
    integer ``-0`` is not followed by a digit, ``.`` or an exponent. Inside a string the same
    characters (``"at -0 h"``) only cost the exact parse; the common ``-0`` of dates, times
    and GTIDs (``2024-01-05``, ``-08:00``, ``3ccc1ca4-0b8e-...``) is not preceded by such a
    character or is followed by a digit."""
    if isinstance(text, bytes):
        return text.startswith(b"-0") or _NEGATIVE_ZERO_BYTES.search(text) is not None
    return text.startswith("-0") or _NEGATIVE_ZERO_TEXT.search(text) is not None


def depth(value: Any) -> int:
    """Levels of objects / arrays in a parsed value (a scalar is 0, ``[]`` and ``{}`` are 1);
    iterative, so any depth is measured without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    children: Iterable[Any]
    while stack:
        current, level = stack.pop()
        if isinstance(current, dict):
            children = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def value_text(value: Any) -> str | None:
    """The text of a parsed JSON value as stored in before / after images.

    ``None`` (JSON null) -> ``None`` (SQL NULL); strings as they are; numbers as their exact
    JSON text (``-0`` included: :data:`NEGATIVE_ZERO`'s ``str``); ``true`` / ``false``; objects
    and arrays as compact JSON with exact numbers.
    """
    if value is None:
        return None
    if isinstance(value, JsonFloat):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return _compact(value)


def _compact(value: Any) -> str:
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + _compact(v) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_compact(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, JsonFloat):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value, ensure_ascii=False)
