"""DuckDB baseline: the bronze parquet files read with ``read_parquet``, JSON decoded with
DuckDB's JSON functions (``from_json`` into a struct of just the fields needed, the row image
kept as ``json``), the latest change per (table, row key) kept with ``row_number()`` over a
window ordered by the format's ordering key (``qualify``), deletes dropped, the winners' images
turned into ``map(varchar, varchar)``, into a DuckDB table ``latest``.

Two things make it fast, as a DuckDB user would write it: the message CTE is ``materialized``
(else DuckDB pushes the op filter below the projection and parses every message twice), and
only the key columns are read from every image (``json_extract_string``); the whole image
becomes a map for the live rows only.

DuckDB has no Avro reader here (its ``avro`` extension would have to be downloaded, and these
machines have no network), so for ``dts_avro`` and ``qlik_avro`` the values are read from
parquet by DuckDB, decoded by fastavro in Python into an Arrow table (the decoders of
:mod:`.formats`) and the latest-per-key runs in DuckDB on that table. The Python decode is
single-threaded and inside the timing.

Timed: from opening the connection to ``create table latest`` done. Not timed: fetching the
rows into Python and counting the events (a second pass over the decoded events).

Where each format keeps table, op, image and ordering key: :mod:`.formats`; the SQL below
follows it (the ordering keys of ``models/staging/<folder>/stg_<format>__events.sql``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import duckdb

from cdc_lakehouse.tools.bench.baselines import BaselineResult, LatestRows
from cdc_lakehouse.tools.bench.baselines.formats import (
    AVRO_FORMATS,
    BENCH_KEYS,
    DECODERS,
    TUPLE_META,
    changes_table,
    check_format,
    order_columns,
)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _list(items: Sequence[str]) -> str:
    return "[" + ", ".join(_literal(item) for item in items) + "]"


_MAP = "'\"map(varchar, varchar)\"'"
_ROW = '"json"'
_DML = "('INSERT', 'UPDATE_AFTER', 'DELETE', 'UPDATE_BEFOR', 'UPDATE_BEFORE')"


@dataclass(frozen=True)
class _Format:
    """How DuckDB decodes one JSON format.

    Attributes:
        events: SQL of the ``events`` view over ``src`` (``topic``, ``partition``, ``offset``,
            ``j`` = the value as text) giving ``tbl``, the ordering key's parts named as the
            format's plug-in names them (:func:`.formats.order_columns`; ``partition``,
            ``"offset"`` and ``topic`` as they are), ``is_delete``,
            ``image`` (json: the row image) and ``base`` (json or null: an image the row image
            overlays; the key columns are read from it when present).
        row: SQL of a winner's row map from ``image`` and ``base``.
    """

    events: str
    row: str = (
        f"case when base is null then from_json(image, {_MAP}) "
        f"else map_concat(from_json(base, {_MAP}), from_json(image, {_MAP})) end"
    )


_EVENTS: dict[str, _Format] = {}
_EVENTS["dataworks_json"] = _Format(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"schema": {{"source": {{"tableName": "varchar"}}}},
                "payload": {{"op": "varchar", "sequenceId": "varchar",
                    "before": {{"dataColumn": {_ROW}}}, "after": {{"dataColumn": {_ROW}}}}}}}')
                as m
        from src
    )
    select
        lower(m['schema']['source']['tableName']) as tbl,
        cast(m['payload']['sequenceId'] as hugeint) as sequence_id,
        case when m['payload']['op'] in ('UPDATE_BEFOR', 'UPDATE_BEFORE') then 0 else 1 end
            as image_rank,
        partition,
        "offset",
        topic,
        m['payload']['op'] = 'DELETE' as is_delete,
        null::json as base,
        case
            when m['payload']['op'] in ('INSERT', 'UPDATE_AFTER')
                then m['payload']['after']['dataColumn']
            else m['payload']['before']['dataColumn']
        end as image
    from messages
    where m['payload']['op'] in {_DML}
    """,
)
_EVENTS["datahub_blob"] = _EVENTS["dataworks_json"]

_META = "(" + ", ".join(_literal(name) for name in TUPLE_META) + ")"
_EVENTS["datahub_tuple"] = _Format(
    """
    with records as materialized (
        select
            topic,
            partition,
            "offset",
            j::json as image,
            from_json(j, '{"_sequence_id_": "varchar", "_operation_type_": "varchar",
                "_source_table_": "varchar", "_before_image_": "varchar"}') as m
        from src
    )
    select
        lower(coalesce(m['_source_table_'], split_part(topic, '.', -1))) as tbl,
        cast(m['_sequence_id_'] as hugeint) as sequence_id,
        case when m['_before_image_'] = 'Y' then 0 else 1 end as image_rank,
        partition,
        "offset",
        topic,
        m['_operation_type_'] = 'D' as is_delete,
        null::json as base,
        image
    from records
    where m['_operation_type_'] in ('I', 'U', 'D')
    """,
    row=f"map_from_entries(list_filter(map_entries(from_json(image, {_MAP})), "
    f"lambda e: e.key not in {_META}))",
)

