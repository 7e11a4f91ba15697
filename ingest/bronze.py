"""``bronze.kafka_records``: its DDL, the checkpoint guard and the exactly-once batch writer.

The table (Delta) holds Spark's Kafka source columns plus ``ingested_at`` (UTC timestamp of the
write) and ``ingest_batch_id`` (the Structured Streaming batch id, the partition column).
Each micro-batch is one Delta append made idempotent by Delta's own transaction ids: options
``txnAppId`` (the query's id, from the checkpoint's ``metadata``: the same for every run on
that checkpoint) and ``txnVersion`` (the batch id). A batch that is replayed after a crash
(written, but its checkpoint commit missing) has the same id and the same offsets; Delta sees
that the table already holds that version of that application and skips the write, so every
``(topic, partition, offset)`` lands once, and the rows of the first attempt stay untouched
(a dbt build that read them reads the same rows again). A write killed before its Delta commit
left no rows (the commit is atomic), so the replay writes them. Rows are never deduplicated
by content.

Headers are stored as an empty array for a record without headers (Spark's Kafka source gives
NULL, the dump source an empty array: Kafka does not tell the two apart).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from cdc_lakehouse.runtime.settings import CRASH_ENV, ConfigError, IngestSettings
from ingest.offsets import batch_ranges

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# CRASH_ENV (CDC_INGEST_CRASH_AFTER_WRITE, cdc_lakehouse.runtime.settings; the tests import it from
# here): a test hook, ``<batch id>`` makes the process exit (code 137) right after writing that
# batch, before Spark commits it to the checkpoint.

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
HEADERS_TYPE = dict(BRONZE_COLUMNS)["headers"]
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


def create_table_sql(table: str) -> str:
    """``CREATE TABLE IF NOT EXISTS`` statement of the bronze table (a Delta table)."""
    columns = ",\n  ".join(f"`{name}` {sql_type}" for name, sql_type in BRONZE_COLUMNS)
    return (
        f"CREATE TABLE IF NOT EXISTS {table} (\n  {columns}\n)\n"
        "USING delta\nPARTITIONED BY (ingest_batch_id)"
    )


def ensure_table(spark: SparkSession, table: str) -> None:
    """Create the table's schema and the table if missing; check an existing table's columns.

    Raises:
        ConfigError: the existing table's columns differ from :data:`BRONZE_COLUMNS`.
    """
    schema = table.split(".", 1)[0]
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {schema}")
    spark.sql(create_table_sql(table))
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


def check_checkpoint(
    spark: SparkSession, table: str, checkpoint: Path, *, nothing_read: bool = False
) -> None:
    """Refuse to run when the table and the checkpoint disagree.

    - rows in the table but no checkpoint: batch ids would restart at 0 and overwrite them;
    - committed batches in the checkpoint but no rows: those offsets would never be re-read
      (unless ``nothing_read``: the committed offsets are still the query's initial ones, as
      after a first run with ``--starting-offsets latest``, and the table exists).

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
    if committed and not has_rows and not (nothing_read and has_rows is False):
        state = "does not exist" if has_rows is None else "is empty"
        raise ConfigError(
            f"Checkpoint {checkpoint} has {committed} committed batch(es) but table {table} "
            f"{state}: restore the table, or delete the checkpoint directory to ingest from "
            "scratch."
        )


@dataclass(frozen=True)
class PartitionProgress:
    """What one batch wrote for one topic-partition.

    Attributes:
        topic, partition: the topic-partition.
        records: records written.
        first_offset, last_offset: smallest and largest offset written (``-1`` if none).
        bytes: key + value bytes written.
        lag: records left behind the partition's end after the batch (``None``: unknown).
        skipped: offsets the batch skipped because the broker no longer had them.
    """

    topic: str
    partition: int
    records: int
    first_offset: int
    last_offset: int
    bytes: int = 0
    lag: int | None = None
    skipped: int = 0

    def line(self) -> str:
        """``  topic [p]: N records, offsets a -> b, B bytes[, lag L][, S offsets skipped]``."""
        offsets = (
            f"offsets {self.first_offset} -> {self.last_offset}" if self.records else "no offsets"
        )
        text = f"  {self.topic} [{self.partition}]: {self.records} records, {offsets}, "
        text += f"{self.bytes} bytes"
        if self.lag is not None:
            text += f", lag {self.lag}"
        if self.skipped:
            text += f", {self.skipped} offsets skipped (no longer on the broker)"
        return text


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

    @property
    def bytes(self) -> int:
        """Key + value bytes written by the batch."""
        return sum(p.bytes for p in self.partitions)

    def lines(self) -> list[str]:
        """Human-readable progress lines."""
        head = (
            f"batch {self.batch_id}: {self.records} records, {self.bytes} bytes "
            f"({self.seconds:.1f} s)"
        )
        return [head] + [p.line() for p in self.partitions]


LagFn = Callable[[Mapping[tuple[str, int], int]], Mapping[tuple[str, int], int]]
"""Given a batch's end offsets per topic-partition, the records behind the real end."""


