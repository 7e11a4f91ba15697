"""Test helpers for the Kafka tests: topics, an independent producer (confluent-kafka, not the
project's code) that returns what the broker stored, the same records as a topic dump, and
records deleted as retention would (``DeleteRecords``)."""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from confluent_kafka import Producer, TopicPartition
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
    """Produce ``specs`` with batching (``linger.ms``: several records per record batch) and
    timestamps ``ts0 + i``; return the rows the broker acknowledged (offsets from the delivery
    reports, headers as sent), in the shape of ``bronze_rows``."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "linger.ms": 100,
            "message.max.bytes": 4 << 20,
            "enable.idempotence": True,  # retries keep each partition's order: write_dump's offsets
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


def write_dump(path: Path, specs: Sequence[Spec], ts0: int = 1_700_000_000_000) -> Path:
    """``specs`` as a topic dump (JSON Lines) with what :func:`produce` makes of them on an
    empty topic: offsets 0, 1, ... per partition in spec order, timestamps ``ts0 + i``;
    bytes in base64, null keys, values and header values as null."""

    def b64(value: bytes | None) -> str | None:
        return None if value is None else base64.b64encode(value).decode()

    next_offset: dict[tuple[str, int], int] = {}
    lines = []
    for i, (topic, partition, key, value, headers) in enumerate(specs):
        offset = next_offset.get((topic, partition), 0)
        next_offset[(topic, partition)] = offset + 1
        record = {
            "topic": topic,
            "partition": partition,
            "offset": offset,
            "timestamp": ts0 + i,
            "key_base64": b64(key),
            "value_base64": b64(value),
            "headers": [{"key": k, "value_base64": b64(v)} for k, v in headers],
        }
        lines.append(json.dumps(record))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def delete_records(bootstrap: str, topic: str, partition: int, before: int) -> None:
    """Delete the records of ``topic [partition]`` below offset ``before``, as retention does
    (the partition's first offset becomes ``before``)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.delete_records([TopicPartition(topic, partition, before)])
    for future in futures.values():
        assert future.result(timeout=15).low_watermark == before
