"""A seeded history with schema changes (DDL) in the middle, for end-to-end tests of gold
through ADD COLUMN / RENAME COLUMN / widen (MODIFY) / DROP COLUMN / TRUNCATE.

``generate_schema_evolution(seed=0)`` returns a :class:`History` of one keyed table,
``ddl_shop.products`` (schema None), whose spec changes along the stream (the
:mod:`history` docstring's schema-change conventions hold; ``History.tables`` holds the first
version, ``History.table_versions("products")`` all five):

====  ==============================  ==========================================================
ver   after                           columns
====  ==============================  ==========================================================
1     (declared)                      id bigint key, name string(100), price decimal(10,2),
                                      note string, created_at timestamp
2     ADD COLUMN stock int            id, name, price, stock (nullable, after price), note,
                                      created_at
3     RENAME COLUMN name -> title     id, title, price, stock, note, created_at
4     widen stock int -> bigint       id, title, price, stock bigint, note, created_at
5     DROP COLUMN note                id, title, price, stock bigint, created_at
====  ==============================  ==========================================================

Script, in commit order (n = ``rows``; counts below are at least 1):

1. insert n rows (ids 1..n), 2-5 per transaction;
2. update n/4 of them;
3. ADD COLUMN ``stock`` (comment ``units in stock``);
4. n/6 inserts and n/4 updates that write ``stock`` (updated rows were written before the
   DDL: their ``before`` lacks ``stock``), mixed, 1-4 changes per transaction;
5. RENAME COLUMN ``name`` -> ``title``;
6. n/6 inserts and n/4 updates (``before`` of rows written earlier has ``name``, ``after``
   has ``title``);
7. widen ``stock`` int -> bigint; n/10 inserts and n/6 updates whose ``stock`` lies beyond
   the 32-bit range;
8. DROP COLUMN ``note``;
9. n/6 updates and n/6 inserts;
10. n/8 deletes, 1-3 per transaction;
11. with ``truncate``: TRUNCATE, then n/4 inserts;
12. updates of about half of the live rows.

Some rows are never touched after step 1 (about n/6) or after step 4 (up to 3), before any
truncate: they keep ``name`` / ``note`` (and lack ``stock``) in the stream's view. Every
update is a whole-row update (every non-key column changes, nullable ones sometimes to NULL;
no partial update), so every format can express it. Values come from the generator's value
helpers (edge cases included). Each schema change and the truncate is alone in its
transaction; commit times strictly increase (1-1500 ms apart, starting at
``generate.DEFAULT_START_TIME_MS``); ``sequence`` numbers the items from 1 and the
transaction id is ``str(sequence)`` (as :mod:`generate`). No snapshot rows, no heartbeats.

Deterministic: the same (seed, rows, truncate) gives the same history; the only randomness is
one ``random.Random(seed)``.

Formats (:data:`SCHEMA_CHANGE_FORMATS`): the registry formats whose encoder renders this
history, topics ``<prefix>.<format>`` with prefix :data:`TOPIC_PREFIX` (``simddl``).
Formats of :data:`NO_TRUNCATE_FORMATS` cannot express a TRUNCATE (Qlik refuses it, Lindorm
sends nothing for it): give them the history made with ``truncate=False``
(:func:`history_for_format` does).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from cdc_lakehouse.tools.simulate.generate import (
    DEFAULT_START_TIME_MS,
    MAX_COMMIT_STEP_MS,
    NULL_RATE,
    _different_value,
    _value,
)
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Event,
    History,
    Item,
    Row,
    RowChange,
    SchemaChange,
    SchemaChangeKind,
    TableSpec,
    Transaction,
    Truncate,
    Value,
)

DATABASE = "ddl_shop"
TABLE = "products"
TOPIC_PREFIX = "simddl"
STOCK_COMMENT = "units in stock"

PRODUCTS = TableSpec(
    database=DATABASE,
    schema=None,
    name=TABLE,
    columns=(
        Column("id", "bigint", nullable=False),
        Column("name", "string", length=100),
        Column("price", "decimal", precision=10, scale=2),
        Column("note", "string"),
        Column("created_at", "timestamp"),
    ),
    key_columns=("id",),
)
"""Version 1 of the table (``History.tables``)."""

SCHEMA_CHANGE_FORMATS: frozenset[str] = frozenset(
    {
        "datahub_blob",
        "dataworks_json",
        "dts_avro",
        "dts_canal_json",
        "dts_shareplex_json",
        "lindorm_debezium",
        "qlik_avro",
        "qlik_json",
    }
)
"""Registry formats whose encoder renders a schema-evolution history (``datahub_tuple``
cannot: a Tuple topic has a fixed schema)."""

NO_TRUNCATE_FORMATS: frozenset[str] = frozenset({"lindorm_debezium", "qlik_avro", "qlik_json"})
"""Formats of :data:`SCHEMA_CHANGE_FORMATS` that cannot express a TRUNCATE: encode the
history made with ``truncate=False`` for them."""

_BIG_STOCK: tuple[int, ...] = (
    2**31,
    -(2**31) - 1,
    2**32 + 7,
    2**53 + 1,
    2**63 - 1,
    -(2**63),
)


# --------------------------------------------------------------------------- spec changes


def _replace_column(spec: TableSpec, name: str, new: Column | None) -> TableSpec:
    """``spec`` with column ``name`` replaced by ``new`` (same position), or dropped (None)."""
    columns: list[Column] = []
    for column in spec.columns:
        if column.name != name:
            columns.append(column)
        elif new is not None:
            columns.append(new)
    return TableSpec(spec.database, spec.schema, spec.name, tuple(columns), spec.key_columns)


def _add_after(spec: TableSpec, column: Column, after: str) -> TableSpec:
    """``spec`` with ``column`` added right after column ``after``."""
    columns: list[Column] = []
    for existing in spec.columns:
        columns.append(existing)
        if existing.name == after:
            columns.append(column)
    return TableSpec(spec.database, spec.schema, spec.name, tuple(columns), spec.key_columns)


# --------------------------------------------------------------------------- the script


class _Script:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.spec = PRODUCTS
        self.items: list[Item] = []
        self.sequence = 0
        self.time_ms = DEFAULT_START_TIME_MS
        self.live: dict[int, Row] = {}
        self.frozen: set[int] = set()  # rows no change touches until a truncate
        self.next_id = 1
        self.stock: Callable[[Column], Value] | None = None  # forced stock values

    # ---- items
    def commit(self, events: list[Event]) -> None:
        self.sequence += 1
        if self.sequence > 1:
            self.time_ms += self.rng.randint(1, MAX_COMMIT_STEP_MS)
        self.items.append(
            Transaction(
                transaction_id=str(self.sequence),
                sequence=self.sequence,
                commit_time_ms=self.time_ms,
                events=tuple(events),
            )
        )
        for event in events:
            if isinstance(event, Truncate):
                self.live.clear()
                self.frozen.clear()
            elif isinstance(event, RowChange):
                if event.before is not None:
                    del self.live[int(event.before["id"])]  # type: ignore[arg-type]
                if event.after is not None:
                    self.live[int(event.after["id"])] = event.after  # type: ignore[arg-type]

    def schema_change(
        self,
        kind: SchemaChangeKind,
        table: TableSpec,
        column: str,
        *,
        new_name: str | None = None,
        comment: str | None = None,
    ) -> None:
        change = SchemaChange(table, self.spec, kind, column, new_name=new_name, comment=comment)
        self.spec = table
        self.commit([change])

    # ---- values
    def _column_value(self, column: Column, old: Value, *, fresh: bool) -> Value:
        if column.name == "stock" and self.stock is not None:
            while True:
                new = self.stock(column)
                if fresh or type(new) is not type(old) or new != old:
                    return new
        if fresh:
            return _value(self.rng, column)
        if column.nullable and old is not None and self.rng.random() < NULL_RATE:
            return None
        return _different_value(self.rng, column, old)

    def insert(self) -> RowChange:
        row: Row = {"id": self.next_id}
        self.next_id += 1
        for column in self.spec.columns[1:]:
            row[column.name] = self._column_value(column, None, fresh=True)
        return RowChange(self.spec, "insert", None, row)

    def update(self, key: int) -> RowChange:
        before = self.live[key]
        after: Row = {"id": key}
        for column in self.spec.columns[1:]:
            after[column.name] = self._column_value(column, before.get(column.name), fresh=False)
        return RowChange(self.spec, "update", before, after)

    def delete(self, key: int) -> RowChange:
        return RowChange(self.spec, "delete", self.live[key], None)

    def _big_stock(self, _column: Column) -> Value:
        if self.rng.random() < 0.4:
            return self.rng.choice(_BIG_STOCK)
        magnitude = self.rng.randint(2**31, 10**15)
        return magnitude if self.rng.random() < 0.7 else -magnitude

    # ---- batches
    def pick(self, count: int) -> list[int]:
        """Up to ``count`` distinct live, not frozen keys (random order)."""
        candidates = [key for key in self.live if key not in self.frozen]
        return self.rng.sample(candidates, k=min(max(count, 0), len(candidates)))

    def run(self, ops: list[tuple[str, int]], size: tuple[int, int]) -> list[int]:
        """Commit ``ops`` ((op, key) pairs; key 0 for inserts), ``size`` changes per
        transaction; returns the keys written (inserted or updated)."""
        written: list[int] = []
        position = 0
        while position < len(ops):
            chunk = ops[position : position + self.rng.randint(*size)]
            position += len(chunk)
            events: list[Event] = []
            for op, key in chunk:
                if op == "insert":
                    event = self.insert()
                elif op == "update":
                    event = self.update(key)
                else:
                    event = self.delete(key)
                if event.after is not None:
                    written.append(int(event.after["id"]))  # type: ignore[arg-type]
                events.append(event)
            self.commit(events)
        return written

    def mixed(self, inserts: int, updates: int, size: tuple[int, int] = (1, 4)) -> list[int]:
        ops = [("insert", 0)] * max(inserts, 0) + [("update", k) for k in self.pick(updates)]
        self.rng.shuffle(ops)
        return self.run(ops, size)


def _at_least_one(value: float) -> int:
    return max(1, int(value))


def generate_schema_evolution(seed: int = 0, rows: int = 60, *, truncate: bool = True) -> History:
    """The schema-evolution history of ``seed`` with ``rows`` initial rows (module doc).

    Raises:
        ValueError: ``rows`` < 1.
    """
    if rows < 1:
        raise ValueError(f"rows must be 1 or more, got {rows}")
    script = _Script(seed)
    n = rows

    # 1-2: version 1
    first = script.run([("insert", 0)] * n, (2, 5))
    script.frozen.update(script.rng.sample(first, k=n // 6))
    script.mixed(0, _at_least_one(n / 4))

    # 3-4: ADD COLUMN stock int, then changes writing it
    v2 = _add_after(script.spec, Column("stock", "int"), "price")
    script.schema_change("add_column", v2, "stock", comment=STOCK_COMMENT)
    written = script.mixed(_at_least_one(n / 6), _at_least_one(n / 4))
    script.frozen.update(script.rng.sample(written, k=min(3, len(written) // 3)))

    # 5-6: RENAME COLUMN name -> title
    title = Column("title", "string", length=100)
    v3 = _replace_column(script.spec, "name", title)
    script.schema_change("rename_column", v3, "name", new_name="title")
    script.mixed(_at_least_one(n / 6), _at_least_one(n / 4))

    # 7: widen stock int -> bigint, then values beyond 32 bits
    v4 = _replace_column(script.spec, "stock", Column("stock", "bigint"))
    script.schema_change("widen_column", v4, "stock")
    script.stock = script._big_stock
    script.mixed(_at_least_one(n / 10), _at_least_one(n / 6))
    script.stock = None

    # 8-9: DROP COLUMN note, then more changes
    v5 = _replace_column(script.spec, "note", None)
    script.schema_change("drop_column", v5, "note")
    script.mixed(_at_least_one(n / 6), _at_least_one(n / 6))

    # 10: deletes
    script.run([("delete", key) for key in script.pick(_at_least_one(n / 8))], (1, 3))

    # 11: truncate, then inserts
    if truncate:
        script.commit([Truncate(script.spec)])
        script.run([("insert", 0)] * _at_least_one(n / 4), (2, 5))

    # 12: updates of about half of the live rows
    script.mixed(0, _at_least_one(len(script.live) / 2), (1, 4))

    return History(tables=(PRODUCTS,), items=tuple(script.items))


def history_for_format(
    format_name: str, seed: int = 0, rows: int = 60, *, truncate: bool | None = None
) -> History:
    """The schema-evolution history to encode in ``format_name``: with a truncate unless the
    format cannot express one (:data:`NO_TRUNCATE_FORMATS`) or ``truncate`` says otherwise.

    Raises:
        ValueError: ``format_name`` is not in :data:`SCHEMA_CHANGE_FORMATS`, or ``truncate``
            is true for a format of :data:`NO_TRUNCATE_FORMATS`.
    """
    if format_name not in SCHEMA_CHANGE_FORMATS:
        raise ValueError(
            f"format {format_name!r} cannot render schema changes; supported: "
            f"{', '.join(sorted(SCHEMA_CHANGE_FORMATS))}"
        )
    if truncate is None:
        truncate = format_name not in NO_TRUNCATE_FORMATS
    elif truncate and format_name in NO_TRUNCATE_FORMATS:
        raise ValueError(f"format {format_name!r} cannot express a truncate")
    return generate_schema_evolution(seed, rows, truncate=truncate)
