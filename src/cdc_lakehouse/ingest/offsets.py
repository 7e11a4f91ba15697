"""Kafka offsets as Structured Streaming source offsets, and per-batch read limits.

A source offset is the JSON shape of Spark's own Kafka source: ``{"<topic>": {"<partition>":
<next offset>}}``, i.e. per topic-partition the offset of the next record to read (the last
record read + 1). Topics and partitions are written in sorted order so that equal offsets
serialize to equal JSON (Spark compares offsets by their JSON text).
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence

from cdc_lakehouse.dump import TopicPartition

KafkaOffsets = dict[TopicPartition, int]
"""``(topic, partition) -> next offset``."""


def to_json_offsets(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    """``{(topic, partition): n}`` -> ``{"topic": {"partition": n}}`` in canonical order."""
    out: dict[str, dict[str, int]] = {}
    for (topic, partition), offset in sorted(offsets.items()):
        out.setdefault(topic, {})[str(partition)] = int(offset)
    return out


def from_json_offsets(obj: Mapping[str, Mapping[str, int]] | None) -> KafkaOffsets:
    """Inverse of :func:`to_json_offsets` (``None`` or ``{}`` -> nothing read yet)."""
    return {
        (topic, int(partition)): int(offset)
        for topic, parts in (obj or {}).items()
        for partition, offset in parts.items()
    }


def next_end_offsets(
    start: Mapping[TopicPartition, int],
    target: Mapping[TopicPartition, int],
    available: Mapping[TopicPartition, Sequence[int]],
    max_records: int | None = None,
) -> KafkaOffsets:
    """End offsets of the next batch.

    Args:
        start: where the batch starts (the previous batch's end).
        target: the end of the data (per topic-partition, last offset + 1).
        available: per topic-partition, the sorted offsets that exist (offsets may have gaps).
        max_records: cap on the records of the batch (``None``: no cap). Topic-partitions are
            filled in sorted order.

    Returns:
        Per topic-partition, ``max(start, end)``: offsets never move backwards, so a dump older
        than the checkpoint adds nothing. A topic-partition absent from ``start`` appears only
        when the batch reads from it, so "no new data" returns exactly ``start``.
    """
    end: KafkaOffsets = {}
    budget = max_records
    for tp in sorted(set(start) | set(target)):
        begin = start.get(tp, 0)
        stop = max(begin, target.get(tp, begin))
        if stop > begin and budget is not None:
            offsets = available.get(tp, ())
            lo = bisect.bisect_left(offsets, begin)
            hi = bisect.bisect_left(offsets, stop)
            if hi - lo > budget:
                stop = offsets[lo + budget - 1] + 1 if budget > 0 else begin
                budget = 0
            else:
                budget -= hi - lo
        if tp in start or stop > begin:
            end[tp] = stop
    return end
