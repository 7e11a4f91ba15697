"""Seeded generator of logical change histories (:mod:`cdc_lakehouse.simulate.history`).

``generate(SimulationConfig(seed=7))`` returns a :class:`History` of exactly ``changes`` row
changes over the default tables of database ``shop`` (schema None):

- ``customers``: key ``customer_id`` (int); decimal(12,2), double, boolean, strings, date,
  timestamp, binary.
- ``orders``: composite key ``order_id`` (bigint) + ``line_no`` (int); decimal(38,10), bigint,
  double, a text column that gets the very long / special strings, timestamp, date, binary.
- ``audit_log``: no key (only with feature ``keyless_table``); ``event_id`` (bigint, unique
  among live rows and never changed) keeps its rows distinct.

What a history holds, in this order: snapshot rows (op ``snapshot``, transactions with
``is_snapshot=True``, only with feature ``snapshot``), then transactions of 1..n changes over
several tables (inserts, full updates, updates of one or two columns, updates setting NULL,
primary-key updates, deletes, re-inserts of deleted keys, multi-row statements), truncates (a
``Truncate`` alone in its transaction) and heartbeats. Values include the edge cases of every
logical type (see ``_special_values``): 32/64-bit limits, decimals at full precision, doubles
such as 1e-7 and 1e21, empty / non-BMP / 5,000-character / quote-backslash-newline strings,
empty and non-UTF-8 bytes, pre-1970 and far-future dates and timestamps (ms precision).

Features (``SimulationConfig.features``; names of ``encoders.Encoder.FEATURES``):

- ``snapshot``, ``truncate``, ``heartbeat``: without them, no snapshot row / ``Truncate`` /
  ``Heartbeat`` is generated.
- ``key_update``: without it no update moves a row's identity (``RowChange.moves_key`` is
  never true): no primary-key update, and no update of the keyless table (whose identity is
  every column).
- ``keyless_table``: without it the table ``audit_log`` does not exist.
- ``partial_update``: without it every update changes every non-key column (so no message
  could be partial); with it most updates change one or two columns.
- ``multi_row_message``: with it some transactions hold a multi-row statement (2-5 inserts,
  same-column updates or deletes of one table, adjacent), which formats such as Canal pack into
  one message. Without it such runs are not made on purpose (transactions with several rows,
  also several of one table, still occur: every format has those).

Every rule of the :mod:`history` docstring holds (tests/unit/test_simulate_generate.py checks
them): commit times strictly increase (1-1500 ms apart, so several per second), a row (table,
key) changes at most once per transaction (a primary-key update touches its old and new key),
snapshots come first, images are whole rows, keyless rows are distinct. A primary-key update
moves a row to a key never used before in the history.

Continuing a history: ``generate(config, after=batch1)`` returns the next part (its own
``changes`` row changes, no snapshot) of the same tables and rows: sequences and commit times
continue, updates and deletes hit batch 1's live rows, re-inserts may use keys batch 1 deleted.
:func:`combine` joins the parts into one history (for the oracle).

Deterministic: the same config (and ``after``) gives the same history; the only randomness is
one ``random.Random`` seeded from ``config.seed`` (and the length of ``after``).
"""

from __future__ import annotations

import datetime as dt
import itertools
import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from types import MappingProxyType
from typing import Generic, TypeVar

from cdc_lakehouse.simulate.history import (
    Column,
    Event,
    Heartbeat,
    History,
    Item,
    Row,
    RowChange,
    TableSpec,
    Transaction,
    Truncate,
    Value,
)

ALL_FEATURES: frozenset[str] = frozenset(
    {
        "snapshot",
        "truncate",
        "heartbeat",
        "key_update",
        "keyless_table",
        "partial_update",
        "multi_row_message",
    }
)

DEFAULT_OP_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {
        "insert": 22.0,  # a new row with a never-used key
        "update": 12.0,  # every non-key column changes
        "partial_update": 22.0,  # one or two columns change (feature partial_update)
        "null_update": 8.0,  # a nullable column becomes NULL
        "key_update": 5.0,  # the key moves to a never-used key (feature key_update)
        "delete": 12.0,
        "reinsert": 6.0,  # a deleted (or truncated) key comes back
    }
)