def query_id(checkpoint: Path) -> str:
    """The streaming query's id from its checkpoint's ``metadata`` file (``{"id": ...}``,
    written when the query first starts; the same for every run on the checkpoint).

    Raises:
        ConfigError: the file is missing or holds no id.
    """
    path = checkpoint / "metadata"
    try:
        found = json.loads(path.read_text(encoding="utf-8").splitlines()[0])["id"]
    except (OSError, IndexError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: no query id in the checkpoint's metadata ({exc})") from exc
    return str(found)


@dataclass
class BronzeBatchWriter:
    """``foreachBatch`` function: writes one micro-batch into the bronze table, exactly once.

    Attributes:
        table: target table (see :func:`ensure_table`).
        checkpoint: the query's checkpoint: its query id is the Delta ``txnAppId``.
        out: where progress lines go.
        ranges: read each batch's offset ranges from the checkpoint's offsets log to report
            skipped offsets and lag (Kafka).
        lag: how far each partition is behind after the batch (Kafka), or ``None``.
        report_skipped: report offsets of the batch's range that were not read (Kafka
            retention with ``--on-missing-offsets skip``).
        batches: progress of every batch written by this writer, in order.
    """

    table: str
    checkpoint: Path
    out: TextIO = field(default_factory=lambda: sys.stdout)
    ranges: bool = False
    lag: LagFn | None = None
    report_skipped: bool = False
    batches: list[BatchProgress] = field(default_factory=list)
    crash_after_write: int | None = field(
        default_factory=lambda: IngestSettings.from_env().crash_after_write
    )
    _app_id: str | None = field(default=None, repr=False)

    @property
    def records(self) -> int:
        """Records written so far (a replayed batch counts again)."""
        return sum(b.records for b in self.batches)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        """Append ``batch`` (Kafka source schema) as partition ``ingest_batch_id = batch_id``,
        Delta transaction ``(query id, batch_id)``: skipped if already in the table."""
        from pyspark.sql import functions as F

        started = time.monotonic()
        self._app_id = self._app_id or query_id(self.checkpoint)
        batch = batch.persist()
        try:
            stats = (
                batch.groupBy("topic", "partition")
                .agg(
                    F.count(F.lit(1)).alias("n"),
                    F.min("offset").alias("lo"),
                    F.max("offset").alias("hi"),
                    F.sum(
                        F.coalesce(F.octet_length("key"), F.lit(0))
                        + F.coalesce(F.octet_length("value"), F.lit(0))
                    ).alias("bytes"),
                )
                .orderBy("topic", "partition")
                .collect()
            )
            columns = [F.col(f"`{c}`") for c in SOURCE_COLUMNS if c != "headers"]
            headers = F.coalesce(F.col("headers"), F.array().cast(HEADERS_TYPE))
            rows = batch.select(
                *columns,
                headers.alias("headers"),
                F.current_timestamp().alias("ingested_at"),
                F.lit(batch_id).cast("bigint").alias("ingest_batch_id"),
            )
            (
                rows.write.format("delta")
                .mode("append")
                .option("txnAppId", self._app_id)
                .option("txnVersion", str(batch_id))
                .saveAsTable(self.table)
            )
        finally:
            batch.unpersist()
        written = {
            (r["topic"], r["partition"]): PartitionProgress(
                r["topic"], r["partition"], r["n"], r["lo"], r["hi"], int(r["bytes"] or 0)
            )
            for r in stats
        }
        progress = BatchProgress(
            batch_id=batch_id,
            partitions=tuple(self._annotate(batch_id, written)),
            seconds=time.monotonic() - started,
        )
        self.batches.append(progress)
        print("\n".join(progress.lines()), file=self.out, flush=True)
        if self.crash_after_write == batch_id:
            print(f"{CRASH_ENV}={batch_id}: exiting before the commit", file=sys.stderr, flush=True)
            os._exit(137)

    def _annotate(
        self, batch_id: int, written: dict[tuple[str, int], PartitionProgress]
    ) -> list[PartitionProgress]:
        """Add skipped offsets and lag (from the checkpoint's offset ranges and :attr:`lag`)."""
        ranges = batch_ranges(self.checkpoint, batch_id) if self.ranges else None
        if ranges is None:
            return [written[tp] for tp in sorted(written)]
        start, end = ranges
        moved = {tp for tp in end if tp in start and end[tp] > start[tp]}
        lags = self.lag({tp: end[tp] for tp in sorted(moved | set(written))}) if self.lag else {}
        out: list[PartitionProgress] = []
        for tp in sorted(moved | set(written)):
            base = written.get(tp) or PartitionProgress(tp[0], tp[1], 0, -1, -1)
            skipped = 0
            if self.report_skipped and tp in start and tp in end:
                first = base.first_offset if base.records else end[tp]
                skipped = max(0, first - start[tp])
            out.append(replace(base, lag=lags.get(tp), skipped=skipped))
        return out
