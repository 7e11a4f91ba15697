"""Delivery: what Kafka makes of an encoder's messages (partitions, offsets, producer-retry
duplicates, corrupted records) and how ingest batches cut it (out of order across partitions).

``deliver(messages, DeliveryConfig(...))`` returns a :class:`Delivery`:

- Partition: Kafka's default partitioner for a keyed message, ``(murmur2(key) & 0x7fffffff) %
  partitions`` (the Java client's ``Utils.murmur2``, so a real producer agrees); messages
  without a key go round robin per topic. All changes of one row share a partition.
- Offsets: dense per (topic, partition), from 0 (or from where ``after`` ended), in production
  order of the messages, with the copies below interleaved.
- Duplicates (``duplicate_rate``): for that share of the messages, a redelivered exact copy
  (same key, value and timestamp) later in the same partition, 1..``duplicate_window`` records
  after the original, with its own offset - what an at-least-once producer's retry writes.
- Malformed records (``malformed_rate``): for that share of the messages, an *extra* corrupted
  copy (same key, partition and timestamp, value cut to half its bytes / a few garbage bytes
  starting with 0xFF / empty) shortly after the original. Decision: corrupted records come in
  addition to the originals, never instead, so every change still arrives once intact and
  the oracle stays the expected gold; each malformed record is listed in
  ``Delivery.malformed`` (a test expects exactly those in ``silver.quarantine``).
- Batches (``batches``): every partition is cut at its own points (around ``k / batches`` of
  its records, +-35 % of a batch), batch k holding the k-th slice of every partition. So one
  batch can hold later records of one partition than the next batch holds of another:
  delivery is out of order across partitions and batches, in order inside a partition.
  Gold matches the oracle once all batches of a delivery are ingested (an intermediate batch
  may even split an update's before / after messages).
- Rates are shares of the messages, rounded; a rate > 0 gives at least one record.

Continuing (a second history part, ``generate(..., after=h1)``): ``deliver(messages2, config,
after=delivery1)`` continues offsets and round robin where ``delivery1`` ended.

:func:`write_dump` writes a batch as a topic dump (docs/architecture.md, read by
:mod:`ingest.dump`); :func:`produce` sends it to Kafka with
:mod:`cdc_lakehouse.tools.kafka.produce`.
"""

from __future__ import annotations

import base64
import json
import random
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from cdc_lakehouse.tools.kafka.produce import create_topics, produce_records
from cdc_lakehouse.tools.simulate.messages import Message
from ingest.dump import DumpRecord, TopicPartition

SIMULATED_PATH = "<simulated>"  # DumpRecord.path of generated records (line 0)
BATCH_JITTER = 0.35  # a cut point moves up to this share of a batch


@dataclass(frozen=True)
class DeliveryConfig:
    """How messages are delivered.

    Attributes:
        partitions: partitions per topic (>= 1).
        duplicate_rate: share of messages (0..1) redelivered once more as exact copies.
        malformed_rate: share of messages (0..1) followed by an extra corrupted copy.
        batches: ingest batches (>= 1) the delivery is cut into.
        seed: seeds the one ``random.Random`` of the delivery.
        duplicate_window: a duplicate lands 1..this many records after its original in the
            same partition.
    """

    partitions: int = 3
    duplicate_rate: float = 0.0
    malformed_rate: float = 0.0
    batches: int = 1
    seed: int = 0
    duplicate_window: int = 50

    def __post_init__(self) -> None:
        if self.partitions < 1:
            raise ValueError(f"partitions must be >= 1, got {self.partitions}")
        if self.batches < 1:
            raise ValueError(f"batches must be >= 1, got {self.batches}")
        if self.duplicate_window < 1:
            raise ValueError(f"duplicate_window must be >= 1, got {self.duplicate_window}")
        for name in ("duplicate_rate", "malformed_rate"):
            rate = getattr(self, name)
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {rate}")


