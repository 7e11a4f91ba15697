"""``cdc_lakehouse.tools.kafka.produce``: a dump bigger than the producer's local queue is produced
whole (the bench produces a 1,000,000-record dump; the queue holds 100,000 by default)."""

from __future__ import annotations

from cdc_lakehouse.tools.kafka.client import open_consumer, watermarks
from cdc_lakehouse.tools.kafka.produce import create_topics, produce_records
from ingest.dump import DumpRecord

TOPIC = "k.produce.queue"


def _records(count: int) -> list[DumpRecord]:
    return [
        DumpRecord(
            topic=TOPIC,
            partition=i % 2,
            offset=i // 2,
            timestamp_ms=1_700_000_000_000 + i,
            timestamp_type=0,
            key=f"k{i}".encode(),
            value=f'{{"n": {i}}}'.encode(),
            headers=(),
            path="<test>",
            line=i + 1,
        )
        for i in range(count)
    ]


def test_a_full_local_queue_waits_for_deliveries_instead_of_failing(kafka_broker: str) -> None:
    assert create_topics(kafka_broker, {TOPIC: 2}) == [TOPIC]
    assert create_topics(kafka_broker, {TOPIC: 2}) == []  # exists: left alone
    # a queue of 5 records: without waiting, the 6th produce() raises BufferError
    properties = {"queue.buffering.max.messages": "5", "linger.ms": "0"}
    assert produce_records(kafka_broker, _records(400), properties) == 400
    consumer = open_consumer(kafka_broker)
    try:
        marks = watermarks(consumer, [(TOPIC, 0), (TOPIC, 1)])
    finally:
        consumer.close()
    assert marks == {(TOPIC, 0): (0, 200), (TOPIC, 1): (0, 200)}