UPDATE_OPS = frozenset({"update", "partial_update", "null_update", "key_update"})
DEFAULT_START_TIME_MS = 1_704_067_200_000  # 2024-01-01T00:00:00Z
SNAPSHOT_ROWS_PER_TRANSACTION = 25
MAX_COMMIT_STEP_MS = 1_500


@dataclass(frozen=True)
class SimulationConfig:
    """What to generate.

    Attributes:
        seed: seeds the one ``random.Random`` of the generator.
        changes: row changes (``RowChange`` events, snapshot rows included) to generate.
        features: what the target format can express (subset of :data:`ALL_FEATURES`).
        snapshot_rows: snapshot rows per table (feature ``snapshot``; at most half of
            ``changes`` in all); ignored when continuing a history.
        transaction_size: (min, max) row changes of an ordinary transaction.
        op_weights: relative weights of the ops of :data:`DEFAULT_OP_WEIGHTS` (missing: 0).
        truncate_rate: chance that a transaction is a truncate (feature ``truncate``); a
            history of at least 1,000 changes gets at least one.
        heartbeat_rate: chance of a heartbeat before a transaction (feature ``heartbeat``).
        multi_row_rate: chance that a transaction holds a multi-row statement.
        start_time_ms: commit time of the first item, epoch ms UTC.
    """

    seed: int = 7
    changes: int = 10_000
    features: frozenset[str] = ALL_FEATURES
    snapshot_rows: int = 40
    transaction_size: tuple[int, int] = (1, 6)
    op_weights: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_OP_WEIGHTS))
    truncate_rate: float = 0.002
    heartbeat_rate: float = 0.03
    multi_row_rate: float = 0.08
    start_time_ms: int = DEFAULT_START_TIME_MS

    def __post_init__(self) -> None:
        unknown = set(self.features) - ALL_FEATURES
        if unknown:
            raise ValueError(
                f"unknown feature(s) {', '.join(sorted(unknown))}; known: "
                f"{', '.join(sorted(ALL_FEATURES))}"
            )
        if self.changes < 0 or self.snapshot_rows < 0:
            raise ValueError("changes and snapshot_rows must be >= 0")
        low, high = self.transaction_size
        if not 1 <= low <= high:
            raise ValueError(
                f"transaction_size must be (min, max) with 1 <= min <= max: {low, high}"
            )
        unknown_ops = set(self.op_weights) - set(DEFAULT_OP_WEIGHTS)
        if unknown_ops:
            raise ValueError(f"unknown op weight(s) {', '.join(sorted(unknown_ops))}")


# --------------------------------------------------------------------------- tables

CUSTOMERS = TableSpec(
    database="shop",
    schema=None,
    name="customers",
    columns=(
        Column("customer_id", "int", nullable=False),
        Column("name", "string", length=200, nullable=False),
        Column("email", "string", length=320),
        Column("balance", "decimal", precision=12, scale=2),
        Column("score", "double"),
        Column("active", "boolean", nullable=False),
        Column("birth_date", "date"),
        Column("created_at", "timestamp", nullable=False),
        Column("avatar", "binary"),
    ),
    key_columns=("customer_id",),
)

ORDERS = TableSpec(
    database="shop",
    schema=None,
    name="orders",
    columns=(
        Column("order_id", "bigint", nullable=False),
        Column("line_no", "int", nullable=False),
        Column("customer_id", "int"),
        Column("quantity", "int"),
        Column("amount", "decimal", precision=38, scale=10),
        Column("total_cents", "bigint"),
        Column("discount", "double"),
        Column("note", "string"),
        Column("shipped", "boolean"),
        Column("ordered_at", "timestamp"),
        Column("ship_date", "date"),
        Column("payload", "binary"),
    ),
    key_columns=("order_id", "line_no"),
)

