"""The ingest job: topic dump -> ``bronze.kafka_records`` with Structured Streaming.

Two steps so that every dump problem is reported before the JVM starts:

1. :func:`plan_ingest` (no Spark): load the topic registry and validate the whole dump
   (:func:`cdc_lakehouse.dump.build_index`).
2. :func:`run_ingest`: check the table and checkpoint agree, create the table if missing, then
   run the ``cdc_dump`` source into :class:`~cdc_lakehouse.ingest.bronze.BronzeBatchWriter`
   with ``Trigger.AvailableNow`` (everything beyond the checkpoint, then stop).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from cdc_lakehouse.dump import DumpIndex, build_index
from cdc_lakehouse.ingest.bronze import BronzeBatchWriter, check_checkpoint, ensure_table
from cdc_lakehouse.ingest.dump_source import SOURCE_NAME, CdcDumpDataSource, source_options
from cdc_lakehouse.registry import load_registry
from cdc_lakehouse.settings import load_settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class IngestOptions:
    """What to ingest where.

    Attributes:
        dump: dump file or directory.
        registry: topic registry CSV.
        table: target table ``schema.name``.
        checkpoint: Structured Streaming checkpoint directory of this table's ingest.
        max_records_per_batch: cap on records per micro-batch, ``None`` for no cap.
    """

    dump: Path
    registry: Path
    table: str
    checkpoint: Path
    max_records_per_batch: int | None = None


@dataclass(frozen=True)
class IngestPlan:
    """Validated options: the options plus the registry's topics and the dump index."""

    options: IngestOptions
    topics: tuple[str, ...]
    index: DumpIndex


@dataclass(frozen=True)
class IngestResult:
    """Outcome of a run: records and batches written (replays included), wall seconds."""

    records: int
    batches: int
    seconds: float


def plan_ingest(options: IngestOptions) -> IngestPlan:
    """Load the registry and validate the dump; no Spark.

    Raises:
        ConfigError: registry missing or invalid.
        DumpError: dump missing or invalid (file:line in the message).
    """
    topics = tuple(load_registry(options.registry))
    index = build_index(options.dump, topics, registry_label=str(options.registry))
    return IngestPlan(options=options, topics=topics, index=index)


def run_ingest(
    spark: SparkSession,
    plan: IngestPlan,
    *,
    out: TextIO | None = None,
    table_format: str | None = None,
) -> IngestResult:
    """Ingest everything of the dump beyond the checkpoint into the table, then return.

    Args:
        spark: the session (see :func:`cdc_lakehouse.spark_session.get_spark`).
        plan: from :func:`plan_ingest`.
        out: progress stream (default stdout).
        table_format: ``parquet`` / ``delta`` for a new table (default: ``CDC_TABLE_FORMAT``).

    Raises:
        ConfigError: the table and the checkpoint disagree, or the table has other columns.
        pyspark.errors.StreamingQueryException: the query failed.
    """
    opts = plan.options
    stream_out = out or sys.stdout
    started = time.monotonic()
    index = plan.index
    print(
        f"dump {opts.dump}: {len(index.files)} file(s), {index.records} records "
        f"({index.lines - index.records} duplicate line(s) dropped) in "
        f"{len(index.offsets)} topic-partition(s); checkpoint {opts.checkpoint}",
        file=stream_out,
        flush=True,
    )
    check_checkpoint(spark, opts.table, opts.checkpoint)
    ensure_table(spark, opts.table, table_format or load_settings().table_format)
    spark.dataSource.register(CdcDumpDataSource)
    stream = (
        spark.readStream.format(SOURCE_NAME)
        .options(
            **source_options(
                str(opts.dump.resolve()),
                plan.topics,
                str(opts.registry),
                opts.max_records_per_batch,
            )
        )
        .load()
    )
    writer = BronzeBatchWriter(table=opts.table, out=stream_out)
    query = (
        stream.writeStream.queryName(f"ingest_{opts.table.replace('.', '_')}")
        .foreachBatch(writer)
        .option("checkpointLocation", str(opts.checkpoint))
        .trigger(availableNow=True)
        .start()
    )
    try:
        query.awaitTermination()
    finally:
        # The query wrote through its own cloned session; a replayed batch replaced files this
        # session may have listed before, so drop its cached listing of the table.
        spark.catalog.refreshTable(opts.table)
    result = IngestResult(
        records=writer.records, batches=len(writer.batches), seconds=time.monotonic() - started
    )
    note = "" if result.batches else " (nothing beyond the checkpoint)"
    print(
        f"done: {result.records} records written to {opts.table} in {result.batches} "
        f"batch(es), {result.seconds:.1f} s{note}",
        file=stream_out,
        flush=True,
    )
    return result
