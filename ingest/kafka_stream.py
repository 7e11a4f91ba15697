"""The Kafka side of the ingest job: options, checks before Spark starts, the stream, lag.

- :func:`select_topics`: the registry's topics, narrowed by ``--topics``.
- :func:`preflight` (driver, confluent-kafka, no Spark): the broker answers within the
  timeout, every topic exists, and no checkpoint offset was deleted by retention (unless
  ``skip``), so these problems are one ``error:`` line before the JVM starts.
- :func:`kafka_stream`: Spark's Kafka source (``readStream.format("kafka")``,
  ``spark-sql-kafka-0-10``, on the class path by ``spark.jars``) with the job's options mapped
  to its own (:func:`source_options`). Its offsets live in the checkpoint: per batch the
  offsets log holds ``{"<topic>": {"<partition>": <next offset>}}``.
- :class:`LagProbe`: per topic-partition how far a batch's end is behind the partition's end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.tools.kafka.client import (
    DEFAULT_TIMEOUT_S,
    KafkaSourceError,
    MissingOffsetsError,
    TopicPartition,
    list_partitions,
    open_consumer,
    watermarks,
)
from ingest.offsets import (
    KafkaOffsets,
    from_json_offsets,
    last_committed_offsets,
    last_planned_offsets,
)

if TYPE_CHECKING:
    from confluent_kafka import Consumer
    from pyspark.sql import DataFrame, SparkSession

ON_MISSING = ("fail", "skip")
STARTING = ("earliest", "latest")
READER = "spark-kafka"
"""What the job's ``reader:`` line names: Spark's Kafka source."""
SPARK_SETS = {
    "auto.offset.reset": "--starting-offsets",
    "enable.auto.commit": None,
    "key.deserializer": None,
    "value.deserializer": None,
    "interceptor.classes": None,
}
"""Kafka client properties Spark's Kafka source refuses (it sets them itself) -> the option
that does the job instead, if any."""


@dataclass(frozen=True)
class KafkaOptions:
    """Where and how to read Kafka.

    Attributes:
        bootstrap_servers: ``HOST:PORT[,HOST:PORT...]``.
        topics: topics to read (a subset of the registry), ``None`` for all of it.
        properties: Kafka client properties (``security.protocol``, ``sasl.*``, ``ssl.*``,
            ...): Spark's source gets each as ``kafka.<name>`` (Java client names); the
            preflight and lag client (librdkafka) those it has.
        starting_offsets: ``earliest`` / ``latest`` for partitions when the query starts
            without a checkpoint (partitions found later start at their earliest offset).
        on_missing_offsets: ``fail`` / ``skip`` when offsets to read were deleted.
        timeout_s: bound on the preflight's broker requests, seconds.
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
    """Raises ConfigError on an unknown ``starting_offsets`` / ``on_missing_offsets``, or a
    client property Spark's Kafka source sets itself."""
    if options.starting_offsets not in STARTING:
        raise ConfigError(f"--starting-offsets must be one of {', '.join(STARTING)}.")
    if options.on_missing_offsets not in ON_MISSING:
        raise ConfigError(f"--on-missing-offsets must be one of {', '.join(ON_MISSING)}.")
    for key in options.properties:
        if key in SPARK_SETS:
            instead = SPARK_SETS[key]
            hint = f": use {instead}" if instead else ""
            raise ConfigError(f"--kafka-property {key}: Spark's Kafka source sets it itself{hint}.")


def resolve_begin(
    tp: TopicPartition, start: Mapping[TopicPartition, int], low: int, on_missing: str
) -> tuple[int, int]:
    """Where the next batch of ``tp`` begins, and how many offsets it skips.

    Args:
        tp: the topic-partition.
        start: the checkpoint's offsets (next offset to read per topic-partition).
        low: the partition's first offset still on the broker (low watermark).
        on_missing: ``fail`` or ``skip`` (see :data:`ON_MISSING`).

    Returns:
        ``(begin, skipped)``: a partition without a checkpoint entry begins at ``low``,
        skipping nothing; one whose checkpoint offset is still on the broker begins there; one
        whose checkpoint offset is below ``low`` (deleted by retention) begins at ``low`` with
        ``skip``, skipping ``low - start`` offsets.

    Raises:
        MissingOffsetsError: checkpoint offset below ``low`` and ``on_missing`` is ``fail``.
    """
    if tp not in start:
        return low, 0
    offset = start[tp]
    if offset >= low:
        return offset, 0
    if on_missing == "skip":
        return low, low - offset
    topic, partition = tp
    raise MissingOffsetsError(
        f"{topic} partition {partition}: the checkpoint continues at offset {offset} but the "
        f"broker's first offset is {low}: {low - offset} offset(s) were deleted (retention) "
        "before they were ingested. Rerun with --on-missing-offsets skip to continue from "
        f"offset {low}, or drop the table and its checkpoint to ingest from scratch."
    )


