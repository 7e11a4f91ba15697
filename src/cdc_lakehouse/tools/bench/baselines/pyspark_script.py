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
- DTS Avro and Qlik Avro: ``mapInArrow`` with fastavro (the decoders of :mod:`.formats`).
  For DTS Avro, Spark's ``from_avro`` plus the SQL that gives the same value texts was
  measured slower (docs/formats.md 4a, "Why fastavro and not from_avro").
  Qlik Avro's MD messages (the data schemas) are collected on the driver first: a DT message
  is readable only with the data schema its MD message carries.

Where each format keeps table, op, image and ordering key: :mod:`.formats` (the ordering keys
of ``models/staging/<folder>/stg_<format>__events.sql``).

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
    AVRO_FORMATS,
    BENCH_KEYS,
    DECODERS,
    FORMATS,
    ORDER_TYPES,
    TUPLE_META,
    QlikCatalog,
    changes_table,
    check_format,
    order_columns,
    qlik_avro_changes,
    qlik_avro_envelope,
    qlik_avro_metadata,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

RAW_VIEW = "pyspark_baseline_raw"
"""Temporary view of the bronze rows of the topics (``topic``, ``partition``, ``offset``,
``value``)."""
_TABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")
_ROW = "map<string,string>"
_DML = "('INSERT', 'UPDATE_AFTER', 'DELETE', 'UPDATE_BEFOR', 'UPDATE_BEFORE')"


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


PARSED = "<parsed messages>"
"""The token in each JSON format's SQL (:data:`_EVENTS`) that :func:`events_sql` replaces with
the rows of :data:`RAW_VIEW` with ``m``, the value parsed by ``from_json`` with the format's
schema (:data:`_SCHEMAS`)."""

# Per JSON format: the from_json schema of just the fields needed (row images as
# map<string,string>, so JSON numbers become their text)
_SCHEMAS: dict[str, str] = {
    "dataworks_json": f"""struct<`schema`:struct<source:struct<tableName:string>>,
        payload:struct<op:string,sequenceId:string,
            before:struct<dataColumn:{_ROW}>,after:struct<dataColumn:{_ROW}>>>""",
    "datahub_tuple": _ROW,
    "lindorm_debezium": f"""struct<payload:struct<op:string,ts_ms:bigint,before:{_ROW},
        after:{_ROW},source:struct<`table`:string,ts_ms:bigint>>>""",
    "dts_shareplex_json": f"""struct<meta:struct<op:string,scn:string,seq:bigint,`table`:string>,
        data:{_ROW},`key`:{_ROW}>""",
    "dts_canal_json": f"""struct<data:array<{_ROW}>,`table`:string,type:string,es:bigint,
        isDdl:boolean>""",
    "qlik_json": f"""struct<type:string,messageSchemaId:string,
        message:struct<schemaId:string,lineage:struct<`table`:string>,data:{_ROW},
            headers:struct<operation:string,changeSequence:string>>>""",
}
_DEBEZIUM_PAYLOAD = f"""op:string,before:{_ROW},after:{_ROW},
    source:struct<`table`:string,connector:string,lsn:bigint,file:string,pos:bigint,`row`:bigint>"""
# plain Debezium JSON: the payload under "payload" (schemas enabled) or the value itself
_SCHEMAS["debezium_json"] = f"struct<payload:struct<{_DEBEZIUM_PAYLOAD}>,{_DEBEZIUM_PAYLOAD}>"
_SCHEMAS["datahub_blob"] = _SCHEMAS["dataworks_json"]

# Per JSON format: SQL over the parsed messages (PARSED) giving ``tbl``, the ordering key's
# parts named as the format's plug-in names them (formats.order_columns: its ordering rule,
# then `partition`, `offset`, the topic: changes of two topics never tie), ``is_delete`` and
# ``row`` (map<string,string>).
_EVENTS: dict[str, str] = {}

