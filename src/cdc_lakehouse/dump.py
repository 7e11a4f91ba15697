"""The topic dump: recorded Kafka records as JSON Lines, the offline source of the ingest job.

Format (contract of ``docs/architecture.md``): one Kafka record per line, a JSON object::

    {"topic": str, "partition": int, "offset": int, "timestamp": int,
     "key": str | null, "value": str | null}

- ``key`` / ``value``: UTF-8 text (stored as its UTF-8 bytes). Binary records use
  ``key_base64`` / ``value_base64`` (standard base64) instead; giving both forms is an error.
  A missing key / value is ``null``.
- ``timestamp``: epoch milliseconds (UTC), default 0. ``timestampType``: Kafka's timestamp type,
  0 (CreateTime, the default) or 1 (LogAppendTime).
- ``partition``: default 0. ``offset``: default "line order": the record's position among the
  records of the same topic-partition in the whole dump (files in sorted path order, then line
  order, counting every line of that topic-partition), starting at 0.
- ``headers`` (optional): a list of ``{"key": str, "value": str | null}`` or
  ``{"key": str, "value_base64": str}``, order kept.
- Blank lines are ignored; any other field name is an error (it is most likely a typo).

A dump is a file or a directory (every ``*.jsonl`` below it, recursively, sorted by path).
The same ``(topic, partition, offset)`` may occur more than once (overlapping dumps) if the
records are identical; later copies are dropped. Different records at the same offset are an
error. Errors are :class:`DumpError` with ``file:line`` in the message.

Reading is in two steps so that a Spark source can plan on the driver and read on executors:
:func:`build_index` scans every file (validation, offsets, duplicates) into a :class:`DumpIndex`
of :class:`FilePlan` s (per-file scans are cached by path, size and mtime); :func:`read_window`
finds the lines of a file that hold an offset range; :func:`read_file_records` re-reads those
lines and yields the records of the range that the file owns. :func:`load_dump` does it all for
callers that want the records (tests, small tools). The index keeps one small entry per record
in memory (about 150 bytes), fine for dumps of a few million records.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import json
from collections import OrderedDict
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cdc_lakehouse.settings import ConfigError

TopicPartition = tuple[str, int]
"""``(topic, partition)``."""

Header = tuple[str, bytes | None]
"""One Kafka header: ``(key, value bytes or None)``."""

ALLOWED_FIELDS = frozenset(
    {
        "topic",
        "partition",
        "offset",
        "timestamp",
        "timestampType",
        "key",
        "value",
        "key_base64",
        "value_base64",
        "headers",
    }
)

REGISTRY_FIX = "add a row to seeds/cdc_topics.csv or remove the records"


class DumpError(ConfigError):
    """The dump cannot be ingested; the message names the file and line and what to fix."""


@dataclass(frozen=True, slots=True)
class DumpLine:
    """One parsed dump line.

    Attributes:
        topic: Kafka topic.
        partition: Kafka partition (>= 0).
        offset: Kafka offset (>= 0), or ``None`` when the line has none (line order applies).
        timestamp_ms: record timestamp, epoch milliseconds UTC.
        timestamp_type: 0 CreateTime, 1 LogAppendTime.
        key: key bytes or ``None``.
        value: value bytes or ``None``.
        headers: headers in record order.
    """

    topic: str
    partition: int
    offset: int | None
    timestamp_ms: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]

    def digest(self) -> bytes:
        """16-byte hash of everything but the offset (equal records <=> equal digests)."""
        h = hashlib.blake2b(digest_size=16)
        for part in (self.key, self.value):
            h.update(b"\x00" if part is None else b"\x01" + len(part).to_bytes(8, "big") + part)
        h.update(f"{self.timestamp_ms}:{self.timestamp_type}:{len(self.headers)}".encode())
        for key, value in self.headers:
            encoded = key.encode("utf-8")
            h.update(len(encoded).to_bytes(8, "big") + encoded)
            h.update(b"\x00" if value is None else b"\x01" + len(value).to_bytes(8, "big") + value)
        return h.digest()


@dataclass(frozen=True, slots=True)
class DumpRecord:
    """One Kafka record of the dump with its resolved offset and where it came from.

    Attributes:
        topic, partition, offset: the record's Kafka coordinates (offset resolved, >= 0).
        timestamp_ms: epoch milliseconds UTC.
        timestamp_type: 0 CreateTime, 1 LogAppendTime.
        key, value: bytes or ``None``.
        headers: ``(key, value bytes or None)`` in record order.
        path: dump file; line: 1-based line number in it.
    """

    topic: str
    partition: int
    offset: int
    timestamp_ms: int
    timestamp_type: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...]
    path: str
    line: int


# --------------------------------------------------------------------------- parsing lines


def _fail(where: str, message: str) -> DumpError:
    return DumpError(f"{where}: {message}")


def _int_field(obj: Mapping[str, Any], name: str, where: str, *, minimum: int | None) -> int | None:
    if name not in obj:
        return None
    value = obj[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"{name!r} must be an integer, got {json.dumps(value)}.")
    if minimum is not None and value < minimum:
        raise _fail(where, f"{name!r} must be >= {minimum}, got {value}.")
    return value


def _bytes_field(obj: Mapping[str, Any], name: str, where: str) -> bytes | None:
    """``name`` as UTF-8 text or ``name_base64`` as base64, decoded to bytes (or ``None``)."""
    b64_name = f"{name}_base64"
    if name in obj and b64_name in obj:
        raise _fail(where, f"both {name!r} and {b64_name!r} are given; keep one.")
    if b64_name in obj:
        text = obj[b64_name]
        if text is None:
            return None
        if not isinstance(text, str):
            raise _fail(where, f"{b64_name!r} must be a base64 string or null.")
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _fail(where, f"{b64_name!r} is not valid base64 ({exc}).") from None
    text = obj.get(name)
    if text is None:
        return None
    if not isinstance(text, str):
        raise _fail(
            where,
            f"{name!r} must be a string or null (use {b64_name!r} for binary data), "
            f"got {json.dumps(text)[:60]}.",
        )
    return text.encode("utf-8")


def _headers(obj: Mapping[str, Any], where: str) -> tuple[Header, ...]:
    raw = obj.get("headers")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise _fail(where, '\'headers\' must be a list of {"key": ..., "value": ...} objects.')
    headers: list[Header] = []
    for i, item in enumerate(raw):
        here = f"{where}: headers[{i}]"
        if not isinstance(item, dict):
            raise DumpError(f"{here} must be an object with 'key' and 'value' or 'value_base64'.")
        unknown = set(item) - {"key", "value", "value_base64"}
        if unknown:
            raise DumpError(f"{here} has unknown field(s) {', '.join(sorted(unknown))}.")
        key = item.get("key")
        if not isinstance(key, str):
            raise DumpError(f"{here}: 'key' must be a string.")
        headers.append((key, _bytes_field(item, "value", here)))
    return tuple(headers)


def parse_line(text: str, where: str) -> DumpLine:
    """Parse one non-blank dump line.

    Args:
        text: the line (without or with its newline).
        where: ``"file:line"``, prefixed to error messages.

    Raises:
        DumpError: not JSON, not an object, unknown field, missing or ill-typed topic, bad
            partition / offset / timestamp, both text and base64 forms, bad base64, bad headers.
    """
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _fail(where, f"not valid JSON ({exc.msg} at column {exc.colno}).") from None
    if not isinstance(obj, dict):
        raise _fail(where, f"expected a JSON object (one Kafka record), got {type(obj).__name__}.")
    unknown = set(obj) - ALLOWED_FIELDS
    if unknown:
        raise _fail(
            where,
            f"unknown field(s) {', '.join(sorted(unknown))}; allowed: "
            f"{', '.join(sorted(ALLOWED_FIELDS))}.",
        )
    topic = obj.get("topic")
    if not isinstance(topic, str) or not topic:
        got = "missing" if "topic" not in obj else json.dumps(topic)[:60]
        raise _fail(where, f"'topic' must be a non-empty string ({got}).")
    partition = _int_field(obj, "partition", where, minimum=0)
    offset = _int_field(obj, "offset", where, minimum=0)
    timestamp = _int_field(obj, "timestamp", where, minimum=None)
    timestamp_type = _int_field(obj, "timestampType", where, minimum=0)
    if timestamp_type not in (None, 0, 1):
        raise _fail(where, "'timestampType' must be 0 (CreateTime) or 1 (LogAppendTime).")
    return DumpLine(
        topic=topic,
        partition=partition or 0,
        offset=offset,
        timestamp_ms=timestamp or 0,
        timestamp_type=timestamp_type or 0,
        key=_bytes_field(obj, "key", where),
        value=_bytes_field(obj, "value", where),
        headers=_headers(obj, where),
    )


def iter_lines(
    path: Path, first_line: int = 1, last_line: int | None = None
) -> Iterator[tuple[int, DumpLine]]:
    """Yield ``(line number, parsed line)`` for every non-blank line of the dump file ``path``
    (only lines ``first_line`` to ``last_line``, 1-based, inclusive; the others are not parsed).

    Raises:
        DumpError: a line is not UTF-8 or does not parse (see :func:`parse_line`).
    """
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            if line_no < first_line:
                continue
            if last_line is not None and line_no > last_line:
                break
            where = f"{path}:{line_no}"
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise _fail(where, "not UTF-8 text.") from None
            if line_no == 1:
                text = text.removeprefix("\ufeff")
            if not text.strip():
                continue
            yield line_no, parse_line(text, where)


# --------------------------------------------------------------------------- files


def dump_files(path: Path | str) -> list[Path]:
    """The dump files of ``path``: the file itself, or every ``*.jsonl`` below a directory
    (recursively), sorted by path.

    Raises:
        DumpError: ``path`` does not exist, or a directory holds no ``*.jsonl`` file.
    """
    dump = Path(path)
    if dump.is_file():
        return [dump]
    if dump.is_dir():
        files = sorted(p for p in dump.rglob("*.jsonl") if p.is_file())
        if not files:
            raise DumpError(f"--dump {dump}: the directory holds no *.jsonl file.")
        return files
    raise DumpError(f"--dump {dump}: no such file or directory.")


@dataclass(frozen=True, slots=True)
class FileScan:
    """What one pass over a dump file learned (cached by path, size and mtime).

    Attributes:
        path: the file. size: bytes. mtime_ns: modification time, ns since the epoch.
        topic_partitions: the distinct ``(topic, partition)`` pairs, in order of appearance.
        entries: one per record, in line order: ``(index into topic_partitions, offset or -1
            when omitted, digest of the content, line number)``.
    """

    path: Path
    size: int
    mtime_ns: int
    topic_partitions: tuple[TopicPartition, ...]
    entries: tuple[tuple[int, int, bytes, int], ...]


_SCAN_CACHE: OrderedDict[tuple[str, int, int], FileScan] = OrderedDict()
_SCAN_CACHE_LIMIT = 4096  # files


def scan_file(path: Path) -> FileScan:
    """Parse every line of ``path`` (see :class:`FileScan`); repeated calls on an unchanged file
    (same size and mtime) return the cached scan.

    Raises:
        DumpError: see :func:`iter_lines`.
    """
    stat = path.stat()
    cache_key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    cached = _SCAN_CACHE.get(cache_key)
    if cached is not None:
        _SCAN_CACHE.move_to_end(cache_key)
        return cached
    tp_ids: dict[TopicPartition, int] = {}
    entries: list[tuple[int, int, bytes, int]] = []
    for line_no, rec in iter_lines(path):
        tp = (rec.topic, rec.partition)
        tp_id = tp_ids.setdefault(tp, len(tp_ids))
        entries.append((tp_id, -1 if rec.offset is None else rec.offset, rec.digest(), line_no))
    scan = FileScan(path, stat.st_size, stat.st_mtime_ns, tuple(tp_ids), tuple(entries))
    _SCAN_CACHE[cache_key] = scan
    while len(_SCAN_CACHE) > _SCAN_CACHE_LIMIT:
        _SCAN_CACHE.popitem(last=False)
    return scan


# --------------------------------------------------------------------------- index


@dataclass(frozen=True, slots=True)
class FilePlan:
    """How to read one dump file so that its records get the offsets the index gave them.

    Attributes:
        path: the file (as a string, so that the plan pickles small). size, mtime_ns: what the
            file looked like when indexed (a reader refuses a changed file).
        base: per topic-partition of this file, how many records of it precede this file in
            the dump (the start of its line-order offsets).
        bounds: per topic-partition, ``(min, max)`` offset in this file.
        skip: per topic-partition, sorted ``[lo, hi)`` offset ranges whose first copy is in an
            earlier file (identical duplicates, dropped here).
    """

    path: str
    size: int
    mtime_ns: int
    base: dict[TopicPartition, int]
    bounds: dict[TopicPartition, tuple[int, int]]
    skip: dict[TopicPartition, list[tuple[int, int]]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DumpIndex:
    """The validated dump.

    Attributes:
        files: one :class:`FilePlan` per dump file, in dump order.
        offsets: per topic-partition, its distinct offsets, sorted ascending.
        lines: number of records (lines) in the dump, duplicates included.
    """

    files: tuple[FilePlan, ...]
    offsets: dict[TopicPartition, list[int]]
    lines: int

    @property
    def records(self) -> int:
        """Number of distinct records (identical duplicates counted once)."""
        return sum(len(v) for v in self.offsets.values())

    @property
    def end_offsets(self) -> dict[TopicPartition, int]:
        """Per topic-partition, the highest offset + 1 (Kafka's "next offset")."""
        return {tp: offs[-1] + 1 for tp, offs in self.offsets.items() if offs}


def _ranges(offsets: list[int]) -> list[tuple[int, int]]:
    """Sorted offsets -> merged ``[lo, hi)`` ranges."""
    ranges: list[tuple[int, int]] = []
    for off in sorted(set(offsets)):
        if ranges and ranges[-1][1] == off:
            ranges[-1] = (ranges[-1][0], off + 1)
        else:
            ranges.append((off, off + 1))
    return ranges


def build_index(
    path: Path | str,
    topics: Collection[str] | None = None,
    *,
    registry_label: str = "the topic registry",
) -> DumpIndex:
    """Scan and validate the whole dump at ``path`` (a file or a directory).

    Args:
        path: the dump (see :func:`dump_files`).
        topics: the topics of the registry; ``None`` accepts any topic.
        registry_label: how to name the registry in messages (e.g. its path).

    Raises:
        DumpError: path missing, a malformed line, a topic not in ``topics``, or two different
            records at the same ``(topic, partition, offset)`` (both locations given).
    """
    files = dump_files(path)
    allowed = None if topics is None else frozenset(topics)
    counts: dict[TopicPartition, int] = {}
    # (topic, partition) -> offset -> (digest, file index, line) of the first copy
    first: dict[TopicPartition, dict[int, tuple[bytes, int, int]]] = {}
    plans: list[FilePlan] = []
    lines = 0
    for file_idx, file_path in enumerate(files):
        scan = scan_file(file_path)
        if allowed is not None:
            for tp_id, _off, _digest, line_no in scan.entries:
                topic = scan.topic_partitions[tp_id][0]
                if topic not in allowed:
                    raise DumpError(
                        f"{file_path}:{line_no}: topic {topic!r} is not in {registry_label}: "
                        f"{REGISTRY_FIX}."
                    )
        base = {tp: counts.get(tp, 0) for tp in scan.topic_partitions}
        running = dict(base)
        bounds: dict[TopicPartition, tuple[int, int]] = {}
        skipped: dict[TopicPartition, list[int]] = {}
        for tp_id, explicit, digest, line_no in scan.entries:
            tp = scan.topic_partitions[tp_id]
            offset = explicit if explicit >= 0 else running[tp]
            running[tp] += 1
            lo_hi = bounds.get(tp, (offset, offset))
            bounds[tp] = (min(lo_hi[0], offset), max(lo_hi[1], offset))
            seen = first.setdefault(tp, {})
            previous = seen.get(offset)
            if previous is None:
                seen[offset] = (digest, file_idx, line_no)
                continue
            prev_digest, prev_file, prev_line = previous
            if prev_digest != digest:
                raise DumpError(
                    f"{file_path}:{line_no}: {tp[0]} partition {tp[1]} offset {offset} is also at "
                    f"{files[prev_file]}:{prev_line} with different content; one offset holds "
                    "one record: fix or remove one of them."
                )
            if prev_file != file_idx:
                skipped.setdefault(tp, []).append(offset)
        counts.update(running)
        lines += len(scan.entries)
        plans.append(
            FilePlan(
                path=str(file_path),
                size=scan.size,
                mtime_ns=scan.mtime_ns,
                base=base,
                bounds=bounds,
                skip={tp: _ranges(offs) for tp, offs in skipped.items()},
            )
        )
    offsets = {tp: sorted(by_offset) for tp, by_offset in sorted(first.items())}
    return DumpIndex(files=tuple(plans), offsets=offsets, lines=lines)


# --------------------------------------------------------------------------- reading


def _in_ranges(ranges: list[tuple[int, int]], offset: int) -> bool:
    i = bisect.bisect_right(ranges, (offset, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= offset < ranges[i][1]


@dataclass(frozen=True, slots=True)
class ReadWindow:
    """The lines of one file that hold a batch's records, so a reader parses only those.

    Attributes:
        first_line, last_line: 1-based, inclusive.
        running: per topic-partition of the file, how many of its records precede
            ``first_line`` in the dump (line-order offsets continue from there).
    """

    first_line: int
    last_line: int
    running: dict[TopicPartition, int]


def _changed(path: Path) -> DumpError:
    return DumpError(
        f"{path}: the dump file changed or vanished while it was being ingested; run the "
        "ingest again (records already written stay exactly once)."
    )


def _check_unchanged(plan: FilePlan) -> None:
    path = Path(plan.path)
    try:
        stat = path.stat()
    except OSError:
        raise _changed(path) from None
    if (stat.st_size, stat.st_mtime_ns) != (plan.size, plan.mtime_ns):
        raise _changed(path)


def read_window(
    plan: FilePlan,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
) -> ReadWindow | None:
    """Where in ``plan``'s file the records with ``start[tp] <= offset < end[tp]`` are, from
    the (cached) scan of the file; ``None`` if there are none.

    Raises:
        DumpError: the file changed since it was indexed.
    """
    _check_unchanged(plan)
    scan = scan_file(Path(plan.path))
    if (scan.size, scan.mtime_ns) != (plan.size, plan.mtime_ns):
        raise _changed(Path(plan.path))
    running = dict(plan.base)
    first: tuple[int, dict[TopicPartition, int]] | None = None
    last = 0
    for tp_id, explicit, _digest, line_no in scan.entries:
        tp = scan.topic_partitions[tp_id]
        offset = explicit if explicit >= 0 else running[tp]
        stop = end.get(tp)
        if stop is not None and start.get(tp, 0) <= offset < stop:
            if first is None:
                first = (line_no, dict(running))
            last = line_no
        running[tp] += 1
    return None if first is None else ReadWindow(first[0], last, first[1])


def read_file_records(
    plan: FilePlan,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    window: ReadWindow | None = None,
) -> Iterator[DumpRecord]:
    """Yield the records of ``plan``'s file with ``start[tp] <= offset < end[tp]`` that the file
    owns (first copies only), in line order. Topic-partitions missing from ``end`` yield
    nothing; missing from ``start`` means 0. With ``window`` (see :func:`read_window`) only
    those lines are parsed.

    Raises:
        DumpError: the file changed (size or mtime) since it was indexed, or a line is malformed.
    """
    _check_unchanged(plan)
    path = Path(plan.path)
    running = dict(window.running if window is not None else plan.base)
    lines = (
        iter_lines(path)
        if window is None
        else iter_lines(path, window.first_line, window.last_line)
    )
    seen: set[tuple[TopicPartition, int]] = set()
    for line_no, rec in lines:
        tp = (rec.topic, rec.partition)
        if tp not in running:  # cannot happen for an unchanged file; be safe
            running[tp] = 0
        offset = rec.offset if rec.offset is not None else running[tp]
        running[tp] += 1
        stop = end.get(tp)
        if stop is None or not (start.get(tp, 0) <= offset < stop):
            continue
        skip = plan.skip.get(tp)
        if skip and _in_ranges(skip, offset):
            continue
        if (tp, offset) in seen:
            continue
        seen.add((tp, offset))
        yield DumpRecord(
            topic=rec.topic,
            partition=rec.partition,
            offset=offset,
            timestamp_ms=rec.timestamp_ms,
            timestamp_type=rec.timestamp_type,
            key=rec.key,
            value=rec.value,
            headers=rec.headers,
            path=str(path),
            line=line_no,
        )


def load_dump(
    path: Path | str,
    topics: Collection[str] | None = None,
    *,
    registry_label: str = "the topic registry",
) -> list[DumpRecord]:
    """Every distinct record of the dump, validated (see :func:`build_index`), in dump order.

    Meant for tests and small tools; the ingest job streams instead.
    """
    index = build_index(path, topics, registry_label=registry_label)
    records: list[DumpRecord] = []
    for plan in index.files:
        end = {tp: hi + 1 for tp, (_lo, hi) in plan.bounds.items()}
        records.extend(read_file_records(plan, {}, end))
    return records
