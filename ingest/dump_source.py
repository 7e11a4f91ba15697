"""``cdc_dump``: a Spark Python streaming data source that reads a topic dump like Kafka.

Register it with ``spark.dataSource.register(CdcDumpDataSource)`` and read it with
``spark.readStream.format("cdc_dump").option("path", DUMP).load()``. Options:

- ``path`` (required): the dump file or directory (see :mod:`ingest.dump`).
- ``topics``: JSON list of the registry's topics; records of other topics fail the query
  (the ingest job validates the dump before it starts the query, so this is a safety net).
- ``registryLabel``: how to name the registry in messages.
- ``maxRecordsPerBatch``: cap on the records per micro-batch (admission control, also under
  ``Trigger.AvailableNow``).
- ``scanCacheDir``: a directory where the driver saved its scans of the dump files
  (:func:`ingest.dump.save_scan`); the planner loads them instead of scanning the
  dump a second time.

Offsets are Kafka offsets in the JSON shape of Spark's Kafka source (see
:mod:`ingest.offsets`): initial ``{}``; latest = last offset + 1 per
topic-partition of the dump, capped by the read limit. A batch ``[start, end)`` is read with
one input partition per :data:`WINDOW_RECORDS` records of each dump file that holds records in
the range. So a rerun on the same or an
overlapping dump reads only offsets beyond the checkpoint, as with Kafka.

The schema is Spark's Kafka source schema (:data:`KAFKA_SCHEMA`); ``read`` yields
``pyarrow.RecordBatch`` es of it (``timestamp`` is epoch ms in the dump, a UTC timestamp here).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from ingest.dump import (
    DumpError,
    DumpIndex,
    DumpRecord,
    FilePlan,
    ReadWindow,
    build_index,
    read_file_records,
    read_plain_table,
    read_windows,
)
from ingest.offsets import (
    KafkaOffsets,
    from_json_offsets,
    next_end_offsets,
    to_json_offsets,
)

if TYPE_CHECKING:
    import pyarrow as pa

SOURCE_NAME = "cdc_dump"
ARROW_BATCH_ROWS = 10_000
WINDOW_RECORDS = 100_000
"""At most this many records per input partition: a big dump file is read by several tasks
(and written as several Parquet files), so every core works on it."""

KAFKA_SCHEMA = StructType(
    [
        StructField("key", BinaryType()),
        StructField("value", BinaryType()),
        StructField("topic", StringType()),
        StructField("partition", IntegerType()),
        StructField("offset", LongType()),
        StructField("timestamp", TimestampType()),
        StructField("timestampType", IntegerType()),
        StructField(
            "headers",
            ArrayType(
                StructType([StructField("key", StringType()), StructField("value", BinaryType())])
            ),
        ),
    ]
)
"""Spark's Kafka source schema (``includeHeaders=true``), all columns nullable."""


class DumpFilePartition(InputPartition):
    """One window of one dump file in a micro-batch: its :class:`FilePlan`, the batch's offsets
    and the lines (bytes) that hold them."""

    def __init__(
        self, plan: FilePlan, start: KafkaOffsets, end: KafkaOffsets, window: ReadWindow | None
    ) -> None:
        super().__init__(plan.path)
        self.plan = plan
        self.start = start
        self.end = end
        self.window = window


