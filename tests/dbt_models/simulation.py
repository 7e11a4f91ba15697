"""Simulated topics for the end-to-end gold tests (issue 5): one history per registry format
with an encoder, in two parts, delivered with duplicates, malformed records and partitions
cut out of order, and the oracle's expected gold for each.

- Part 1 (``first``): ``CDC_SIM_CHANGES`` row changes (default 5,000) over the simulator's
  three tables, ingested with the bundled sample and the edge cases before the first
  ``dbt build`` (fixture ``built_lake``).
- Part 2 (``second``): a fifth as many changes continuing the same rows, delivered in two
  ingest batches whose per-partition cuts differ (records of one partition arrive a batch
  later than those of another), each followed by an incremental dbt run (fixture
  ``simulated_increments``).

Larger runs: ``CDC_SIM_CHANGES=100000 make test`` (documented in
docs/how-to/simulate-changes.md).
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from cdc_lakehouse import formats
from cdc_lakehouse.tools.bench.pipeline import topic_current_rows
from cdc_lakehouse.tools.simulate.delivery import Delivery, DeliveryConfig, deliver, write_dump
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, combine, generate
from cdc_lakehouse.tools.simulate.gold_check import (
    RowMultiset,
    current_rows_tables,
)
from cdc_lakehouse.tools.simulate.history import History
from cdc_lakehouse.tools.simulate.oracle import current_state
from ingest.dump import DumpRecord

PREFIX = "sim"
CHANGES = int(os.environ.get("CDC_SIM_CHANGES", "5000"))


@dataclass(frozen=True)
class Simulation:
    """One format's simulated topics: the two history parts and their deliveries."""

    format: str
    encoder: ModuleType
    first: History
    second: History
    first_delivery: Delivery
    second_delivery: Delivery

    @property
    def topics(self) -> list[str]:
        return self.encoder.topics(self.whole, PREFIX)

    @property
    def whole(self) -> History:
        return combine(self.first, self.second)


ONE_BATCH_PART_2 = frozenset(
    {"datahub_tuple", "dts_avro", "dts_shareplex_json", "lindorm_debezium"}
)
"""Formats whose part 2 arrives in one batch, the others' in two: the second incremental run
has no new record of theirs (each is alone in its staging folder), so their staging and
intermediate models take the nothing-new path (macros/cdc_incremental.sql, no_new_rows) that
the incremental = full refresh and gold = oracle tests then check."""