_EVENTS["lindorm_debezium"] = _Format(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"payload": {{"op": "varchar", "ts_ms": "bigint",
                "before": {_ROW}, "after": {_ROW},
                "source": {{"table": "varchar", "ts_ms": "bigint"}}}}}}')['payload'] as p
        from src
    )
    select
        lower(p['source']['table']) as tbl,
        p['source']['ts_ms'] as source_ts_ms,
        coalesce(p['ts_ms'], 0) as payload_ts_ms,
        partition,
        "offset",
        topic,
        p['op'] = 'd' as is_delete,
        null::json as base,
        case when p['op'] = 'd' then p['before'] else p['after'] end as image
    from messages
    where p['op'] in ('c', 'u', 'r', 'd')
    """,
)

# plain Debezium JSON (docs/formats.md 6): the payload under "payload" (schemas enabled) or the
# value itself (schemaless); decimals of schema-enabled messages stay base64 (the benchmark
# compares integer and text columns only)
_EVENTS["debezium_json"] = _Format(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(coalesce(json_extract(j, '$.payload'), j::json), '{{"op": "varchar",
                "before": {_ROW}, "after": {_ROW}, "source": {{"table": "varchar",
                "connector": "varchar", "lsn": "bigint", "file": "varchar", "pos": "bigint",
                "row": "bigint"}}}}') as p
        from src
    )
    select
        lower(p['source']['table']) as tbl,
        case
            when p['source']['connector'] = 'mysql'
                then cast(split_part(p['source']['file'], '.', -1) as bigint)
            else p['source']['lsn']
        end as log_position,
        case when p['source']['connector'] = 'mysql' then p['source']['pos'] else 0 end
            as log_offset,
        case when p['source']['connector'] = 'mysql' then coalesce(p['source']['row'], 0) else 0
            end as log_row,
        partition,
        "offset",
        topic,
        p['op'] = 'd' as is_delete,
        null::json as base,
        case when p['op'] = 'd' then p['before'] else p['after'] end as image
    from messages
    where p['op'] in ('c', 'u', 'r', 'd')
    """,
)

_EVENTS["dts_shareplex_json"] = _Format(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"meta": {{"op": "varchar", "scn": "varchar", "seq": "bigint",
                "table": "varchar"}}, "data": {_ROW}, "key": {_ROW}}}') as m
        from src
    )
    select
        lower(split_part(m['meta']['table'], '.', -1)) as tbl,
        cast(m['meta']['scn'] as hugeint) as scn,
        coalesce(m['meta']['seq'], 0) as seq,
        1 as image_rank,
        partition,
        "offset",
        topic,
        m['meta']['op'] in ('del', 'DELETE') as is_delete,
        case when m['meta']['op'] in ('upd', 'UPDATE', 'UPDATE AFTER') then m['key'] end as base,
        m['data'] as image
    from messages
    where m['meta']['op'] in ('ins', 'upd', 'del', 'INSERT', 'UPDATE', 'UPDATE AFTER', 'DELETE')
    """,
)

_EVENTS["dts_canal_json"] = _Format(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"data": [{_ROW}], "table": "varchar", "type": "varchar",
                "es": "bigint", "isDdl": "boolean"}}') as m
        from src
    ),
    rows as (
        select
            topic,
            partition,
            "offset",
            m,
            unnest(m['data']) as image,
            generate_subscripts(m['data'], 1) as row_index
        from messages
        where m['type'] in ('INSERT', 'UPDATE', 'DELETE', 'INIT')
            and not coalesce(m['isDdl'], false)
    )
    select
        lower(m['table']) as tbl,
        m['es'] as es_ms,
        case when m['type'] = 'INIT' then 0 else 1 end as snapshot_rank,
        partition,
        "offset",
        row_index,
        topic,
        m['type'] = 'DELETE' as is_delete,
        null::json as base,
        image
    from rows
    """,
)

_EVENTS["qlik_json"] = _Format(
    f"""
    with envelopes as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"type": "varchar", "messageSchemaId": "varchar",
                "message": {{"schemaId": "varchar", "lineage": {{"table": "varchar"}},
                    "data": {_ROW},
                    "headers": {{"operation": "varchar", "changeSequence": "varchar"}}}}}}') as m
        from src
    ),
    tables as (
        select m['message']['schemaId'] as schema_id, lower(m['message']['lineage']['table']) as tbl
        from envelopes
        where m['type'] = 'MD'
    )
    select
        tables.tbl,
        case when m['message']['headers']['operation'] = 'REFRESH' then 1 else 2 end as load_rank,
        case
            when m['message']['headers']['operation'] = 'REFRESH' then ''
            else m['message']['headers']['changeSequence']
        end as change_sequence,
        partition,
        "offset",
        topic,
        m['message']['headers']['operation'] = 'DELETE' as is_delete,
        null::json as base,
        m['message']['data'] as image
    from envelopes
    inner join tables on envelopes.m['messageSchemaId'] = tables.schema_id
    where m['type'] = 'DT'
        and m['message']['headers']['operation'] in ('INSERT', 'UPDATE', 'DELETE', 'REFRESH')
    """,
)


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
    """
    check_format(format_)
    if not parquet_files or not topics:
        raise ValueError("duckdb baseline: give at least one parquet file and one topic")
    source = f"""
        select topic, partition, "offset", value
        from read_parquet({_list(parquet_files)})
        where topic in ({", ".join(_literal(t) for t in topics)}) and value is not null
    """
    start = time.perf_counter()
    con = duckdb.connect(config={"threads": threads})
    if format_ in AVRO_FORMATS:
        records = con.sql(source).to_arrow_table()
        values = zip(
            records["topic"].to_pylist(),
            records["partition"].to_pylist(),
            records["offset"].to_pylist(),
            records["value"].to_pylist(),
            strict=True,
        )
        decoded = changes_table(DECODERS[format_](values), format_)
        con.register("decoded", decoded)
        con.execute("create view events as select * from decoded")
        sql = latest_sql(order_columns(format_), keys, map_key_values(keys), "row")
    else:
        spec = _EVENTS[format_]
        con.execute(
            f'create view src as select topic, partition, "offset", decode(value) as j '
            f"from ({source})"
        )
        con.execute(f"create view events as {spec.events}")
        sql = latest_sql(order_columns(format_), keys, json_key_values(keys), spec.row)
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
        + (", fastavro decode in Python" if format_ in AVRO_FORMATS else ""),
        cores=threads,
    )
