"""The logical change history the simulator generates, the oracle applies and the encoders
render in each registry format.

A history is what happened at the source, independent of any message format:

- ``tables``: the source tables (``TableSpec``), with typed columns and primary key columns
  (empty for a table without a key), *as first declared*: a table altered by a
  ``SchemaChange`` keeps its first version here; :meth:`History.table_versions` gives every
  version of a table in order.
- ``items``: in commit order, ``Transaction`` and ``Heartbeat`` items. A transaction holds
  ``RowChange``, ``Truncate`` and ``SchemaChange`` events in their order inside the
  transaction.

Values are plain Python values of the column's logical type:

=============  ===========================================================
logical type   Python value
=============  ===========================================================
int            ``int`` in the 32-bit range
bigint         ``int`` in the 64-bit range
decimal        ``decimal.Decimal`` with exactly ``scale`` digits after the point
double         ``float`` (finite)
boolean        ``bool``
string         ``str`` (unicode, may be empty or very long)
binary         ``bytes``
date           ``datetime.date``
timestamp      ``datetime.datetime``, UTC, naive, millisecond precision
=============  ===========================================================

``None`` is SQL NULL. Times (``commit_time_ms``, ``time_ms``) are epoch milliseconds, UTC.

Generator rules the encoders and the oracle may rely on:

- ``commit_time_ms`` strictly increases from one item to the next (at least 1 ms apart), so a
  format whose ordering key is a millisecond event time still orders every transaction.
- Inside one transaction a row (table, key) changes at most once, and a delete and the
  re-insert of the same key are in different transactions.
- Snapshot rows (op ``snapshot``, the full load) come first, in transactions of their own,
  before any change of the same table.
- ``RowChange.before`` and ``RowChange.after`` are always whole rows (every column of the
  table; after a schema change ``before`` is the row as last written, see below). Which
  columns a message actually carries (partial images, Canal ``old``, Qlik masks) is the
  encoder's choice; it may only leave out columns whose value did not change
  (``RowChange.changed_columns``).
- A table without a key never holds two identical rows.

Schema changes (``SchemaChange``: add / drop / rename / widen a column; only
:mod:`.schema_evolution` makes them, ``generate`` never does):

- A schema change is alone in its transaction. ``SchemaChange.table`` is the table's spec
  after the DDL (same database / schema / name, other columns), ``previous`` the spec before.
  Key columns are never dropped, renamed or widened.
- Row changes after it carry the new spec (``RowChange.table``), and ``after`` is a whole row
  of the new spec. ``before`` is the row *as last written to the stream* (the oracle's live
  row): it lacks a column added since, and keeps an old column name after a rename or drop
  (``{"name": ...}`` where the spec now says ``title``). So after a schema change ``before``
  and ``after`` may have different columns; a column of the spec that ``before`` lacks counts
  as changed (``RowChange.changed_columns``) and encoders render a column a row lacks as
  NULL. Without schema changes ``before`` and ``after`` always have the table's columns.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Literal, TypeAlias

LogicalType: TypeAlias = Literal[
    "int", "bigint", "decimal", "double", "boolean", "string", "binary", "date", "timestamp"
]
Value: TypeAlias = int | Decimal | float | bool | str | bytes | dt.date | dt.datetime | None
Row: TypeAlias = dict[str, Value]
Op: TypeAlias = Literal["insert", "update", "delete", "snapshot"]


@dataclass(frozen=True)
class Column:
    """One source column. ``precision`` / ``scale`` only for ``decimal``; ``length`` is the
    declared maximum length of a ``string`` / ``binary`` column (None: unbounded)."""

    name: str
    type: LogicalType
    precision: int | None = None
    scale: int | None = None
    length: int | None = None
    nullable: bool = True


@dataclass(frozen=True)
class TableSpec:
    """One source table. ``schema`` is None for sources without schemas (MySQL: the database
    is the only namespace). ``key_columns`` empty: the table has no primary key."""

    database: str
    schema: str | None
    name: str
    columns: tuple[Column, ...]
    key_columns: tuple[str, ...] = ()

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"table {self.name} has no column {name!r}")

    def key_of(self, row: Row) -> tuple[Value, ...]:
        """The row's identity: its key columns' values, or every column for a keyless table."""
        names = self.key_columns or self.column_names
        return tuple(row[name] for name in names)


@dataclass(frozen=True)
class RowChange:
    """One row change. ``before`` is None for insert / snapshot, ``after`` is None for delete;
    otherwise both are whole rows. An update may change key columns (a primary-key update)."""

    table: TableSpec
    op: Op
    before: Row | None
    after: Row | None

    @property
    def changed_columns(self) -> tuple[str, ...]:
        """Columns whose value differs between before and after (updates), in column order;
        a column of the table that ``before`` (or ``after``) lacks counts as changed (after a
        schema change, see the module doc)."""
        if self.before is None or self.after is None:
            return ()
        before, after = self.before, self.after
        return tuple(
            name
            for name in self.table.column_names
            if name not in before or name not in after or not _same_value(before[name], after[name])
        )

    @property
    def moves_key(self) -> bool:
        return (
            self.op == "update"
            and self.before is not None
            and self.after is not None
            and self.table.key_of(self.before) != self.table.key_of(self.after)
        )


@dataclass(frozen=True)
class Truncate:
    """TRUNCATE TABLE: every row of the table is gone as of this event."""

    table: TableSpec


SchemaChangeKind: TypeAlias = Literal["add_column", "drop_column", "rename_column", "widen_column"]


@dataclass(frozen=True)
class SchemaChange:
    """A DDL on one table. ``table``: the table spec after the change; ``previous``: before.

    ``column``: the column added / dropped / renamed (its old name) / widened; ``new_name``:
    the new name (``rename_column`` only); ``comment``: the column comment of the statement
    (``add_column`` only; ``COMMENT '...'`` in the DDL text some formats carry). Key columns
    are never dropped, renamed or widened. Changes no row (see the module doc)."""

    table: TableSpec
    previous: TableSpec
    kind: SchemaChangeKind
    column: str
    new_name: str | None = None
    comment: str | None = None


Event: TypeAlias = RowChange | Truncate | SchemaChange


@dataclass(frozen=True)
class Transaction:
    """One source transaction, committed at ``commit_time_ms`` (epoch ms, UTC).
    ``sequence`` numbers the history's items from 1 in commit order. ``is_snapshot``: a
    full-load batch (only ``snapshot`` row changes)."""

    transaction_id: str
    sequence: int
    commit_time_ms: int
    events: tuple[Event, ...]
    is_snapshot: bool = False


@dataclass(frozen=True)
class Heartbeat:
    """A heartbeat of the capture process at ``commit_time_ms`` (epoch ms, UTC)."""

    sequence: int
    commit_time_ms: int


Item: TypeAlias = Transaction | Heartbeat


@dataclass(frozen=True)
class History:
    """A generated history: its tables (as first declared) and its items in commit order."""

    tables: tuple[TableSpec, ...]
    items: tuple[Item, ...] = field(default_factory=tuple)

    @property
    def transactions(self) -> tuple[Transaction, ...]:
        return tuple(item for item in self.items if isinstance(item, Transaction))

    @property
    def row_changes(self) -> tuple[RowChange, ...]:
        return tuple(
            event
            for transaction in self.transactions
            for event in transaction.events
            if isinstance(event, RowChange)
        )

    def table_versions(self, name: str) -> tuple[TableSpec, ...]:
        """Every version of table ``name`` in order: as declared in ``tables``, then the spec
        after each ``SchemaChange`` of it. Raises KeyError for an unknown table."""
        versions = [table for table in self.tables if table.name == name]
        if not versions:
            raise KeyError(f"the history has no table {name!r}")
        for transaction in self.transactions:
            for event in transaction.events:
                if isinstance(event, SchemaChange) and event.table.name == name:
                    versions.append(event.table)
        return tuple(versions)


def _same_value(left: Value, right: Value) -> bool:
    # bool is an int subclass and 1.0 == 1: compare type and value
    return type(left) is type(right) and left == right
