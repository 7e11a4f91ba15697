"""The topic dump: recorded Kafka records as JSON Lines, the offline source of the ingest job.

Format (contract of ``docs/architecture.md``): one Kafka record per line, a JSON object::

    {"topic": str, "partition": int, "offset": int, "timestamp": int,
     "key": str | null, "value": str | null}

- ``key`` / ``value``: UTF-8 text (stored as its UTF-8 bytes). Binary records use
  ``key_base64`` / ``value_base64`` (standard base64) instead; giving both forms is an error.
  A missing key / value is ``null``.
- ``timestamp``: epoch milliseconds (UTC), default 0, within +-9,223,372,036,854,775 (a
  Spark timestamp: 64-bit microseconds). ``timestampType``: Kafka's timestamp type, 0
  (CreateTime, the default) or 1 (LogAppendTime).
- ``partition``: default 0, at most 2,147,483,647 (Kafka's 32-bit partition). ``offset``: at
  most 9,223,372,036,854,775,807 (Kafka's 64-bit signed offset); default "line order": the
  record's position among the records of the same topic-partition in the whole dump (files in
  sorted path order, then line order, counting every line of that topic-partition), starting
  at 0.
- ``headers`` (optional): a list of ``{"key": str, "value": str | null}`` or
  ``{"key": str, "value_base64": str}``, order kept.
- Blank lines are ignored; any other field name is an error (it is most likely a typo).

A dump is a file or a directory (every ``*.jsonl`` below it, recursively, sorted by path).
The same ``(topic, partition, offset)`` may occur more than once (overlapping dumps) if the
records are identical; later copies are dropped. Different records at the same offset are an
error. Errors are :class:`DumpError` with ``file:line`` in the message.

Reading is in two steps so that a Spark source can plan on the driver and read on executors:
:func:`build_index` scans every file (validation, offsets, duplicates) into a :class:`DumpIndex`
of :class:`FilePlan` s (per-file scans are cached by path, size and mtime); :func:`read_windows`
finds the lines (and bytes) of a file that hold an offset range, cut into windows of at most N
records so that several tasks share a big file; :func:`read_plain_table` (Arrow) or
:func:`read_file_records` (line by line) re-reads a window and returns the records of the range
that the file owns. :func:`load_dump` does it all for callers that want the records (tests,
small tools).

A file whose lines are all plain records (the fields ``topic``, ``partition``, ``offset``,
``timestamp``, ``timestampType``, ``key``, ``value`` only; an explicit offset on every line; no
blank line) is scanned and read with Arrow's JSON reader (C++, multi-threaded), about 15x faster
than line by line in Python; any other file, or a plain-looking file Arrow rejects, is parsed
line by line, which also gives the ``file:line`` errors. Both paths accept the same records and
give the same rows. The index keeps arrays of a few numbers per record (about 40 bytes), fine
for dumps of tens of millions of records.
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

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from cdc_lakehouse.runtime.settings import ConfigError

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

MAX_PARTITION = 2**31 - 1
"""The highest Kafka partition (a 32-bit signed integer; bronze's ``partition`` is ``int``)."""
MAX_OFFSET = 2**63 - 1
"""The highest Kafka offset (a 64-bit signed integer; bronze's ``offset`` is ``bigint``)."""
MAX_TIMESTAMP_MS = (2**63 - 1) // 1000
"""The largest ``timestamp`` magnitude, epoch ms: bronze's ``timestamp`` holds microseconds in
64 bits."""


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
        h = hashlib.blake2b(digest_size=DIGEST_BYTES)
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


def _int_field(
    obj: Mapping[str, Any],
    name: str,
    where: str,
    *,
    minimum: int,
    maximum: int | None = None,
    kind: str = "",
) -> int | None:
    """The integer field ``name`` of ``obj`` (``None`` when absent), within ``minimum`` and
    ``maximum`` (``None``: unbounded); ``kind`` says what the bounds are in the message (e.g.
    "a Kafka offset is a 64-bit signed integer").

    Raises:
        DumpError: not an integer, or out of bounds (one line: ``file:line``, the field, the
            bounds, the value cut to 40 digits).
    """
    if name not in obj:
        return None
    value = obj[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"{name!r} must be an integer, got {json.dumps(value)[:60]}.")
    if value < minimum:
        raise _fail(where, f"{name!r} must be >= {minimum}, got {_digits(value)}.")
    if maximum is not None and value > maximum:
        raise _fail(where, f"{name!r} must be at most {maximum} ({kind}), got {_digits(value)}.")
    return value


def _digits(value: int) -> str:
    """``value`` in decimal, cut to its first 40 digits (``...`` and the digit count after)."""
    text = str(value)
    digits = len(text.lstrip("-"))
    return text if digits <= 40 else f"{text[:40]}... ({digits} digits)"


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
    partition = _int_field(
        obj, "partition", where, minimum=0, maximum=MAX_PARTITION,
        kind="a Kafka partition is a 32-bit signed integer",
    )  # fmt: skip
    offset = _int_field(
        obj, "offset", where, minimum=0, maximum=MAX_OFFSET,
        kind="a Kafka offset is a 64-bit signed integer",
    )  # fmt: skip
    timestamp = _int_field(
        obj, "timestamp", where, minimum=-MAX_TIMESTAMP_MS, maximum=MAX_TIMESTAMP_MS,
        kind="epoch milliseconds that fit a 64-bit microsecond timestamp",
    )  # fmt: skip
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
    path: Path,
    first_line: int = 1,
    last_line: int | None = None,
    *,
    first_byte: int = 0,
) -> Iterator[tuple[int, int, int, DumpLine]]:
    """Yield ``(line number, first byte, byte just past the line, parsed line)`` for every
    non-blank line of
    the dump file ``path`` (only lines ``first_line`` to ``last_line``, 1-based, inclusive; the
    others are not parsed). ``first_byte``: where line ``first_line`` starts, when known (the
    lines before it are then not read at all).

    Raises:
        DumpError: a line is not UTF-8 or does not parse (see :func:`parse_line`).
    """
    with path.open("rb") as handle:
        position = first_byte
        if first_byte:
            handle.seek(first_byte)
        for line_no, raw in enumerate(handle, start=first_line if first_byte else 1):
            start = position
            position += len(raw)
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
            yield line_no, start, position, parse_line(text, where)


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