def simulate(format_: str, encoder: ModuleType, seed: int) -> Simulation:
    """Generate, encode and deliver both parts of one format's history."""
    config = SimulationConfig(seed=seed, changes=CHANGES, features=encoder.FEATURES)
    first = generate(config)
    second = generate(replace(config, changes=max(CHANGES // 5, 100)), after=first)
    # encode the whole history once (counters such as DTS Avro's id run across both parts),
    # then split the messages at the end of part 1
    last_of_first = max(item.sequence for item in first.items)
    messages = encoder.encode(combine(first, second), PREFIX)
    delivery_config = DeliveryConfig(
        partitions=3, duplicate_rate=0.05, malformed_rate=0.002, batches=1, seed=seed
    )
    first_delivery = deliver([m for m in messages if m.sequence <= last_of_first], delivery_config)
    second_delivery = deliver(
        [m for m in messages if m.sequence > last_of_first],
        replace(delivery_config, batches=1 if format_ in ONE_BATCH_PART_2 else 2),
        after=first_delivery,
    )
    return Simulation(format_, encoder, first, second, first_delivery, second_delivery)


def simulate_all() -> dict[str, Simulation]:
    """Every format with an encoder, each with its own seed."""
    return {
        format_: simulate(format_, encoder, seed=500 + index)
        for index, (format_, encoder) in enumerate(sorted(ENCODERS.items()))
    }


def write_records(directory: Path, records: list[DumpRecord]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    write_dump(directory, records)
    return directory


def expected_tables(simulation: Simulation, history: History) -> dict[str, RowMultiset]:
    """The oracle's live rows of each table, in the encoder's value texts, as multisets."""
    state = current_state(history)
    expected: dict[str, RowMultiset] = {}
    for table in history.tables:
        expected[table.name] = Counter(
            tuple(
                sorted(
                    (column.name, simulation.encoder.value_text(column, row[column.name]))
                    for column in table.columns
                )
            )
            for row in state[table.name]
        )
    return expected


def gold_tables(spark: Any, simulation: Simulation) -> dict[str, RowMultiset]:
    """gold.current_rows of the source tables the simulation's topics carry, as multisets."""
    return current_rows_tables(topic_current_rows(spark, simulation.topics))


def silver_inputs() -> dict[str, str]:
    """Each staging *_events model -> the table silver reads for it: its plug-in's
    ``paired_in`` model (its staging model is then ephemeral), else itself."""
    return {fmt.events_model: fmt.paired_in or fmt.events_model for fmt in formats.MANIFEST}


def staging_tables_resolving_later() -> dict[str, bool]:
    """Each table of :func:`silver_inputs` -> whether its format says ``resolves_later`` (its
    rows can become final in a later ingest batch than their own)."""
    return {fmt.paired_in or fmt.events_model: fmt.resolves_later for fmt in formats.MANIFEST}


# the incremental staging, intermediate, silver and gold models (the decoding Python models
# too), whose rows must not depend on how the batches were split into runs
INCREMENTAL_TABLES = (
    # gold's incremental state: tombstones, merge entries and last changes of every row
    "gold.int_row_versions",
    # merged row by row (MERGE): what each run changed in them, and nothing else
    "gold.current_rows",
    "gold.row_history",
    "silver.change_events",
    "silver.control_events",
    "silver.quarantine",
    # schema versions: per batch, and added up over the batches
    "silver.int_schema_versions_by_batch",
    "silver.table_schemas",
    *sorted({f"silver.{model}" for model in silver_inputs().values()}),
    *sorted({f"silver.{fmt.decoding_model}" for fmt in formats.MANIFEST}),
)


def current_decodings(table: str, frame: Any) -> Any:
    """``frame`` of ``table`` as a full refresh holds it: for the Qlik decoding model, an
    append log of decodings (a data message that waited for its metadata is decoded again
    when it arrives), the latest decoding of each record; other tables as they are."""
    if table != "silver.stg_qlik__decoded":
        return frame
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    latest = Window.partitionBy("topic", "partition", "offset").orderBy(
        F.coalesce("resolved_batch_id", "ingest_batch_id").desc()
    )
    return frame.withColumn("_n", F.row_number().over(latest)).where("_n = 1").drop("_n")


def comparable(frame: Any) -> Any:
    """``frame`` with every map column as its sorted entries (grouping rejects maps)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import MapType

    return frame.select(
        *(
            F.array_sort(F.map_entries(field.name)).alias(field.name)
            if isinstance(field.dataType, MapType)
            else F.col(field.name)
            for field in frame.schema.fields
        )
    )


def latest_version(spark: Any, table: str) -> int:
    """The newest Delta version (commit) of ``table``."""
    return int(spark.sql(f"describe history {table} limit 1").collect()[0]["version"])


def table_state(spark: Any, table: str, version: int | None = None) -> Any:
    """``table`` (at Delta ``version``, or as it is now) in the form its incremental and full
    refresh rows compare in: :func:`current_decodings`, then :func:`comparable`;
    gold.int_row_versions with its nested row_events and versions as JSON."""
    at = f" version as of {version}" if version is not None else ""
    if table == "gold.int_row_versions":
        frame = spark.sql(
            "select source_format, source_database, source_schema, source_table, row_key, "
            "to_json(row_events) as row_events, to_json(versions) as versions, "
            f"last_resolved_batch_id, row_bucket from {table}{at}"
        )
    else:
        frame = spark.sql(f"select * from {table}{at}")
    return comparable(current_decodings(table, frame))


def table_differences(incremental: Any, full_refresh: Any) -> dict[str, int]:
    """Rows only in the incremental build / only in the full refresh (duplicates counted, as
    ``exceptAll`` counts them), and the full refresh's rows: one aggregation over both."""
    from pyspark.sql import functions as F

    columns = full_refresh.columns
    sides = incremental.select(*columns, F.lit(1).alias("_side")).unionByName(
        full_refresh.select(*columns, F.lit(-1).alias("_side"))
    )
    per_row = sides.groupBy(*columns).agg(
        F.sum("_side").alias("_excess"), F.count_if(F.col("_side") < 0).alias("_full")
    )
    totals = per_row.agg(
        F.sum("_full").alias("rows"),
        F.sum(F.when(F.col("_excess") > 0, F.col("_excess")).otherwise(0)).alias("inc"),
        F.sum(F.when(F.col("_excess") < 0, -F.col("_excess")).otherwise(0)).alias("full"),
    ).first()
    return {
        "rows": int(totals["rows"] or 0),
        "only_incremental": int(totals["inc"] or 0),
        "only_full_refresh": int(totals["full"] or 0),
    }
