"""Streams with schema changes in the middle (issue 6): the schema-evolution history of
``cdc_lakehouse.tools.simulate.schema_evolution`` (ADD COLUMN, RENAME COLUMN, widen, DROP COLUMN,
TRUNCATE over ``ddl_shop.products``) encoded in every format whose producer sends DDL, on
topics ``simddl.<format>`` (registered in seeds/cdc_topics.csv).

Each stream is delivered over two partitions with producer-retry duplicates and split in
two ingest batches: everything up to the RENAME (``dump_lines``: the lake every test reads),
the widen, the DROP COLUMN, the truncate and the rest in a later batch
(``increment_dump_lines``, ingested by the ``simulated_increments`` fixture before its
incremental run): the evolution is applied incrementally.

What each format's stream must capture is in its cases file: ``schema_changes(format_name) ->
SchemaChanges`` (tests/dbt_models/conformance.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

from cdc_lakehouse.tools.simulate.delivery import Delivery, DeliveryConfig, deliver
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.history import History, SchemaChange, Transaction
from cdc_lakehouse.tools.simulate.oracle import current_state
from cdc_lakehouse.tools.simulate.schema_evolution import (
    SCHEMA_CHANGE_FORMATS,
    TOPIC_PREFIX,
    history_for_format,
)
from ingest.dump import DumpRecord
from tests.dbt_models.simulation import topic_current_rows

ROWS = 60

Change = tuple[str, str | None, str | None, str | None]
"""One captured column change: (kind, column, new name, new Spark type)."""
CREATE_TABLE: Change = ("create_table", None, None, None)
ADD_STOCK: Change = ("add_column", "stock", None, "int")
RENAME: Change = ("rename_column", "name", "title", None)
WIDEN: Change = ("change_column_type", "stock", None, "bigint")
DROP_NOTE: Change = ("drop_column", "note", None, None)
TRUNCATE: Change = ("truncate", None, None, None)


@dataclass(frozen=True)
class SchemaChanges:
    """What ``schema_changes(format_name)`` of a format's cases file returns
    (tests/dbt_models/conformance.py): the column changes silver.schema_changes captures
    from the format's stream.

    Attributes:
        first_batch: the changes of the first batch, up to the RENAME (test_schema_changes.py).
        second_batch: the later ones: widen, DROP COLUMN, truncate
            (test_simulated_schema_evolution.py).
        typed: the format's messages declare column types: typed gold has every column typed.
    """

    first_batch: list[Change]
    second_batch: list[Change]
    typed: bool


@dataclass(frozen=True)
class EvolutionStream:
    """One format's schema-evolution stream and its two deliveries."""

    format: str
    encoder: ModuleType
    history: History
    first: Delivery
    second: Delivery

    @property
    def topics(self) -> list[str]:
        return self.encoder.topics(self.history, TOPIC_PREFIX)


def _cut(history: History) -> int:
    """The sequence of the last item of the first batch: the one before the widen DDL."""
    for item in history.items:
        if isinstance(item, Transaction) and any(
            isinstance(e, SchemaChange) and e.kind == "widen_column" for e in item.events
        ):
            return item.sequence - 1
    raise AssertionError("the schema-evolution history has no widen_column change")


@cache
def streams() -> dict[str, EvolutionStream]:
    """Every schema-change format's stream (cached: the dumps and the tests share them)."""
    out = {}
    for index, format_ in enumerate(sorted(SCHEMA_CHANGE_FORMATS)):
        encoder = ENCODERS[format_]
        history = history_for_format(format_, seed=60 + index, rows=ROWS)
        messages = encoder.encode(history, TOPIC_PREFIX)
        cut = _cut(history)
        config = DeliveryConfig(
            partitions=2, duplicate_rate=0.05, malformed_rate=0.0, batches=1, seed=60 + index
        )
        first = deliver([m for m in messages if m.sequence <= cut], config)
        second = deliver([m for m in messages if m.sequence > cut], config, after=first)
        out[format_] = EvolutionStream(format_, encoder, history, first, second)
    return out


def dump_lines() -> list[DumpRecord]:
    """Every stream's first batch as topic dump records."""
    return [r for s in streams().values() for r in s.first.records]


def increment_dump_lines(batch: int) -> list[DumpRecord] | None:
    """Every stream's second batch (offsets after the first's), in the first incremental
    batch (``batch`` 0; nothing for the others)."""
    if batch != 0:
        return None
    return [r for s in streams().values() for r in s.second.records]


def prefix(history: History) -> History:
    """The part of ``history`` in the first batch (up to the widen DDL)."""
    cut = _cut(history)
    return History(history.tables, tuple(i for i in history.items if i.sequence <= cut))


def expected_rows(stream: EvolutionStream, history: History) -> dict[str, dict[str, str | None]]:
    """The oracle's live rows of ``products`` after ``history``: id text -> column -> value
    text, each row with the columns it was last written with (the lenient gold rule: a row
    not written since a DDL keeps its columns as written)."""
    columns = {
        column.name: column
        for spec in history.table_versions("products")
        for column in spec.columns
    }
    out = {}
    for row in current_state(history)["products"]:
        texts = {name: stream.encoder.value_text(columns[name], v) for name, v in row.items()}
        out[texts["id"] or ""] = texts
    return out


def gold_rows(spark: Any, stream: EvolutionStream) -> dict[str, dict[str, str | None]]:
    """gold.current_rows of the stream's products table: id text -> row_values."""
    rows = topic_current_rows(spark, stream.topics)
    return {row["row_values"].get("id") or "": dict(row["row_values"]) for row in rows}


def row_differences(
    expected: dict[str, dict[str, str | None]], actual: dict[str, dict[str, str | None]]
) -> list[str]:
    """Readable differences: missing / unexpected ids, and per row the columns of the
    expected row whose gold value differs (a column gold lacks counts as NULL; gold may keep
    more columns - old names of renamed or dropped columns stay, by the lenient rule)."""
    problems = [f"missing id {k}" for k in sorted(set(expected) - set(actual))]
    problems += [f"unexpected id {k}" for k in sorted(set(actual) - set(expected))]
    for key in sorted(set(expected) & set(actual)):
        wrong = {
            column: (value, actual[key].get(column))
            for column, value in expected[key].items()
            if actual[key].get(column) != value
        }
        if wrong:
            problems.append(f"id {key}: (expected, gold) {wrong}")
    return problems


EVERY_CHANGE_SENT = SchemaChanges([ADD_STOCK, RENAME], [WIDEN, DROP_NOTE, TRUNCATE], typed=True)
"""The changes of a format whose producer sends every DDL as it is (DTS Canal, DTS Avro)."""
