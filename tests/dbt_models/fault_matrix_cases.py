"""The bad-input matrix of the reliability tests (issue 19): every kind of broken record a
topic can carry, for all nine formats, each beside good records of the same topic and batch.

Each format has its own registered topic ``faults.<format>`` (``seeds/cdc_topics.csv``) with
one table ``faults.<format>`` keyed by ``id``. Its records, in offset order on partition 0:
the good changes of :data:`GOOD_ROWS` (one of them with a 60-digit number and ``1.50``, one
with a value of 1.5 MB), for the JSON formats also one per JSON number form of
:data:`NUMBER_FORMS` (``-0``, ``-0E+0``, ``1E400``, a 4,301-digit integer, ...), for Canal
also one INSERT of ``WIDE_ROWS`` rows (formats/dts_canal/cases.py ``fault_matrix``: its size
times its row count passes 2 GiB), and between them the bad inputs of each format, each with the
quarantine reason it must get and a piece of the detail. What a user must see:

- every bad input is one ``silver.quarantine`` row with that reason and its raw bytes;
- every good record reaches ``gold.current_rows`` with its values exactly as sent
  (:data:`EXPECTED_GOLD`);
- the build succeeds: no single record can fail it.

``UNREGISTERED_TOPIC`` holds one record of a topic missing from the registry (ingested with a
registry that has it, as when a topic is removed from ``cdc_topics.csv`` after ingest): it is
quarantined as ``unregistered_topic``.

Each format's records and bad inputs are in its cases file: ``fault_matrix(format_name) ->
FaultMatrix`` (tests/dbt_models/conformance.py); this file holds what all formats share.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cdc_lakehouse import formats
from cdc_lakehouse.decode.json_text import MAX_JSON_DEPTH
from tests.dbt_models import conformance
from tests.dbt_models.helpers import DumpLine, dump_line

PREFIX = "faults"
UNREGISTERED_TOPIC = "faults.unregistered"
SIXTY_DIGITS = "1234567890" * 6
HUGE = "x" * 1_500_000  # 1.5 MB of text in one column value
T_MS = 1_700_000_000_000  # event times (ms), 2023-11-14


@dataclass(frozen=True)
class Fault:
    """One bad input: its name, the raw value (None = a Kafka NULL value), the quarantine
    reason it must get and a text its detail must contain (None: any detail)."""

    name: str
    value: bytes | None
    reason: str
    detail: str | None = None


def topic(format_: str) -> str:
    return f"{PREFIX}.{format_}"


def json_bytes(value: Any) -> bytes:
    """JSON text of ``value``; the placeholder ``"__RAW__x__"`` becomes the bare ``x``."""
    text = json.dumps(value, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text.encode()


def raw(number_text: str) -> str:
    """A JSON number written with exactly this text."""
    return f"__RAW__{number_text}__"


def deep(levels: int) -> Any:
    """A JSON value nested ``levels`` deep (arrays)."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


# the row values of the good records of every format: id -> column -> value as sent
GOOD_ROWS: dict[int, dict[str, Any]] = {
    1: {"id": 1, "note": "plain", "amount": raw("1.50")},
    2: {"id": 2, "note": "sixty digits", "amount": raw(SIXTY_DIGITS)},
    3: {"id": 3, "note": HUGE, "amount": raw("3")},
}


NUMBER_FORMS = (
    "-0",
    "-0.0",
    "-0.000",
    "-0E+0",
    "-0e-0",
    "-0E0",
    "0e0",
    "0E-0",
    "0.0",
    "1E400",
    "-1E400",
    "1e-400",
    "1E+03",
    "-1",
    "-" + SIXTY_DIGITS,
    "1" * 4301,  # longer than Python's int conversion limit (4,300 digits)
    "-" + "9" * 4301,
)
"""JSON number forms whose text a value must keep exactly as sent (``-0`` is an integer that
a parser reads as ``0``; ``1E400`` overflows a double; 4,301 digits pass Python's limit)."""

NUMBER_ROWS: dict[int, dict[str, Any]] = {
    100 + index: {"id": 100 + index, "note": f"number form {index}", "amount": raw(form)}
    for index, form in enumerate(NUMBER_FORMS)
}
"""The good rows of the JSON formats that carry :data:`NUMBER_FORMS` (one form each)."""


