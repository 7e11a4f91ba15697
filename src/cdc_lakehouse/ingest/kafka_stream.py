"""The Kafka side of the ingest job: options, checks before Spark starts, the stream, lag.

- :func:`select_topics`: the registry's topics, narrowed by ``--topics``.
- :func:`preflight` (driver, no Spark): the broker answers within the timeout, every topic
  exists, and no checkpoint offset was deleted by retention (unless ``skip``), so these
  problems are one ``error:`` line before the JVM starts.
- :func:`kafka_stream`: Spark's own ``kafka`` source when its connector is on the classpath
  (``org.apache.spark.sql.kafka010.KafkaSourceProvider``), else the ``cdc_kafka`` Python
  source (:mod:`cdc_lakehouse.ingest.kafka_source`). Both keep Kafka offsets in the
  checkpoint in the same JSON shape.
- :class:`LagProbe`: per topic-partition how far a batch's end is behind the real end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lakehouse.ingest.kafka_offsets import ON_MISSING, STARTING, resolve_begin
from cdc_lakehouse.ingest.offsets import (
    KafkaOffsets,
    from_json_offsets,
    last_committed_offsets,
)
from cdc_lakehouse.kafka.client import (
    DEFAULT_TIMEOUT_S,
    KafkaSourceError,
    TopicPartition,
    list_partitions,
    open_consumer,
    real_end_offsets,
    watermarks,
)
from cdc_lakehouse.settings import ConfigError

if TYPE_CHECKING:
    from confluent_kafka import Consumer
    from pyspark.sql import DataFrame, SparkSession

SPARK_KAFKA_PROVIDER = "org.apache.spark.sql.kafka010.KafkaSourceProvider"


def initial_offsets_path(checkpoint: Path) -> Path:
    """Where the ``cdc_kafka`` source keeps the query's initial offsets (JSON)."""
    return checkpoint / "cdc_kafka" / "initial-offsets.json"


def nothing_read_yet(checkpoint: Path) -> bool:
    """Are the checkpoint's last committed offsets still the query's initial offsets?"""
    path = initial_offsets_path(checkpoint)
    try:
        initial = from_json_offsets(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, AttributeError):
        return False
    return last_committed_offsets(checkpoint) == initial


@dataclass(frozen=True)
class KafkaOptions:
    """Where and how to read Kafka.

    Attributes:
        bootstrap_servers: ``HOST:PORT[,HOST:PORT...]``.
        topics: topics to read (a subset of the registry), ``None`` for all of it.
        properties: librdkafka client properties (security.protocol, sasl.*, ssl.*, ...).
        starting_offsets: ``earliest`` / ``latest`` for partitions without checkpoint entry.
        on_missing_offsets: ``fail`` / ``skip`` when checkpoint offsets were deleted.
        timeout_s: bound on broker requests, seconds.
    """

    bootstrap_servers: str
    topics: tuple[str, ...] | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    starting_offsets: str = "earliest"
    on_missing_offsets: str = "fail"
    timeout_s: float = DEFAULT_TIMEOUT_S


def select_topics(
    registry_topics: Sequence[str], wanted: Iterable[str] | None, label: str
) -> tuple[str, ...]:
    """The topics to read: ``wanted`` (each must be in the registry) or the whole registry.

    Raises:
        ConfigError: a wanted topic is not in the registry, or nothing to read.
    """
    if wanted is None:
        chosen = tuple(registry_topics)
    else:
        chosen = tuple(dict.fromkeys(t.strip() for t in wanted if t.strip()))
        unknown = [t for t in chosen if t not in registry_topics]
        if unknown:
            raise ConfigError(
                f"--topics: {', '.join(repr(t) for t in unknown)} not in {label}: add a row to "
                f"the registry or choose from {', '.join(registry_topics)}."
            )
    if not chosen:
        raise ConfigError(f"no topics to read: {label} is empty and --topics names none.")
    return chosen


def check_options(options: KafkaOptions) -> None:
    """Raises ConfigError on an unknown ``starting_offsets`` / ``on_missing_offsets``."""
    if options.starting_offsets not in STARTING:
        raise ConfigError(f"--starting-offsets must be one of {', '.join(STARTING)}.")
    if options.on_missing_offsets not in ON_MISSING:
        raise ConfigError(f"--on-missing-offsets must be one of {', '.join(ON_MISSING)}.")


