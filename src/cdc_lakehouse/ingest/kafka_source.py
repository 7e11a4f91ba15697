"""``cdc_kafka``: a Spark Python streaming data source that reads Kafka with confluent-kafka.

Used when Spark's own Kafka connector (``spark-sql-kafka-0-10``) is not on the classpath.
Register it with ``spark.dataSource.register(CdcKafkaDataSource)``; options
(:func:`source_options` builds them):

- ``bootstrapServers`` (required), ``topics`` (JSON list, required),
  ``kafkaProperties`` (JSON object of librdkafka settings, e.g. ``security.protocol``).
- ``startingOffsets``: ``earliest`` (default) or ``latest``, for partitions the checkpoint
  does not know when the query starts. Partitions that appear later start at ``earliest``.
- ``onMissingOffsets``: ``fail`` (default) or ``skip`` when the checkpoint's offset of a
  partition is below its first available offset (retention).
- ``maxRecordsPerBatch``: cap on records per micro-batch (also under ``availableNow``).
- ``timeoutSeconds``: bound on broker requests and on a read that makes no progress.
- ``initialOffsetsPath``: local file that keeps the query's initial offsets (see below).

Offsets are Kafka offsets in the JSON shape of Spark's Kafka source
(:mod:`cdc_lakehouse.ingest.offsets`), so a dump checkpoint and a Kafka checkpoint mean the
same thing. Planning (driver):

- ``initialOffset``: every current partition at its low watermark (``earliest``) or real end
  (``latest``); written to ``initialOffsetsPath`` once, so a restart before the first commit
  replays the same batch 0.
- ``latestOffset``: lists the topics' partitions (new ones are picked up), reads the
  watermarks, and takes as end ``max(high watermark, offsets actually seen)`` via a tail read
  to end-of-partition (:func:`cdc_lakehouse.kafka.client.real_end_offsets`): on Tansu the
  high watermark can be lower than the real end, and this never under-reports. The end is
  capped by the read limit.
- ``partitions``: one :class:`KafkaRangePartition` per topic-partition with offsets in
  ``[start, end)``, so reading scales with executors.

Reading (executors): each range is read by its own consumer with ``Consumer.assign`` at
``begin`` (no group, no commits), polling until the offset ``end - 1`` is read or
end-of-partition; records at ``end`` or beyond are not part of the range. A range's records
are fixed once written to Kafka, so a replayed batch reads the same records: with the bronze
writer's per-batch partition overwrite this is exactly once. Keys, values and headers are kept
byte for byte; ``read`` yields ``pyarrow.RecordBatch`` es of :data:`KAFKA_SCHEMA`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from cdc_lakehouse.ingest.dump_source import KAFKA_SCHEMA
from cdc_lakehouse.ingest.kafka_offsets import plan_end_offsets, resolve_begin
from cdc_lakehouse.ingest.offsets import KafkaOffsets, from_json_offsets, to_json_offsets
from cdc_lakehouse.kafka.client import (
    DEFAULT_TIMEOUT_S,
    KafkaReadError,
    MissingOffsetsError,
    TopicPartition,
    list_partitions,
    open_consumer,
    real_end_offsets,
    watermarks,
)

if TYPE_CHECKING:
    import pyarrow as pa
    from confluent_kafka import Consumer, Message

SOURCE_NAME = "cdc_kafka"
ARROW_BATCH_ROWS = 10_000
ARROW_BATCH_BYTES = 64 << 20
"""An Arrow batch is flushed at this many rows or key + value bytes."""


class KafkaRangePartition(InputPartition):
    """The offsets ``[begin, end)`` of one topic-partition in one micro-batch."""

    def __init__(self, topic: str, partition: int, begin: int, end: int) -> None:
        super().__init__(f"{topic}-{partition}")
        self.topic = topic
        self.partition = partition
        self.begin = begin
        self.end = end


def _arrow_batch(messages: Sequence[Message], schema: pa.Schema) -> pa.RecordBatch:
    """One Arrow batch of ``schema`` (Arrow form of :data:`KAFKA_SCHEMA`) from messages.

    ``timestampType`` follows Spark's Kafka source: 0 CreateTime, 1 LogAppendTime, -1 none
    (confluent-kafka's 1, 2, 0); ``timestamp`` is epoch ms, stored as a UTC timestamp.
    """
    import pyarrow as pa

    stamps = [m.timestamp() for m in messages]
    columns: dict[str, list[Any]] = {
        "key": [m.key() for m in messages],
        "value": [m.value() for m in messages],
        "topic": [m.topic() for m in messages],
        "partition": [m.partition() for m in messages],
        "offset": [m.offset() for m in messages],
        "timestamp": [ms * 1000 for _type, ms in stamps],  # epoch ms -> us
        "timestampType": [kind - 1 for kind, _ms in stamps],
        "headers": [[{"key": k, "value": v} for k, v in (m.headers() or ())] for m in messages],
    }
    arrays = [pa.array(columns[f.name], type=f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def read_range(
    consumer: Consumer, part: KafkaRangePartition, timeout_s: float
) -> Iterator[list[Message]]:
    """The records of ``[part.begin, part.end)`` in offset order, in chunks.

    Stops at offset ``end - 1`` or end-of-partition, whichever comes first (never at the
    high watermark, which may under-report).

    Raises:
        KafkaReadError: a consumer error, or no progress for ``timeout_s`` seconds.
    """
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as KTP

    consumer.assign([KTP(part.topic, part.partition, part.begin)])
    chunk: list[Message] = []
    size = 0
    deadline = time.monotonic() + timeout_s
    done = False
    while not done:
        if time.monotonic() > deadline:
            raise KafkaReadError(
                f"{part.topic} partition {part.partition}: no record or end-of-partition within "
                f"{timeout_s:.0f} s while reading offsets {part.begin} -> {part.end - 1}."
            )
        for msg in consumer.consume(num_messages=1000, timeout=0.1):
            err = msg.error()
            if err is not None:
                if err.code() == KafkaError._PARTITION_EOF:
                    done = True
                    break
                if err.code() == KafkaError._AUTO_OFFSET_RESET:
                    raise MissingOffsetsError(
                        f"{part.topic} partition {part.partition}: offset {part.begin} no "
                        f"longer exists on the broker ({err.str()})."
                    )
                raise KafkaReadError(f"{part.topic} partition {part.partition}: {err.str()}")
            deadline = time.monotonic() + timeout_s
            offset = msg.offset()
            if offset < part.begin:
                continue
            if offset >= part.end:
                done = True
                break
            chunk.append(msg)
            size += len(msg.key() or b"") + len(msg.value() or b"")
            if offset + 1 >= part.end:
                done = True
                break
            if len(chunk) >= ARROW_BATCH_ROWS or size >= ARROW_BATCH_BYTES:
                yield chunk
                chunk, size = [], 0
    if chunk:
        yield chunk


class CdcKafkaStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Stream reader of :class:`CdcKafkaDataSource` (see the module docstring).

    Planning methods run in one long-lived Python worker per query, which keeps one consumer
    and the largest end offset seen per partition; ``read`` opens its own consumer.
    """

    def __init__(self, options: Mapping[str, str]) -> None:
        """``options``: the source options with lower-cased names."""
        self.bootstrap: str = options["bootstrapservers"]
        self.topics: list[str] = json.loads(options["topics"])
        self.properties: dict[str, str] = json.loads(options.get("kafkaproperties") or "{}")
        self.starting: str = options.get("startingoffsets") or "earliest"
        self.on_missing: str = options.get("onmissingoffsets") or "fail"
        max_rows = options.get("maxrecordsperbatch")
        self.max_records: int | None = int(max_rows) if max_rows else None
        self.timeout_s = float(options.get("timeoutseconds") or DEFAULT_TIMEOUT_S)
        self.initial_path: str | None = options.get("initialoffsetspath") or None
        self._consumer: Consumer | None = None
        self._known: KafkaOffsets = {}
        self._frozen: tuple[KafkaOffsets, KafkaOffsets] | None = None
        self._latest: KafkaOffsets | None = None

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without the planner's consumer (not picklable, not needed by ``read``)."""
        state = self.__dict__.copy()
        state["_consumer"] = None
        return state

    def _client(self) -> Consumer:
        if self._consumer is None:
            self._consumer = open_consumer(self.bootstrap, self.properties, self.timeout_s)
        return self._consumer

    def _snapshot(self) -> tuple[KafkaOffsets, KafkaOffsets]:
        """``(low watermarks, real ends)`` of every partition of the topics, now."""
        consumer = self._client()
        parts = list_partitions(consumer, self.topics, self.bootstrap, self.timeout_s)
        tps = [(t, p) for t in self.topics for p in parts[t]]
        marks = watermarks(consumer, tps, self.timeout_s)
        positions = {tp: max(high, self._known.get(tp, 0)) for tp, (_low, high) in marks.items()}
        ends = real_end_offsets(consumer, positions, self.timeout_s)
        self._known.update(ends)
        return {tp: low for tp, (low, _high) in marks.items()}, ends

    def initialOffset(self) -> dict[str, Any]:
        """Every current partition at ``earliest`` / ``latest`` (kept in ``initialOffsetsPath``)."""
        path = Path(self.initial_path) if self.initial_path else None
        if path is not None and path.is_file():
            return json.loads(path.read_text(encoding="utf-8"))
        lows, ends = self._snapshot()
        offsets = to_json_offsets(ends if self.starting == "latest" else lows)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(offsets), encoding="utf-8")
            os.replace(tmp, path)
        return offsets

    def getDefaultReadLimit(self) -> ReadLimit:
        """``ReadMaxRows(maxRecordsPerBatch)`` if the option is set, else all available."""
        if self.max_records:
            return ReadMaxRows(self.max_records)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Freeze the target: the run ends at the partitions' real ends seen now."""
        self._frozen = self._snapshot()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """End offsets of the next batch: real ends, capped by ``limit`` (see module doc).

        Raises:
            MissingOffsetsError: a checkpoint offset below its partition's first offset and
                ``onMissingOffsets`` is ``fail``.
        """
        begun = from_json_offsets(start)
        lows, target = self._frozen if self._frozen is not None else self._snapshot()
        self._latest = target
        begin = {
            tp: resolve_begin(tp, begun, lows.get(tp, begun.get(tp, 0)), self.on_missing)[0]
            for tp in set(begun) | set(target)
        }
        max_records = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        return to_json_offsets(plan_end_offsets(begin, target, begun, max_records))

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """The real ends last seen (for the query progress)."""
        return to_json_offsets(self._latest) if self._latest else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """One :class:`KafkaRangePartition` per topic-partition with offsets in the batch."""
        begun = from_json_offsets(start)
        stop = from_json_offsets(end)
        moving: list[TopicPartition] = [tp for tp in sorted(stop) if stop[tp] > begun.get(tp, -1)]
        if not moving:
            return []
        lows = watermarks(self._client(), moving, self.timeout_s)
        parts: list[InputPartition] = []
        for tp in moving:
            first, _skipped = resolve_begin(tp, begun, lows[tp][0], self.on_missing)
            if stop[tp] > first:
                parts.append(KafkaRangePartition(tp[0], tp[1], first, stop[tp]))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The records of one range, as Arrow batches of :data:`KAFKA_SCHEMA`."""
        from pyspark.sql.pandas.types import to_arrow_schema

        assert isinstance(partition, KafkaRangePartition)
        schema = to_arrow_schema(KAFKA_SCHEMA, timezone="UTC")
        consumer = open_consumer(self.bootstrap, self.properties, self.timeout_s)
        try:
            tp = (partition.topic, partition.partition)
            low = watermarks(consumer, [tp], self.timeout_s)[tp][0]
            first, _skipped = resolve_begin(tp, {tp: partition.begin}, low, self.on_missing)
            part = KafkaRangePartition(tp[0], tp[1], first, partition.end)
            if part.begin >= part.end:
                return
            for chunk in read_range(consumer, part, self.timeout_s):
                yield _arrow_batch(chunk, schema)
        finally:
            consumer.close()

    def commit(self, end: dict[str, Any]) -> None:
        """Nothing to do: offsets live in the Spark checkpoint, never in Kafka."""

    def stop(self) -> None:
        """Close the planner's consumer."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None


