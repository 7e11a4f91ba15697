"""``bronze.kafka_records``: its DDL, the checkpoint guard and the exactly-once batch writer.

The table holds Spark's Kafka source columns plus ``ingested_at`` (UTC timestamp of the write)
and ``ingest_batch_id`` (the Structured Streaming batch id, the partition column). Each
micro-batch is written with ``INSERT OVERWRITE`` of its own ``ingest_batch_id`` partition
(dynamic partition overwrite). A batch that is replayed after a crash (written, but its
checkpoint commit missing) has the same id and the same offsets, so the rewrite replaces
exactly what the first attempt wrote: every ``(topic, partition, offset)`` lands once. Rows are
never deduplicated by content.
"""

from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from cdc_lakehouse.settings import ConfigError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

CRASH_ENV = "CDC_INGEST_CRASH_AFTER_WRITE"
"""Test hook: ``<batch id>`` makes the process exit (code 137) right after writing that batch,
before Spark commits it to the checkpoint."""

BRONZE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("key", "binary"),
    ("value", "binary"),
    ("topic", "string"),
    ("partition", "int"),
    ("offset", "bigint"),
    ("timestamp", "timestamp"),
    ("timestampType", "int"),
    ("headers", "array<struct<key:string,value:binary>>"),
    ("ingested_at", "timestamp"),
    ("ingest_batch_id", "bigint"),
)
"""``(name, Spark SQL type)`` in table order; ``ingest_batch_id`` (last) is the partition."""

SOURCE_COLUMNS = tuple(name for name, _ in BRONZE_COLUMNS[:-2])
_TABLE_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")


def check_table_name(table: str) -> str:
    """Return ``table`` if it is ``schema.name`` with plain identifiers.

    Raises:
        ConfigError: anything else.
    """
    if not _TABLE_RE.match(table):
        raise ConfigError(
            f"--table {table!r}: use schema.name with letters, digits and underscores "
            "(default bronze.kafka_records)."
        )
    return table


def create_table_sql(table: str, table_format: str) -> str:
    """``CREATE TABLE IF NOT EXISTS`` statement of the bronze table in ``table_format``."""
    columns = ",\n  ".join(f"`{name}` {sql_type}" for name, sql_type in BRONZE_COLUMNS)
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (\n  {columns}\n)\n"
        f"USING {table_format}\nPARTITIONED BY (ingest_batch_id)"
    )


def ensure_table(spark: SparkSession, table: str, table_format: str) -> None:
    """Create the table's schema and the table if missing; check an existing table's columns.

    Raises:
        ConfigError: the existing table's columns differ from :data:`BRONZE_COLUMNS`.
    """
    schema = table.split(".", 1)[0]
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {schema}")
    spark.sql(create_table_sql(table, table_format))
    actual = [f.name for f in spark.table(table).schema.fields]
    expected = [name for name, _ in BRONZE_COLUMNS]
    if actual != expected:
        raise ConfigError(
            f"Table {table} has columns {actual}, expected {expected}: drop it (and its "
            "checkpoint) to let the ingest job create it, or use --table."
        )


def _log_entries(directory: Path) -> list[int]:
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())


def checkpoint_state(checkpoint: Path) -> tuple[int, int]:
    """``(planned batches, committed batches)`` of a Structured Streaming checkpoint (entries of
    its ``offsets`` and ``commits`` logs; ``(0, 0)`` when it does not exist)."""
    return len(_log_entries(checkpoint / "offsets")), len(_log_entries(checkpoint / "commits"))


def table_has_rows(spark: SparkSession, table: str) -> bool | None:
    """``None`` if ``table`` does not exist, else whether it holds at least one row."""
    if not spark.catalog.tableExists(table):
        return None
    return bool(spark.sql(f"SELECT 1 FROM {table} LIMIT 1").collect())