_EVENTS["dataworks_json"] = f"""
    with messages as (
        select
            topic, `partition`, `offset`, m
        from {PARSED}
    )
    select
        lower(m.`schema`.source.tableName) as tbl,
        cast(m.payload.sequenceId as decimal(38, 0)) as sequence_id,
        case when m.payload.op in ('UPDATE_BEFOR', 'UPDATE_BEFORE') then 0 else 1 end as image_rank,
        `partition`,
        `offset`,
        topic,
        m.payload.op = 'DELETE' as is_delete,
        case
            when m.payload.op in ('INSERT', 'UPDATE_AFTER') then m.payload.after.dataColumn
            else m.payload.before.dataColumn
        end as row
    from messages
    where m.payload.op in {_DML}
    """
_EVENTS["datahub_blob"] = _EVENTS["dataworks_json"]

_META = "(" + ", ".join(_literal(name) for name in TUPLE_META) + ")"
_EVENTS["datahub_tuple"] = f"""
    with records as (
        select topic, `partition`, `offset`, m
        from {PARSED}
    )
    select
        lower(coalesce(m['_source_table_'], substring_index(topic, '.', -1))) as tbl,
        cast(m['_sequence_id_'] as decimal(38, 0)) as sequence_id,
        case when m['_before_image_'] = 'Y' then 0 else 1 end as image_rank,
        `partition`,
        `offset`,
        topic,
        m['_operation_type_'] = 'D' as is_delete,
        map_filter(m, (k, v) -> k not in {_META}) as row
    from records
    where m['_operation_type_'] in ('I', 'U', 'D')
    """

_EVENTS["lindorm_debezium"] = f"""
    with messages as (
        select
            topic, `partition`, `offset`, m.payload as p
        from {PARSED}
    )
    select
        lower(p.source.`table`) as tbl,
        p.source.ts_ms as source_ts_ms,
        coalesce(p.ts_ms, 0) as payload_ts_ms,
        `partition`,
        `offset`,
        topic,
        p.op = 'd' as is_delete,
        case when p.op = 'd' then p.before else p.after end as row
    from messages
    where p.op in ('c', 'u', 'r', 'd')
    """

_EVENTS["dts_shareplex_json"] = f"""
    with messages as (
        select
            topic, `partition`, `offset`, m
        from {PARSED}
    )
    select
        lower(substring_index(m.meta.`table`, '.', -1)) as tbl,
        cast(m.meta.scn as decimal(38, 0)) as scn,
        coalesce(m.meta.seq, 0) as seq,
        1 as image_rank,
        `partition`,
        `offset`,
        topic,
        m.meta.op in ('del', 'DELETE') as is_delete,
        case
            when m.meta.op in ('upd', 'UPDATE', 'UPDATE AFTER') then map_concat(
                map_filter(
                    coalesce(m.`key`, cast(map() as {_ROW})),
                    (k, v) -> not map_contains_key(m.data, k)
                ),
                m.data
            )
            else m.data
        end as row
    from messages
    where m.meta.op in ('ins', 'upd', 'del', 'INSERT', 'UPDATE', 'UPDATE AFTER', 'DELETE')
    """

_EVENTS["dts_canal_json"] = f"""
    with messages as (
        select
            topic, `partition`, `offset`, m
        from {PARSED}
    )
    select
        lower(m.`table`) as tbl,
        m.es as es_ms,
        case when m.type = 'INIT' then 0 else 1 end as snapshot_rank,
        `partition`,
        `offset`,
        row_index,
        topic,
        m.type = 'DELETE' as is_delete,
        row
    from messages
    lateral view posexplode(m.data) exploded as row_index, row
    where m.type in ('INSERT', 'UPDATE', 'DELETE', 'INIT') and not coalesce(m.isDdl, false)
    """

