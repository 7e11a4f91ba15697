"""DTS Avro decoding: the fastavro decoding model against Spark's ``from_avro`` plus SQL, on the
same bronze (issue 49, point 7; figures in ``results.md`` and ``bench/HISTORY.md``).

Two ways to produce the rows of ``silver.stg_dts_avro__decoded`` from bronze DTS Avro records:

- ``fastavro``: what the decoding model does
  (``cdc_lakehouse.decode.staging_model.decode_records``): bronze spread over the cores,
  ``mapInArrow(cdc_lakehouse.formats.dts_avro.decoder.decode_batches)``, ``value`` dropped.
- ``from_avro_sql``: :func:`records_sql`, the same columns from ``from_avro`` (spark-avro, on
  the project's class path) and Spark SQL. A record's revision is the one that consumes every
  byte, as the Python decoder decides it: ``from_avro`` ignores trailing bytes, so each
  revision is probed twice with a reader schema that skips every field (cheap): once as
  written (does it parse?) and once with a 1-byte ``fixed`` field appended to the writer
  schema (that read fails exactly when no byte is left). Then one full read, the older
  revision read into the newer one's struct (``bornTimestamp`` defaulted, then dropped).
  PERMISSIVE mode: a record that does not parse is a struct of NULLs, never a failed query.
  The value texts follow the decoder's module doc (doubles rewritten from Java's
  ``Double.toString`` to Python's ``repr``, DateTime parts with ``format_string``); what the
  simulator does not send is left out or simplified (charsets other than the UTF-8 spellings
  and ISO-8859-1 become base64; ``pk_uk_info`` is read with ``from_json``; the error details
  are a fixed text), so the SQL is a lower bound of an exact one's cost.

Stages (``--variants``): ``read_only`` (bronze read and the round-robin shuffle),
``one_from_avro`` (one ``from_avro`` call with the newer schema, its struct kept),
``probes_and_decode`` (the probes and the full read, the struct kept), ``from_avro_sql``
(everything) and ``fastavro``. Each run writes to Spark's ``noop`` sink (every column computed,
nothing stored). CPU seconds: user + system time of this process's descendants (the JVM, the
PySpark daemon and its Python workers), read before and after each run. Runs alternate (the
order reversed every round) after one warm-up run of each variant.

Both variants spread bronze over the cores with ``repartition``: the bronze file built here
is one Parquet file with one row group, which Spark splits in two (one of them empty), so
``spread_over_cores`` would leave it as it is.

Usage (after ``make install``; a DTS Avro dump from the benchmark's workload)::

    python -c "from pathlib import Path; from cdc_lakehouse.tools.bench.workload import \\
        write_records_dump as w; w('dts_avro', 1_000_000, 11, Path('/tmp/dump1m'))"
    CDC_LAKE_DIR=/tmp/lake python bench/dts-avro-from-avro/compare.py --dump /tmp/dump1m \\
        --rounds 2 --variants fastavro,from_avro_sql [--warm-dump /tmp/dump100k]
    CDC_LAKE_DIR=/tmp/lake python bench/dts-avro-from-avro/compare.py --dump /tmp/dump1m --check

``--check`` compares the two variants row for row (every column as JSON, ``tags`` sorted:
``from_avro`` returns Avro maps in Java ``HashMap`` order) and prints the rows that differ.
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_lakehouse.decode.staging_model import BRONZE_COLUMN_TYPES, BRONZE_COLUMNS, schema_ddl
from cdc_lakehouse.formats.dts_avro import decoder
from cdc_lakehouse.formats.dts_avro.avro_schema import NAMESPACE, record_schema
from cdc_lakehouse.formats.dts_avro.decoder import MYSQL_TYPE_NAMES
from cdc_lakehouse.runtime.spark_session import get_spark


def _with_end_probe(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a trailing 1-byte ``fixed`` field: its read fails iff no byte is left."""
    probe = json.loads(json.dumps(schema))
    probe["fields"].append(
        {"name": "endProbe", "type": {"type": "fixed", "name": "EndProbe", "size": 1}}
    )
    return probe