AUDIT_LOG = TableSpec(
    database="shop",
    schema=None,
    name="audit_log",
    columns=(
        Column("event_id", "bigint", nullable=False),
        Column("event_type", "string", length=50, nullable=False),
        Column("details", "string"),
        Column("logged_at", "timestamp"),
    ),
    key_columns=(),
)

ID_BASES: Mapping[str, int] = MappingProxyType({"orders": 10_000_000_000})
KEYLESS_DISTINCT_COLUMN = "event_id"  # never changed by an update, unique among live rows
TABLE_WEIGHTS: Mapping[str, float] = MappingProxyType(
    {"customers": 3.0, "orders": 4.0, "audit_log": 2.0}
)


def default_tables(features: Iterable[str] = ALL_FEATURES) -> tuple[TableSpec, ...]:
    """The tables a history with ``features`` has: customers, orders (+ audit_log)."""
    tables = [CUSTOMERS, ORDERS]
    if "keyless_table" in set(features):
        tables.append(AUDIT_LOG)
    return tuple(tables)


# --------------------------------------------------------------------------- values

_EPOCH = dt.datetime(1970, 1, 1)
_MS = dt.timedelta(milliseconds=1)

_SPECIAL_STRINGS: tuple[str, ...] = (
    "",
    " ",
    "O'Brien",
    'say "hi"',
    "back\\slash \\n not a newline",
    "line1\nline2\r\nline3\ttab",
    "emoji \U0001f600 clef \U0001d11e cjk-ext \U0002000b",  # non-BMP (4-byte UTF-8)
    "null",
    "NULL",
    "  padded  ",
    "日本語のテキスト",
    "Ελληνικά και кириллица",
    "mixed 'single' \"double\" \\ and \n newline",
    '{"json": [1, 2, {"a": null}]}',
    "a,b;c|d\u00a0nbsp",
    "e\u0301 combining, \u2028 line separator",
    "<tag attr='x'>&amp;</tag>",
)
_NAME_PARTS: tuple[str, ...] = (
    "Anna",
    "Björn",
    "Zoë",
    "Łukasz",
    "Иван",
    "Мария",
    "李",
    "王芳",
    "José",
    "Søren",
    "O'Neil",
    "Nguyễn",
    "Ólafur",
    "Ahmed",
    "Schmidt",
    "García",
)
_LONG_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789 .,;:'\"\\/\n\t"
    "äöüßéèêçñ日本語中文кирилица\u00a0\U0001f600\U0001d11e"
)
_SPECIAL_BYTES: tuple[bytes, ...] = (
    b"",
    b"\x00",
    b"\xff\xfe\xfd\x80",  # not UTF-8
    b"\xc3\x28",  # invalid UTF-8 sequence
    "héllo".encode(),
    b"\x00\x01\x02\xff",
    b'{"not": "json"}\n',
)
_SPECIAL_DATES: tuple[dt.date, ...] = (
    dt.date(1969, 12, 31),
    dt.date(1970, 1, 1),
    dt.date(1900, 1, 1),
    dt.date(1901, 12, 13),
    dt.date(2000, 2, 29),
    dt.date(2038, 1, 19),
    dt.date(9999, 12, 31),
)
_SPECIAL_TIMESTAMPS: tuple[dt.datetime, ...] = (
    dt.datetime(1970, 1, 1, 0, 0, 0),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999_000),
    dt.datetime(1900, 1, 1, 0, 0, 0, 1_000),
    dt.datetime(1950, 6, 15, 12, 34, 56, 789_000),
    dt.datetime(2038, 1, 19, 3, 14, 8, 0),
    dt.datetime(2262, 4, 11, 23, 47, 16, 854_000),
    dt.datetime(9999, 12, 31, 23, 59, 59, 999_000),
)
_SPECIAL_DOUBLES: tuple[float, ...] = (
    0.0,
    1.0,
    -1.5,
    0.1,
    1 / 3,
    123456789.125,
    1e-7,
    2.5e-8,
    1e21,
    -1.0e20,
    9007199254740993.0,
    1e300,
)
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)

