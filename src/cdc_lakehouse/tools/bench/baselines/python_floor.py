"""The decode floor: one Python thread, ``orjson.loads`` (JSON formats) or
``fastavro.schemaless_reader`` (DTS Avro, Qlik Avro) per value, and a dict upsert per change.

Nothing cheaper computes the same result in Python, so the pipeline's time over this one says
what the engine (Spark, dbt, the lake) costs above plain decoding. Each format's decoder is its
plug-in's (:attr:`.plugin_api.Baseline.changes`, ``src/cdc_lakehouse/formats/<folder>/baseline.py``,
which says where the format keeps the table, op, row image and ordering key).

Algorithm: ``latest[(table, key values)] = (ordering key, is delete, row)``, replaced only by a
change with a greater ordering key, so a producer-retry duplicate re-delivered later (same
ordering key, higher offset, identical content) or any older change never wins. Deletes are
kept as tombstones while scanning (a later re-insert has a greater ordering key) and dropped
at the end; only the winning rows' values are rendered as text.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from cdc_lakehouse.tools.bench.baselines import BaselineResult, LatestRows, row_key
from cdc_lakehouse.tools.bench.baselines.formats import BENCH_KEYS, Value, baseline, text

COLUMNS = ("topic", "partition", "offset", "value")
"""The bronze columns :func:`load_values` reads, in the order of a value tuple."""


def load_values(parquet_files: Sequence[str], topics: Sequence[str]) -> list[Value]:
    """The records of ``topics`` in the bronze parquet files as (topic, partition, offset,
    value bytes), in file order (not timed by :func:`run`; ordering keys make order moot).
    Read a record batch at a time, so the values are held once (as Python bytes), not also
    as one Arrow table."""
    wanted = pa.array(list(topics), pa.string())
    values: list[Value] = []
    for path in parquet_files:
        for batch in pq.ParquetFile(path).iter_batches(columns=list(COLUMNS)):
            batch = batch.filter(pc.is_in(batch.column("topic"), value_set=wanted))
            values.extend(zip(*(batch.column(name).to_pylist() for name in COLUMNS), strict=True))
    return values


def run(
    values: Sequence[Value],
    format_: str,
    *,
    keys: Mapping[str, Sequence[str]] = BENCH_KEYS,
) -> BaselineResult:
    """Latest row per key of ``values`` (one format's records), deletes removed.

    Args:
        values: (topic, partition, offset, value bytes) of every record, e.g. from
            :func:`load_values`; any order.
        format_: the registry format of the values.
        keys: key columns per table (lower-case name).

    Returns:
        The rows, the seconds of decode + upsert + rendering the live rows, the events
        (row changes decoded, duplicates included), engine and 1 core.

    Raises:
        ValueError: unknown format; KeyError: a table not in ``keys``;
        MissingBaselineError: the format's plug-in has no baselines for it
            (:func:`.formats.baseline`).
    """
    decode = baseline(format_).changes
    start = time.perf_counter()
    latest: dict[tuple[str, tuple[object, ...]], tuple[tuple[object, ...], bool, dict]] = {}
    events = 0
    for table, order, deleted, row in decode(values):
        events += 1
        identity = (table, tuple([row.get(column) for column in keys[table]]))
        held = latest.get(identity)
        if held is None or order > held[0]:
            latest[identity] = (order, deleted, row)
    rows: LatestRows = {}
    for (table, _values), (_order, deleted, row) in latest.items():
        if deleted:
            continue
        texts = {column: text(value) for column, value in row.items()}
        rows[(table, row_key(keys[table], texts))] = texts
    seconds = time.perf_counter() - start
    engine = f"python {platform.python_version()} (orjson, fastavro), 1 thread"
    return BaselineResult(rows=rows, seconds=seconds, events=events, engine=engine, cores=1)
