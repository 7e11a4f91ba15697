"""The oracle: what gold must hold, by plain application of a logical history.

Independent of everything the project computes: it imports only :mod:`history` (no Spark, no
decoder, no encoder, no model), so a test comparing gold with it compares two independent
implementations.

- :func:`current_state`: the live rows of every table after applying every item in commit
  order (``gold.current_rows`` and the typed gold tables).
- :func:`row_versions`: SCD type 2 history, one :class:`RowVersion` per change of each row
  identity (the gold history model).

Rules applied (in the order of ``History.items``, then of the events inside a transaction):

- insert / snapshot: the row becomes live under its identity (``TableSpec.key_of``: the key
  columns, or every column for a table without a key).
- update: the row under ``key_of(before)`` is replaced by ``after``; when the identity changes
  (a primary-key update; any update of a keyless row) the old identity is gone and the new one
  is live.
- delete: the row under ``key_of(before)`` is gone.
- truncate: every row of the table is gone.
- schema change (``SchemaChange``: add / drop / rename / widen a column): changes no row. The
  oracle keeps each row *as last written* (the project's lenient gold rule for DDL): a row
  written before an ADD COLUMN lacks the added column (gold: NULL) until its next change; a
  row written before a RENAME keeps the old column name until its next change, whose whole
  new-spec ``after`` then holds the value under the new name (gold may keep the old name's
  column with the value written before); a dropped column keeps its last written value in
  rows not changed since (rows changed since lack it); a widened column keeps its values. So
  the rows of one table may have different columns: each row has the columns of the table
  version it was last written with. A later change's ``before`` must equal that row.
- heartbeats change nothing.

An inconsistent history (insert of a live identity, update / delete of a missing row or with a
``before`` that is not the live row, an update onto another live identity) raises
:class:`OracleError`: the oracle doubles as a checker of generated histories.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdc_lakehouse.tools.simulate.history import (
    History,
    Row,
    RowChange,
    SchemaChange,
    TableSpec,
    Transaction,
    Truncate,
    Value,
)

Key = tuple[Value, ...]


class OracleError(ValueError):
    """The history contradicts itself (see the module docstring)."""


@dataclass(frozen=True)
class RowVersion:
    """One version of one row identity (SCD type 2).

    Attributes:
        table: the table's name.
        key: the row identity (``TableSpec.key_of``): key column values, or every column's
            value for a table without a key.
        values: the whole row as written (the columns of the table version it was written
            with). For a deleted version: the row as it was when deleted.
        op: the change that began the version: ``insert``, ``snapshot``, ``update``,
            ``delete``, or ``truncate`` (deleted versions of a truncate). A primary-key update
            gives the old identity a deleted version with op ``update``.
        valid_from_ms: commit time (epoch ms UTC) of that change.
        valid_to_ms: commit time of the next change of the same identity; None for the
            current version.
        is_current: ``valid_to_ms is None``.
        is_deleted: the identity is gone from this version on (delete, truncate, or the old
            identity of an identity-changing update).
        sequence: ``sequence`` of the transaction of that change.
    """

    table: str
    key: Key
    values: Row
    op: str
    valid_from_ms: int
    valid_to_ms: int | None
    is_current: bool
    is_deleted: bool
    sequence: int


def _check_before(table: TableSpec, live: dict[Key, Row], change: RowChange) -> Key:
    assert change.before is not None
    key = table.key_of(change.before)
    if key not in live:
        raise OracleError(f"{table.name}: {change.op} of {key!r}, which is not live")
    if live[key] != change.before:
        raise OracleError(f"{table.name}: {change.op} of {key!r}: before image is not the live row")
    return key


def _apply(
    table: TableSpec, live: dict[Key, Row], change: RowChange
) -> tuple[Key | None, Key | None]:
    """Apply ``change`` to ``live`` (identity -> row); return (identity left, identity entered)."""
    old_key = _check_before(table, live, change) if change.before is not None else None
    new_key = table.key_of(change.after) if change.after is not None else None
    if old_key is not None:
        del live[old_key]
    if new_key is not None:
        if new_key in live:
            raise OracleError(f"{table.name}: {change.op} onto {new_key!r}, which is live")
        live[new_key] = dict(change.after or {})
    return old_key, new_key


def _states(history: History) -> dict[str, dict[Key, Row]]:
    return {table.name: {} for table in history.tables}


def current_state(history: History) -> dict[str, list[Row]]:
    """The live rows of every table of ``history`` (every table present, maybe empty), keyed by
    table name, each a list of whole rows (column -> value) in the order their identity last
    became live.

    Raises:
        OracleError: the history is inconsistent.
    """
    state = _states(history)
    for item in history.items:
        if not isinstance(item, Transaction):
            continue
        for event in item.events:
            live = state[event.table.name]
            if isinstance(event, SchemaChange):
                continue  # changes no row: rows stay as last written
            if isinstance(event, Truncate):
                live.clear()
            else:
                _apply(event.table, live, event)
    return {name: list(rows.values()) for name, rows in state.items()}


def row_versions(history: History) -> list[RowVersion]:
    """SCD type 2 versions of every row identity of ``history``, ordered by table (as in
    ``history.tables``), then by the first appearance of the identity, then by valid_from_ms.

    Each change of an identity closes its current version (``valid_to_ms`` = the change's commit
    time) and opens a new one; a delete, a truncate and an identity-changing update open a
    deleted version (``is_deleted``) of the identity they remove. A later re-insert closes the
    deleted version. Valid times of one identity never overlap: a row changes at most once per
    transaction and commit times strictly increase.

    Raises:
        OracleError: the history is inconsistent.
    """
    state = _states(history)
    # (table name, identity) -> its versions so far (open version last); dict keeps first-seen
    versions: dict[tuple[str, Key], list[RowVersion]] = {}

    def open_version(
        table: str, key: Key, values: Row, op: str, item: Transaction, deleted: bool
    ) -> None:
        chain = versions.setdefault((table, key), [])
        if chain:
            last = chain[-1]
            chain[-1] = RowVersion(
                table=last.table,
                key=last.key,
                values=last.values,
                op=last.op,
                valid_from_ms=last.valid_from_ms,
                valid_to_ms=item.commit_time_ms,
                is_current=False,
                is_deleted=last.is_deleted,
                sequence=last.sequence,
            )
        chain.append(
            RowVersion(
                table=table,
                key=key,
                values=dict(values),
                op=op,
                valid_from_ms=item.commit_time_ms,
                valid_to_ms=None,
                is_current=True,
                is_deleted=deleted,
                sequence=item.sequence,
            )
        )

    for item in history.items:
        if not isinstance(item, Transaction):
            continue
        for event in item.events:
            name = event.table.name
            live = state[name]
            if isinstance(event, SchemaChange):
                continue  # changes no row: rows stay as last written
            if isinstance(event, Truncate):
                for key, row in live.items():
                    open_version(name, key, row, "truncate", item, True)
                live.clear()
                continue
            old_key, new_key = _apply(event.table, live, event)
            if old_key is not None and old_key != new_key:
                assert event.before is not None
                open_version(name, old_key, event.before, event.op, item, True)
            if new_key is not None:
                assert event.after is not None
                open_version(name, new_key, event.after, event.op, item, False)

    order = {table.name: i for i, table in enumerate(history.tables)}
    chains = sorted(versions.items(), key=lambda entry: order[entry[0][0]])  # stable
    return [version for _identity, chain in chains for version in chain]
