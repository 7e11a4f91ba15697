"""``python -m cdc_lakehouse.tools.kafka.produce``: produce a topic dump's records to Kafka.

Creates the topics that are missing (with at least as many partitions as the dump uses and
``--partitions``), then produces every distinct record of the dump (validated against the
registry, see :mod:`ingest.dump`) to its partition with its key, value, headers and
timestamp (epoch ms), in dump order. Kafka assigns new offsets. Exit codes: 0 done, 2 an
``error:`` line (dump, registry, broker).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cdc_lakehouse.formats.registry import (
    DEFAULT_REGISTRY,
    EXAMPLE_REGISTRY,
    load_registry,
)
from cdc_lakehouse.runtime.settings import EXAMPLES_ENV, ConfigError
from cdc_lakehouse.tools.kafka.client import (
    DEFAULT_TIMEOUT_S,
    BrokerUnreachableError,
    KafkaSourceError,
    parse_properties,
)
from ingest.dump import DumpRecord, load_dump

QUEUE_FULL_POLL_S = 0.1
"""How long :func:`produce_records` waits for deliveries when the local queue is full, s."""


def create_topics(
    bootstrap: str,
    partitions: Mapping[str, int],
    properties: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> list[str]:
    """Create the topics of ``partitions`` (name -> partition count) that do not exist.

    Returns:
        The topics created.

    Raises:
        BrokerUnreachableError: no broker answered within ``timeout_s``.
        KafkaSourceError: the broker refused to create a topic.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap, **(properties or {})})
    try:
        existing = set(admin.list_topics(timeout=timeout_s).topics)
    except KafkaException as exc:
        raise BrokerUnreachableError(
            f"no Kafka broker answered at {bootstrap} within {timeout_s:.0f} s: {exc}"
        ) from exc
    new = [NewTopic(t, n, 1) for t, n in sorted(partitions.items()) if t not in existing]
    if not new:
        return []
    for topic, future in admin.create_topics(new, request_timeout=timeout_s).items():
        try:
            future.result()
        except KafkaException as exc:
            raise KafkaSourceError(f"cannot create topic {topic!r}: {exc}") from exc
    return [t.topic for t in new]


def produce_records(
    bootstrap: str,
    records: Sequence[DumpRecord],
    properties: Mapping[str, str] | None = None,
    timeout_s: float = 30.0,
    paced: bool = False,
) -> int:
    """Produce ``records`` to their topic and partition; return how many were delivered.

    With ``paced``, each record is produced no earlier than its timestamp (epoch ms, wall
    clock): a live stream whose timestamps lie ahead goes out at their rate.

    When the client's local queue is full (more records in flight than
    ``queue.buffering.max.messages``, 100,000 by default: a big dump), it waits for
    deliveries (up to ``timeout_s`` without one) instead of failing.

    Raises:
        KafkaSourceError: a record was not delivered (the first error), the queue stayed full
            for ``timeout_s``, or flush timed out.
    """
    from confluent_kafka import Producer

    # idempotent: a retried batch neither repeats nor overtakes another, so each partition
    # gets the records in the dump's order and the broker's offsets are the dump's (the
    # bronze rows of `make demo-kafka` equal those of `make demo`)
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "enable.idempotence": True,
        "message.max.bytes": 16 << 20,
        "linger.ms": 20,
        **(properties or {}),
    }
    producer = Producer(conf)
    errors: list[str] = []
    delivered = 0

    def on_delivery(err: Any, _msg: Any) -> None:
        nonlocal delivered
        if err is not None:
            errors.append(str(err))
        else:
            delivered += 1

    for r in records:
        if paced and r.timestamp_ms is not None:
            delay_s = r.timestamp_ms / 1000 - time.time()
            if delay_s > 0:
                producer.poll(delay_s)  # serves delivery reports while it waits
        waited_since: float | None = None
        while True:
            try:
                producer.produce(
                    r.topic,
                    value=r.value,
                    key=r.key,
                    partition=r.partition,
                    timestamp=r.timestamp_ms,
                    headers=list(r.headers) or None,
                    on_delivery=on_delivery,
                )
                break
            except BufferError:  # the local queue is full: let deliveries drain it
                now = time.monotonic()
                waited_since = waited_since or now
                if now - waited_since > timeout_s:
                    raise KafkaSourceError(
                        f"{bootstrap} took no record for {timeout_s:.0f} s (local queue full)"
                    ) from None
                producer.poll(QUEUE_FULL_POLL_S)
        producer.poll(0)
    left = producer.flush(timeout_s)
    if errors or left:
        raise KafkaSourceError(
            f"{len(errors) + left} record(s) not delivered to {bootstrap}: "
            f"{errors[0] if errors else 'flush timed out'}"
        )
    return delivered


def main(argv: list[str] | None = None) -> int:
    """Create the dump's topics and produce its records; exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.kafka.produce",
        description="Produce a topic dump (JSON Lines) to Kafka, keeping partitions.",
    )
    parser.add_argument("--bootstrap-servers", required=True, metavar="HOST:PORT")
    parser.add_argument("--dump", required=True, type=Path, metavar="PATH")
    parser.add_argument(
        "--registry",
        type=Path,
        default=DEFAULT_REGISTRY,
        metavar="CSV",
        help=f"topic registry (default {DEFAULT_REGISTRY}); with {EXAMPLES_ENV}=true a "
        f"project's seeds/cdc_topics.csv gets the example topics of its {EXAMPLE_REGISTRY} too",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        default=3,
        metavar="N",
        help="partitions of topics this creates (at least the dump's; default 3)",
    )
    parser.add_argument("--kafka-property", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    try:
        props = parse_properties(args.kafka_property)
        registry = load_registry(args.registry)
        records = load_dump(args.dump, registry, registry_label=str(args.registry))
        counts = {t: args.partitions for t in registry}
        for r in records:
            counts[r.topic] = max(counts[r.topic], r.partition + 1)
        created = create_topics(args.bootstrap_servers, counts, props)
        n = produce_records(args.bootstrap_servers, records, props)
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(
        f"produced {n} records to {args.bootstrap_servers}; created topic(s): "
        f"{', '.join(created) or 'none'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
