"""Test helpers for the Kafka tests: topics, an independent producer (confluent-kafka, not the
project's code) that returns what the broker stored, and the expected bronze rows."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

Row = tuple[str, int, int, bytes | None, bytes | None, int, int, tuple]
Spec = tuple[str, int, bytes | None, bytes | None, list[tuple[str, bytes | None]]]


def write_registry(path: Path, topics: Sequence[str]) -> Path:
    lines = ["topic,format,source_dialect,canal_legacy_swap,description"]
    lines += [f"{t},dataworks_json,mysql,false,kafka test topic" for t in topics]
    path.write_text("\n".join(lines) + "\n")
    return path


def create_topics(bootstrap: str, topics: Sequence[str], partitions: int = 3) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(t, partitions, 1) for t in topics]).values():
        future.result(timeout=15)


def delete_topic(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.delete_topics([topic]).values():
        future.result(timeout=15)


def records(topics: Sequence[str], count: int, seed: int = 0, big: bool = False) -> list[Spec]:
    """``count`` records spread over the topics' partitions 0..2: text keys and values, binary
    keys with zero bytes, binary values, null keys and values, headers (one with a null value);
    with ``big`` one ~1 MiB value."""
    specs: list[Spec] = []
    for i in range(count):
        n = seed + i
        topic = topics[i % len(topics)]
        partition = (i // len(topics)) % 3
        headers: list[tuple[str, bytes | None]] = [("seq", str(n).encode())]
        if i % 3 == 0:
            key, value = f"k{n}".encode(), f'{{"id": {n}, "op": "INSERT"}}'.encode()
        elif i % 3 == 1:
            key, value = b"\x00" + n.to_bytes(4, "big") + b"\x00", bytes(range(256)) + b"\x00"
            headers += [("bin", b"\x00\xff\x00"), ("empty", b""), ("null", None)]
        else:
            key, value = None, (None if i % 2 else b"")
        specs.append((topic, partition, key, value, headers))
    if big:
        specs.append((topics[0], 1, b"big\x00key", os.urandom(1 << 20), [("size", b"1MiB")]))
    return specs


def produce(bootstrap: str, specs: Sequence[Spec], ts0: int = 1_700_000_000_000) -> list[Row]:
    """Produce ``specs`` with batching (``linger.ms``), so Tansu's LATEST watermark lags the
    real end; return the rows the broker acknowledged (offsets from the delivery reports, headers
    as sent), in the shape of ``bronze_rows``."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 100,
            "message.max.bytes": 4 << 20,
            "enable.idempotence": False,
        }
    )
    acked: list[Row] = []
    errors: list[Any] = []

    def report(err: Any, msg: Any, headers: Sequence[tuple[str, bytes | None]]) -> None:
        if err is not None:
            errors.append(err)
            return
        acked.append(
            (
                msg.topic(),
                msg.partition(),
                msg.offset(),
                msg.key(),
                msg.value(),
                msg.timestamp()[1],
                0,
                tuple(headers),
            )
        )

    for i, (topic, partition, key, value, headers) in enumerate(specs):
        producer.produce(
            topic,
            key=key,
            value=value,
            partition=partition,
            headers=headers,
            timestamp=ts0 + i,
            on_delivery=lambda err, msg, h=headers: report(err, msg, h),
        )
        producer.poll(0)
    assert producer.flush(30) == 0 and not errors, errors
    return sorted(acked)


def watermark_lags(bootstrap: str, rows: Sequence[Row]) -> bool:
    """Does some partition's reported high watermark lie below its real end (Tansu quirk)?"""
    ends: dict[tuple[str, int], int] = {}
    for topic, partition, offset, *_ in rows:
        ends[(topic, partition)] = max(ends.get((topic, partition), 0), offset + 1)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "t"})
    try:
        return any(
            consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10)[1] < end
            for (t, p), end in ends.items()
        )
    finally:
        consumer.close()