def preflight(options: KafkaOptions, topics: Sequence[str], checkpoint: Path) -> KafkaOffsets:
    """Check the broker, the topics and the checkpoint's offsets before Spark starts.

    Returns:
        Per topic-partition, how many offsets the next batch skips (``skip`` only).

    Raises:
        BrokerUnreachableError, UnknownTopicError, MissingOffsetsError: see
            :mod:`cdc_lakehouse.kafka.client`.
    """
    check_options(options)
    consumer = open_consumer(options.bootstrap_servers, options.properties, options.timeout_s)
    try:
        parts = list_partitions(consumer, topics, options.bootstrap_servers, options.timeout_s)
        committed = last_committed_offsets(checkpoint) or {}
        tps = [(t, p) for t, p in committed if t in parts and p in parts[t]]
        marks = watermarks(consumer, tps, options.timeout_s)
        skipped = {}
        for tp in tps:
            _begin, n = resolve_begin(tp, committed, marks[tp][0], options.on_missing_offsets)
            if n:
                skipped[tp] = n
        return skipped
    finally:
        consumer.close()


def spark_kafka_available(spark: SparkSession) -> bool:
    """Is Spark's own Kafka source (``spark-sql-kafka-0-10``) on the JVM classpath?"""
    try:
        spark.sparkContext._jvm.java.lang.Class.forName(SPARK_KAFKA_PROVIDER)  # type: ignore[union-attr]
    except Exception:
        return False
    return True


def kafka_stream(
    spark: SparkSession,
    options: KafkaOptions,
    topics: Sequence[str],
    checkpoint: Path,
    max_records_per_batch: int | None,
) -> tuple[DataFrame, str]:
    """The streaming DataFrame of the topics (Spark's Kafka source schema), and which reader
    (``spark-kafka`` or ``cdc_kafka``) it uses."""
    if spark_kafka_available(spark):
        reader = (
            spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", options.bootstrap_servers)
            .option("subscribe", ",".join(topics))
            .option("startingOffsets", options.starting_offsets)
            .option("includeHeaders", "true")
            .option("failOnDataLoss", str(options.on_missing_offsets == "fail").lower())
        )
        for key, value in options.properties.items():
            reader = reader.option(f"kafka.{key}", value)
        if max_records_per_batch:
            reader = reader.option("maxOffsetsPerTrigger", str(max_records_per_batch))
        return reader.load(), "spark-kafka"
    from cdc_lakehouse.ingest.kafka_source import (
        SOURCE_NAME,
        CdcKafkaDataSource,
        source_options,
    )

    spark.dataSource.register(CdcKafkaDataSource)
    stream = (
        spark.readStream.format(SOURCE_NAME)
        .options(
            **source_options(
                options.bootstrap_servers,
                topics,
                options.properties,
                starting_offsets=options.starting_offsets,
                on_missing_offsets=options.on_missing_offsets,
                max_records_per_batch=max_records_per_batch,
                timeout_s=options.timeout_s,
                initial_offsets_path=initial_offsets_path(checkpoint),
            )
        )
        .load()
    )
    return stream, SOURCE_NAME


@dataclass
class LagProbe:
    """Callable: per topic-partition, the real end minus the given offset (records behind).

    Failures (broker gone for a moment) give ``{}``: lag is then not shown.
    """

    options: KafkaOptions
    _consumer: Consumer | None = None

    def __call__(self, ends: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """``ends``: the batch's end offsets (next offset to read) per topic-partition."""
        try:
            if self._consumer is None:
                self._consumer = open_consumer(
                    self.options.bootstrap_servers, self.options.properties, self.options.timeout_s
                )
            marks = watermarks(self._consumer, ends, self.options.timeout_s)
            positions = {tp: max(marks[tp][1], ends[tp]) for tp in ends}
            real = real_end_offsets(self._consumer, positions, self.options.timeout_s)
        except (KafkaSourceError, ConfigError):
            return {}
        return {tp: max(0, real[tp] - ends[tp]) for tp in ends}

    def close(self) -> None:
        """Close the consumer."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