@dataclass(frozen=True)
class Delivery:
    """A delivered message stream.

    Attributes:
        batches: per ingest batch, its records ordered by (topic, partition, offset).
        duplicates: the redelivered copies (also in ``batches``).
        malformed: the corrupted records (also in ``batches``).
        messages: how many messages were delivered (originals, without copies).
        next_offsets: per (topic, partition), the offset after the last record (for ``after``).
        round_robin: per topic, how many keyless messages were partitioned so far.
    """

    batches: list[list[DumpRecord]]
    duplicates: list[DumpRecord] = field(default_factory=list)
    malformed: list[DumpRecord] = field(default_factory=list)
    messages: int = 0
    next_offsets: Mapping[TopicPartition, int] = field(default_factory=dict)
    round_robin: Mapping[str, int] = field(default_factory=dict)

    @property
    def records(self) -> list[DumpRecord]:
        """Every record, batch by batch."""
        return [record for batch in self.batches for record in batch]


# --------------------------------------------------------------------------- partitioning


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (signed 32-bit result), seed 0x9747b28c."""
    m = 0x5BD1E995
    length = len(data)
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    for i in range(0, length - length % 4, 4):
        k = data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (data[i + 3] << 24)
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> 24
        k = (k * m) & 0xFFFFFFFF
        h = ((h * m) & 0xFFFFFFFF) ^ k
    tail = length & ~3
    rest = length % 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return h - (1 << 32) if h & 0x80000000 else h


def partition_of(key: bytes, partitions: int) -> int:
    """The partition Kafka's default partitioner picks for ``key``."""
    return (murmur2(key) & 0x7FFFFFFF) % partitions


# --------------------------------------------------------------------------- delivery


def _count(rate: float, n: int) -> int:
    if rate <= 0.0 or n == 0:
        return 0
    return min(n, max(1, round(rate * n)))