SPECIAL_RATE = 0.15
NULL_RATE = 0.08
LONG_STRING_RATE = 0.01
LONG_STRING_CHARS = 5_000


def _decimal(unscaled: int, scale: int) -> Decimal:
    """``unscaled * 10**-scale`` exactly (no context rounding at 28 digits), exponent -scale."""
    return Decimal(f"{unscaled}E-{scale}")


def _special_values(column: Column) -> tuple[Value, ...]:
    """The edge cases of ``column``'s type (that fit its length)."""
    match column.type:
        case "int":
            return (0, 1, -1, *_INT32)
        case "bigint":
            return (0, -1, *_INT64, 2**53 + 1, -(2**53 + 1), 2**31)
        case "decimal":
            precision, scale = column.precision or 10, column.scale or 0
            biggest = 10**precision - 1
            return tuple(_decimal(n, scale) for n in (0, 1, -1, biggest, -biggest, 10**scale))
        case "double":
            return _SPECIAL_DOUBLES
        case "boolean":
            return (True, False)
        case "string":
            limit = column.length
            return tuple(s for s in _SPECIAL_STRINGS if limit is None or len(s) <= limit)
        case "binary":
            return _SPECIAL_BYTES
        case "date":
            return _SPECIAL_DATES
        case "timestamp":
            return _SPECIAL_TIMESTAMPS
    raise ValueError(f"unknown logical type {column.type!r}")


