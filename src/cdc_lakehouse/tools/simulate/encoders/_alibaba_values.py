"""Value rendering shared by the Alibaba Cloud encoders (DataWorks / DataHub Blob JSON, DataHub
Tuple, Lindorm Debezium): exact JSON number text, Java's ``Double.toString``, epoch times,
base64, sequence ids and Kafka keys.

The producers are Java services (DataWorks Data Integration / StreamX, DataHub, Lindorm
subscription), so doubles are written as Java prints them (``100.0``, ``1.0E-5``,
``1.2345678E7``) and bytes as ``java.util.Base64`` (standard alphabet, padded; seeds 000, 002).
Times of the logical history are naive UTC datetimes (``history`` module); every epoch value
here is UTC.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from cdc_lakehouse.tools.simulate.history import Column, Row, TableSpec, Value

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


class RawNumber(str):
    """A JSON number written with exactly this text (``12.50`` stays ``12.50``)."""

    __slots__ = ()


def dumps(value: Any) -> str:
    """Compact JSON text of ``value`` (dict, list, str, bool, int, None, :class:`RawNumber`);
    non-ASCII characters are written as UTF-8 (Java JSON writers do not escape them)."""
    return "".join(_parts(value))


def _parts(value: Any) -> Iterator[str]:
    if value is None:
        yield "null"
    elif isinstance(value, RawNumber):
        yield str(value)
    elif isinstance(value, str):
        yield json.dumps(value, ensure_ascii=False)
    elif isinstance(value, bool):
        yield "true" if value else "false"
    elif isinstance(value, int):
        yield str(value)
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            if index:
                yield ","
            yield json.dumps(key, ensure_ascii=False)
            yield ":"
            yield from _parts(item)
        yield "}"
    elif isinstance(value, list | tuple):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ","
            yield from _parts(item)
        yield "]"
    else:
        raise TypeError(f"cannot write {type(value).__name__} as JSON")


def decimal_text(value: Decimal) -> str:
    """Plain decimal text with the value's own scale, never an exponent (``0E-10`` ->
    ``0.0000000000``)."""
    return format(value, "f")


def java_double_text(value: float) -> str:
    """``java.lang.Double.toString(value)`` (shortest round-trip digits, JDK 19+): plain
    notation with at least one fraction digit for 1e-3 <= |v| < 1e7 (``100.0``, ``0.001``),
    else ``<d>.<ddd>E<exp>`` (``1.0E-5``, ``1.2345678E7``). Finite values only."""
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    exact = Decimal(repr(value)).normalize()
    sign = "-" if exact < 0 else ""
    exact = abs(exact)
    if Decimal("0.001") <= exact < Decimal(10_000_000):
        text = format(exact, "f")
        return sign + (text if "." in text else text + ".0")
    digits = "".join(str(d) for d in exact.as_tuple().digits)
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exact.adjusted()}"


def base64_text(value: bytes) -> str:
    """``java.util.Base64.getEncoder().encodeToString(value)``."""
    return base64.b64encode(value).decode("ascii")


def epoch_ms(value: dt.datetime) -> int:
    """Epoch milliseconds of a naive UTC datetime (negative before 1970)."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def epoch_us(value: dt.datetime) -> int:
    """Epoch microseconds of a naive UTC datetime (negative before 1970)."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def epoch_days(value: dt.date) -> int:
    """Days since 1970-01-01 (negative before)."""
    return (value - _EPOCH_DATE).days


def date_epoch_ms(value: dt.date) -> int:
    """Epoch milliseconds of the date's midnight, UTC."""
    return epoch_days(value) * 86_400_000


def key_text(table: TableSpec, row: Row, text: Any) -> str | None:
    """The Kafka key of a row of a table with a primary key: its key values' texts (rendered
    by ``text(column, value)``) joined by ``,`` (DataWorks uses the primary key value as the
    Kafka key). None for a table without a key."""
    if not table.key_columns:
        return None
    parts = [text(table.column(name), row[name]) for name in table.key_columns]
    return ",".join("" if part is None else part for part in parts)


class SequenceIds:
    """DataWorks / DataHub ``sequenceId`` / ``_sequence_id_`` values: the task's start time in
    epoch ms followed by a 6-digit record counter, e.g. ``1620457642589000001`` (seed 000 and
    002 examples: the prefix stays, the counter grows by one per record; update-before and
    update-after share one). Past 999999 records the counter just grows (the number stays
    monotonic; the staging models compare it numerically)."""

    def __init__(self, start_ms: int) -> None:
        self._base = start_ms * 1_000_000
        self._count = 0

    def next(self) -> str:
        value = self._base + self._count
        self._count += 1
        return str(value)


def task_start_ms(items: tuple[Any, ...]) -> int:
    """The sync task's start time: 60 s before the history's first item (0 for none)."""
    return max(items[0].commit_time_ms - 60_000, 0) if items else 0


def json_value(
    column: Column,
    value: Value,
    *,
    date: Callable[[dt.date], int],
    timestamp: Callable[[dt.datetime], int],
) -> Any:
    """The JSON value of ``value`` in an Alibaba JSON image (DataWorks / DataHub Blob, DataHub
    Tuple, Lindorm SQL tables): integers as JSON integers, decimals with exactly ``scale``
    digits and doubles as Java prints them (both as raw JSON numbers), booleans, strings,
    binary as base64, and dates / timestamps as the epoch numbers ``date`` / ``timestamp``
    give (the formats differ only there: ms, us or days). None for NULL."""
    if value is None:
        return None
    kind = column.type
    if kind in ("int", "bigint"):
        return int(value)  # type: ignore[arg-type]
    if kind == "decimal":
        return RawNumber(decimal_text(value))  # type: ignore[arg-type]
    if kind == "double":
        return RawNumber(java_double_text(value))  # type: ignore[arg-type]
    if kind == "boolean":
        return bool(value)
    if kind == "string":
        return value
    if kind == "binary":
        return base64_text(value)  # type: ignore[arg-type]
    if kind == "date":
        return date(value)  # type: ignore[arg-type]
    if kind == "timestamp":
        return timestamp(value)  # type: ignore[arg-type]
    raise ValueError(f"unknown logical type {kind!r}")


def json_text(rendered: Any) -> str | None:
    """The image text the project's decoders yield for a JSON value of :func:`json_value`:
    ``true`` / ``false`` for booleans, the exact text otherwise, None for NULL."""
    if rendered is None:
        return None
    if isinstance(rendered, bool):
        return "true" if rendered else "false"
    return str(rendered)
