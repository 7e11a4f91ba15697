"""JSON parsing that keeps every number's exact text.

Spark's JSON functions turn ``1.50`` into ``1.5`` and ``12345678901234567890123.456789`` into
``1.2345678901234568E22`` (architecture.md). CDC values must keep their digits, so decoders
parse with :func:`loads`, which returns numbers with a fraction or exponent as
:class:`JsonFloat` (a ``str`` subclass holding the original text) and integers as ``int``
(exact in Python). :func:`value_text` renders any parsed value as the text stored in images.
"""

from __future__ import annotations

import json
from typing import Any


class JsonFloat(str):
    """The exact source text of a JSON number with a fraction or an exponent."""

    __slots__ = ()


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


_DECODER = json.JSONDecoder(parse_float=JsonFloat, parse_constant=_reject_constant)


def loads(text: str) -> Any:
    """Parse JSON text; numbers keep their exact text (see module doc).

    Raises:
        ValueError: the text is not valid JSON (``json.JSONDecodeError`` included), or it uses
            the non-standard constants NaN / Infinity.
    """
    return _DECODER.decode(text)


def value_text(value: Any) -> str | None:
    """The text of a parsed JSON value as stored in before / after images.

    ``None`` (JSON null) -> ``None`` (SQL NULL); strings as they are; numbers as their exact
    JSON text; ``true`` / ``false``; objects and arrays as compact JSON with exact numbers.
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