SCHEMAS: dict[str, str] = {
    name: json.dumps(schema)
    for name, schema in {
        "new": record_schema(with_born_timestamp=True),
        "old": record_schema(with_born_timestamp=False),
        "new_end": _with_end_probe(record_schema(with_born_timestamp=True)),
        "old_end": _with_end_probe(record_schema(with_born_timestamp=False)),
        # a reader schema that keeps one field: every other field is skipped, not built
        "skip": {
            "type": "record",
            "name": "Record",
            "namespace": NAMESPACE,
            "fields": [{"name": "version", "type": "int"}],
        },
    }.items()
}
"""Avro schemas (JSON text) by name: writer schemas of both revisions, with and without the
end probe, and the skipping reader schema."""


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def avro(writer: str, reader: str | None = None) -> str:
    """SQL of ``from_avro(value, <writer>)`` in PERMISSIVE mode, read into ``reader``."""
    options = ["'mode', 'PERMISSIVE'"]
    if reader is not None:
        options.append(f"'avroSchema', {_literal(SCHEMAS[reader])}")
    return f"from_avro(value, {_literal(SCHEMAS[writer])}, map({', '.join(options)}))"


def parses(writer: str) -> str:
    """SQL: whether ``value`` parses with ``writer`` (skipping every field)."""
    return f"{avro(writer, 'skip')}.version is not null"


_MYSQL_TYPES = "map(" + ", ".join(f"{k}, '{v}'" for k, v in MYSQL_TYPE_NAMES.items()) + ")"


def _padded(fmt: str, part: str) -> str:
    return f"case when {part} is not null then format_string('{fmt}', {part}) end"


def date_time_text(d: str) -> str:
    """SQL of a DateTime struct ``d``'s text (the decoder's ``_date_time``)."""
    date = ", ".join(
        _padded(fmt, f"{d}.{part}") for fmt, part in (("%04d", "year"), ("%02d", "month"))
    )
    date = f"concat_ws('-', {date}, {_padded('%02d', d + '.day')})"
    clock = ", ".join(_padded("%02d", f"{d}.{part}") for part in ("hour", "minute", "second"))
    time_text = f"concat(concat_ws(':', {clock}), coalesce({_padded('.%06d', d + '.millis')}, ''))"
    return f"concat_ws(' ', nullif({date}, ''), nullif({time_text}, ''))"


def python_repr(java: str) -> str:
    """SQL: Python's ``repr`` text of a finite double from its Java ``Double.toString`` text
    ``java`` (same digits, Python's layout: ``1e-05``, ``1e+16``, ``12345678.0``)."""
    parts = (
        f"named_struct('sign', case when startswith({java}, '-') then '-' else '' end, "
        f"'ip', regexp_extract({java}, '^-?([0-9]+)', 1), "
        f"'fp', regexp_extract({java}, '[.]([0-9]+)', 1), 'e10', coalesce(try_cast("
        f"nullif(regexp_extract({java}, 'E(-?[0-9]+)$', 1), '') as int), 0))"
    )
    digits = (
        "named_struct('sign', p.sign, 'digits', rtrim('0', ltrim('0', concat(p.ip, p.fp))), "
        "'decpt', length(p.ip) + p.e10 - (length(concat(p.ip, p.fp)) "
        "- length(ltrim('0', concat(p.ip, p.fp)))))"
    )
    layout = """case
        when n.digits = '' then concat(n.sign, '0.0')
        when n.decpt > 16 or n.decpt < -3 then concat(n.sign, substr(n.digits, 1, 1),
            case when length(n.digits) > 1 then concat('.', substr(n.digits, 2)) else '' end,
            'e', case when n.decpt < 1 then '-' else '+' end,
            format_string('%02d', abs(n.decpt - 1)))
        when n.decpt <= 0 then concat(n.sign, '0.', repeat('0', -n.decpt), n.digits)
        when n.decpt >= length(n.digits)
            then concat(n.sign, n.digits, repeat('0', n.decpt - length(n.digits)), '.0')
        else concat(n.sign, substr(n.digits, 1, n.decpt), '.', substr(n.digits, n.decpt + 1))
    end"""
    return f"transform(transform(array({parts}), p -> {digits}), n -> {layout})[0]"


