"""Gold against the simulator's oracle, as row multisets per source table.

The oracle's document is ``expected/<format>.json`` of ``python -m cdc_lakehouse.tools.simulate
--out DIR`` (see :func:`cdc_lakehouse.tools.simulate.__main__.expected_document`); gold is
``gold.current_rows`` (``source_table`` and ``row_values``). Used by the live demo
(:mod:`cdc_lakehouse.tools.live`) and the tests.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

RowMultiset = Counter[tuple[tuple[str, str | None], ...]]
"""Rows as sorted ``(column, value text)`` tuples, with their counts."""


def expected_document_tables(document: dict[str, Any]) -> dict[str, RowMultiset]:
    """The oracle's live rows of each table as multisets, from the simulator's
    ``expected/<format>.json`` (``python -m cdc_lakehouse.tools.simulate --out``)."""
    return {
        table: Counter(tuple(sorted(row["row_values"].items())) for row in expected["rows"])
        for table, expected in document["tables"].items()
    }


def current_rows_tables(rows: Any) -> dict[str, RowMultiset]:
    """gold.current_rows rows (``source_table`` and ``row_values`` each) as multisets per
    lower-case source table."""
    tables: dict[str, RowMultiset] = {}
    for row in rows:
        tables.setdefault(row["source_table"].lower(), Counter())[
            tuple(sorted(row["row_values"].items()))
        ] += 1
    return tables


def differences(expected: dict[str, RowMultiset], actual: dict[str, RowMultiset]) -> list[str]:
    """Readable differences per table (empty when equal): counts and a few rows each way."""
    problems = []
    for table in sorted(set(expected) | set(actual)):
        want = expected.get(table, Counter())
        got = actual.get(table, Counter())
        if want == got:
            continue
        missing = list((want - got).elements())
        extra = list((got - want).elements())
        problems.append(
            f"{table}: expected {sum(want.values())} rows, gold has {sum(got.values())}; "
            f"{len(missing)} missing, e.g. {[dict(r) for r in missing[:2]]}; "
            f"{len(extra)} unexpected, e.g. {[dict(r) for r in extra[:2]]}"
        )
    return problems
