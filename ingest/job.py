"""The ingest job: a topic dump or Kafka -> ``bronze.kafka_records`` with Structured Streaming.

Two steps so that every problem a person can fix is reported before the JVM starts:

1. :func:`plan_ingest` (no Spark): load the topic registry; validate the whole dump
   (:func:`ingest.dump.build_index`), or check the broker, the topics and the
   checkpoint's offsets (:func:`ingest.kafka_stream.preflight`).
2. :func:`run_ingest`: check the table and checkpoint agree, create the table if missing, then
   run the source (the dump's Python data source, or Spark's Kafka source) into
   :class:`~ingest.bronze.BronzeBatchWriter`:
   ``batch`` mode with ``Trigger.AvailableNow`` (everything beyond the checkpoint, then stop),
   ``continuous`` mode with a processing-time trigger until asked to stop, which happens
   between batches, so the last batch is committed.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from cdc_lakehouse.formats.registry import load_registry
from cdc_lakehouse.runtime.settings import ConfigError
from ingest.bronze import BronzeBatchWriter, check_checkpoint, ensure_table
from ingest.dump import DumpIndex, build_index, save_scan, scan_file
from ingest.dump_source import SOURCE_NAME, CdcDumpDataSource, source_options
from ingest.kafka_stream import (
    READER,
    KafkaOptions,
    LagProbe,
    kafka_stream,
    nothing_read_yet,
    preflight,
    select_topics,
)
from ingest.offsets import KafkaOffsets

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

MODES = ("batch", "continuous")
STOP_POLL_S = 0.5
"""How often the continuous loop looks at the stop flag, seconds."""


@dataclass(frozen=True)
class IngestOptions:
    """What to ingest where.

    Attributes:
        dump: dump file or directory (``None`` when reading Kafka).
        registry: topic registry CSV.
        table: target table ``schema.name``.
        checkpoint: Structured Streaming checkpoint directory of this table's ingest.
        max_records_per_batch: cap on records per micro-batch, ``None`` for no cap.
        kafka: read this Kafka instead of a dump.
        mode: ``batch`` (catch up, stop) or ``continuous`` (until stopped).
        trigger_interval_s: seconds between micro-batches in continuous mode.
    """

    dump: Path | None
    registry: Path
    table: str
    checkpoint: Path
    max_records_per_batch: int | None = None
    kafka: KafkaOptions | None = None
    mode: str = "batch"
    trigger_interval_s: float = 10.0


@dataclass(frozen=True)
class IngestPlan:
    """Validated options: the options plus the topics to read and the dump index (dump) or
    the offsets the next batch skips (Kafka, ``--on-missing-offsets skip``)."""

    options: IngestOptions
    topics: tuple[str, ...]
    index: DumpIndex | None
    skipped: KafkaOffsets | None = None


@dataclass(frozen=True)
class IngestResult:
    """Outcome of a run: records and batches written (replays included), wall seconds."""

    records: int
    batches: int
    seconds: float


def plan_ingest(options: IngestOptions) -> IngestPlan:
    """Load the registry; validate the dump or check Kafka; no Spark.

    Raises:
        ConfigError: registry missing or invalid, bad mode, ``--topics`` not in the registry.
        DumpError: dump missing or invalid (file:line in the message).
        KafkaSourceError: broker unreachable, topic missing, offsets deleted by retention.
    """
    if options.mode not in MODES:
        raise ConfigError(f"--mode must be one of {', '.join(MODES)}.")
    registry = tuple(load_registry(options.registry))
    if options.kafka is not None:
        topics = select_topics(registry, options.kafka.topics, str(options.registry))
        skipped = preflight(options.kafka, topics, options.checkpoint)
        return IngestPlan(options=options, topics=topics, index=None, skipped=skipped)
    if options.dump is None:
        raise ConfigError("give --dump PATH or --bootstrap-servers HOST:PORT.")
    index = build_index(options.dump, registry, registry_label=str(options.registry))
    return IngestPlan(options=options, topics=registry, index=index)


def _describe(plan: IngestPlan) -> str:
    opts = plan.options
    if plan.index is not None:
        index = plan.index
        return (
            f"dump {opts.dump}: {len(index.files)} file(s), {index.records} records "
            f"({index.lines - index.records} duplicate line(s) dropped) in "
            f"{len(index.offsets)} topic-partition(s); checkpoint {opts.checkpoint}"
        )
    assert opts.kafka is not None
    lines = [
        f"kafka {opts.kafka.bootstrap_servers}: topics {', '.join(plan.topics)}; mode "
        f"{opts.mode}; checkpoint {opts.checkpoint}"
    ]
    for (topic, partition), n in sorted((plan.skipped or {}).items()):
        lines.append(
            f"  {topic} [{partition}]: skipping {n} offset(s) deleted by retention before "
            "they were ingested (--on-missing-offsets skip)"
        )
    return "\n".join(lines)


def _dump_stream(spark: SparkSession, plan: IngestPlan, scan_dir: Path | None) -> DataFrame:
    opts = plan.options
    assert opts.dump is not None
    spark.dataSource.register(CdcDumpDataSource)
    return (
        spark.readStream.format(SOURCE_NAME)
        .options(
            **source_options(
                str(opts.dump.resolve()),
                plan.topics,
                str(opts.registry),
                opts.max_records_per_batch,
                str(scan_dir) if scan_dir else None,
            )
        )
        .load()
    )


def _await(query: StreamingQuery, mode: str, stop: threading.Event | None) -> None:
    """Wait for the query: to its end (batch), or until ``stop`` is set (continuous); then
    stop it between two batches, so the last batch written is also committed."""
    if mode == "batch" or stop is None:
        query.awaitTermination()
        return
    # pyspark's stub says int; it takes float seconds too (int(timeout * 1000) ms)
    while not query.awaitTermination(STOP_POLL_S):  # type: ignore[arg-type]
        if not stop.is_set():
            continue
        while query.isActive and query.status.get("isTriggerActive"):
            time.sleep(0.05)
        query.stop()
    query.awaitTermination()


def run_ingest(
    spark: SparkSession,
    plan: IngestPlan,
    *,
    out: TextIO | None = None,
    stop: threading.Event | None = None,
) -> IngestResult:
    """Ingest everything beyond the checkpoint into the table, then return.

    A dump's per-file scans, made by :func:`plan_ingest` in this process, are saved in a
    temporary directory (removed when this returns or raises) for the source's planner, a
    Python worker of Spark's, which loads them instead of scanning the dump a second time.

    Args:
        spark: the session (see :func:`cdc_lakehouse.runtime.spark_session.get_spark`).
        plan: from :func:`plan_ingest`.
        out: progress stream (default stdout).
        stop: continuous mode ends when this is set (after the batch in progress).

    Raises:
        ConfigError: the table and the checkpoint disagree, or the table has other columns.
        pyspark.errors.StreamingQueryException: the query failed.
    """
    scan_dir: Path | None = None
    try:
        if plan.index is not None:
            scan_dir = Path(tempfile.mkdtemp(prefix="cdc-dump-scans-"))
            for file_plan in plan.index.files:
                save_scan(scan_file(Path(file_plan.path)), scan_dir)
        return _run(spark, plan, out, stop, scan_dir)
    finally:
        if scan_dir is not None:
            shutil.rmtree(scan_dir, ignore_errors=True)


def _run(
    spark: SparkSession,
    plan: IngestPlan,
    out: TextIO | None,
    stop: threading.Event | None,
    scan_dir: Path | None,
) -> IngestResult:
    opts = plan.options
    stream_out = out or sys.stdout
    started = time.monotonic()
    print(_describe(plan), file=stream_out, flush=True)
    nothing_read = opts.kafka is not None and nothing_read_yet(opts.checkpoint)
    check_checkpoint(spark, opts.table, opts.checkpoint, nothing_read=nothing_read)
    ensure_table(spark, opts.table)
    lag: LagProbe | None = None
    if opts.kafka is not None:
        stream = kafka_stream(spark, opts.kafka, plan.topics, opts.max_records_per_batch)
        print(f"reader: {READER} (Spark's Kafka source)", file=stream_out, flush=True)
        lag = LagProbe(opts.kafka)
        writer = BronzeBatchWriter(
            table=opts.table,
            checkpoint=opts.checkpoint,
            out=stream_out,
            ranges=True,
            lag=lag,
            report_skipped=opts.kafka.on_missing_offsets == "skip",
        )
    else:
        stream = _dump_stream(spark, plan, scan_dir)
        writer = BronzeBatchWriter(table=opts.table, checkpoint=opts.checkpoint, out=stream_out)
    builder = (
        stream.writeStream.queryName(f"ingest_{opts.table.replace('.', '_')}")
        .foreachBatch(writer)
        .option("checkpointLocation", str(opts.checkpoint))
    )
    if opts.mode == "continuous":
        builder = builder.trigger(processingTime=f"{opts.trigger_interval_s:g} seconds")
    else:
        builder = builder.trigger(availableNow=True)
    query = builder.start()
    try:
        _await(query, opts.mode, stop)
    finally:
        if lag is not None:
            lag.close()
        # The query wrote through its own cloned session: drop this session's cached view of
        # the table, so that it reads the batches just written.
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