def value_text(e: str) -> str:
    """SQL of the text of image element ``e`` (a struct of the 12 union members)."""
    ch = f"{e}.member1"
    charset = f"lower(trim({ch}.charset))"
    as_text = f"cast({ch}.value as string)"
    character = f"""case
        when {charset} in ('utf8', 'utf8mb3', 'utf8mb4', 'utf-8', 'al32utf8')
            then case when is_valid_utf8({as_text}) then {as_text} else base64({ch}.value) end
        when {charset} = 'iso-8859-1' then decode({ch}.value, 'ISO-8859-1')
        else base64({ch}.value)
    end"""
    double = f"{e}.member3.value"
    floating = f"""case
        when isnan({double}) then 'nan'
        when {double} = double('infinity') then 'inf'
        when {double} = double('-infinity') then '-inf'
        else {python_repr(f"cast({double} as string)")}
    end"""
    ts = f"{e}.member4"
    moment = f"timestamp_micros({ts}.timestamp * 1000000 + {ts}.millis)"
    zoned = f"concat({date_time_text(e + '.member6.value')}, ' ', {e}.member6.timezone)"
    return f"""case
        when {e}.member0 is not null then {e}.member0.value
        when {e}.member1 is not null then {character}
        when {e}.member2 is not null then {e}.member2.value
        when {e}.member3 is not null then {floating}
        when {e}.member4 is not null
            then date_format({moment}, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
        when {e}.member5 is not null then {date_time_text(e + ".member5")}
        when {e}.member6 is not null then {zoned}
        when {e}.member7 is not null then base64({e}.member7.value)
        when {e}.member8 is not null then {e}.member8.value
        when {e}.member9 is not null then base64({e}.member9.value)
        when {e}.member10 is not null then {e}.member10.value
    end"""


def image(images: str) -> str:
    """SQL of an image map (column -> text, NONE columns left out) of ``r.<images>``."""
    provided = "coalesce(z.member1.member11, '') != 'NONE'"
    return f"""case when r.{images}.member1 is not null then map_from_entries(transform(
        filter(arrays_zip(column_names, r.{images}.member1), z -> {provided}),
        z -> struct(z.column_names, {value_text("z.member1")})))
    end"""


def _ok(expression: str) -> str:
    return f"case when decode_error is null then {expression} end"


