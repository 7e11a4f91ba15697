"""confluent-kafka clients of the driver: settings, metadata and watermarks.

Spark's Kafka source reads the records; this client library, which needs no JVM, does what is
best done before Spark starts and beside it: checking that the broker answers, that the
topics exist and that the checkpoint's offsets are still on the broker
(:func:`ingest.kafka_stream.preflight`), and the lag report after each batch
(:class:`ingest.kafka_stream.LagProbe`).

Every consumer reads metadata by explicit partition (``get_watermark_offsets``): it never joins
a consumer group and never commits offsets (``enable.auto.commit=false``); the ``group.id`` is
set only because the client requires one. Offsets live in the Spark checkpoint.

Timeouts are in seconds (:data:`DEFAULT_TIMEOUT_S`), passed to librdkafka in ms
(``socket.timeout.ms``, ``socket.connection.setup.timeout.ms``).

Errors are :class:`KafkaSourceError` subclasses whose message says what to fix.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cdc_lakehouse.runtime.settings import ConfigError

if TYPE_CHECKING:
    from confluent_kafka import Consumer

TopicPartition = tuple[str, int]
DEFAULT_TIMEOUT_S = 10.0
"""Bound on connecting, metadata and watermark requests, seconds."""
GROUP_ID = "cdc-lakehouse-ingest"
"""Required by the client; never used to join a group or commit (assignment only)."""

_FORCED = {
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "error",
    "allow.auto.create.topics": False,
}
"""Settings the ingest consumers need whatever the user passes."""

_LIBRDKAFKA_LOG = logging.getLogger("cdc_lakehouse.tools.kafka.librdkafka")
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
    """A new assignment-only consumer (see :func:`consumer_config`). Properties librdkafka
    does not have (Java client names for Spark's Kafka source, e.g. ``sasl.jaas.config``,
    ``ssl.truststore.location``) are left out: see :func:`librdkafka_properties`.

    Raises:
        ConfigError: librdkafka rejects a property value (the message names it).
    """
    from confluent_kafka import Consumer, KafkaException

    props = librdkafka_properties(properties or {})
    try:
        return Consumer(consumer_config(bootstrap, props, timeout_s))
    except (KafkaException, ValueError, TypeError) as exc:
        raise ConfigError(f"Kafka client settings rejected: {_text(exc)}") from exc


_FOREIGN = ("No such configuration property", "not supported")
"""librdkafka's words for a property name it does not have, or a Java client's it refuses."""


def librdkafka_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """``properties`` without the names librdkafka does not have or refuses as Java-only
    (its error says ``No such configuration property`` or ``... not supported``): the
    ``--kafka-property`` pairs serve Spark's Kafka source (the Java client) and this client
    alike, and each takes the names it knows. Values of known names are not checked here."""
    from confluent_kafka import Consumer, KafkaException

    def foreign(key: str, value: str) -> bool:
        try:
            Consumer({"group.id": GROUP_ID, key: value, "logger": _LIBRDKAFKA_LOG}).close()
        except KafkaException as exc:
            return any(word in _text(exc) for word in _FOREIGN)
        except (ValueError, TypeError):
            return False
        return False

    return {key: value for key, value in properties.items() if not foreign(key, value)}


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
    """``(low, high)`` watermark offsets per topic-partition: the first offset still on the
    broker and the end (last offset + 1), as the broker reports them.

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
