"""The hand-written single PySpark script a data engineer would write for one format: read the
bronze table filtered to the topics, decode, keep the latest change per (table, row key) with
``row_number()`` over a window ordered by the format's ordering key descending, drop deletes,
write the result as a parquet table (``saveAsTable``, overwrite).

Decoding:

- JSON formats: Spark SQL only - ``from_json`` with an explicit schema of just the fields
  needed (row images as ``map<string,string>``, so JSON numbers become their text), parsed
  once per message: ``from_json`` is the input of a generator (:func:`parsed_messages`), so
  the optimizer cannot copy it into the filters below the projection. Written the obvious
  way (``select from_json(...) as m``, then filters on ``m``), the script parses each Canal
  message five times; ``parse_once=False`` (``--as-written``) keeps that script too, and the
  bench reports both,
  ``posexplode`` for Canal's multi-row ``data``, a join of DT messages to MD messages for Qlik
  JSON; no Python UDF.
- A format without Spark SQL (the Avro formats; its plug-in's
  :attr:`~.plugin_api.Baseline.python_decode` says why): ``mapInArrow`` with the plug-in's
  Python decoder (fastavro), given by :meth:`.plugin_api.Baseline.spark_decoder`, which may
  first read on the driver what every record needs (Qlik Avro's MD messages: a DT message is
  readable only with the data schema its MD message carries).

Each format's schema and SQL are in its plug-in (:attr:`.plugin_api.Baseline.spark_schema`,
:attr:`~.plugin_api.Baseline.spark_events`, ``src/cdc_lakehouse/formats/<folder>/baseline.py``),
following the format's ordering rule (:func:`.formats.order_columns`).

Timed: from reading the bronze table to the write of ``output_table`` done. Not timed:
reading the table back and collecting it, counting the events (a second decode).

Command line (a SparkSession of :func:`cdc_lakehouse.runtime.spark_session.get_spark`, so the lake
is ``CDC_LAKE_DIR``)::

    python -m cdc_lakehouse.tools.bench.baselines.pyspark_script --format dts_canal_json \\
        --source-table bronze.kafka_records --topic sim.dts_canal_json \\
        --output-table bench.pyspark_baseline_latest
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from cdc_lakehouse.runtime.spark_session import get_spark
from cdc_lakehouse.tools.bench.baselines import BaselineResult, LatestRows
from cdc_lakehouse.tools.bench.baselines.formats import (
    BENCH_KEYS,
    FORMATS,
    baseline,
    changes_table,
    order_columns,
    order_types,
)
from cdc_lakehouse.tools.bench.baselines.plugin_api import PARSED, SPARK_ROW, Decoder
from cdc_lakehouse.tools.bench.baselines.plugin_api import spark_literal as _literal

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

RAW_VIEW = "pyspark_baseline_raw"
"""Temporary view of the bronze rows of the topics (``topic``, ``partition``, ``offset``,
``value``)."""
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")
_SPARK_TYPES = {pa.int64(): "bigint", pa.string(): "string"}


def parsed_messages(schema: str, *, parse_once: bool = True) -> str:
    """SQL of the rows of :data:`RAW_VIEW` with ``m``, the value parsed by ``from_json`` with
    ``schema`` (what :data:`PARSED` stands for).

    ``parse_once`` (the default): ``from_json`` is a generator's input (``lateral view
    explode(array(from_json(...)))``), so the optimizer keeps one parse per message. Without it,
    the script as first written: ``from_json`` in a projection, which the optimizer inlines into
    every filter pushed below it (Canal's ``type``, ``isDdl`` and ``size(data)``), so each
    message is parsed once per filter and once more for the projection (:func:`parse_count`).
    """
    parse = f"from_json(cast(value as string), '{schema}')"
    if parse_once:
        return f"{RAW_VIEW} lateral view explode(array({parse})) parsed as m"
    return f"(select topic, `partition`, `offset`, {parse} as m from {RAW_VIEW})"


def decodes_in_sql(format_: str) -> bool:
    """True when the script decodes ``format_`` in Spark SQL (its plug-in gives Spark SQL),
    false when in ``mapInArrow`` with the plug-in's Python decoder."""
    return baseline(format_).spark_sql


def events_sql(format_: str, *, parse_once: bool = True) -> tuple[str, Sequence[str]]:
    """A format's Spark SQL over :data:`RAW_VIEW` (``tbl``, the ordering key's columns,
    ``is_delete``, ``row``; its plug-in's :attr:`~.plugin_api.Baseline.spark_events` with
    :data:`PARSED` replaced) and those columns (:func:`.formats.order_columns`).

    Raises:
        KeyError: ``format_`` has no Spark SQL (:func:`decodes_in_sql`; the Avro formats decode
            in Python).
    """
    spec = baseline(format_)
    if spec.spark_events is None or spec.spark_schema is None:
        raise KeyError(f"format {format_!r} has no Spark SQL: {spec.python_decode}")
    parsed = parsed_messages(spec.spark_schema, parse_once=parse_once)
    return spec.spark_events.replace(PARSED, parsed), order_columns(format_)


def parse_count(frame: DataFrame) -> int:
    """How many ``from_json`` calls the optimized plan of ``frame`` holds: the number of times
    each message is parsed."""
    return frame._jdf.queryExecution().optimizedPlan().toString().count("from_json(")


def _changes_schema_ddl(format_: str) -> str:
    """Spark DDL of :func:`.formats.changes_schema` for a format decoded in Python."""
    parts = [
        f"`{name}` {_SPARK_TYPES[kind]}"
        for name, kind in zip(order_columns(format_), order_types(format_), strict=True)
    ]
    return ", ".join(["tbl string", *parts, "is_delete boolean", f"row {SPARK_ROW}"])


def _python_decoder(format_: str, decoder: Decoder) -> Any:
    """The ``mapInArrow`` function: bronze batches -> the change batches of ``decoder``."""

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values = zip(
                batch.column("topic").to_pylist(),
                batch.column("partition").to_pylist(),
                batch.column("offset").to_pylist(),
                batch.column("value").to_pylist(),
                strict=True,
            )
            yield from changes_table(decoder(values), format_).to_batches()

    return decode


def key_expression(keys: Mapping[str, Sequence[str]]) -> str:
    """Spark SQL of the canonical row key (:func:`cdc_lakehouse.tools.bench.baselines.row_key`):
    ``to_json`` of a struct of the table's key columns (sorted) taken from ``row``."""
    cases = []
    for name, columns in sorted(keys.items()):
        fields = ", ".join(f"{_literal(c)}, row[{_literal(c)}]" for c in sorted(columns))
        cases.append(f"when {_literal(name)} then to_json(named_struct({fields}))")
    return "case tbl " + " ".join(cases) + " end"


def events_frame(
    spark: SparkSession, format_: str, *, parse_once: bool = True
) -> tuple[DataFrame, Sequence[str]]:
    """The decoded changes of :data:`RAW_VIEW` (``tbl``, the ordering key's columns,
    ``is_delete``, ``row``) and those columns (``parse_once``: see :func:`parsed_messages`)."""
    spec = baseline(format_)
    if not spec.spark_sql:  # decoded in Python (spec.python_decode says why)
        raw = spark.table(RAW_VIEW)
        decoder = _python_decoder(format_, spec.spark_decoder(raw))
        return raw.mapInArrow(decoder, _changes_schema_ddl(format_)), order_columns(format_)
    sql, columns = events_sql(format_, parse_once=parse_once)
    return spark.sql(sql), columns


def run(
    spark: SparkSession,
    source_table: str,
    topics: Sequence[str],
    format_: str,
    output_table: str,
    *,
    keys: Mapping[str, Sequence[str]] = BENCH_KEYS,
    parse_once: bool = True,
) -> BaselineResult:
    """Latest row per key of ``format_``'s records of ``topics`` in ``source_table``, written
    to ``output_table`` (parquet, overwritten; its database is created when missing).

    Args:
        spark: the session.
        source_table: a bronze table (``topic``, ``partition``, ``offset``, ``value`` binary).
        topics: the topics to read.
        format_: their registry format.
        output_table: ``[database.]table`` to write (``tbl``, ``row_key``, ``row``).
        keys: key columns per table (lower-case name).
        parse_once: JSON formats: parse each message once (the default, the script a user who
            checks the plan writes); false: the script as first written, which parses each
            Canal message five times (:func:`parsed_messages`).

    Returns:
        Rows, seconds (read through write), events, engine, cores = the session's default
        parallelism.

    Raises:
        ValueError: unknown format, no topics, a bad table name or a missing source table.
        MissingBaselineError: the format's plug-in has no baselines for it
            (:func:`.formats.baseline`).
    """
    in_sql = decodes_in_sql(format_)
    if not topics:
        raise ValueError("pyspark baseline: give at least one topic")
    for name in (source_table, output_table):
        if not _TABLE_NAME.match(name):
            raise ValueError(f"{name!r} is not a table name ([database.]table, plain identifiers)")
    if not spark.catalog.tableExists(source_table):
        raise ValueError(f"source table {source_table} does not exist")
    database = output_table.split(".", 1)[0] if "." in output_table else None
    if database is not None and not spark.catalog.databaseExists(database):
        spark.sql(f"create database if not exists {database}")

    from pyspark.sql import functions as F
    from pyspark.sql.window import Window

    start = time.perf_counter()
    raw = (
        spark.table(source_table)
        .where(F.col("topic").isin(list(topics)) & F.col("value").isNotNull())
        .select("topic", "partition", "offset", "value")
    )
    raw.createOrReplaceTempView(RAW_VIEW)
    events, columns = events_frame(spark, format_, parse_once=parse_once)
    order = [F.col(column).desc() for column in columns]
    window = Window.partitionBy("tbl", "row_key").orderBy(*order)
    latest = (
        events.withColumn("row_key", F.expr(key_expression(keys)))
        .withColumn("rn", F.row_number().over(window))
        .where("rn = 1 and not is_delete")
        .select("tbl", "row_key", "row")
    )
    latest.write.mode("overwrite").format("parquet").saveAsTable(output_table)
    seconds = time.perf_counter() - start

    rows: LatestRows = {
        (record["tbl"], record["row_key"]): dict(record["row"] or {})
        for record in spark.table(output_table).collect()
    }
    count = events.count()
    context = spark.sparkContext
    return BaselineResult(
        rows=rows,
        seconds=seconds,
        events=count,
        engine=f"pyspark {spark.version} ({context.master})"
        + ("" if in_sql else ", fastavro in mapInArrow")
        + ("" if parse_once or not in_sql else ", from_json inlined per filter"),
        cores=context.defaultParallelism,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the script on one format's topics and print a JSON summary."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.bench.baselines.pyspark_script",
        description="Hand-written PySpark baseline: latest row per key, deletes removed, of "
        "one format's topics of a bronze table, written to a parquet table.",
    )
    parser.add_argument("--format", required=True, choices=sorted(FORMATS), dest="format_")
    parser.add_argument(
        "--source-table", required=True, help="bronze table, e.g. bronze.kafka_records"
    )
    parser.add_argument(
        "--topic", required=True, action="append", dest="topics", help="a topic (repeatable)"
    )
    parser.add_argument("--output-table", required=True, help="[database.]table to overwrite")
    parser.add_argument(
        "--as-written",
        action="store_true",
        help="JSON formats: the script as first written, from_json in a projection (parsed "
        "again for each filter the optimizer pushes below it)",
    )
    args = parser.parse_args(argv)
    for option, name in (
        ("--source-table", args.source_table),
        ("--output-table", args.output_table),
    ):
        if not _TABLE_NAME.match(name):
            parser.error(f"{option} {name!r}: use [database.]table with letters, digits, _")

    spark = get_spark()
    try:
        result = run(
            spark,
            args.source_table,
            args.topics,
            args.format_,
            args.output_table,
            parse_once=not args.as_written,
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    summary = {
        "format": args.format_,
        "output_table": args.output_table,
        "rows": len(result.rows),
        "events": result.events,
        "seconds": round(result.seconds, 3),
        "events_per_s": round(result.events / result.seconds, 1) if result.seconds else None,
        "engine": result.engine,
        "cores": result.cores,
    }
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