def check_checkpoint_topics(topics: Sequence[str], checkpoint: Path) -> None:
    """Refuse to leave out a topic the checkpoint reads: Spark's Kafka source would take its
    partitions for deleted (and, read again later, start them over at their earliest offset:
    records twice). Topics may be added: their partitions start at their earliest offset.

    Raises:
        ConfigError: the checkpoint's last planned batch has a topic not in ``topics``.
    """
    planned = last_planned_offsets(checkpoint) or {}
    left_out = sorted({topic for topic, _ in planned} - set(topics))
    if left_out:
        raise ConfigError(
            f"checkpoint {checkpoint} reads topic(s) {', '.join(left_out)} too, which this run "
            "leaves out (--topics or the registry): a checkpoint keeps its topics. Add them "
            "back, or give these topics their own --checkpoint and --table."
        )


def preflight(options: KafkaOptions, topics: Sequence[str], checkpoint: Path) -> KafkaOffsets:
    """Check the options, the checkpoint's topics, the broker, the topics and the
    checkpoint's offsets before Spark starts.

    Returns:
        Per topic-partition, how many offsets the next batch skips (``skip`` only).

    Raises:
        ConfigError: see :func:`check_options` and :func:`check_checkpoint_topics`.
        BrokerUnreachableError, UnknownTopicError, MissingOffsetsError: see
            :mod:`cdc_lakehouse.tools.kafka.client`.
    """
    check_options(options)
    check_checkpoint_topics(topics, checkpoint)
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


def source_options(
    options: KafkaOptions, topics: Sequence[str], max_records: int | None
) -> dict[str, str]:
    """The options of Spark's Kafka source for the job's options (``dict[str, str]``):
    ``kafka.bootstrap.servers``, ``subscribe`` (the topics, comma-separated),
    ``startingOffsets``, ``failOnDataLoss`` (``--on-missing-offsets fail``),
    ``includeHeaders``, ``maxOffsetsPerTrigger`` (``--max-records-per-batch``; Spark shares it
    out among the partitions by their backlog, also under ``availableNow``) and
    ``kafka.<name>`` per client property."""
    out = {
        "kafka.bootstrap.servers": options.bootstrap_servers,
        "subscribe": ",".join(topics),
        "startingOffsets": options.starting_offsets,
        "failOnDataLoss": str(options.on_missing_offsets == "fail").lower(),
        "includeHeaders": "true",
    }
    for key, value in options.properties.items():
        if key != "bootstrap.servers":
            out[f"kafka.{key}"] = value
    if max_records:
        out["maxOffsetsPerTrigger"] = str(max_records)
    return out


def kafka_stream(
    spark: SparkSession,
    options: KafkaOptions,
    topics: Sequence[str],
    max_records_per_batch: int | None,
) -> DataFrame:
    """The streaming DataFrame of the topics from Spark's Kafka source (its schema: key,
    value, topic, partition, offset, timestamp, timestampType, headers)."""
    reader = spark.readStream.format("kafka")
    for key, value in source_options(options, topics, max_records_per_batch).items():
        reader = reader.option(key, value)
    return reader.load()


def initial_offsets(checkpoint: Path) -> KafkaOffsets | None:
    """The offsets Spark's Kafka source started the query at (``sources/0/0`` of the
    checkpoint: a zero byte, ``v1``, the offsets' JSON), or ``None`` if there are none."""
    path = checkpoint / "sources" / "0" / "0"
    try:
        text = path.read_bytes().lstrip(b"\x00").decode("utf-8")
        version, _, body = text.partition("\n")
        if not version.startswith("v"):
            return None
        return from_json_offsets(json.loads(body))
    except (OSError, ValueError, AttributeError):
        return None


def nothing_read_yet(checkpoint: Path) -> bool:
    """Are the checkpoint's last committed offsets still the query's initial offsets (every
    committed batch was empty, as after ``--starting-offsets latest`` with no new record)?"""
    initial = initial_offsets(checkpoint)
    return initial is not None and last_committed_offsets(checkpoint) == initial


@dataclass
class LagProbe:
    """Callable: per topic-partition, the partition's end (high watermark) minus the given
    offset: the records still to ingest after a batch.

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
        except (KafkaSourceError, ConfigError):
            return {}
        return {tp: max(0, marks[tp][1] - ends[tp]) for tp in ends}

    def close(self) -> None:
        """Close the consumer."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
