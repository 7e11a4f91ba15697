"""``cdc_lakehouse.kafka.produce``: a dump bigger than the producer's local queue is produced
whole (the bench produces a 1,000,000-record dump; the queue holds 100,000 by default); the
end offsets of a partition that a producer keeps growing are found without waiting for it."""

from __future__ import annotations

import threading
import time
from dataclasses import replace

from cdc_lakehouse.dump import DumpRecord
from cdc_lakehouse.kafka.client import open_consumer, real_end_offsets
from cdc_lakehouse.kafka.produce import create_topics, produce_records

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
    # a queue of 5 records: without waiting, the 6th produce() raises BufferError
    properties = {"queue.buffering.max.messages": "5", "linger.ms": "0"}
    assert produce_records(kafka_broker, _records(400), properties) == 400
    consumer = open_consumer(kafka_broker)
    try:
        ends = real_end_offsets(consumer, {(TOPIC, 0): 0, (TOPIC, 1): 0})
    finally:
        consumer.close()
    assert ends == {(TOPIC, 0): 200, (TOPIC, 1): 200}


def test_the_end_of_a_partition_still_being_produced_is_found_while_the_producer_runs(
    kafka_broker: str,
) -> None:
    """A live stream never gives end-of-partition: the planner of a continuous ingest must not
    wait for the producer to stop (it did: one micro-batch lasted the whole stream)."""
    topic = "k.produce.live"
    create_topics(kafka_broker, {topic: 1})
    start_ms = int(time.time() * 1000) + 500
    records = [  # 1,500 records, one every 5 ms: about 8 s of stream
        replace(r, topic=topic, timestamp_ms=start_ms + 5 * (r.offset))
        for r in _records(3000)
        if r.partition == 0
    ]

    def produce_slowly() -> None:
        produce_records(kafka_broker, records, paced=True)

    produced = threading.Thread(target=produce_slowly, daemon=True)
    produced.start()
    consumer = open_consumer(kafka_broker)
    try:
        while not real_end_offsets(consumer, {(topic, 0): 0}, chase_s=0.0)[(topic, 0)]:
            time.sleep(0.1)
        end = real_end_offsets(consumer, {(topic, 0): 0})[(topic, 0)]
        still_producing = produced.is_alive()
    finally:
        consumer.close()
        produced.join()
    assert still_producing, "the stream should outlast the end-offset read"
    assert 0 < end < len(records)