def records_to_arrow(records: Sequence[DumpRecord], schema: pa.Schema) -> pa.RecordBatch:
    """Build one Arrow batch of ``schema`` (the Arrow form of :data:`KAFKA_SCHEMA`)."""
    import pyarrow as pa

    types = {f.name: f.type for f in schema}
    columns = {
        "key": [r.key for r in records],
        "value": [r.value for r in records],
        "topic": [r.topic for r in records],
        "partition": [r.partition for r in records],
        "offset": [r.offset for r in records],
        "timestamp": [r.timestamp_ms * 1000 for r in records],  # epoch ms -> us
        "timestampType": [r.timestamp_type for r in records],
        "headers": [[{"key": k, "value": v} for k, v in r.headers] for r in records],
    }
    arrays = [pa.array(columns[f.name], type=types[f.name]) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def plain_to_arrow(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The rows of :func:`ingest.dump.read_plain_table` as a table of ``schema`` (the
    Arrow form of :data:`KAFKA_SCHEMA`): text key / value as their UTF-8 bytes, omitted
    partition / timestamp / timestampType as 0, timestamp epoch ms -> UTC us, no headers."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.num_rows
    types = {f.name: f.type for f in schema}
    header_type = types["headers"]
    columns = {
        "key": table.column("key").cast(pa.binary()),
        "value": table.column("value").cast(pa.binary()),
        "topic": table.column("topic"),
        "partition": table.column("partition").fill_null(0).cast(pa.int32()),
        "offset": table.column("offset"),
        "timestamp": pc.multiply(table.column("timestamp").fill_null(0), 1000).cast(
            types["timestamp"]
        ),
        "timestampType": table.column("timestampType").fill_null(0).cast(pa.int32()),
        "headers": pa.ListArray.from_arrays(
            pa.array([0] * (rows + 1), pa.int32()),
            pa.array([], header_type.value_type),
            type=header_type,
        ),
    }
    return pa.table([columns[f.name] for f in schema], schema=schema)


class CdcDumpStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Stream reader of :class:`CdcDumpDataSource` (see the module docstring).

    Planning methods run in one long-lived Python worker per query; the dump is scanned lazily
    and per-file scans are cached by (path, size, mtime). Under ``Trigger.AvailableNow`` the
    index is frozen when the query starts, so lines appended during the run wait for the next.
    """

    def __init__(self, options: dict[str, str]) -> None:
        """``options``: the source options with lower-cased names."""
        self.path: str = options["path"]
        topics = options.get("topics")
        self.topics: list[str] | None = json.loads(topics) if topics else None
        self.registry_label: str = options.get("registrylabel") or "the topic registry"
        max_rows = options.get("maxrecordsperbatch")
        self.max_records: int | None = int(max_rows) if max_rows else None
        cache_dir = options.get("scancachedir")
        self.scan_cache_dir: Path | None = Path(cache_dir) if cache_dir else None
        self._frozen: DumpIndex | None = None

    def _build_index(self) -> DumpIndex:
        return build_index(
            self.path,
            self.topics,
            registry_label=self.registry_label,
            scan_cache_dir=self.scan_cache_dir,
        )

    def _index(self) -> DumpIndex:
        if self._frozen is not None:
            return self._frozen
        return self._build_index()

    def initialOffset(self) -> dict[str, Any]:
        """Nothing read yet: ``{}`` (every topic-partition starts at offset 0)."""
        return {}

    def getDefaultReadLimit(self) -> ReadLimit:
        """``ReadMaxRows(maxRecordsPerBatch)`` if the option is set, else all available."""
        if self.max_records:
            return ReadMaxRows(self.max_records)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Freeze the dump index: the run ends at the offsets seen now."""
        self._frozen = self._build_index()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        """End offsets of the next batch: the dump's end, capped by ``limit`` (max rows)."""
        index = self._index()
        max_records = limit.max_rows if isinstance(limit, ReadMaxRows) else None
        end = next_end_offsets(
            from_json_offsets(start), index.end_offsets, index.offsets, max_records
        )
        return to_json_offsets(end)

    def reportLatestOffset(self) -> dict[str, Any] | None:
        """The dump's end offsets (for the query progress), or ``None`` for an empty dump."""
        end = self._index().end_offsets
        return to_json_offsets(end) if end else None

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        """:class:`DumpFilePartition` s of the dump files holding offsets in ``[start, end)``,
        at most :data:`WINDOW_RECORDS` records each."""
        begin = from_json_offsets(start)
        stop = from_json_offsets(end)
        wanted = {tp: (begin.get(tp, 0), e) for tp, e in stop.items() if e > begin.get(tp, 0)}
        if not wanted:
            return []
        index = self._index()
        dump_end = index.end_offsets
        for (topic, partition), (_lo, hi) in sorted(wanted.items()):
            if dump_end.get((topic, partition), 0) < hi:
                raise DumpError(
                    f"the checkpoint's pending batch needs {topic} partition {partition} up to "
                    f"offset {hi - 1}, but the dump {self.path} ends at offset "
                    f"{dump_end.get((topic, partition), 0) - 1}: rerun with the dump the "
                    "interrupted run used (records would be lost otherwise)."
                )
        parts: list[InputPartition] = []
        for plan in index.files:
            hit = [tp for tp, (lo, hi) in plan.bounds.items() if _overlaps(wanted.get(tp), lo, hi)]
            if not hit:
                continue
            file_start = {tp: wanted[tp][0] for tp in hit}
            file_end = {tp: wanted[tp][1] for tp in hit}
            for window in read_windows(plan, file_start, file_end, max_records=WINDOW_RECORDS):
                parts.append(DumpFilePartition(plan, file_start, file_end, window))
        return parts

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        """The records of one file's window of a batch, as Arrow batches of :data:`KAFKA_SCHEMA`
        (Arrow's JSON reader for a plain file, else line by line)."""
        from pyspark.sql.pandas.types import to_arrow_schema

        assert isinstance(partition, DumpFilePartition)
        schema = to_arrow_schema(KAFKA_SCHEMA, timezone="UTC")
        if partition.plan.plain:
            table = read_plain_table(
                partition.plan, partition.start, partition.end, partition.window
            )
            yield from plain_to_arrow(table, schema).to_batches(max_chunksize=ARROW_BATCH_ROWS)
            return
        chunk: list[DumpRecord] = []
        records = read_file_records(
            partition.plan, partition.start, partition.end, partition.window
        )
        for record in records:
            chunk.append(record)
            if len(chunk) >= ARROW_BATCH_ROWS:
                yield records_to_arrow(chunk, schema)
                chunk = []
        if chunk:
            yield records_to_arrow(chunk, schema)


def _overlaps(window: tuple[int, int] | None, lo: int, hi: int) -> bool:
    """Does ``[window[0], window[1])`` meet ``[lo, hi]`` (inclusive file bounds)?"""
    return window is not None and window[0] <= hi and lo < window[1]


class CdcDumpDataSource(DataSource):
    """The ``cdc_dump`` streaming source (see the module docstring)."""

    @classmethod
    def name(cls) -> str:
        """Format name: ``cdc_dump``."""
        return SOURCE_NAME

    def schema(self) -> StructType:
        """Spark's Kafka source schema."""
        return KAFKA_SCHEMA

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        """A :class:`CdcDumpStreamReader` over the options."""
        return CdcDumpStreamReader({k.lower(): v for k, v in self.options.items()})


def source_options(
    dump: str,
    topics: Sequence[str] | None,
    registry_label: str,
    max_records_per_batch: int | None,
    scan_cache_dir: str | None = None,
) -> dict[str, str]:
    """``readStream`` options of the ``cdc_dump`` source (``scan_cache_dir``: where the
    driver saved its scans of the dump files, :func:`ingest.dump.save_scan`)."""
    options = {"path": dump, "registryLabel": registry_label}
    if scan_cache_dir:
        options["scanCacheDir"] = scan_cache_dir
    if topics is not None:
        options["topics"] = json.dumps(sorted(topics))
    if max_records_per_batch:
        options["maxRecordsPerBatch"] = str(max_records_per_batch)
    return options


__all__ = [
    "KAFKA_SCHEMA",
    "SOURCE_NAME",
    "CdcDumpDataSource",
    "CdcDumpStreamReader",
    "DumpFilePartition",
    "source_options",
]