def records_sql(source: str) -> str:
    """Spark SQL of the decoder's output columns (after the bronze ones but ``value``) from the
    bronze relation ``source``."""
    reader_time = "r.tags['readerThroughoutTime']"
    pk_primary = "pk_uk['PRIMARY']"
    first_unique = "element_at(filter(map_values(pk_uk), c -> size(c) > 0), 1)"
    type_text = (
        "c -> case when r.source.sourceType = 'MySQL' "
        f"then coalesce(element_at({_MYSQL_TYPES}, c), cast(c as string)) "
        "else cast(c as string) end"
    )
    mismatch = "'the value is not a DTS Avro Record of either schema revision'"
    return f"""
with probed as (
    select *, case
        when value is null or length(value) = 0 then 'empty'
        when {parses("new")} and not {parses("new_end")} then 'new'
        when {parses("old")} and not {parses("old_end")} then 'old'
        else 'mismatch'
    end as revision
    from {source}
),
read as (
    select * except (value), case revision
        when 'new' then {avro("new")}
        when 'old' then {avro("old", "new")}
    end as r
    from probed
),
fielded as (
    select *,
        transform(r.fields.member1, f -> f.name) as column_names,
        transform(r.fields.member1, f -> f.dataTypeNumber) as column_type_numbers,
        transform(split(r.objectName, '[.]', -1), p -> replace(p, '\\\\u002E', '.'))
            as name_parts,
        from_json(r.tags['pk_uk_info'], 'map<string,array<string>>') as pk_uk
    from read
),
checked as (
    select *, case
        when revision = 'empty' then 'empty_value'
        when revision = 'mismatch' then 'avro_schema_mismatch'
        when r.id < 0 or r.sourceTimestamp < 0 or r.sourceTimestamp > 253402300799
            then 'invalid_field_value'
        when {reader_time} is not null and not {reader_time} rlike '^[0-9]{{1,15}}$'
            then 'invalid_field_value'
        when size(array_distinct(column_names)) != size(column_names) then 'invalid_field_value'
        when size(name_parts) > 3 then 'invalid_field_value'
        when r.tags['pk_uk_info'] is not null and pk_uk is null then 'invalid_field_value'
        when r.beforeImages.member1 is not null
            and size(r.beforeImages.member1) != coalesce(size(column_names), -1)
            then 'invalid_field_value'
        when r.afterImages.member1 is not null
            and size(r.afterImages.member1) != coalesce(size(column_names), -1)
            then 'invalid_field_value'
    end as decode_error
    from fielded
)
select
    source_format, topic, partition, offset, timestamp, ingest_batch_id, decode_error,
    case decode_error when 'avro_schema_mismatch' then {mismatch} end as decode_error_detail,
    {_ok("r.id")} as record_id,
    {_ok("r.version")} as record_version,
    {_ok("r.sourceTimestamp")} as source_timestamp,
    {_ok("r.sourcePosition")} as source_position,
    {_ok("r.safeSourcePosition")} as safe_source_position,
    {_ok("r.sourceTxid")} as source_txid,
    {_ok("r.source.sourceType")} as source_type,
    {_ok("r.source.version")} as source_version,
    {_ok("r.operation")} as operation,
    {_ok("r.objectName")} as object_name,
    case when decode_error is null and r.objectName != '' then name_parts[0] end
        as source_database,
    case when decode_error is null and size(name_parts) = 3 then name_parts[1] end
        as source_schema,
    case when decode_error is null and size(name_parts) >= 2 then element_at(name_parts, -1) end
        as source_table,
    {_ok("r.processTimestamps")} as process_timestamps,
    {_ok("r.tags")} as tags,
    {_ok(f"coalesce(nullif({pk_primary}, array()), {first_unique})")} as key_columns,
    case when decode_error is not null then null
        when size({pk_primary}) > 0 then 'primary_key'
        when exists(map_values(pk_uk), c -> size(c) > 0) then 'unique_key'
    end as key_source,
    case when decode_error is not null then null
        when size({pk_primary}) > 0 then 'PRIMARY'
        else element_at(map_keys(map_filter(pk_uk, (k, c) -> size(c) > 0)), 1)
    end as key_name,
    {_ok("column_names")} as column_names,
    {_ok("column_type_numbers")} as column_type_numbers,
    {_ok(f"map_from_arrays(column_names, transform(column_type_numbers, {type_text}))")}
        as column_types,
    {_ok(image("beforeImages"))} as before_image,
    {_ok(image("afterImages"))} as after_image,
    {_ok("exists(r.afterImages.member1, e -> coalesce(e.member11 = 'NONE', false))")}
        as after_image_is_partial,
    {_ok("case when r.operation = 'DDL' then r.afterImages.member0 end")} as ddl_text,
    {_ok("case when revision = 'new' then r.bornTimestamp end")} as born_timestamp_ms
from checked
"""


def bronze_parquet(dump: Path) -> Path:
    """The records of topic dump ``dump`` as one bronze-like Parquet file with one row group
    (``<dump>.parquet``, written once): the columns of ``BRONZE_COLUMN_TYPES``."""
    out = dump.with_suffix(".parquet")
    if out.exists():
        return out
    columns: dict[str, list[Any]] = {name: [] for name in BRONZE_COLUMNS}
    for path in sorted(dump.glob("*.jsonl")):
        with path.open() as lines:
            for line in lines:
                record = json.loads(line)
                encoded = record.get("value_base64")
                text = record.get("value")
                columns["source_format"].append("dts_avro")
                columns["topic"].append(record["topic"])
                columns["partition"].append(record.get("partition", 0))
                columns["offset"].append(record["offset"])
                columns["timestamp"].append(record.get("timestamp", 0) * 1000)
                columns["value"].append(
                    base64.b64decode(encoded) if encoded is not None else text and text.encode()
                )
                columns["ingest_batch_id"].append(1)
    types = {
        "partition": pa.int32(),
        "offset": pa.int64(),
        "timestamp": pa.timestamp("us", tz="UTC"),
        "value": pa.binary(),
        "ingest_batch_id": pa.int64(),
    }
    table = pa.table({name: pa.array(columns[name], types.get(name)) for name in BRONZE_COLUMNS})
    pq.write_table(table, out, row_group_size=len(table) + 1)
    return out


def _bronze(spark: SparkSession, path: Path) -> DataFrame:
    frame = spark.read.parquet(str(path)).select(*BRONZE_COLUMNS)
    return frame.repartition(spark.sparkContext.defaultParallelism)


