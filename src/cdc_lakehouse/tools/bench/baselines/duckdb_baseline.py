"""DuckDB baseline: the bronze parquet files read with ``read_parquet``, JSON decoded with
DuckDB's JSON functions (``from_json`` into a struct of just the fields needed, the row image
kept as ``json``), the latest change per (table, row key) kept with ``row_number()`` over a
window ordered by the format's ordering key (``qualify``), deletes dropped, the winners' images
turned into ``map(varchar, varchar)``, into a DuckDB table ``latest``.

Two things make it fast, as a DuckDB user would write it: the message CTE is ``materialized``
(else DuckDB pushes the op filter below the projection and parses every message twice), and
only the key columns are read from every image (``json_extract_string``); the whole image
becomes a map for the live rows only.

Each format's SQL is in its plug-in (:attr:`.plugin_api.Baseline.duckdb`,
``src/cdc_lakehouse/formats/<folder>/baseline.py``), following the format's ordering rule
(:func:`.formats.order_columns`). A format without DuckDB SQL (the Avro formats: DuckDB has no
Avro reader here, its ``avro`` extension would have to be downloaded, and these machines have
no network) has its values read from parquet by DuckDB, decoded by the plug-in's Python
decoder (fastavro) into an Arrow table (:func:`.formats.changes_table`) and the latest-per-key
run in DuckDB on that table. The Python decode is single-threaded and inside the timing.

Timed: from opening the connection to ``create table latest`` done. Not timed: fetching the
rows into Python and counting the events (a second pass over the decoded events).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import duckdb

from cdc_lakehouse.tools.bench.baselines import BaselineResult, LatestRows
from cdc_lakehouse.tools.bench.baselines.formats import (
    BENCH_KEYS,
    baseline,
    changes_table,
    order_columns,
)
from cdc_lakehouse.tools.bench.baselines.plugin_api import duckdb_literal as _literal


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_literal(item) for item in items) + "]"


def key_columns(keys: Mapping[str, Sequence[str]]) -> list[str]:
    """Every key column of every table, sorted: the ``k`` list of :func:`latest_sql`."""
    return sorted({column for columns in keys.values() for column in columns})


def key_expression(keys: Mapping[str, Sequence[str]]) -> str:
    """SQL of the canonical row key (:func:`cdc_lakehouse.tools.bench.baselines.row_key`) from
    ``tbl`` and ``k`` (the values of :func:`key_columns`, as text): ``json_object`` of the
    table's key columns, sorted."""
    position = {column: index for index, column in enumerate(key_columns(keys), start=1)}
    cases = []
    for name, columns in sorted(keys.items()):
        pairs = ", ".join(f"{_literal(c)}, k[{position[c]}]" for c in sorted(columns))
        cases.append(f"when {_literal(name)} then json_object({pairs})::varchar")
    return "case tbl " + " ".join(cases) + " end"


def json_key_values(keys: Mapping[str, Sequence[str]]) -> str:
    """SQL of ``k`` for JSON images: the key columns read from ``base``, else ``image``."""
    paths = ", ".join(_literal('$."' + c.replace('"', '\\"') + '"') for c in key_columns(keys))
    return f"json_extract_string(coalesce(base, image), [{paths}])"


def map_key_values(keys: Mapping[str, Sequence[str]]) -> str:
    """SQL of ``k`` for decoded rows (``row`` map): the key columns' values."""
    return "[" + ", ".join(f"row[{_literal(c)}]" for c in key_columns(keys)) + "]"


def latest_sql(
    order: Sequence[str], keys: Mapping[str, Sequence[str]], key_values: str, row: str
) -> str:
    """SQL creating the table ``latest`` (``tbl``, ``row_key``, ``row``) from the view
    ``events``: ``k`` = ``key_values``, the newest change per (``tbl``, row key) by the
    ordering key's columns ``order`` descending, deletes dropped, ``row`` = ``row``."""
    descending = ", ".join(f'"{column}" desc' for column in order)
    return f"""
    create table latest as
    select tbl, row_key, {row} as row
    from (
        select *
        from (
            select *, {key_expression(keys)} as row_key
            from (select *, {key_values} as k from events)
        )
        qualify row_number() over (partition by tbl, row_key order by {descending}) = 1
    )
    where not is_delete
    """


def run(
    parquet_files: Sequence[str],
    topics: Sequence[str],
    format_: str,
    threads: int,
    *,
    keys: Mapping[str, Sequence[str]] = BENCH_KEYS,
) -> BaselineResult:
    """Latest row per key of ``format_``'s records of ``topics`` in the bronze parquet files.

    Args:
        parquet_files: files of ``bronze.kafka_records`` (columns ``topic``, ``partition``,
            ``offset``, ``value`` binary at least).
        topics: the topics to read.
        format_: their registry format.
        threads: DuckDB threads (``threads`` setting; the Avro decode is one Python thread).
        keys: key columns per table (lower-case name).

    Returns:
        Rows, seconds (decode + latest-per-key into the table ``latest``), events, engine,
        cores = ``threads``.

    Raises:
        ValueError: unknown format, no files, or no topics.
        MissingBaselineError: the format's plug-in has no baselines for it
            (:func:`.formats.baseline`).
    """
    spec = baseline(format_)
    if not parquet_files or not topics:
        raise ValueError("duckdb baseline: give at least one parquet file and one topic")
    source = f"""
        select topic, partition, "offset", value
        from read_parquet({_list(parquet_files)})
        where topic in ({", ".join(_literal(t) for t in topics)}) and value is not null
    """
    start = time.perf_counter()
    con = duckdb.connect(config={"threads": threads})
    if spec.duckdb is None:  # decoded in Python (spec.python_decode says why)
        records = con.sql(source).to_arrow_table()
        values = zip(
            records["topic"].to_pylist(),
            records["partition"].to_pylist(),
            records["offset"].to_pylist(),
            records["value"].to_pylist(),
            strict=True,
        )
        decoded = changes_table(spec.changes(values), format_)
        con.register("decoded", decoded)
        con.execute("create view events as select * from decoded")
        sql = latest_sql(order_columns(format_), keys, map_key_values(keys), "row")
    else:
        con.execute(
            f'create view src as select topic, partition, "offset", decode(value) as j '
            f"from ({source})"
        )
        con.execute(f"create view events as {spec.duckdb.events}")
        sql = latest_sql(order_columns(format_), keys, json_key_values(keys), spec.duckdb.row)
    con.execute(sql)
    seconds = time.perf_counter() - start
    rows: LatestRows = {
        (table, key): dict(row)
        for table, key, row in con.execute("select * from latest").fetchall()
    }
    events = con.execute("select count(*) from events").fetchone()
    con.close()
    return BaselineResult(
        rows=rows,
        seconds=seconds,
        events=int(events[0]) if events else 0,
        engine=f"duckdb {duckdb.__version__} ({threads} threads)"
        + (", fastavro decode in Python" if spec.duckdb is None else ""),
        cores=threads,
    )
