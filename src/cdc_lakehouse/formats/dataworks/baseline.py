"""The benchmark's baselines of the DataWorks envelope, registry formats ``dataworks_json`` and
``datahub_blob`` (docs/formats.md 1 and 2): one :class:`Baseline` for both
(:mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table ``schema.source.tableName`` (lower-case), op ``payload.op``; row
  ``payload.after.dataColumn`` (INSERT, UPDATE_AFTER) or ``payload.before.dataColumn``
  (DELETE, and the UPDATE_BEFOR(E) half of a split update); transaction markers, DDL and
  heartbeats give no change.
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.dataworks.ORDERING`):
  (``sequenceId`` as a number, 0 for a before half else 1, partition, offset, topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from cdc_lakehouse.formats.dataworks import FORMATS
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    DUCKDB_JSON as _JSON,
)
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    PARSED,
    SPARK_ROW,
    Baseline,
    DuckDbEvents,
)

_ORDERING = FORMATS[0].ordering_tuple  # both formats share the plug-in's ORDERING

_DML = "('INSERT', 'UPDATE_AFTER', 'DELETE', 'UPDATE_BEFOR', 'UPDATE_BEFORE')"
"""The ops that carry a row change, as an SQL list."""


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """DataWorks / DataHub Blob envelopes (docs/formats.md 1 and 2): one change per DML message;
    a split update's UPDATE_BEFOR(E) half ranks below its UPDATE_AFTER half."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        message = loads(raw)
        payload = message["payload"]
        op = payload["op"]
        if op == "INSERT" or op == "UPDATE_AFTER":
            image, rank, deleted = payload["after"], 1, False
        elif op == "DELETE":
            image, rank, deleted = payload["before"], 1, True
        elif op == "UPDATE_BEFOR" or op == "UPDATE_BEFORE":
            image, rank, deleted = payload["before"], 0, False
        else:
            continue  # transaction markers, DDL, heartbeats
        table = message["schema"]["source"]["tableName"].lower()
        order = _ORDERING(
            {
                "sequence_id": int(payload["sequenceId"]),
                "image_rank": rank,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield table, order, deleted, image["dataColumn"]


DUCKDB = DuckDbEvents(
    f"""
    with messages as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"schema": {{"source": {{"tableName": "varchar"}}}},
                "payload": {{"op": "varchar", "sequenceId": "varchar",
                    "before": {{"dataColumn": {_JSON}}}, "after": {{"dataColumn": {_JSON}}}}}}}')
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
"""DuckDB: the envelope parsed once (``materialized``), the image kept as json."""

SPARK_SCHEMA = f"""struct<`schema`:struct<source:struct<tableName:string>>,
        payload:struct<op:string,sequenceId:string,
            before:struct<dataColumn:{SPARK_ROW}>,after:struct<dataColumn:{SPARK_ROW}>>>"""

SPARK_EVENTS = f"""
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

_BASELINE = Baseline(
    changes=changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
)
BASELINES: dict[str, Baseline] = {fmt.name: _BASELINE for fmt in FORMATS}
"""``dataworks_json`` and ``datahub_blob`` -> their baselines (the same envelope)."""