def texts(row: dict[str, Any]) -> dict[str, str]:
    """The value texts gold must hold for ``row`` (numbers as their exact JSON text)."""
    out = {}
    for name, value in row.items():
        text = str(value)
        out[name] = text[len("__RAW__") : -2] if text.startswith("__RAW__") else text
    return out


# --------------------------------------------------------------------------- JSON formats


def _generic(good: Callable[..., bytes]) -> list[Fault]:
    """The bad inputs every JSON format gets: framing, parsing and nesting."""
    whole = good(1, {"id": 1, "note": "cut", "amount": raw("1.50")})
    return [
        Fault("Kafka NULL value", None, "empty_value"),
        Fault("zero bytes", b"", "empty_value"),
        Fault("binary bytes", b"\x00\x01\xfe\xff\x80binary", "invalid_utf8"),
        Fault("invalid UTF-8 in a string", b'{"a":"\xc3\x28"}', "invalid_utf8"),
        Fault("truncated message", whole[: len(whole) // 2], "invalid_json"),
        Fault("top level is an array", b"[1,2,3]", "not_an_object"),
        Fault("top level is a string", b'"just text"', "not_an_object"),
        Fault(
            "message nested 1,000 levels",
            b'{"a":' * 1000 + b"1" + b"}" * 1000,
            "invalid_json",
            f"nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        Fault(
            "one column value nested 200 levels",
            good(1, {"id": 1, "note": deep(200), "amount": raw("1.50")}),
            "invalid_json",
            f"nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        Fault(
            "NaN as a column value",
            good(1, {"id": 1, "note": "nan", "amount": raw("NaN")}),
            "invalid_json",
            "NaN",
        ),
        Fault(
            "a column named twice",
            good(1, {"id": 1, "note": "a", "amount": raw("1"), DUP: "dup"}),
            "duplicate_key",
            "appears twice",
        ),
    ]


DUP = "__dup__"


def duplicate_column(text: bytes, column: str = "note") -> bytes:
    """``text`` with the placeholder column :data:`DUP` (any case) renamed to ``column``."""
    for placeholder in (DUP, DUP.upper()):
        text = text.replace(f'"{placeholder}":"dup"'.encode(), f'"{column}":"b"'.encode())
    return text


def canal_text(value: Any) -> Any:
    """Canal sends every value as a JSON string: an int becomes its text. A raw number
    placeholder stays a number (so exact JSON digits are checked too), and nested values stay
    nested."""
    return str(value) if isinstance(value, int) else value


# --------------------------------------------------------------------------- the matrix


@dataclass(frozen=True)
class FaultMatrix:
    """One format's part of the matrix: what ``fault_matrix(format_name)`` of its cases file
    returns (tests/dbt_models/conformance.py).

    Attributes:
        good: ``good(seq, row) -> bytes``, a valid message of table ``faults.<format>``
            carrying ``row`` (numbers written with :func:`raw` keep their text).
        faults: the format's own bad inputs (a JSON format also gets the generic ones).
        first: records that must come first (Qlik metadata).
        last: good records added after the rows of :func:`good_rows` (a record that teaches
            Shareplex the key, the wide Canal INSERT).
        upper_case: the format names the table's columns upper case (gold keys ``ID``).
        extra_gold_rows: rows those ``last`` records add to gold: id -> column -> value.
        tombstones: a Kafka NULL value is a tombstone of the format (a control event), not
            the generic ``empty_value`` fault, which is then left out.
        record_key: the Kafka key of every record of the format's topic (None: no key).
    """

    good: Callable[..., bytes]
    faults: list[Fault]
    first: list[bytes] = field(default_factory=list)
    last: list[bytes] = field(default_factory=list)
    upper_case: bool = False
    extra_gold_rows: dict[int, dict[str, Any]] = field(default_factory=dict)
    tombstones: bool = False
    record_key: str | None = None


@functools.cache
def built(format_: str) -> FaultMatrix:
    """What ``format_``'s cases file gives as its part of the matrix (built once)."""
    return conformance.provide(format_, "fault_matrix")


def good_message(format_: str, seq: int, row: dict[str, Any]) -> bytes:
    """A valid message of ``format_`` (topic ``faults.<format>``) that inserts ``row``."""
    return built(format_).good(seq, row)


def good_rows(format_: str) -> dict[int, dict[str, Any]]:
    """The rows of the good records of ``format_`` made from row dicts: :data:`GOOD_ROWS`,
    and :data:`NUMBER_ROWS` for the JSON formats."""
    if formats.get(format_).value_encoding != "json":
        return GOOD_ROWS
    return {**GOOD_ROWS, **NUMBER_ROWS}


def formats_in_matrix() -> list[str]:
    """Every format in the matrix (sorted): the formats whose cases file gives
    ``fault_matrix`` (the ones that lack it fail tests/unit/test_conformance.py)."""
    return sorted(conformance.provided("fault_matrix"))


@functools.cache
def matrix() -> dict[str, tuple[list[bytes], list[Fault], list[bytes]]]:
    """format -> (good records, faults, records that must come first: Qlik metadata). Good
    records a format adds after the rows of :func:`good_rows` end the list."""
    out: dict[str, tuple[list[bytes], list[Fault], list[bytes]]] = {}
    for format_ in formats_in_matrix():
        part = built(format_)
        faults = part.faults
        if formats.get(format_).value_encoding == "json":
            generic = _generic(part.good)
            if part.tombstones:  # a Kafka NULL value is the format's tombstone, not a fault
                generic = [fault for fault in generic if fault.value is not None]
            faults = generic + faults
        goods = [part.good(seq, row) for seq, row in good_rows(format_).items()] + part.last
        out[format_] = (goods, faults, part.first)
    return out


def faults() -> list[tuple[str, int, Fault]]:
    """Every bad input as (topic, offset, fault)."""
    return [(topic, offset, fault) for topic, offset, fault, _good in _placed() if fault]


def _placed() -> list[tuple[str, int, Fault | None, bytes | None]]:
    """Every record of the matrix in offset order: (topic, offset, fault or None, good value
    or None). Good records are spread between the bad ones."""
    placed: list[tuple[str, int, Fault | None, bytes | None]] = []
    for format_, (goods, bad, first) in sorted(matrix().items()):
        records: list[tuple[Fault | None, bytes | None]] = [(None, value) for value in first]
        step = max(len(bad) // len(goods), 1)
        pending = list(goods)
        for index, fault in enumerate(bad):
            if index % step == 0 and pending:
                records.append((None, pending.pop(0)))
            records.append((fault, None))
        records.extend((None, value) for value in pending)
        placed.extend(
            (topic(format_), offset, fault, value) for offset, (fault, value) in enumerate(records)
        )
    return placed


def expected_gold(format_: str) -> dict[str, dict[str, str]]:
    """gold.current_rows of table ``faults.<format>``: row_key -> row_values."""
    part = built(format_)
    upper = part.upper_case
    rows = {**good_rows(format_), **part.extra_gold_rows}
    out = {}
    for id_, row in rows.items():
        values = texts(row)
        if upper:
            values = {k.upper(): v for k, v in values.items()}
        key = "ID" if upper else "id"
        out[json.dumps({key: str(id_)}, separators=(",", ":"))] = values
    return out


def _line(topic_: str, offset: int, value: bytes | None, key: str | None = None) -> DumpLine:
    return dump_line(topic_, 0, offset, value, timestamp=T_MS, key=key)


def dump_lines() -> list[DumpLine]:
    """Every matrix record as topic dump lines."""
    keys = {topic(format_): built(format_).record_key for format_ in formats_in_matrix()}
    return [
        _line(topic_, offset, fault.value if fault else good, keys.get(topic_))
        for topic_, offset, fault, good in _placed()
    ]


def unregistered_dump_lines() -> tuple[list[DumpLine], str]:
    """One valid Canal record on :data:`UNREGISTERED_TOPIC`: its dump lines and the registry row
    of its topic (``dts_canal_json``), which the caller adds to the registry it ingests it with."""
    good = conformance.lookup("dts_canal_json", "fault_matrix")("unregistered").good
    row = f"{UNREGISTERED_TOPIC},dts_canal_json,mysql,false,not in the seed"
    return [_line(UNREGISTERED_TOPIC, 0, good(1, GOOD_ROWS[1]))], row