def _corrupt(rng: random.Random, value: bytes | None) -> bytes:
    kind = rng.choice(("truncated", "garbage", "empty"))
    if kind == "truncated" and value is not None and len(value) >= 2:
        return value[: len(value) // 2]
    if kind == "empty":
        return b""
    return b"\xff" + rng.randbytes(rng.randint(0, 7))  # not UTF-8, too short for any Avro record


def _cuts(rng: random.Random, n: int, batches: int) -> list[int]:
    """``batches + 1`` non-decreasing cut points from 0 to ``n`` (its own for each partition)."""
    points = [0]
    for k in range(1, batches):
        share = k / batches + rng.uniform(-BATCH_JITTER, BATCH_JITTER) / batches
        points.append(min(n, max(points[-1], round(n * share))))
    points.append(n)
    return points


def deliver(
    messages: Sequence[Message], config: DeliveryConfig, after: Delivery | None = None
) -> Delivery:
    """Partition, copy, corrupt, number and cut ``messages`` (production order) into batches.

    Args:
        messages: an encoder's messages in production order.
        config: partitions, rates, batches, seed.
        after: the delivery this one continues (offsets and round robin carry on).
    """
    rng = random.Random(config.seed)
    round_robin: dict[str, int] = dict(after.round_robin) if after else {}
    next_offsets: dict[TopicPartition, int] = dict(after.next_offsets) if after else {}

    # (topic, partition) -> [(sort position, kind, message, corrupted value)]
    lanes: dict[TopicPartition, list[tuple[float, str, Message, bytes | None]]] = defaultdict(list)
    placed: list[tuple[TopicPartition, int]] = []  # per message: its lane and index in it
    for message in messages:
        if message.key is None:
            count = round_robin.get(message.topic, 0)
            partition = count % config.partitions
            round_robin[message.topic] = count + 1
        else:
            partition = partition_of(message.key, config.partitions)
        lane = lanes[(message.topic, partition)]
        placed.append(((message.topic, partition), len(lane)))
        lane.append((float(len(lane)), "original", message, message.value))

    n = len(messages)
    for index in sorted(rng.sample(range(n), _count(config.duplicate_rate, n))):
        tp, position = placed[index]
        lag = rng.uniform(0.5, config.duplicate_window + 0.5)
        message = messages[index]
        lanes[tp].append((position + lag, "duplicate", message, message.value))
    for index in sorted(rng.sample(range(n), _count(config.malformed_rate, n))):
        tp, position = placed[index]
        message = messages[index]
        corrupted = _corrupt(rng, message.value)
        lanes[tp].append((position + rng.uniform(0.01, 3.0), "malformed", message, corrupted))

    batches: list[list[DumpRecord]] = [[] for _ in range(config.batches)]
    duplicates: list[DumpRecord] = []
    malformed: list[DumpRecord] = []
    for tp in sorted(lanes):
        entries = sorted(lanes[tp], key=lambda entry: entry[0])  # stable: originals first
        start = next_offsets.get(tp, 0)
        cuts = _cuts(rng, len(entries), config.batches)
        for i, (_pos, kind, message, value) in enumerate(entries):
            record = DumpRecord(
                topic=tp[0],
                partition=tp[1],
                offset=start + i,
                timestamp_ms=message.timestamp_ms,
                timestamp_type=0,
                key=message.key,
                value=value,
                headers=(),
                path=SIMULATED_PATH,
                line=0,
            )
            batch = next(k for k in range(config.batches) if i < cuts[k + 1])
            batches[batch].append(record)
            if kind == "duplicate":
                duplicates.append(record)
            elif kind == "malformed":
                malformed.append(record)
        next_offsets[tp] = start + len(entries)
    return Delivery(
        batches=batches,
        duplicates=duplicates,
        malformed=malformed,
        messages=n,
        next_offsets=next_offsets,
        round_robin=round_robin,
    )


# --------------------------------------------------------------------------- output


def _bytes_fields(name: str, data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {name: None}
    try:
        return {name: data.decode("utf-8")}
    except UnicodeDecodeError:
        return {f"{name}_base64": base64.b64encode(data).decode("ascii")}


def dump_line(record: DumpRecord) -> str:
    """One topic-dump line (JSON, no newline) for ``record``: ``key`` / ``value`` as text when
    UTF-8, else ``key_base64`` / ``value_base64``."""
    obj: dict[str, Any] = {
        "topic": record.topic,
        "partition": record.partition,
        "offset": record.offset,
        "timestamp": record.timestamp_ms,
    }
    if record.timestamp_type:
        obj["timestampType"] = record.timestamp_type
    obj.update(_bytes_fields("key", record.key))
    obj.update(_bytes_fields("value", record.value))
    if record.headers:
        obj["headers"] = [
            {"key": key, **_bytes_fields("value", value)} for key, value in record.headers
        ]
    return json.dumps(obj, ensure_ascii=False)


def write_dump(directory: Path | str, records: Iterable[DumpRecord]) -> list[Path]:
    """Write ``records`` as a topic dump: ``<directory>/<topic>.jsonl``, one file per topic,
    records in the given order. Existing files of those topics are replaced.

    Returns:
        The files written, sorted.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, TextIO] = {}
    with ExitStack() as stack:  # streamed: a million-record dump is never held as text
        for record in records:
            file = files.get(record.topic)
            if file is None:
                path = out / f"{record.topic}.jsonl"
                file = files[record.topic] = stack.enter_context(path.open("w", encoding="utf-8"))
            file.write(dump_line(record) + "\n")
    return sorted(out / f"{topic}.jsonl" for topic in files)


def write_batches(directory: Path | str, delivery: Delivery) -> list[Path]:
    """Write each batch k (from 1) of ``delivery`` to ``<directory>/batch-<k>/`` (a topic dump,
    see :func:`write_dump`; an empty batch is an empty directory). Returns the batch dirs."""
    dirs = []
    for k, batch in enumerate(delivery.batches, start=1):
        batch_dir = Path(directory) / f"batch-{k}"
        batch_dir.mkdir(parents=True, exist_ok=True)
        write_dump(batch_dir, batch)
        dirs.append(batch_dir)
    return dirs


def produce(
    bootstrap_servers: str,
    records: Sequence[DumpRecord],
    partitions: int,
    properties: Mapping[str, str] | None = None,
    paced: bool = False,
) -> int:
    """Create the records' topics (``partitions`` each, more if a record needs it) where missing
    and produce ``records`` to their partitions (see :mod:`cdc_lakehouse.tools.kafka.produce`; Kafka
    assigns the offsets, equal to ours on new topics); ``paced``: each record no earlier than
    its timestamp. Returns how many were delivered.

    Raises:
        cdc_lakehouse.tools.kafka.client.KafkaSourceError: broker unreachable, a record not
        delivered.
    """
    counts: dict[str, int] = {}
    for record in records:
        counts[record.topic] = max(counts.get(record.topic, partitions), record.partition + 1)
    create_topics(bootstrap_servers, counts, properties)
    return produce_records(bootstrap_servers, records, properties, paced=paced)
