"""What a baseline must compute, and how its result is compared.

- :func:`history_rows` / :func:`oracle_rows`: the expected live rows from the change
  simulator's oracle (:func:`cdc_lakehouse.tools.simulate.oracle.current_state`), each value
  rendered with the format encoder's ``value_text`` (the exact text the project's decoder yields).
- :func:`compared_columns`: the columns that are compared: logical type int, bigint or string.
  Decimals, doubles, binary, dates and timestamps are rendered differently by each engine
  (Spark's JSON parser turns ``1.50`` into ``1.5``, orjson reads a JSON number as a double,
  ...), so they are not compared; the row keys always are.
- :func:`differences`: readable differences between an expected and an actual
  :data:`~cdc_lakehouse.tools.bench.baselines.LatestRows`; empty when they agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING

from cdc_lakehouse.tools.bench.baselines import LatestRows, row_key
from cdc_lakehouse.tools.simulate.history import History
from cdc_lakehouse.tools.simulate.oracle import current_state

if TYPE_CHECKING:
    from cdc_lakehouse.tools.bench.workload import Workload

COMPARED_TYPES = frozenset({"int", "bigint", "string"})
"""Logical types (``simulate.history``) whose value texts must be exact in every baseline."""
SHOWN = 5
"""How many keys / values each kind of difference lists."""


def history_rows(encoder: ModuleType, history: History) -> LatestRows:
    """The live rows after ``history`` as ``encoder``'s format renders them: ``(table name
    lower-case, canonical row key) -> {column: encoder.value_text(column, value)}``.

    Raises:
        KeyError: a table of the history has no key columns (the benchmark has none).
    """
    specs = {table.name: table for table in history.tables}
    expected: LatestRows = {}
    for name, rows in current_state(history).items():
        spec = specs[name]
        if not spec.key_columns:
            raise KeyError(f"table {name} has no key: baselines need keyed tables")
        for row in rows:
            texts = {
                column: encoder.value_text(spec.column(column), value)
                for column, value in row.items()
            }
            expected[(name.lower(), row_key(spec.key_columns, texts))] = texts
    return expected


def oracle_rows(workload: Workload) -> LatestRows:
    """The live rows after the whole workload (history and new batch), see
    :func:`history_rows`."""
    return history_rows(workload.encoder, workload.whole)


def compared_columns(history: History) -> dict[str, set[str]]:
    """Per table (name lower-case), its columns of logical type int, bigint or string."""
    return {
        table.name.lower(): {c.name for c in table.columns if c.type in COMPARED_TYPES}
        for table in history.tables
    }


def _keys(keys: list[tuple[str, str]]) -> str:
    return ", ".join(f"{table}:{key}" for table, key in sorted(keys)[:SHOWN])


def differences(
    expected: LatestRows, actual: LatestRows, columns: Mapping[str, set[str]]
) -> list[str]:
    """What differs between ``expected`` and ``actual``: the key sets, then the values of
    ``columns[table]`` of the rows both hold (a column absent from a row counts as NULL).

    Returns:
        Readable lines, empty when they agree: counts, up to :data:`SHOWN` missing and extra
        keys, and up to :data:`SHOWN` differing values with both texts.
    """
    problems: list[str] = []
    missing = [key for key in expected if key not in actual]
    extra = [key for key in actual if key not in expected]
    if missing or extra:
        problems.append(
            f"{len(expected)} rows expected, {len(actual)} found: {len(missing)} missing, "
            f"{len(extra)} extra"
        )
    if missing:
        problems.append(f"missing keys (e.g. deleted rows kept out): {_keys(missing)}")
    if extra:
        problems.append(f"extra keys (e.g. lost deletes): {_keys(extra)}")
    differing: list[str] = []
    count = 0
    for key in sorted(expected.keys() & actual.keys()):
        want, got = expected[key], actual[key]
        for column in sorted(columns.get(key[0], ())):
            if want.get(column) != got.get(column):
                count += 1
                if len(differing) < SHOWN:
                    differing.append(
                        f"{key[0]}:{key[1]} {column}: expected {want.get(column)!r:.80}, "
                        f"found {got.get(column)!r:.80}"
                    )
    if count:
        problems.append(f"{count} differing values (e.g. an older change won)")
        problems.extend(differing)
    return problems