_EVENTS["qlik_json"] = f"""
    with envelopes as (
        select
            topic, `partition`, `offset`, m
        from {PARSED}
    ),
    tables as (
        select m.message.schemaId as schema_id, lower(m.message.lineage.`table`) as tbl
        from envelopes
        where m.type = 'MD'
    )
    select /*+ broadcast(tables) */
        tables.tbl,
        case when m.message.headers.operation = 'REFRESH' then 1 else 2 end as load_rank,
        case
            when m.message.headers.operation = 'REFRESH' then ''
            else m.message.headers.changeSequence
        end as change_sequence,
        `partition`,
        `offset`,
        topic,
        m.message.headers.operation = 'DELETE' as is_delete,
        m.message.data as row
    from envelopes
    inner join tables on envelopes.m.messageSchemaId = tables.schema_id
    where m.type = 'DT'
        and m.message.headers.operation in ('INSERT', 'UPDATE', 'DELETE', 'REFRESH')
    """

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


def events_sql(format_: str, *, parse_once: bool = True) -> tuple[str, Sequence[str]]:
    """A JSON format's SQL over :data:`RAW_VIEW` (``tbl``, the ordering key's columns,
    ``is_delete``, ``row``) and those columns (:func:`.formats.order_columns`).

    Raises:
        KeyError: ``format_`` is not a JSON format (the Avro formats decode in Python).
    """
    sql = _EVENTS[format_]
    parsed = parsed_messages(_SCHEMAS[format_], parse_once=parse_once)
    return sql.replace(PARSED, parsed), order_columns(format_)


def parse_count(frame: DataFrame) -> int:
    """How many ``from_json`` calls the optimized plan of ``frame`` holds: the number of times
    each message is parsed."""
    return frame._jdf.queryExecution().optimizedPlan().toString().count("from_json(")


def _avro_schema_ddl(format_: str) -> str:
    """Spark DDL of :func:`.formats.changes_schema` for an Avro format."""
    parts = [
        f"`{name}` {_SPARK_TYPES[kind]}"
        for name, kind in zip(order_columns(format_), ORDER_TYPES[format_], strict=True)
    ]
    return ", ".join(["tbl string", *parts, "is_delete boolean", f"row {_ROW}"])


def _avro_decoder(format_: str, catalog: QlikCatalog | None) -> Any:
    """The ``mapInArrow`` function: bronze batches -> decoded change batches."""

    def decode(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            values = zip(
                batch.column("topic").to_pylist(),
                batch.column("partition").to_pylist(),
                batch.column("offset").to_pylist(),
                batch.column("value").to_pylist(),
                strict=True,
            )
            if format_ == "qlik_avro":
                changes = qlik_avro_changes(values, catalog)
            else:
                changes = DECODERS[format_](values)
            yield from changes_table(changes, format_).to_batches()

    return decode


def _qlik_avro_catalog(raw: DataFrame) -> QlikCatalog:
    """The MD messages of the topics, read on the driver: an Avro envelope whose ``type`` is
    ``MD`` (bytes 6-8: string length 2 as a zigzag varint, ``MD``)."""
    catalog: QlikCatalog = {}
    for record in raw.where("substring(value, 6, 3) = X'044D44'").select("value").collect():
        schema_id, table, data_schema = qlik_avro_metadata(qlik_avro_envelope(record["value"]))
        catalog[schema_id] = (table, data_schema)
    return catalog


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
    if format_ in AVRO_FORMATS:
        raw = spark.table(RAW_VIEW)
        catalog = _qlik_avro_catalog(raw) if format_ == "qlik_avro" else None
        frame = raw.mapInArrow(_avro_decoder(format_, catalog), _avro_schema_ddl(format_))
        return frame, order_columns(format_)
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
    """
    check_format(format_)
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
        + (", fastavro in mapInArrow" if format_ in AVRO_FORMATS else "")
        + ("" if parse_once or format_ in AVRO_FORMATS else ", from_json inlined per filter"),
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
