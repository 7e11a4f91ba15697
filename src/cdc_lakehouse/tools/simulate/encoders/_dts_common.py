"""Pieces the three DTS encoders share (docs/formats.md section 4; seed 003): value texts of the
logical types, the Kafka key of a row, and the walk over a history's items.

Nothing here is a format: each encoder module (``dts_avro``, ``dts_shareplex_json``,
``dts_canal_json``) decides the shapes; this module only holds the text renderings several of
them need and the conventions they agree on:

- Kafka key: the identifying values of the row (key columns, or every column of a table
  without a key), each rendered with the encoder's ``value_text`` and joined by ``|`` (SQL
  NULL as the empty text), UTF-8. All changes of one row identity share it, so they share a
  partition; an update that moves the key is keyed by its new identity.
- Send lag: producers write a message :data:`SEND_LAG_MS` after the source commit.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal

from cdc_lakehouse.tools.simulate.history import Column, Row, RowChange, TableSpec, Value

SEND_LAG_MS = 250
"""Milliseconds between a source commit and the producer's send (Kafka timestamp, DTS ``ts``)."""

ValueText = Callable[[Column, Value], "str | None"]


def plain_decimal(value: Decimal) -> str:
    """``value`` as positional text with all its digits (never an exponent): ``0.00000000``,
    not ``0E-8`` (what ``str`` gives). MySQL DECIMAL(p,s) text: exactly ``s`` fraction digits,
    which the history guarantees."""
    return format(value, "f")


def oracle_number(value: Decimal | int) -> str:
    """Oracle NUMBER text: Oracle stores no scale, so trailing fraction zeros are gone
    (``12.50`` -> ``12.5``, ``3.00`` -> ``3``, ``-0.00`` -> ``0``); never an exponent."""
    number = Decimal(value)
    if number == 0:
        return "0"
    return format(number.normalize(), "f")


def java_double(value: float) -> str:
    """Java ``Double.toString`` (JDK 19+, shortest digits): plain ``123.45`` / ``0.001`` /
    ``1234567.0`` for 1e-3 <= |x| < 1e7, else ``1.0E10`` / ``-1.2345E-5``; ``0.0`` / ``-0.0``.
    Canal renders DOUBLE columns with ``String.valueOf(double)``."""
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    shortest = repr(abs(value))
    if len(Decimal(shortest).normalize().as_tuple().digits) == 1:
        # Java prints at least two significant digits: the closest two-digit decimal when it
        # still reads back as the same double (4.9E-324 for the smallest subnormal, 1.0 for 1)
        two_digits = format(abs(value), ".1e")
        if float(two_digits) == abs(value):
            shortest = two_digits
    _sign, digit_tuple, exponent = Decimal(shortest).as_tuple()
    assert isinstance(exponent, int)  # finite
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    # |value| = 0.d1d2d3... * 10**point
    point = len(digit_tuple) + exponent
    prefix = "-" if value < 0 else ""
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{prefix}{digits}{'0' * (point - len(digits))}.0"
        return f"{prefix}{digits[:point]}.{digits[point:]}"
    mantissa = f"{digits[0]}.{digits[1:] or '0'}"
    return f"{prefix}{mantissa}E{point - 1}"


def iso_date(value: dt.date) -> str:
    """``YYYY-MM-DD`` with a 4-digit year (also before year 1000)."""
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def date_time_text(value: dt.datetime, *, separator: str = " ", fraction_digits: int = 3) -> str:
    """``YYYY-MM-DD<sep>HH:MM:SS[.fff]``: the wall time of a naive UTC datetime, with
    ``fraction_digits`` digits of the second (0: none; 3: milliseconds; 6: microseconds)."""
    text = f"{iso_date(value)}{separator}{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    if fraction_digits:
        text += "." + f"{value.microsecond:06d}"[:fraction_digits]
    return text


def identity_columns(table: TableSpec) -> tuple[str, ...]:
    """The columns that identify a row: the key, or every column of a table without a key."""
    return table.key_columns or table.column_names


def kafka_key(table: TableSpec, row: Row, value_text: ValueText) -> bytes:
    """The Kafka key of ``row`` (see module doc)."""
    parts = [
        value_text(table.column(name), row.get(name)) or "" for name in identity_columns(table)
    ]
    return "|".join(parts).encode("utf-8")


def change_key(change: RowChange, value_text: ValueText) -> bytes:
    """The Kafka key of a row change: its new identity, or the old one for a delete."""
    row = change.after if change.after is not None else change.before
    assert row is not None
    return kafka_key(change.table, row, value_text)