@dataclass(frozen=True, slots=True, eq=False)
class FileScan:
    """What one pass over a dump file learned (cached by path, size and mtime), one array
    element per record (non-blank line), in line order.

    Attributes:
        path: the file. size: bytes. mtime_ns: modification time, ns since the epoch.
        topic_partitions: the distinct ``(topic, partition)`` pairs, in order of appearance.
        tp_ids: int32, index into ``topic_partitions``.
        offsets: int64, the line's ``offset`` or -1 when it has none.
        line_nos: int64, 1-based line numbers.
        starts, ends: int64, byte offsets of the line's first byte and just past its newline.
        plain: every line is a plain record (only ``topic``, ``partition``, ``offset``,
            ``timestamp``, ``timestampType``, ``key``, ``value``; an explicit offset; no blank
            line), so the file can be read with Arrow's JSON reader (:func:`read_plain_table`).
        digests: the content digest per record (:meth:`DumpLine.digest`), computed when the
            file was parsed line by line; ``None`` for a plain file (see :func:`record_digest`).
    """

    path: Path
    size: int
    mtime_ns: int
    topic_partitions: tuple[TopicPartition, ...]
    tp_ids: np.ndarray
    offsets: np.ndarray
    line_nos: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    plain: bool
    digests: tuple[bytes, ...] | None

    @property
    def records(self) -> int:
        """Records (non-blank lines) in the file."""
        return len(self.tp_ids)


DIGEST_BYTES = 16
"""Length of a record's content digest (:meth:`DumpLine.digest`)."""
_SCAN_CACHE: OrderedDict[tuple[str, int, int], FileScan] = OrderedDict()
_SCAN_CACHE_LIMIT = 4096  # files
_PLAIN_FIELDS = ("topic", "partition", "offset", "timestamp", "timestampType", "key", "value")
_PLAIN_BLOCK_BYTES = 16 << 20
_NEWLINE_CHUNK_BYTES = 64 << 20


def _plain_schema() -> pa.Schema:
    types = {"topic": pa.string(), "key": pa.string(), "value": pa.string()}
    return pa.schema([(name, types.get(name, pa.int64())) for name in _PLAIN_FIELDS])


def _parse_options() -> pj.ParseOptions:
    return pj.ParseOptions(explicit_schema=_plain_schema(), unexpected_field_behavior="error")