def _ordinary_value(rng: random.Random, column: Column) -> Value:
    match column.type:
        case "int":
            return rng.randint(-100_000, 100_000)
        case "bigint":
            return rng.randint(-(10**15), 10**15)
        case "decimal":
            precision, scale = column.precision or 10, column.scale or 0
            digits = rng.randint(1, precision)
            return _decimal(rng.randint(-(10**digits) + 1, 10**digits - 1), scale)
        case "double":
            return round(rng.uniform(-1e6, 1e6), rng.choice((0, 2, 6, 12)))
        case "boolean":
            return rng.random() < 0.5
        case "string":
            if column.length is None and rng.random() < LONG_STRING_RATE:
                chunk = "".join(rng.choices(_LONG_ALPHABET, k=250))  # 20 x 250 chars: fast
                return (chunk * (LONG_STRING_CHARS // 250))[:LONG_STRING_CHARS]
            text = f"{rng.choice(_NAME_PARTS)} {rng.choice(_NAME_PARTS)} {rng.randint(0, 9999)}"
            return text if column.length is None else text[: column.length]
        case "binary":
            return rng.randbytes(rng.randint(1, 32))
        case "date":
            return dt.date(1900, 1, 1) + dt.timedelta(days=rng.randint(0, 109_572))
        case "timestamp":  # 1950 .. 2100, ms precision
            return _EPOCH + _MS * rng.randint(-631_152_000_000, 4_102_444_800_000)
    raise ValueError(f"unknown logical type {column.type!r}")


def _value(rng: random.Random, column: Column, *, allow_null: bool = True) -> Value:
    """A random value of ``column``: NULL (nullable columns), an edge case or an ordinary one."""
    if allow_null and column.nullable and rng.random() < NULL_RATE:
        return None
    if rng.random() < SPECIAL_RATE:
        return rng.choice(_special_values(column))
    return _ordinary_value(rng, column)


def _same(left: Value, right: Value) -> bool:
    return type(left) is type(right) and left == right


def _different_value(rng: random.Random, column: Column, old: Value) -> Value:
    """A random value of ``column`` that differs from ``old`` (never NULL)."""
    if column.type == "boolean":
        return (not old) if isinstance(old, bool) else rng.random() < 0.5
    while True:
        new = _value(rng, column, allow_null=False)
        if not _same(new, old):
            return new


# --------------------------------------------------------------------------- state


K = TypeVar("K")
V = TypeVar("V")


class _Pool(Generic[K, V]):
    """A dict with O(1) uniform random choice and removal (insertion-ordered choice list)."""

    def __init__(self) -> None:
        self._keys: list[K] = []
        self._pos: dict[K, int] = {}
        self.values: dict[K, V] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._pos

    def add(self, key: K, value: V) -> None:
        if key not in self._pos:
            self._pos[key] = len(self._keys)
            self._keys.append(key)
        self.values[key] = value

    def remove(self, key: K) -> V:
        index = self._pos.pop(key)
        last = self._keys.pop()
        if index < len(self._keys):
            self._keys[index] = last
            self._pos[last] = index
        return self.values.pop(key)

    def choice(self, rng: random.Random, exclude: Callable[[K], bool]) -> K | None:
        """A random key for which ``exclude`` is false (a few tries), or None."""
        for _ in range(8):
            if not self._keys:
                return None
            key = self._keys[rng.randrange(len(self._keys))]
            if not exclude(key):
                return key
        return None

    def clear(self) -> list[tuple[K, V]]:
        items = [(key, self.values[key]) for key in self._keys]
        self._keys.clear()
        self._pos.clear()
        self.values.clear()
        return items


Key = tuple[Value, ...]


class _TableState:
    """Live rows, deleted rows (for re-inserts) and every key ever used, of one table."""

    def __init__(self, table: TableSpec) -> None:
        self.table = table
        self.live: _Pool[Key, Row] = _Pool()
        self.deleted: _Pool[Key, Row] = _Pool()
        self.used: set[Key] = set()
        self.id_base = ID_BASES.get(table.name, 0)
        self.next_id = 1  # ids are id_base + next_id (order ids exceed 32 bits)

    def apply(self, change: RowChange) -> None:
        table = self.table
        if change.before is not None:
            old_key = table.key_of(change.before)
            self.live.remove(old_key)
            # a deleted row may come back; so may a key a primary-key update left, but not the
            # old identity of an updated keyless row (its event_id lives on in the new one)
            if change.after is None or (
                table.key_columns and table.key_of(change.after) != old_key
            ):
                self.deleted.add(old_key, change.before)
        if change.after is not None:
            new_key = table.key_of(change.after)
            if new_key in self.deleted:
                self.deleted.remove(new_key)
            self.live.add(new_key, change.after)
            self.used.add(new_key)
            first = change.after[table.columns[0].name]
            if isinstance(first, int) and not isinstance(first, bool):
                self.next_id = max(self.next_id, first - self.id_base + 1)

    def truncate(self) -> None:
        for key, row in self.live.clear():
            self.deleted.add(key, row)


class _Generator:
    def __init__(self, config: SimulationConfig, tables: tuple[TableSpec, ...], rng: random.Random):
        self.config = config
        self.features = config.features
        self.rng = rng
        self.tables = tables
        self.state = {table.name: _TableState(table) for table in tables}
        self.items: list[Item] = []
        self.sequence = 0
        self.time_ms = config.start_time_ms
        self.changes = 0  # row changes generated so far
        self.truncates = 0
        weights = {op: float(config.op_weights.get(op, 0.0)) for op in DEFAULT_OP_WEIGHTS}
        if "partial_update" not in self.features:
            weights["partial_update"] = 0.0
        if "key_update" not in self.features:
            weights["key_update"] = 0.0
        self.ops = [op for op, w in weights.items() if w > 0] or ["insert"]
        self.op_cum = list(itertools.accumulate(weights.get(op, 1.0) for op in self.ops))
        self.table_names = [t.name for t in tables]
        self.table_cum = list(itertools.accumulate(TABLE_WEIGHTS.get(t.name, 1.0) for t in tables))

    # ---- continuing
    def replay(self, history: History) -> None:
        for item in history.items:
            self.sequence = max(self.sequence, item.sequence)
            self.time_ms = max(self.time_ms, item.commit_time_ms + 1)
            if isinstance(item, Transaction):
                for event in item.events:
                    if isinstance(event, Truncate):
                        self.state[event.table.name].truncate()
                    else:
                        self.state[event.table.name].apply(event)

    # ---- items
    def _next_item(self) -> tuple[int, int]:
        self.sequence += 1
        if self.items or self.sequence > 1:
            self.time_ms += self.rng.randint(1, MAX_COMMIT_STEP_MS)
        return self.sequence, self.time_ms

    def _commit(self, events: list[Event], *, is_snapshot: bool = False) -> None:
        sequence, time_ms = self._next_item()
        self.items.append(
            Transaction(
                transaction_id=str(sequence),
                sequence=sequence,
                commit_time_ms=time_ms,
                events=tuple(events),
                is_snapshot=is_snapshot,
            )
        )
        for event in events:
            if isinstance(event, Truncate):
                self.state[event.table.name].truncate()
            else:
                self.state[event.table.name].apply(event)
                self.changes += 1

    def heartbeat(self) -> None:
        sequence, time_ms = self._next_item()
        self.items.append(Heartbeat(sequence=sequence, commit_time_ms=time_ms))

    # ---- rows
    def _fresh_key(self, state: _TableState) -> Key:
        """A key never used before in the history (recorded as used at once)."""
        table = state.table
        while True:
            live = None
            if table.name == "orders" and self.rng.random() < 0.3:
                live = state.live.choice(self.rng, lambda _key: False)
            if live is not None:  # another line of a live order
                key: Key = (live[0], self.rng.randint(2, 99))
            else:
                first = state.id_base + state.next_id
                key = (first,) if len(table.key_columns) == 1 else (first, 1)
                state.next_id += 1
            if key not in state.used:
                state.used.add(key)
                return key

    def new_row(self, state: _TableState, key: Key | None = None) -> Row:
        table = state.table
        row: Row = {}
        if table.key_columns:
            key = key if key is not None else self._fresh_key(state)
            row.update(zip(table.key_columns, key, strict=True))
        for column in table.columns:
            if column.name in row:
                continue
            if column.name == KEYLESS_DISTINCT_COLUMN and not table.key_columns:
                row[column.name] = state.id_base + state.next_id
                state.next_id += 1
            else:
                row[column.name] = _value(self.rng, column)
        return row

    def _updatable(self, table: TableSpec) -> list[Column]:
        fixed = set(table.key_columns) or {KEYLESS_DISTINCT_COLUMN}
        return [c for c in table.columns if c.name not in fixed]

    def _updated(self, table: TableSpec, before: Row, columns: list[Column]) -> Row:
        after = dict(before)
        for column in columns:
            after[column.name] = _different_value(self.rng, column, before[column.name])
        return after

    def _full_update(self, table: TableSpec, before: Row) -> Row:
        """Every non-key column changes; nullable ones sometimes to NULL."""
        after = dict(before)
        for column in self._updatable(table):
            old = before[column.name]
            if column.nullable and old is not None and self.rng.random() < NULL_RATE:
                after[column.name] = None
            else:
                after[column.name] = _different_value(self.rng, column, old)
        return after

    def _narrow_columns(self, table: TableSpec) -> list[Column]:
        columns = self._updatable(table)
        return self.rng.sample(columns, k=min(len(columns), self.rng.choice((1, 1, 2))))

    # ---- one change
    def change(self, op: str, state: _TableState, touched: set[tuple[str, Key]]) -> RowChange:
        """A change of ``op`` (or an insert when ``op`` is impossible here) on ``state``."""
        table = state.table
        name = table.name

        def busy(key: Key) -> bool:
            return (name, key) in touched

        def touch(row: Row) -> None:
            touched.add((name, table.key_of(row)))

        if not table.key_columns and op in {
            "update",
            "partial_update",
            "null_update",
            "key_update",
        }:
            # updating a keyless row changes its identity: only where key updates are allowed
            op = op if "key_update" in self.features else "delete"
        if op == "reinsert":
            key = state.deleted.choice(self.rng, busy)
            if key is not None:
                old = state.deleted.values[key]
                # keyed: the key with new values; keyless: the same row (its event_id is free)
                row = self.new_row(state, key) if table.key_columns else dict(old)
                touch(row)
                return RowChange(table, "insert", None, row)
            op = "insert"
        if op != "insert":
            key = state.live.choice(self.rng, busy)
            if key is not None:
                before = state.live.values[key]
                after = self._apply_op(op, state, before)
                if after is not None:
                    touch(before)
                    if op == "delete":
                        return RowChange(table, "delete", before, None)
                    touch(after)
                    return RowChange(table, "update", before, after)
        row = self.new_row(state)
        touch(row)
        return RowChange(table, "insert", None, row)

    def _apply_op(self, op: str, state: _TableState, before: Row) -> Row | None:
        """The after image of ``op`` on ``before`` (``before`` itself for delete), or None."""
        table = state.table
        partial = "partial_update" in self.features
        match op:
            case "delete":
                return before
            case "update":
                return self._full_update(table, before)
            case "partial_update":
                return self._updated(table, before, self._narrow_columns(table))
            case "null_update":
                candidates = [
                    c for c in self._updatable(table) if c.nullable and before[c.name] is not None
                ]
                if not candidates:
                    return None
                column = self.rng.choice(candidates)
                if partial:
                    after = dict(before)
                else:
                    after = self._updated(table, before, self._updatable(table))
                after[column.name] = None
                return after
            case "key_update":
                if not table.key_columns:
                    return self._updated(table, before, self._narrow_columns(table))
                key = self._fresh_key(state)
                after = dict(before)
                after.update(zip(table.key_columns, key, strict=True))
                if not partial:
                    after = self._updated(table, after, self._updatable(table))
                elif self.rng.random() < 0.5:
                    after = self._updated(table, after, self._narrow_columns(table))
                return after
        raise ValueError(f"unknown op {op!r}")

    # ---- transactions
    def snapshot(self, rows_per_table: int) -> None:
        for table in self.tables:
            state = self.state[table.name]
            remaining = rows_per_table
            while remaining > 0:
                n = min(remaining, SNAPSHOT_ROWS_PER_TRANSACTION)
                events: list[Event] = []
                for _ in range(n):
                    events.append(RowChange(table, "snapshot", None, self.new_row(state)))
                self._commit(events, is_snapshot=True)
                remaining -= n

    def truncate(self) -> None:
        candidates = [name for name in self.table_names if self.state[name].live]
        name = self.rng.choice(candidates or self.table_names)
        self._commit([Truncate(self.state[name].table)])
        self.truncates += 1

    def transaction(self, size: int) -> None:
        touched: set[tuple[str, Key]] = set()
        events: list[Event] = []
        bulk_at = -1
        if "multi_row_message" in self.features and self.rng.random() < self.config.multi_row_rate:
            bulk_at = self.rng.randrange(size)
        while len(events) < size:
            if len(events) == bulk_at:
                events.extend(self._bulk(touched, size - len(events)))
                continue
            name = self.rng.choices(self.table_names, cum_weights=self.table_cum)[0]
            op = self.rng.choices(self.ops, cum_weights=self.op_cum)[0]
            events.append(self.change(op, self.state[name], touched))
        self._commit(events)

    def _bulk(self, touched: set[tuple[str, Key]], room: int) -> list[RowChange]:
        """A multi-row statement: 2-5 adjacent changes of one op on one table."""
        name = self.rng.choices(self.table_names, cum_weights=self.table_cum)[0]
        state = self.state[name]
        n = max(1, min(room, self.rng.randint(2, 5)))
        op = self.rng.choice(("insert", "partial_update", "delete"))
        if op == "partial_update" and (
            "partial_update" not in self.features or not state.table.key_columns
        ):
            op = "insert"
        if op == "partial_update":  # UPDATE ... SET <same columns> WHERE ...
            columns = self._narrow_columns(state.table)
            changes: list[RowChange] = []
            for _ in range(n):
                key = state.live.choice(self.rng, lambda k: (name, k) in touched)
                if key is None:
                    break
                before = state.live.values[key]
                after = self._updated(state.table, before, columns)
                touched.add((name, key))
                changes.append(RowChange(state.table, "update", before, after))
            return changes or [self.change("insert", state, touched)]
        changes = []
        for _ in range(n):
            change = self.change(op, state, touched)
            if change.op != op and changes:
                break
            changes.append(change)
        return changes

    def run(self, target: int, *, snapshot_rows: int) -> None:
        if "snapshot" in self.features and snapshot_rows > 0 and target > 0:
            per_table = min(snapshot_rows, target // 2 // max(1, len(self.tables)))
            self.snapshot(per_table)
        low, high = self.config.transaction_size
        features = self.features
        while self.changes < target:
            left = target - self.changes
            if "heartbeat" in features and self.rng.random() < self.config.heartbeat_rate:
                self.heartbeat()
            force_truncate = target >= 1_000 and not self.truncates and left <= target // 2
            if "truncate" in features and (
                force_truncate or self.rng.random() < self.config.truncate_rate
            ):
                self.truncate()
                continue
            self.transaction(min(left, self.rng.randint(low, high)))


def generate(config: SimulationConfig, after: History | None = None) -> History:
    """A history of ``config.changes`` row changes (see the module docstring).

    Args:
        config: what to generate.
        after: a history this one continues (same tables; sequences, commit times, live and
            deleted rows carry on). The result holds only the new items; :func:`combine` joins.
    """
    if after is None:
        tables = default_tables(config.features)
        rng = random.Random(config.seed)
        generator = _Generator(config, tables, rng)
        generator.run(config.changes, snapshot_rows=config.snapshot_rows)
    else:
        rng = random.Random(f"{config.seed}:after:{len(after.items)}")
        generator = _Generator(config, after.tables, rng)
        generator.replay(after)
        generator.run(config.changes, snapshot_rows=0)
    return History(tables=generator.tables, items=tuple(generator.items))


def combine(*histories: History) -> History:
    """One history of consecutive parts (``generate(config, after=...)`` results) of the same
    tables, items concatenated."""
    if not histories:
        raise ValueError("combine needs at least one history")
    tables = histories[0].tables
    for history in histories[1:]:
        if history.tables != tables:
            raise ValueError("combine: the histories do not have the same tables")
    return History(tables=tables, items=tuple(i for h in histories for i in h.items))


def features_used(history: History) -> frozenset[str]:
    """The features (names of :data:`ALL_FEATURES`) that ``history`` exercises:

    - ``snapshot``: a row change with op ``snapshot``; ``truncate``: a ``Truncate``;
      ``heartbeat``: a ``Heartbeat``; ``keyless_table``: a table without key columns;
    - ``key_update``: an update that moves a row's identity (``RowChange.moves_key``);
    - ``partial_update``: an update of a keyed table that leaves a non-key column unchanged;
    - ``multi_row_message``: two adjacent changes of one table with the same op in a
      transaction (material for a multi-row message).

    Schema changes (``SchemaChange``, :mod:`schema_evolution`) are not a generator feature and
    count as nothing.
    """
    used: set[str] = set()
    if any(not table.key_columns for table in history.tables):
        used.add("keyless_table")
    for item in history.items:
        if isinstance(item, Heartbeat):
            used.add("heartbeat")
            continue
        previous: Event | None = None
        for event in item.events:
            if isinstance(event, Truncate):
                used.add("truncate")
            elif isinstance(event, RowChange):
                if event.op == "snapshot":
                    used.add("snapshot")
                if event.moves_key:
                    used.add("key_update")
                if event.op == "update" and event.table.key_columns:
                    non_key = len(event.table.columns) - len(event.table.key_columns)
                    changed = set(event.changed_columns) - set(event.table.key_columns)
                    if len(changed) < non_key:
                        used.add("partial_update")
                if (
                    isinstance(previous, RowChange)
                    and previous.table == event.table
                    and previous.op == event.op
                ):
                    used.add("multi_row_message")
            previous = event
    return frozenset(used)
