"""The benchmark's baselines of plain Debezium JSON (registry format ``debezium_json``,
docs/formats.md 6; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`), the open-source
PostgreSQL and MySQL connectors' change events as Kafka Connect's JsonConverter writes them
(with schemas: ``{"schema": ..., "payload": ...}``; schemaless: the payload itself).

- Table ``payload.source.table`` (lower-case), op ``payload.op``: ``c`` / ``u`` / ``r`` give
  ``payload.after``, ``d`` gives ``payload.before`` as a delete. Tombstones (NULL values, the
  record after each delete) and truncates (``t``) are skipped.
- Row values as orjson decodes them, except decimals declared by the schema
  (``org.apache.kafka.connect.data.Decimal``, sent as base64 of the two's-complement unscaled
  integer), which become their plain text with ``scale`` fraction digits (``-12.50``), as the
  project's decoder yields them. Schemaless decimals are already text
  (``decimal.handling.mode=string``).
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.debezium.ORDERING`,
  :meth:`~cdc_lakehouse.formats.plugin.Format.ordering_tuple`), one shape for both connectors:
  PostgreSQL (``source.lsn``, 0, 0, ...); MySQL (number of ``source.file`` after its last
  ``.``, ``source.pos``, ``source.row``, ...), then partition, offset, topic.

Like the other baselines, a table without a key is not handled specially: the before image of
its ``u`` (the identity the update removes) is not turned into a delete. The DuckDB and Spark
SQL read the payload under ``payload`` (schemas enabled) or the value itself (schemaless);
their decimals of schema-enabled messages stay base64 (the benchmark compares integer and
text columns only).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from cdc_lakehouse.formats.debezium import FORMATS
from cdc_lakehouse.formats.debezium.encoder_debezium_json import plain_decimal
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import DUCKDB_JSON as _JSON
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    PARSED,
    SPARK_ROW,
    Baseline,
    DuckDbEvents,
)

_ORDERING = FORMATS[0].ordering_tuple

DECIMAL = "org.apache.kafka.connect.data.Decimal"


def decimal_text(encoded: str, scale: int) -> str:
    """Plain text (Java ``BigDecimal.toPlainString``) of a Kafka Connect Decimal sent as base64
    of its two's-complement big-endian unscaled integer."""
    return plain_decimal(int.from_bytes(base64.b64decode(encoded), "big", signed=True), scale)


def decimal_scales(schema: Any, image: str) -> dict[str, int]:
    """Column -> scale of the Decimal fields of the value schema's ``image`` struct (``before``
    / ``after``); empty without a schema."""
    if not isinstance(schema, dict):
        return {}
    for field in schema.get("fields") or ():
        if field.get("field") == image:
            return {
                column["field"]: int(column["parameters"]["scale"])
                for column in field.get("fields") or ()
                if column.get("name") == DECIMAL
            }
    return {}


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """One :data:`~cdc_lakehouse.formats.plugin.Change` per ``c`` / ``u`` / ``r`` / ``d`` event
    (module doc)."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue  # tombstone
        message = loads(raw)
        schema = None
        if "payload" in message and "op" not in message:
            schema, message = message.get("schema"), message["payload"]
        op = message["op"]
        if op == "d":
            name, deleted = "before", True
        elif op in ("c", "u", "r"):
            name, deleted = "after", False
        else:
            continue  # t (truncate)
        image = message[name]
        scales = decimal_scales(schema, name)
        if scales:
            image = {
                column: decimal_text(value, scales[column])
                if column in scales and value is not None
                else value
                for column, value in image.items()
            }
        source = message["source"]
        if source["connector"] == "mysql":
            position = int(source["file"].rpartition(".")[2])
            log_offset, log_row = source["pos"], source.get("row") or 0
        else:
            position, log_offset, log_row = source["lsn"], 0, 0
        order = _ORDERING(
            {
                "log_position": position,
                "log_offset": log_offset,
                "log_row": log_row,
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
            from_json(coalesce(json_extract(j, '$.payload'), j::json), '{{"op": "varchar",
                "before": {_JSON}, "after": {_JSON}, "source": {{"table": "varchar",
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
"""DuckDB: the payload under ``payload``, else the value itself."""

_SPARK_PAYLOAD = f"""op:string,before:{SPARK_ROW},after:{SPARK_ROW},
    source:struct<`table`:string,connector:string,lsn:bigint,file:string,pos:bigint,`row`:bigint>"""
SPARK_SCHEMA = f"struct<payload:struct<{_SPARK_PAYLOAD}>,{_SPARK_PAYLOAD}>"
"""Spark: the payload's fields under ``payload`` (schemas enabled) and at the top
(schemaless)."""

SPARK_EVENTS = f"""
    with messages as (
        select
            topic, `partition`, `offset`,
            coalesce(
                m.payload,
                struct(m.op as op, m.before as before, m.after as after, m.source as source)
            ) as p
        from {PARSED}
    )
    select
        lower(p.source.`table`) as tbl,
        case
            when p.source.connector = 'mysql'
                then cast(substring_index(p.source.file, '.', -1) as bigint)
            else p.source.lsn
        end as log_position,
        case when p.source.connector = 'mysql' then p.source.pos else 0 end as log_offset,
        case when p.source.connector = 'mysql' then coalesce(p.source.`row`, 0) else 0 end
            as log_row,
        `partition`,
        `offset`,
        topic,
        p.op = 'd' as is_delete,
        case when p.op = 'd' then p.before else p.after end as row
    from messages
    where p.op in ('c', 'u', 'r', 'd')
    """
"""Spark: the payload under ``payload``, else the value's own fields."""

BASELINES: dict[str, Baseline] = {
    "debezium_json": Baseline(
        changes=changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
    )
}
"""``debezium_json`` -> its baselines."""