def _line_bounds(path: Path, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` byte offsets of every line of ``path`` (a last line without a newline
    included)."""

    newlines: list[np.ndarray] = []
    with path.open("rb") as handle:
        base = 0
        while chunk := handle.read(_NEWLINE_CHUNK_BYTES):
            newlines.append(np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10) + base)
            base += len(chunk)
    ends = np.concatenate([*newlines, np.empty(0, np.int64)]).astype(np.int64) + 1
    if size and (not len(ends) or ends[-1] < size):
        ends = np.append(ends, np.int64(size))
    starts = np.concatenate([np.zeros(1, np.int64), ends[:-1]]) if len(ends) else ends
    return starts, ends


def _plain_checks(batch: pa.RecordBatch) -> bool:
    """Do the Arrow-parsed rows hold what :func:`parse_line` would accept, with an explicit
    offset on every row? (Else the file is parsed line by line, which says what is wrong.)

    Raises:
        pyarrow.ArrowInvalid: a string is not valid UTF-8.
    """
    if not len(batch):
        return True
    topic, offset = batch.column("topic"), batch.column("offset")
    partition, kind = batch.column("partition"), batch.column("timestampType")
    if topic.null_count or offset.null_count:
        return False
    if pc.min(pc.utf8_length(topic)).as_py() == 0 or pc.min(offset).as_py() < 0:
        return False
    if partition.null_count < len(batch):
        low, high = pc.min_max(partition).values()
        if low.as_py() < 0 or high.as_py() > MAX_PARTITION:
            return False
    stamps = batch.column("timestamp")
    if stamps.null_count < len(batch):
        low, high = pc.min_max(stamps).values()
        if low.as_py() < -MAX_TIMESTAMP_MS or high.as_py() > MAX_TIMESTAMP_MS:
            return False
    kinds = kind.drop_null()
    if len(kinds) and not pc.all(pc.is_in(kinds, value_set=pa.array([0, 1], pa.int64()))).as_py():
        return False
    for name in ("topic", "key", "value"):
        batch.column(name).validate(full=True)
    return True


def _scan_plain(path: Path, size: int, mtime_ns: int) -> FileScan | None:
    """Scan ``path`` with Arrow's JSON reader; ``None`` when the file is not plain (see
    :attr:`FileScan.plain`) or Arrow rejects it."""

    starts, ends = _line_bounds(path, size)
    tp_index: dict[TopicPartition, int] = {}
    tp_ids: list[np.ndarray] = []
    offsets: list[np.ndarray] = []
    rows = 0
    try:
        reader = pj.open_json(
            path,
            read_options=pj.ReadOptions(block_size=_PLAIN_BLOCK_BYTES),
            parse_options=_parse_options(),
        )
        for batch in reader:
            if not _plain_checks(batch):
                return None
            topics = batch.column("topic").dictionary_encode()
            names = topics.dictionary.to_pylist()
            partitions = batch.column("partition").fill_null(0).to_numpy(zero_copy_only=False)
            topic_codes = topics.indices.to_numpy(zero_copy_only=False).astype(np.int64)
            pairs, first, inverse = np.unique(
                np.stack([topic_codes, partitions]), axis=1, return_index=True, return_inverse=True
            )
            local = np.empty(pairs.shape[1], np.int32)
            for j in np.argsort(first):
                tp = (names[int(pairs[0, j])], int(pairs[1, j]))
                local[j] = tp_index.setdefault(tp, len(tp_index))
            tp_ids.append(local[inverse.reshape(-1)])
            offsets.append(batch.column("offset").to_numpy(zero_copy_only=False).astype(np.int64))
            rows += len(batch)
    except (pa.ArrowException, ValueError):
        return None
    if rows != len(starts):
        return None  # blank lines, or more than one record on a line
    return FileScan(
        path=path,
        size=size,
        mtime_ns=mtime_ns,
        topic_partitions=tuple(tp_index),
        tp_ids=np.concatenate([*tp_ids, np.empty(0, np.int32)]).astype(np.int32),
        offsets=np.concatenate([*offsets, np.empty(0, np.int64)]),
        line_nos=np.arange(1, rows + 1, dtype=np.int64),
        starts=starts,
        ends=ends,
        plain=True,
        digests=None,
    )


def _scan_lines(path: Path, size: int, mtime_ns: int) -> FileScan:
    """Scan ``path`` line by line with :func:`parse_line` (any valid dump file).

    Raises:
        DumpError: see :func:`iter_lines`.
    """

    tp_index: dict[TopicPartition, int] = {}
    tp_ids: list[int] = []
    offsets: list[int] = []
    line_nos: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    digests: list[bytes] = []
    for line_no, start, end, rec in iter_lines(path):
        tp_ids.append(tp_index.setdefault((rec.topic, rec.partition), len(tp_index)))
        offsets.append(-1 if rec.offset is None else rec.offset)
        line_nos.append(line_no)
        starts.append(start)
        ends.append(end)
        digests.append(rec.digest())
    return FileScan(
        path=path,
        size=size,
        mtime_ns=mtime_ns,
        topic_partitions=tuple(tp_index),
        tp_ids=np.array(tp_ids, np.int32),
        offsets=np.array(offsets, np.int64),
        line_nos=np.array(line_nos, np.int64),
        starts=np.array(starts, np.int64),
        ends=np.array(ends, np.int64),
        plain=False,
        digests=tuple(digests),
    )


def _scan_file_name(path: Path, size: int, mtime_ns: int) -> str:
    key = f"{path.resolve()}\0{size}\0{mtime_ns}".encode()
    return hashlib.blake2b(key, digest_size=16).hexdigest() + ".npz"


def save_scan(scan: FileScan, directory: Path) -> Path:
    """Write ``scan`` into ``directory`` (created if missing) as one ``.npz`` file named by the
    file's resolved path, size and mtime, for another process (the ingest's Spark planner)
    to load with :func:`load_scan` instead of scanning again. Returns the file written."""
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / _scan_file_name(scan.path, scan.size, scan.mtime_ns)
    arrays = {
        "topics": np.array([t for t, _p in scan.topic_partitions], dtype=np.str_),
        "partitions": np.array([p for _t, p in scan.topic_partitions], dtype=np.int64),
        "tp_ids": scan.tp_ids,
        "offsets": scan.offsets,
        "line_nos": scan.line_nos,
        "starts": scan.starts,
        "ends": scan.ends,
        "plain": np.array(scan.plain),
    }
    if scan.digests is not None:
        arrays["digests"] = np.frombuffer(b"".join(scan.digests), dtype=np.uint8)
    partial = target.with_suffix(".partial.npz")
    with partial.open("wb") as handle:
        # numpy's stub types **kwds as if a key could be its allow_pickle flag
        np.savez(handle, **arrays)  # type: ignore[arg-type]
    partial.replace(target)
    return target


def load_scan(path: Path, directory: Path) -> FileScan | None:
    """The scan of ``path`` that :func:`save_scan` wrote into ``directory``, or ``None`` when
    there is none for the file's current size and mtime (or it cannot be read)."""
    stat = path.stat()
    source = directory / _scan_file_name(path, stat.st_size, stat.st_mtime_ns)
    try:
        with np.load(source, allow_pickle=False) as saved:
            digests = None
            if "digests" in saved.files:
                flat = saved["digests"].tobytes()
                digests = tuple(
                    flat[i : i + DIGEST_BYTES] for i in range(0, len(flat), DIGEST_BYTES)
                )
            return FileScan(
                path=path,
                size=stat.st_size,
                mtime_ns=stat.st_mtime_ns,
                topic_partitions=tuple(
                    (str(t), int(p))
                    for t, p in zip(saved["topics"], saved["partitions"], strict=True)
                ),
                tp_ids=saved["tp_ids"],
                offsets=saved["offsets"],
                line_nos=saved["line_nos"],
                starts=saved["starts"],
                ends=saved["ends"],
                plain=bool(saved["plain"]),
                digests=digests,
            )
    except (OSError, ValueError, KeyError):
        return None


def scan_file(path: Path, cache_dir: Path | None = None) -> FileScan:
    """Scan every line of ``path`` (see :class:`FileScan`): with Arrow's JSON reader when the
    file is plain, else line by line. Repeated calls on an unchanged file (same size and mtime)
    return the cached scan. With ``cache_dir``, a scan saved there by another process
    (:func:`save_scan`) is loaded instead of scanning, and a new scan is saved there.

    Raises:
        DumpError: see :func:`iter_lines`.
    """
    stat = path.stat()
    cache_key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    cached = _SCAN_CACHE.get(cache_key)
    if cached is not None:
        _SCAN_CACHE.move_to_end(cache_key)
        return cached
    scan = load_scan(path, cache_dir) if cache_dir is not None else None
    if scan is None:
        scan = _scan_plain(path, stat.st_size, stat.st_mtime_ns) or _scan_lines(
            path, stat.st_size, stat.st_mtime_ns
        )
        if cache_dir is not None:
            save_scan(scan, cache_dir)
    _SCAN_CACHE[cache_key] = scan
    while len(_SCAN_CACHE) > _SCAN_CACHE_LIMIT:
        _SCAN_CACHE.popitem(last=False)
    return scan


def record_digest(scan: FileScan, row: int) -> bytes:
    """The content digest of record ``row`` of ``scan`` (see :meth:`DumpLine.digest`); a plain
    file's line is re-read and parsed for it (only offsets seen twice need one).

    Raises:
        DumpError: the line no longer parses (the file changed).
    """
    if scan.digests is not None:
        return scan.digests[row]
    line_no = int(scan.line_nos[row])
    lines = iter_lines(scan.path, line_no, line_no, first_byte=int(scan.starts[row]))
    return next(line for _no, _start, _end, line in lines).digest()


def _resolved_offsets(scan: FileScan, base: Mapping[TopicPartition, int]) -> np.ndarray:
    """Every record's offset: its explicit one, or its line-order offset (``base[tp]`` plus its
    position among the file's records of the same topic-partition)."""

    resolved = scan.offsets.copy()
    missing = resolved < 0
    if missing.any():
        for i, tp in enumerate(scan.topic_partitions):
            rows = np.flatnonzero(scan.tp_ids == i)
            order = base[tp] + np.arange(len(rows), dtype=np.int64)
            take = missing[rows]
            resolved[rows[take]] = order[take]
    return resolved


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
        plain: read with Arrow's JSON reader (:attr:`FileScan.plain`, and no offset twice in the
            file); else line by line.
    """

    path: str
    size: int
    mtime_ns: int
    base: dict[TopicPartition, int]
    bounds: dict[TopicPartition, tuple[int, int]]
    skip: dict[TopicPartition, list[tuple[int, int]]] = field(default_factory=dict)
    plain: bool = False


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


@dataclass(frozen=True, slots=True)
class _FirstCopies:
    """The offsets of one topic-partition whose first copy is in one file."""

    file_idx: int
    offsets: np.ndarray  # sorted, distinct
    rows: np.ndarray  # the record (row of the file's scan) of each offset


def _conflict(
    tp: TopicPartition, offset: int, here: tuple[Path, int], there: tuple[Path, int]
) -> DumpError:
    return DumpError(
        f"{here[0]}:{here[1]}: {tp[0]} partition {tp[1]} offset {offset} is also at "
        f"{there[0]}:{there[1]} with different content; one offset holds one record: fix or "
        "remove one of them."
    )


def build_index(
    path: Path | str,
    topics: Collection[str] | None = None,
    *,
    registry_label: str = "the topic registry",
    scan_cache_dir: Path | None = None,
) -> DumpIndex:
    """Scan and validate the whole dump at ``path`` (a file or a directory).

    Args:
        path: the dump (see :func:`dump_files`).
        topics: the topics of the registry; ``None`` accepts any topic.
        registry_label: how to name the registry in messages (e.g. its path).
        scan_cache_dir: share the per-file scans with other processes through this directory
            (see :func:`scan_file`).

    Raises:
        DumpError: path missing, a malformed line, a topic not in ``topics``, or two different
            records at the same ``(topic, partition, offset)`` (both locations given).
    """

    files = dump_files(path)
    allowed = None if topics is None else frozenset(topics)
    counts: dict[TopicPartition, int] = {}
    firsts: dict[TopicPartition, list[_FirstCopies]] = {}
    scans: list[FileScan] = []
    plans: list[FilePlan] = []
    lines = 0
    for file_idx, file_path in enumerate(files):
        scan = scan_file(file_path, scan_cache_dir)
        scans.append(scan)
        if allowed is not None:
            bad = [i for i, (topic, _p) in enumerate(scan.topic_partitions) if topic not in allowed]
            if bad:
                row = int(np.flatnonzero(np.isin(scan.tp_ids, bad))[0])
                topic = scan.topic_partitions[int(scan.tp_ids[row])][0]
                raise DumpError(
                    f"{file_path}:{int(scan.line_nos[row])}: topic {topic!r} is not in "
                    f"{registry_label}: {REGISTRY_FIX}."
                )
        base = {tp: counts.get(tp, 0) for tp in scan.topic_partitions}
        resolved = _resolved_offsets(scan, base)
        bounds: dict[TopicPartition, tuple[int, int]] = {}
        skipped: dict[TopicPartition, list[int]] = {}
        repeats_in_file = False
        for i, tp in enumerate(scan.topic_partitions):
            rows = np.flatnonzero(scan.tp_ids == i)
            offs = resolved[rows]
            counts[tp] = base[tp] + len(rows)
            bounds[tp] = (int(offs.min()), int(offs.max()))
            distinct, first_at = np.unique(offs, return_index=True)
            first_rows = rows[first_at]
            if len(distinct) < len(offs):
                repeats_in_file = True
                later = np.ones(len(offs), bool)
                later[first_at] = False
                for row in rows[later]:
                    offset = int(resolved[row])
                    prev = int(first_rows[np.searchsorted(distinct, offset)])
                    if record_digest(scan, int(row)) != record_digest(scan, prev):
                        raise _conflict(
                            tp,
                            offset,
                            (file_path, int(scan.line_nos[row])),
                            (file_path, int(scan.line_nos[prev])),
                        )
            new = np.ones(len(distinct), bool)
            for earlier in firsts.get(tp, ()):
                if earlier.offsets[-1] < distinct[0] or earlier.offsets[0] > distinct[-1]:
                    continue
                common, here, there = np.intersect1d(
                    distinct, earlier.offsets, assume_unique=True, return_indices=True
                )
                prev_scan = scans[earlier.file_idx]
                for offset, h, t in zip(
                    common.tolist(), here.tolist(), there.tolist(), strict=True
                ):
                    row, prev = int(first_rows[h]), int(earlier.rows[t])
                    if record_digest(scan, row) != record_digest(prev_scan, prev):
                        raise _conflict(
                            tp,
                            offset,
                            (file_path, int(scan.line_nos[row])),
                            (files[earlier.file_idx], int(prev_scan.line_nos[prev])),
                        )
                    skipped.setdefault(tp, []).append(offset)
                new[here] = False
            if new.any():
                firsts.setdefault(tp, []).append(
                    _FirstCopies(file_idx, distinct[new], first_rows[new])
                )
        lines += scan.records
        plans.append(
            FilePlan(
                path=str(file_path),
                size=scan.size,
                mtime_ns=scan.mtime_ns,
                base=base,
                bounds=bounds,
                skip={tp: _ranges(offs) for tp, offs in skipped.items()},
                plain=scan.plain and not repeats_in_file,
            )
        )
    offsets = {
        tp: np.unique(np.concatenate([c.offsets for c in copies])).tolist()
        for tp, copies in sorted(firsts.items())
    }
    return DumpIndex(files=tuple(plans), offsets=offsets, lines=lines)


# --------------------------------------------------------------------------- reading


def _in_ranges(ranges: list[tuple[int, int]], offset: int) -> bool:
    i = bisect.bisect_right(ranges, (offset, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= offset < ranges[i][1]


@dataclass(frozen=True, slots=True)
class ReadWindow:
    """The lines of one file that hold (part of) a batch's records, so a reader parses only
    those.

    Attributes:
        first_line, last_line: 1-based, inclusive.
        running: per topic-partition of the file, how many of its records precede
            ``first_line`` in the dump (line-order offsets continue from there).
        first_byte, end_byte: the window's bytes in the file, ``[first_byte, end_byte)``.
        records: records (non-blank lines) in the window.
    """

    first_line: int
    last_line: int
    running: dict[TopicPartition, int]
    first_byte: int = 0
    end_byte: int | None = None
    records: int | None = None


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


def read_windows(
    plan: FilePlan,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    *,
    max_records: int | None = None,
) -> list[ReadWindow]:
    """Where in ``plan``'s file the records with ``start[tp] <= offset < end[tp]`` are, from
    the (cached) scan of the file: one window, or consecutive windows of at most
    ``max_records`` records each (so that a big file is read by several tasks); ``[]`` if
    there are none.

    Raises:
        DumpError: the file changed since it was indexed.
    """

    _check_unchanged(plan)
    scan = scan_file(Path(plan.path))
    if (scan.size, scan.mtime_ns) != (plan.size, plan.mtime_ns):
        raise _changed(Path(plan.path))
    resolved = _resolved_offsets(scan, plan.base)
    wanted = np.zeros(scan.records, bool)
    for i, tp in enumerate(scan.topic_partitions):
        stop = end.get(tp)
        if stop is not None:
            wanted |= (scan.tp_ids == i) & (resolved >= start.get(tp, 0)) & (resolved < stop)
    hits = np.flatnonzero(wanted)
    if not len(hits):
        return []
    first, last = int(hits[0]), int(hits[-1])
    step = max_records or (last - first + 1)
    windows: list[ReadWindow] = []
    for lo in range(first, last + 1, step):
        hi = min(lo + step, last + 1) - 1
        before = scan.tp_ids[:lo]
        running = {
            tp: plan.base[tp] + int(np.count_nonzero(before == i))
            for i, tp in enumerate(scan.topic_partitions)
        }
        windows.append(
            ReadWindow(
                first_line=int(scan.line_nos[lo]),
                last_line=int(scan.line_nos[hi]),
                running=running,
                first_byte=int(scan.starts[lo]),
                end_byte=int(scan.ends[hi]),
                records=hi - lo + 1,
            )
        )
    return windows


def read_plain_table(
    plan: FilePlan,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    window: ReadWindow | None = None,
) -> pa.Table:
    """The records of a plain file (:attr:`FilePlan.plain`) with ``start[tp] <= offset <
    end[tp]`` that the file owns, in line order, parsed by Arrow's JSON reader: columns
    ``topic``, ``partition``, ``offset``, ``timestamp`` (epoch ms), ``timestampType`` (the
    last three int64, nulls where a line omits them), ``key``, ``value`` (strings).

    Raises:
        DumpError: the file changed since it was indexed.
    """

    _check_unchanged(plan)
    path = Path(plan.path)
    first_byte = window.first_byte if window is not None else 0
    end_byte = window.end_byte if window is not None and window.end_byte is not None else plan.size
    with path.open("rb") as handle:
        handle.seek(first_byte)
        data = handle.read(end_byte - first_byte)
    try:
        table = pj.read_json(pa.BufferReader(data), parse_options=_parse_options())
    except pa.ArrowException:
        raise _changed(path) from None
    if window is not None and window.records is not None and table.num_rows != window.records:
        raise _changed(path)
    topic = table.column("topic").combine_chunks().dictionary_encode()
    names = topic.dictionary.to_pylist()
    codes = topic.indices.to_numpy(zero_copy_only=False)
    partition = table.column("partition").fill_null(0).to_numpy()
    offset = table.column("offset").to_numpy()
    keep = np.zeros(table.num_rows, bool)
    for code, name in enumerate(names):
        of_topic = codes == code
        for part in np.unique(partition[of_topic]).tolist():
            tp = (name, part)
            stop = end.get(tp)
            if stop is None:
                continue
            rows = of_topic & (partition == part)
            take = rows & (offset >= start.get(tp, 0)) & (offset < stop)
            ranges = plan.skip.get(tp)
            if ranges:
                los = np.array([lo for lo, _hi in ranges], np.int64)
                his = np.array([hi for _lo, hi in ranges], np.int64)
                at = np.searchsorted(los, offset, side="right") - 1
                inside = (at >= 0) & (offset < his[np.maximum(at, 0)])
                take &= ~(rows & inside)
            keep |= take
    return table.filter(pa.array(keep))


def read_file_records(
    plan: FilePlan,
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    window: ReadWindow | None = None,
) -> Iterator[DumpRecord]:
    """Yield the records of ``plan``'s file with ``start[tp] <= offset < end[tp]`` that the file
    owns (first copies only), in line order, parsing line by line (any file). Topic-partitions
    missing from ``end`` yield nothing; missing from ``start`` means 0. With ``window`` (see
    :func:`read_windows`) only those lines are parsed.

    Raises:
        DumpError: the file changed (size or mtime) since it was indexed, or a line is malformed.
    """
    _check_unchanged(plan)
    path = Path(plan.path)
    running = dict(window.running if window is not None else plan.base)
    lines = (
        iter_lines(path)
        if window is None
        else iter_lines(path, window.first_line, window.last_line, first_byte=window.first_byte)
    )
    seen: set[tuple[TopicPartition, int]] = set()
    for line_no, _start, _end, rec in lines:
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
