"""What an encoder produces: Kafka messages in production order, before delivery assigns
partitions and offsets (see ``delivery``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Message:
    """One Kafka message as a producer sends it.

    - ``topic``: the Kafka topic.
    - ``key``: the Kafka key (bytes), which picks the partition; encoders use the row's key
      text so that all changes of one row go to one partition. None: no key (round robin).
    - ``value``: the message bytes (None: a Kafka tombstone record).
    - ``timestamp_ms``: the Kafka record timestamp, epoch ms UTC (the producer's send time).
    - ``sequence``: the ``sequence`` of the history item (transaction / heartbeat) it renders;
      0 for messages not tied to one item (e.g. Qlik table metadata sent up front).
    """

    topic: str
    key: bytes | None
    value: bytes | None
    timestamp_ms: int
    sequence: int
