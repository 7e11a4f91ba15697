"""Queries the pipeline tests share, a reader that queries while dbt writes, and the topic
dump writer of the cases files."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cdc_lakehouse.tools.simulate.delivery import dump_line as simulator_dump_line
from ingest.dump import DumpRecord

DumpLine = dict[str, Any] | str | DumpRecord
"""One line of a topic dump (docs/architecture.md) as a cases file gives it: a JSON object
(:func:`dump_line`), its JSON text, or a simulator :class:`~ingest.dump.DumpRecord`."""


def write_dump(path: Path, lines: Iterable[DumpLine]) -> Path:
    """Write ``lines`` as a topic dump file at ``path``, one JSON object a line; return it.
    A dict is written with ``json.dumps``, a text as it is, a DumpRecord as the simulator
    writes it (:func:`cdc_lakehouse.tools.simulate.delivery.dump_line`)."""
    texts = []
    for line in lines:
        if isinstance(line, DumpRecord):
            texts.append(simulator_dump_line(line))
        elif isinstance(line, str):
            texts.append(line)
        else:
            texts.append(json.dumps(line))
    path.write_text("".join(text + "\n" for text in texts), encoding="utf-8")
    return path


NO_TIMESTAMP: Any = object()
"""``timestamp=`` of :func:`dump_line` for a line without one (ingest takes none)."""


def dump_line(
    topic: str,
    partition: int,
    offset: int,
    value: str | bytes | None,
    *,
    timestamp: int = NO_TIMESTAMP,
    value_base64: str | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    """One topic dump line: ``value`` as text (str, or None for a Kafka NULL) or, when bytes,
    as ``value_base64``; a given ``value_base64`` text stands instead; ``key`` the Kafka key
    as text (None: no key)."""
    line: dict[str, Any] = {"topic": topic, "partition": partition, "offset": offset}
    if timestamp is not NO_TIMESTAMP:
        line["timestamp"] = timestamp
    line["key"] = key
    if value_base64 is not None:
        line["value_base64"] = value_base64
    elif isinstance(value, bytes):
        line["value_base64"] = base64.b64encode(value).decode("ascii")
    else:
        line["value"] = value
    return line


class Offsets:
    """The next offset of each (topic, partition), from 0: ``offsets(topic, partition)``
    returns it and counts it."""

    def __init__(self) -> None:
        self._next: dict[tuple[str, int], int] = {}

    def __call__(self, topic: str, partition: int) -> int:
        offset = self._next.get((topic, partition), 0)
        self._next[(topic, partition)] = offset + 1
        return offset


def gold_rows(spark, where: str) -> dict[str, dict[str, str | None]]:
    """``gold.current_rows`` matching the SQL condition ``where``: row_key -> row_values."""
    rows = spark.sql(f"select row_key, row_values from gold.current_rows where {where}").collect()
    return {r["row_key"]: dict(r["row_values"]) for r in rows}


READ_QUERIES = {
    "gold.current_rows": (
        "select count(*) as n, coalesce(sum(hash(source_format, source_database, source_schema, "
        "source_table, row_key, last_ordering_key)), 0) as h from gold.current_rows"
    ),
    "silver.change_events": (
        "select count(*) as n, coalesce(sum(hash(event_id, ordering_key, resolved_batch_id)), 0)"
        " as h from silver.change_events"
    ),
    "silver.quarantine": (
        "select count(*) as n, coalesce(sum(hash(event_id, reason, resolved_batch_id)), 0) as h"
        " from silver.quarantine"
    ),
}
"""What a reader of each public table notices of it: its row count and a sum of row hashes."""


@dataclass
class Read:
    """One query of a reader: its table, start and end (``time.time()``, s) and the state it
    returned (``(rows, hash sum)``) or the error it raised."""

    table: str
    started: float
    ended: float
    state: tuple[int, int] | None
    error: str | None


class Readers:
    """A reader querying :data:`READ_QUERIES` in a loop in a thread, in its own session of the
    test Spark application (``spark.newSession()``: its own relation cache, never refreshed),
    for the duration of a ``with`` block; ``before`` / ``after`` are each table's state right
    before and after the block, ``reads`` every query made during it. The loop pauses
    ``pause_s`` seconds between rounds: a reader that never pauses takes a core from the run."""

    def __init__(self, spark: Any, pause_s: float = 1.0) -> None:
        self.session = spark.newSession()
        self.pause_s = pause_s
        self.reads: list[Read] = []
        self.before: dict[str, tuple[int, int]] = {}
        self.after: dict[str, tuple[int, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _state(self, table: str) -> tuple[int, int]:
        row = self.session.sql(READ_QUERIES[table]).collect()[0]
        return (row["n"], row["h"])

    def _loop(self) -> None:
        while not self._stop.is_set():
            for table in READ_QUERIES:
                started = time.time()
                try:
                    state, error = self._state(table), None
                except Exception as exc:  # what the reader would notice
                    state, error = None, f"{type(exc).__name__}: {exc}"
                self.reads.append(Read(table, started, time.time(), state, error))
            self._stop.wait(self.pause_s)

    def __enter__(self) -> Readers:
        self.before = {table: self._state(table) for table in READ_QUERIES}
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=300)
        self.after = {table: self._state(table) for table in READ_QUERIES}


def node_windows(result: Any) -> dict[str, tuple[float, float]]:
    """unique_id -> (start, end) of each node's execution (``time.time()`` seconds) in the
    result of a ``dbtRunner`` invocation."""
    windows: dict[str, tuple[float, float]] = {}
    for node_result in result.result.results:
        for timing in node_result.timing:
            if timing.name == "execute" and timing.started_at and timing.completed_at:
                windows[node_result.node.unique_id] = (
                    _epoch(timing.started_at),
                    _epoch(timing.completed_at),
                )
    return windows


def _epoch(moment: datetime) -> float:
    """A dbt timing (naive datetimes are UTC) as ``time.time()`` seconds."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


PIN = "silver.cdc_bronze_pin"
"""The bronze pin of the target prod (macros/cdc_bronze_pin.sql)."""


def pin_state(spark: Any) -> tuple[str, list[int]]:
    """(table type of the pin, its pinned batches)."""
    kind = spark.catalog.getTable(PIN).tableType
    batches = [row[0] for row in spark.sql(f"select bronze_batch_id from {PIN}").collect()]
    return kind, batches


def newest_bronze_batch(spark: Any) -> int:
    """The newest ingest batch of bronze.kafka_records."""
    return spark.sql("select max(ingest_batch_id) from bronze.kafka_records").first()[0]