def fastavro(spark: SparkSession, path: Path) -> DataFrame:
    """The decoding model's work: the Python decoder in ``mapInArrow``."""
    ddl = decoder.output_schema_ddl(schema_ddl(BRONZE_COLUMN_TYPES))
    return _bronze(spark, path).mapInArrow(decoder.decode_batches, ddl).drop("value")


def _sql(spark: SparkSession, path: Path, query: str) -> DataFrame:
    _bronze(spark, path).createOrReplaceTempView("bronze")
    return spark.sql(query)


def from_avro_sql(spark: SparkSession, path: Path) -> DataFrame:
    """:func:`records_sql` over the bronze file."""
    return _sql(spark, path, records_sql("bronze"))


def read_only(spark: SparkSession, path: Path) -> DataFrame:
    """Stage: bronze read and the round-robin shuffle."""
    return _bronze(spark, path)


def one_from_avro(spark: SparkSession, path: Path) -> DataFrame:
    """Stage: one ``from_avro`` read with the newer schema, its struct kept."""
    return _sql(spark, path, f"select topic, partition, offset, {avro('new')} as r from bronze")


def probes_and_decode(spark: SparkSession, path: Path) -> DataFrame:
    """Stage: the revision probes and the full read, the struct kept."""
    query = records_sql("bronze")
    return _sql(
        spark, path, query[: query.index("fielded as")].rstrip().rstrip(",") + " select * from read"
    )


VARIANTS: dict[str, Callable[[SparkSession, Path], DataFrame]] = {
    "fastavro": fastavro,
    "from_avro_sql": from_avro_sql,
    "read_only": read_only,
    "one_from_avro": one_from_avro,
    "probes_and_decode": probes_and_decode,
}


def cpu_seconds() -> float:
    """User + system CPU seconds of this process's descendants (reaped children included)."""
    total = 0.0
    for process in psutil.Process().children(recursive=True):
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def timed(spark: SparkSession, variant: str, path: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``variant`` into the ``noop`` sink."""
    cpu, start = cpu_seconds(), time.perf_counter()
    VARIANTS[variant](spark, path).write.format("noop").mode("overwrite").save()
    return time.perf_counter() - start, cpu_seconds() - cpu


def check(spark: SparkSession, path: Path, show: int) -> int:
    """Rows where the two variants differ (printed, at most ``show``); their count."""
    key = ["topic", "partition", "offset"]
    ours, theirs = fastavro(spark, path), from_avro_sql(spark, path)
    columns = [c for c in ours.columns if c not in key]
    as_json = [
        F.array_sort(F.map_entries(c)).alias(c) if c == "tags" else F.col(c) for c in columns
    ]
    a = ours.select(*key, F.to_json(F.struct(*as_json)).alias("a"))
    b = theirs.select(*key, F.to_json(F.struct(*as_json)).alias("b"))
    differ = a.join(b, key, "full").where("a is null or b is null or a != b").cache()
    for row in differ.limit(show).collect():
        left, right = json.loads(row["a"] or "{}"), json.loads(row["b"] or "{}")
        print(
            {
                k: (left.get(k), right.get(k))
                for k in left.keys() | right.keys()
                if left.get(k) != right.get(k)
            }
        )
    return differ.count()


def main() -> None:
    """Command line: see the module doc."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variants", default="fastavro,from_avro_sql")
    parser.add_argument("--warm-dump", type=Path, help="warm up on this dump (default --dump)")
    parser.add_argument("--check", action="store_true", help="compare the rows, do not time")
    args = parser.parse_args()
    path = bronze_parquet(args.dump)
    spark = get_spark()
    if args.check:
        print(f"rows that differ: {check(spark, path, show=5)}")
        return
    names = args.variants.split(",")
    warm = bronze_parquet(args.warm_dump) if args.warm_dump else path
    for name in names:
        print(f"warm-up {name}: wall, cpu = {timed(spark, name, warm)}", flush=True)
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for round_ in range(args.rounds):
        for name in names if round_ % 2 == 0 else names[::-1]:
            wall, cpu = timed(spark, name, path)
            results[name].append((round(wall, 2), round(cpu, 2)))
            print(f"round {round_} {name}: wall {wall:.2f} s, cpu {cpu:.2f} s", flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