def check_checkpoint(spark: SparkSession, table: str, checkpoint: Path) -> None:
    """Refuse to run when the table and the checkpoint disagree.

    - rows in the table but no checkpoint: batch ids would restart at 0 and overwrite them;
    - committed batches in the checkpoint but no rows: those offsets would never be re-read.

    Raises:
        ConfigError: either case, naming the checkpoint and the fix.
    """
    planned, committed = checkpoint_state(checkpoint)
    has_rows = table_has_rows(spark, table)
    if has_rows and planned == 0:
        raise ConfigError(
            f"Table {table} holds rows but its checkpoint {checkpoint} is missing or empty: "
            "restore the checkpoint (or pass --checkpoint with the right one), or drop the "
            f"table to ingest from scratch (DROP TABLE {table})."
        )
    if committed and not has_rows:
        state = "does not exist" if has_rows is None else "is empty"
        raise ConfigError(
            f"Checkpoint {checkpoint} has {committed} committed batch(es) but table {table} "
            f"{state}: restore the table, or delete the checkpoint directory to ingest from "
            "scratch."
        )


@dataclass(frozen=True)
class PartitionProgress:
    """What one batch wrote for one topic-partition: record count, min and max offset."""

    topic: str
    partition: int
    records: int
    first_offset: int
    last_offset: int


@dataclass(frozen=True)
class BatchProgress:
    """What one batch wrote: batch id, per topic-partition progress, seconds spent."""

    batch_id: int
    partitions: tuple[PartitionProgress, ...]
    seconds: float

    @property
    def records(self) -> int:
        """Records written by the batch."""
        return sum(p.records for p in self.partitions)

    def lines(self) -> list[str]:
        """Human-readable progress lines."""
        head = f"batch {self.batch_id}: {self.records} records ({self.seconds:.1f} s)"
        return [head] + [
            f"  {p.topic} [{p.partition}]: {p.records} records, offsets "
            f"{p.first_offset} -> {p.last_offset}"
            for p in self.partitions
        ]


@dataclass
class BronzeBatchWriter:
    """``foreachBatch`` function: writes one micro-batch into the bronze table, exactly once.

    Attributes:
        table: target table (see :func:`ensure_table`).
        out: where progress lines go.
        batches: progress of every batch written by this writer, in order.
    """

    table: str
    out: TextIO = field(default_factory=lambda: sys.stdout)
    batches: list[BatchProgress] = field(default_factory=list)
    crash_after_write: int | None = field(
        default_factory=lambda: (
            int(os.environ[CRASH_ENV]) if os.environ.get(CRASH_ENV, "").isdigit() else None
        )
    )

    @property
    def records(self) -> int:
        """Records written so far (a replayed batch counts again)."""
        return sum(b.records for b in self.batches)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        """Write ``batch`` (Kafka source schema) as partition ``ingest_batch_id = batch_id``."""
        from pyspark.sql import functions as F

        started = time.monotonic()
        batch = batch.persist()
        try:
            stats = (
                batch.groupBy("topic", "partition")
                .agg(
                    F.count(F.lit(1)).alias("n"),
                    F.min("offset").alias("lo"),
                    F.max("offset").alias("hi"),
                )
                .orderBy("topic", "partition")
                .collect()
            )
            rows = batch.select(
                *[F.col(f"`{c}`") for c in SOURCE_COLUMNS],
                F.current_timestamp().alias("ingested_at"),
                F.lit(batch_id).cast("bigint").alias("ingest_batch_id"),
            )
            rows.write.insertInto(self.table, overwrite=True)
        finally:
            batch.unpersist()
        progress = BatchProgress(
            batch_id=batch_id,
            partitions=tuple(
                PartitionProgress(r["topic"], r["partition"], r["n"], r["lo"], r["hi"])
                for r in stats
            ),
            seconds=time.monotonic() - started,
        )
        self.batches.append(progress)
        print("\n".join(progress.lines()), file=self.out, flush=True)
        if self.crash_after_write == batch_id:
            print(f"{CRASH_ENV}={batch_id}: exiting before the commit", file=sys.stderr, flush=True)
            os._exit(137)
