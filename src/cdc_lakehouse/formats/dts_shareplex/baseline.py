"""The benchmark's baselines of DTS Shareplex JSON, registry format ``dts_shareplex_json``
(docs/formats.md 4b; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table = ``meta.table`` after the dot (lower-case), op ``meta.op``: ``ins`` / ``upd`` /
  ``del`` (and the documented INSERT / UPDATE / DELETE spellings); row ``data`` (ins), ``key``
  overlaid by ``data`` (upd: ``data`` holds only the changed columns), ``data`` = the key
  (del). TRUNCATE and DROP COLUMN give no change.
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.dts_shareplex.ORDERING`):
  (``scn`` as a number, ``seq``, 1 (the workload's updates are one UPDATE message, no BEFORE
  half), partition, offset, topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from cdc_lakehouse.formats.dts_shareplex import FORMATS
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import DUCKDB_JSON as _JSON
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    PARSED,
    SPARK_ROW,
    Baseline,
    DuckDbEvents,
)

_ORDERING = FORMATS[0].ordering_tuple


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """DTS Shareplex JSON (docs/formats.md 4b): ``ins`` / ``upd`` / ``del`` (and the documented
    INSERT / UPDATE / DELETE spellings); ``upd`` carries the key in ``key`` and only the
    changed columns in ``data``."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        message = loads(raw)
        meta = message["meta"]
        op = meta["op"]
        if op == "upd" or op == "UPDATE" or op == "UPDATE AFTER":
            row, deleted = {**message.get("key", {}), **message["data"]}, False
        elif op == "ins" or op == "INSERT":
            row, deleted = message["data"], False
        elif op == "del" or op == "DELETE":
            row, deleted = message["data"], True
        else:
            continue  # TRUNCATE, DROP COLUMN
        table = meta["table"].rpartition(".")[2].lower()
        order = _ORDERING(
            {
                "scn": int(meta["scn"]),
                "seq": meta.get("seq") or 0,
                "image_rank": 1,  # the workload's updates are one UPDATE message (no BEFORE half)
                "partition": partition,
                "offset": offset,
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
            from_json(j, '{{"meta": {{"op": "varchar", "scn": "varchar", "seq": "bigint",
                "table": "varchar"}}, "data": {_JSON}, "key": {_JSON}}}') as m
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
"""DuckDB: an ``upd``'s ``key`` is the base its ``data`` overlays."""

SPARK_SCHEMA = f"""struct<meta:struct<op:string,scn:string,seq:bigint,`table`:string>,
        data:{SPARK_ROW},`key`:{SPARK_ROW}>"""

SPARK_EVENTS = f"""
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
                    coalesce(m.`key`, cast(map() as {SPARK_ROW})),
                    (k, v) -> not map_contains_key(m.data, k)
                ),
                m.data
            )
            else m.data
        end as row
    from messages
    where m.meta.op in ('ins', 'upd', 'del', 'INSERT', 'UPDATE', 'UPDATE AFTER', 'DELETE')
    """

BASELINES: dict[str, Baseline] = {
    "dts_shareplex_json": Baseline(
        changes=changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
    )
}
"""``dts_shareplex_json`` -> its baselines."""
