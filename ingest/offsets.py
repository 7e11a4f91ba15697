"""Kafka offsets as Structured Streaming source offsets, and per-batch read limits.

A source offset is the JSON shape of Spark's own Kafka source: ``{"<topic>": {"<partition>":
<next offset>}}``, i.e. per topic-partition the offset of the next record to read (the last
record read + 1). Topics and partitions are written in sorted order so that equal offsets
serialize to equal JSON (Spark compares offsets by their JSON text).
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from ingest.dump import TopicPartition

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


def read_offset_log(checkpoint: Path, batch_id: int) -> KafkaOffsets | None:
    """End offsets of batch ``batch_id`` from a checkpoint's ``offsets`` log, or ``None`` if
    the entry does not exist or does not hold one Kafka-shaped source offset.

    An entry is ``v1``, a metadata JSON line, then one JSON line per source (this job has one).
    """
    path = checkpoint / "offsets" / str(batch_id)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    if len(lines) != 3:
        return None
    try:
        return from_json_offsets(json.loads(lines[2]))
    except (ValueError, TypeError, AttributeError):
        return None


def batch_ranges(checkpoint: Path, batch_id: int) -> tuple[KafkaOffsets, KafkaOffsets] | None:
    """``(start, end)`` offsets of batch ``batch_id`` from the checkpoint's offsets log (start
    ``{}`` for batch 0), or ``None`` when the entries cannot be read."""
    end = read_offset_log(checkpoint, batch_id)
    if end is None:
        return None
    start = read_offset_log(checkpoint, batch_id - 1) if batch_id > 0 else {}
    return (start, end) if start is not None else None


def _last_entry(checkpoint: Path, log: str) -> int | None:
    directory = checkpoint / log
    if not directory.is_dir():
        return None
    ids = sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())
    return ids[-1] if ids else None


def last_committed_offsets(checkpoint: Path) -> KafkaOffsets | None:
    """End offsets of the checkpoint's last committed batch (where the next run continues), or
    ``None`` when nothing is committed."""
    last = _last_entry(checkpoint, "commits")
    return read_offset_log(checkpoint, last) if last is not None else None


def last_planned_offsets(checkpoint: Path) -> KafkaOffsets | None:
    """End offsets of the checkpoint's last planned batch (committed or not: a rerun replays
    it first), or ``None`` when no batch was planned."""
    last = _last_entry(checkpoint, "offsets")
    return read_offset_log(checkpoint, last) if last is not None else None
