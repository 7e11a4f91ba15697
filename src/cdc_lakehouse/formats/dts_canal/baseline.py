"""The benchmark's baselines of DTS Canal JSON, open-source meaning, registry format
``dts_canal_json`` (docs/formats.md 4c; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table ``table`` (lower-case), op ``type``; each element of ``data`` is one change (the row
  after INSERT / UPDATE, the deleted row of DELETE, a snapshot row of INIT); DDL messages
  (``isDdl``) give none.
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.dts_canal.ORDERING`):
  (``es``, 0 for INIT else 1, partition, offset, index in ``data``, topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from cdc_lakehouse.formats.dts_canal import FORMATS
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import DUCKDB_JSON as _JSON
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    PARSED,
    SPARK_ROW,
    Baseline,
    DuckDbEvents,
)

_ORDERING = FORMATS[0].ordering_tuple

_DML = {"INSERT": (1, False), "UPDATE": (1, False), "DELETE": (1, True), "INIT": (0, False)}
"""Op -> (snapshot rank, is a delete)."""


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """DTS Canal JSON, open-source meaning (docs/formats.md 4c): every element of ``data`` is its
    own change (the row after an INSERT / UPDATE, the deleted row of a DELETE)."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        message = loads(raw)
        kind = _DML.get(message.get("type"))
        if kind is None or message.get("isDdl"):
            continue
        rank, deleted = kind
        table = message["table"].lower()
        es = message["es"]
        for index, row in enumerate(message["data"]):
            order = _ORDERING(
                {
                    "es_ms": es,
                    "snapshot_rank": rank,
                    "partition": partition,
                    "offset": offset,
                    "row_index": index,
                    "topic": topic,
                }
            )
            yield table, order, deleted, row


DUCKDB = DuckDbEvents(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"data": [{_JSON}], "table": "varchar", "type": "varchar",
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
"""DuckDB: ``data`` unnested, each element's 1-based subscript its ``row_index``."""

SPARK_SCHEMA = f"""struct<data:array<{SPARK_ROW}>,`table`:string,type:string,es:bigint,
        isDdl:boolean>"""

SPARK_EVENTS = f"""
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
"""Spark: ``data`` through ``posexplode``, each element's 0-based position its ``row_index``."""

BASELINES: dict[str, Baseline] = {
    "dts_canal_json": Baseline(
        changes=changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
    )
}
"""``dts_canal_json`` -> its baselines."""
