"""Offset decisions of the Kafka source, without I/O: where a partition's next batch begins
(new partitions, offsets lost to retention) and where it ends (read limits).

Offsets are Kafka offsets (see :mod:`cdc_lakehouse.ingest.offsets`): per topic-partition the
next offset to read. Record counts are estimated as offset differences: Kafka offsets are
dense except for compaction and transaction markers, so a gap only makes a batch smaller.
"""

from __future__ import annotations

from collections.abc import Mapping

from cdc_lakehouse.ingest.offsets import KafkaOffsets
from cdc_lakehouse.kafka.client import MissingOffsetsError, TopicPartition

ON_MISSING = ("fail", "skip")
STARTING = ("earliest", "latest")


def resolve_begin(
    tp: TopicPartition, start: Mapping[TopicPartition, int], low: int, on_missing: str
) -> tuple[int, int]:
    """Where the next batch of ``tp`` begins, and how many offsets it skips.

    Args:
        tp: the topic-partition.
        start: the batch's start offsets (the checkpoint).
        low: the partition's first available offset (low watermark).
        on_missing: ``fail`` or ``skip`` (see :data:`ON_MISSING`).

    Returns:
        ``(begin, skipped)``: a partition without a checkpoint entry (new since the query
        started) begins at ``low`` (earliest), skipping nothing; one whose checkpoint offset is
        still available begins there; one whose checkpoint offset is below ``low`` (deleted by
        retention) begins at ``low`` with ``skip``, skipping ``low - start`` offsets.

    Raises:
        MissingOffsetsError: checkpoint offset below ``low`` and ``on_missing`` is ``fail``.
    """
    if tp not in start:
        return low, 0
    offset = start[tp]
    if offset >= low:
        return offset, 0
    if on_missing == "skip":
        return low, low - offset
    topic, partition = tp
    raise MissingOffsetsError(
        f"{topic} partition {partition}: the checkpoint continues at offset {offset} but the "
        f"broker's first offset is {low}: {low - offset} offset(s) were deleted (retention) "
        "before they were ingested. Rerun with --on-missing-offsets skip to continue from "
        f"offset {low}, or drop the table and its checkpoint to ingest from scratch."
    )


def plan_end_offsets(
    begin: Mapping[TopicPartition, int],
    target: Mapping[TopicPartition, int],
    start: Mapping[TopicPartition, int],
    max_records: int | None = None,
) -> KafkaOffsets:
    """End offsets of the next batch.

    Args:
        begin: per topic-partition where the batch begins (:func:`resolve_begin`).
        target: per topic-partition the end of the data (real end, see
            :func:`cdc_lakehouse.kafka.client.real_end_offsets`).
        start: the batch's start offsets (the checkpoint).
        max_records: cap on the batch's records (``None``: no cap); topic-partitions are
            filled in sorted order.

    Returns:
        Per topic-partition ``max(begin, min(target, begin + budget))``: offsets never move
        backwards. A partition absent from ``start`` appears only when the batch reads from
        it, so "no new data" returns exactly ``start``.
    """
    end: KafkaOffsets = {}
    budget = max_records
    for tp in sorted(set(begin) | set(target) | set(start)):
        first = begin.get(tp, start.get(tp, 0))
        stop = max(first, target.get(tp, first))
        if budget is not None:
            take = min(stop - first, budget)
            stop = first + take
            budget -= take
        if tp in start or stop > first:
            end[tp] = max(stop, start.get(tp, stop))
    return end
