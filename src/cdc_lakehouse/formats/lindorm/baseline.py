"""The benchmark's baselines of Lindorm Debezium V2.0, registry format ``lindorm_debezium``
(docs/formats.md 3; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table ``payload.source.table`` (lower-case), op ``payload.op``; row ``payload.after``
  (c, u, r) or ``payload.before`` (d). A NULL column is absent from the image (Lindorm keeps no
  cell for it); the row then simply lacks the column.
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.lindorm.ORDERING`):
  (``source.ts_ms``, ``payload.ts_ms``, partition, offset, topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from cdc_lakehouse.formats.lindorm import FORMATS
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
    """Lindorm Debezium V2.0 (docs/formats.md 3). A NULL column is absent from the image (Lindorm
    keeps no cell for it); the row then simply lacks the column."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        payload = loads(raw)["payload"]
        op = payload["op"]
        if op == "d":
            image, deleted = payload["before"], True
        elif op in ("c", "u", "r"):
            image, deleted = payload["after"], False
        else:
            continue
        source = payload["source"]
        order = _ORDERING(
            {
                "source_ts_ms": source["ts_ms"],
                "payload_ts_ms": payload.get("ts_ms") or 0,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield source["table"].lower(), order, deleted, image


DUCKDB = DuckDbEvents(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"payload": {{"op": "varchar", "ts_ms": "bigint",
                "before": {_JSON}, "after": {_JSON},
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

SPARK_SCHEMA = f"""struct<payload:struct<op:string,ts_ms:bigint,before:{SPARK_ROW},
        after:{SPARK_ROW},source:struct<`table`:string,ts_ms:bigint>>>"""

SPARK_EVENTS = f"""
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

BASELINES: dict[str, Baseline] = {
    "lindorm_debezium": Baseline(
        changes=changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
    )
}
"""``lindorm_debezium`` -> its baselines."""
