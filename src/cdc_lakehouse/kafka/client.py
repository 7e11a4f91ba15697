"""confluent-kafka consumers for the ingest job: settings, metadata, watermarks, real ends.

Every consumer reads with explicit partition assignment (``Consumer.assign``): it never joins
a consumer group and never commits offsets (``enable.auto.commit=false``); the ``group.id`` is
set only because the client requires one. Offsets live in the Spark checkpoint.

Timeouts are in seconds (:data:`DEFAULT_TIMEOUT_S`), passed to librdkafka in ms
(``socket.timeout.ms``, ``socket.connection.setup.timeout.ms``).

**Real end of a partition.** Tansu (the local test broker) answers ListOffsets LATEST with the
base offset of the partition's last record batch + 1, which is lower than the real end
(last offset + 1) when a producer batched several records. :func:`real_end_offsets` therefore
reads the tail: from ``max(high watermark, known end)`` until end-of-partition
(``enable.partition.eof``), and reports ``max(high watermark, last offset seen + 1)``. On a
broker that reports watermarks correctly the tail is empty and this costs one fetch.

Errors are :class:`KafkaSourceError` subclasses whose message says what to fix.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cdc_lakehouse.settings import ConfigError

if TYPE_CHECKING:
    from confluent_kafka import Consumer

TopicPartition = tuple[str, int]
DEFAULT_TIMEOUT_S = 10.0
"""Bound on connecting, metadata and watermark requests, seconds."""
TAIL_CHASE_S = 2.0
"""How long :func:`real_end_offsets` follows a partition that keeps growing, seconds."""
GROUP_ID = "cdc-lakehouse-ingest"
"""Required by the client; never used to join a group or commit (assignment only)."""

_FORCED = {
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "enable.partition.eof": True,
    "auto.offset.reset": "error",
    "allow.auto.create.topics": False,
}
"""Settings the ingest consumers need whatever the user passes."""

_LIBRDKAFKA_LOG = logging.getLogger("cdc_lakehouse.kafka.librdkafka")
_LIBRDKAFKA_LOG.addHandler(logging.NullHandler())
_LIBRDKAFKA_LOG.propagate = False  # librdkafka's connection chatter is not for the console


class KafkaSourceError(ConfigError):
    """Kafka cannot be read as asked; the message names the broker / topic and the fix."""


class BrokerUnreachableError(KafkaSourceError):
    """No broker answered within the timeout."""


class UnknownTopicError(KafkaSourceError):
    """A topic to read does not exist on the broker (never created, or deleted)."""


class MissingOffsetsError(KafkaSourceError):
    """The checkpoint's next offset is below the partition's first offset (retention)."""


class KafkaReadError(KafkaSourceError):
    """Reading a partition failed or stalled."""


def parse_properties(pairs: Iterable[str]) -> dict[str, str]:
    """``["key=value", ...]`` -> dict (later pairs win).

    Raises:
        ConfigError: a pair without ``=`` or with an empty key.
    """
    props: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--kafka-property {pair!r}: use key=value, e.g. security.protocol=SASL_SSL."
            )
        props[key.strip()] = value
    return props


def consumer_config(
    bootstrap: str,
    properties: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[str, Any]:
    """librdkafka settings of an ingest consumer: ``properties`` (security, ...) plus the
    assignment-only settings, which cannot be overridden."""
    timeout_ms = max(1000, int(timeout_s * 1000))
    conf: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": GROUP_ID,
        "socket.timeout.ms": timeout_ms,
        "socket.connection.setup.timeout.ms": timeout_ms,
        "log.connection.close": False,
        "fetch.wait.max.ms": 50,
        "client.id": "cdc-lakehouse-ingest",
    }
    conf.update(properties or {})
    conf.update(_FORCED)
    conf["bootstrap.servers"] = bootstrap
    conf["logger"] = _LIBRDKAFKA_LOG
    return conf


def open_consumer(
    bootstrap: str,
    properties: Mapping[str, str] | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Consumer:
    """A new assignment-only consumer (see :func:`consumer_config`).

    Raises:
        ConfigError: librdkafka rejects a property (the message names it).
    """
    from confluent_kafka import Consumer, KafkaException

    try:
        return Consumer(consumer_config(bootstrap, properties, timeout_s))
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError(f"Kafka client settings rejected: {_text(exc)}") from exc


def _text(exc: BaseException) -> str:
    arg = exc.args[0] if exc.args else exc
    return str(arg.str() if hasattr(arg, "str") else arg)


def list_partitions(
    consumer: Consumer,
    topics: Iterable[str],
    bootstrap: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[str, list[int]]:
    """Partitions of each topic, from the broker's metadata.

    Raises:
        BrokerUnreachableError: no metadata within ``timeout_s`` (says which address, how long).
        UnknownTopicError: a topic does not exist on the broker.
    """
    from confluent_kafka import KafkaException

    started = time.monotonic()
    try:
        metadata = consumer.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        raise BrokerUnreachableError(
            f"no Kafka broker answered at {bootstrap} within "
            f"{time.monotonic() - started:.0f} s ({_text(exc)}): check --bootstrap-servers, "
            "that the broker runs and is reachable from here, and the security settings "
            "(--kafka-property)."
        ) from exc
    out: dict[str, list[int]] = {}
    for topic in topics:
        meta = metadata.topics.get(topic)
        if meta is None or meta.error is not None or not meta.partitions:
            raise UnknownTopicError(
                f"topic {topic!r} does not exist on the broker at {bootstrap} (never created "
                "or deleted): create it, remove it from the registry, or narrow the topics "
                "with --topics."
            )
        out[topic] = sorted(meta.partitions)
    return out


def watermarks(
    consumer: Consumer,
    partitions: Iterable[TopicPartition],
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> dict[TopicPartition, tuple[int, int]]:
    """``(low, high)`` watermark offsets per topic-partition, as the broker reports them (see
    the module docstring: the high watermark may be lower than the real end).

    Raises:
        KafkaReadError: the broker did not answer within ``timeout_s``.
    """
    from confluent_kafka import KafkaException
    from confluent_kafka import TopicPartition as KTP

    out: dict[TopicPartition, tuple[int, int]] = {}
    for topic, partition in partitions:
        try:
            low, high = consumer.get_watermark_offsets(
                KTP(topic, partition), timeout=timeout_s, cached=False
            )
        except KafkaException as exc:
            raise KafkaReadError(
                f"{topic} partition {partition}: the broker did not report its offsets within "
                f"{timeout_s:.0f} s ({_text(exc)})."
            ) from exc
        out[(topic, partition)] = (int(low), int(high))
    return out


def real_end_offsets(
    consumer: Consumer,
    positions: Mapping[TopicPartition, int],
    timeout_s: float = DEFAULT_TIMEOUT_S,
    chase_s: float = TAIL_CHASE_S,
) -> dict[TopicPartition, int]:
    """The real end (last offset + 1) of each partition, reading from ``positions`` (a lower
    bound of the end, e.g. ``max(high watermark, known end)``) until end-of-partition, or for
    at most ``chase_s`` seconds on a partition that keeps growing: a producer that does not
    stop never gives end-of-partition, and the last offset read is a real end to stop at (the
    next call reads on from there).

    Returns:
        Per topic-partition ``max(position, last offset seen + 1)``.

    Raises:
        KafkaReadError: no end-of-partition within ``timeout_s`` of the last progress.
    """
    from confluent_kafka import KafkaError
    from confluent_kafka import TopicPartition as KTP

    ends = {tp: int(pos) for tp, pos in positions.items()}
    if not ends:
        return ends
    pending = set(ends)
    consumer.assign([KTP(t, p, ends[(t, p)]) for t, p in sorted(ends)])
    try:
        deadline = time.monotonic() + timeout_s
        chase_until = time.monotonic() + chase_s
        while pending:
            if time.monotonic() > chase_until:
                pending = {tp for tp in pending if ends[tp] == positions[tp]}
                if not pending:
                    break
            if time.monotonic() > deadline:
                names = ", ".join(f"{t} [{p}]" for t, p in sorted(pending))
                raise KafkaReadError(
                    f"no end-of-partition from the broker within {timeout_s:.0f} s for {names}."
                )
            for msg in consumer.consume(num_messages=1000, timeout=0.1):
                tp = (msg.topic(), msg.partition())
                err = msg.error()
                if err is None:
                    ends[tp] = max(ends[tp], msg.offset() + 1)
                    deadline = time.monotonic() + timeout_s
                elif err.code() == KafkaError._PARTITION_EOF:
                    ends[tp] = max(ends[tp], msg.offset())
                    pending.discard(tp)
                else:
                    raise KafkaReadError(f"{tp[0]} partition {tp[1]}: {err.str()}")
    finally:
        consumer.unassign()
    return ends