class CdcKafkaDataSource(DataSource):
    """The ``cdc_kafka`` streaming source (see the module docstring)."""

    @classmethod
    def name(cls) -> str:
        """Format name: ``cdc_kafka``."""
        return SOURCE_NAME

    def schema(self) -> StructType:
        """Spark's Kafka source schema."""
        return KAFKA_SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """A :class:`CdcKafkaStreamReader` over the options."""
        return CdcKafkaStreamReader({k.lower(): v for k, v in self.options.items()})


def source_options(
    bootstrap: str,
    topics: Sequence[str],
    properties: Mapping[str, str],
    *,
    starting_offsets: str = "earliest",
    on_missing_offsets: str = "fail",
    max_records_per_batch: int | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    initial_offsets_path: Path | None = None,
) -> dict[str, str]:
    """``readStream`` options of the ``cdc_kafka`` source."""
    options = {
        "bootstrapServers": bootstrap,
        "topics": json.dumps(sorted(topics)),
        "kafkaProperties": json.dumps(dict(properties)),
        "startingOffsets": starting_offsets,
        "onMissingOffsets": on_missing_offsets,
        "timeoutSeconds": str(timeout_s),
    }
    if max_records_per_batch:
        options["maxRecordsPerBatch"] = str(max_records_per_batch)
    if initial_offsets_path is not None:
        options["initialOffsetsPath"] = str(initial_offsets_path)
    return options


__all__ = [
    "SOURCE_NAME",
    "CdcKafkaDataSource",
    "CdcKafkaStreamReader",
    "KafkaRangePartition",
    "read_range",
    "source_options",
]
