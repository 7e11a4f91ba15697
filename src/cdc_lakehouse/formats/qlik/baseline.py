"""The benchmark's baselines of Qlik Replicate's Kafka messages, registry formats ``qlik_json``
and ``qlik_avro`` (docs/formats.md 5; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table = ``lineage.table`` (lower-case) of the MD message whose ``schemaId`` the DT message's
  ``messageSchemaId`` names; op ``headers.operation``; row ``message.data`` (a DELETE's too).
  MD messages have no Kafka key, so they may sit in another partition than the DT messages: a
  DT message whose MD message comes later in the input waits until the end.
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.qlik.ORDERING`):
  (1 for REFRESH else 2, ``changeSequence`` as text, partition, offset, topic).
- ``qlik_avro``: an MD message is Avro with its schema embedded (``messageSchema``) and carries
  the data schema (``dataSchema``) of its table's DT messages. No engine here reads that in
  SQL: DuckDB and the PySpark script decode with fastavro in Python (:func:`avro_changes`);
  the PySpark script reads the MD messages on the driver first (:func:`spark_avro_changes`).
  ``columnMask`` is not applied (the workload's updates carry every column).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator, Mapping
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any, TypeAlias

import fastavro
import orjson

from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.formats.qlik import FORMATS
from cdc_lakehouse.formats.qlik.avro_schema import ENVELOPE_SCHEMA, METADATA_SCHEMA
from cdc_lakehouse.tools.bench.baselines.plugin_api import DUCKDB_JSON as _JSON
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    PARSED,
    SPARK_ROW,
    Baseline,
    Decoder,
    DuckDbEvents,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

_ORDERING = FORMATS[0].ordering_tuple  # both formats share the plug-in's ORDERING


def _change(
    table: str, message: dict[str, Any], topic: str, partition: int, offset: int
) -> Change | None:
    """The change of a DT message of ``table``; None for an operation that carries none."""
    headers = message["headers"]
    operation = headers["operation"]
    if operation == "REFRESH":
        rank, sequence = 1, ""
    elif operation in ("INSERT", "UPDATE", "DELETE"):
        rank, sequence = 2, headers["changeSequence"]
    else:
        return None
    order = _ORDERING(
        {
            "load_rank": rank,
            "change_sequence": sequence,
            "partition": partition,
            "offset": offset,
            "topic": topic,
        }
    )
    return table, order, operation == "DELETE", message["data"]


# --------------------------------------------------------------------------- qlik_json


def json_changes(values: Iterable[Value]) -> Iterator[Change]:
    """Qlik JSON ``atMSG`` envelopes (docs/formats.md 5): MD messages map ``schemaId`` -> table;
    a DT message names its table by ``messageSchemaId``. MD messages have no Kafka key, so
    they may sit in another partition than the DT messages: a DT whose MD comes later in the
    input waits until the end."""
    loads = orjson.loads
    tables: dict[str, str] = {}
    waiting: list[tuple[str, int, int, dict[str, Any]]] = []
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        envelope = loads(raw)
        kind = envelope.get("type")
        message = envelope["message"]
        if kind == "MD":
            tables[message["schemaId"]] = message["lineage"]["table"].lower()
            continue
        if kind != "DT":
            continue
        table = tables.get(envelope.get("messageSchemaId") or "")
        if table is None:
            waiting.append((topic, partition, offset, envelope))
            continue
        change = _change(table, message, topic, partition, offset)
        if change is not None:
            yield change
    for topic, partition, offset, envelope in waiting:
        schema_id = envelope.get("messageSchemaId") or ""
        if schema_id not in tables:
            raise ValueError(f"qlik DT message at {partition}/{offset}: no MD for {schema_id!r}")
        change = _change(tables[schema_id], envelope["message"], topic, partition, offset)
        if change is not None:
            yield change


DUCKDB = DuckDbEvents(
    f"""
    with envelopes as materialized (
        select
            topic,
            partition,
            "offset",
            from_json(j, '{{"type": "varchar", "messageSchemaId": "varchar",
                "message": {{"schemaId": "varchar", "lineage": {{"table": "varchar"}},
                    "data": {_JSON},
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
"""DuckDB: the DT messages joined to the MD messages' tables."""

SPARK_SCHEMA = f"""struct<type:string,messageSchemaId:string,
        message:struct<schemaId:string,lineage:struct<`table`:string>,data:{SPARK_ROW},
            headers:struct<operation:string,changeSequence:string>>>"""

SPARK_EVENTS = f"""
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
"""Spark: the DT messages joined to the MD messages' tables (broadcast: a few MD messages)."""


# --------------------------------------------------------------------------- qlik_avro

_ENVELOPE = fastavro.parse_schema(ENVELOPE_SCHEMA)
_METADATA = fastavro.parse_schema(METADATA_SCHEMA)
Catalog: TypeAlias = dict[str, tuple[str, str]]
"""Qlik Avro ``schemaId`` -> (table lower-case, ``dataSchema`` Avro text) from MD messages."""


@lru_cache(maxsize=64)
def _parsed(schema_text: str) -> Any:
    return fastavro.parse_schema(orjson.loads(schema_text))


def avro_envelope(raw: bytes) -> dict[str, Any]:
    """The ``MessageEnvelope`` of a Qlik Avro value (:data:`.avro_schema.ENVELOPE_SCHEMA`)."""
    return fastavro.schemaless_reader(io.BytesIO(raw), _ENVELOPE)  # type: ignore[return-value]


def avro_metadata(envelope: Mapping[str, Any]) -> tuple[str, str, str]:
    """(``schemaId``, table lower-case, ``dataSchema`` text) of an MD envelope, read with the
    schema it embeds (``messageSchema``), else the documented metadata schema."""
    schema_text = envelope.get("messageSchema")
    schema = _parsed(schema_text) if schema_text else _METADATA
    message = fastavro.schemaless_reader(io.BytesIO(envelope["message"]), schema)
    assert isinstance(message, dict)
    return message["schemaId"], message["lineage"]["table"].lower(), message["dataSchema"]


def avro_changes(values: Iterable[Value], catalog: Catalog | None = None) -> Iterator[Change]:
    """Qlik Avro envelopes (docs/formats.md 5): MD messages (Avro, schema embedded) give each
    ``schemaId`` its table and ``dataSchema``; a DT message is read with the data schema its
    ``messageSchemaId`` names. ``catalog``: MD messages already read elsewhere (the PySpark
    script reads them on the driver first). A DT whose MD comes later waits until the end."""
    tables: Catalog = dict(catalog or {})
    waiting: list[tuple[str, int, int, dict[str, Any]]] = []

    def data_change(
        envelope: dict[str, Any], topic: str, partition: int, offset: int
    ) -> Change | None:
        table, schema_text = tables[envelope["messageSchemaId"]]
        message = fastavro.schemaless_reader(io.BytesIO(envelope["message"]), _parsed(schema_text))
        assert isinstance(message, dict)
        return _change(table, message, topic, partition, offset)

    for topic, partition, offset, raw in values:
        if not raw:
            continue
        envelope = avro_envelope(raw)
        kind = envelope["type"]
        if kind == "MD":
            schema_id, table, data_schema = avro_metadata(envelope)
            tables[schema_id] = (table, data_schema)
            continue
        if kind != "DT":
            continue
        if envelope.get("messageSchemaId") not in tables:
            waiting.append((topic, partition, offset, envelope))
            continue
        change = data_change(envelope, topic, partition, offset)
        if change is not None:
            yield change
    for topic, partition, offset, envelope in waiting:
        if envelope.get("messageSchemaId") not in tables:
            raise ValueError(
                f"qlik DT message at {partition}/{offset}: no MD for "
                f"{envelope.get('messageSchemaId')!r}"
            )
        change = data_change(envelope, topic, partition, offset)
        if change is not None:
            yield change


def spark_avro_changes(raw: DataFrame) -> Decoder:
    """The PySpark script's ``mapInArrow`` decoder: :func:`avro_changes` knowing every MD
    message of ``raw`` (the bronze rows of the topics), read on the driver first - a DT message
    is readable only with the data schema its MD message carries. An MD message is an Avro
    envelope whose ``type`` is ``MD`` (bytes 6-8: string length 2 as a zigzag varint, ``MD``)."""
    catalog: Catalog = {}
    for record in raw.where("substring(value, 6, 3) = X'044D44'").select("value").collect():
        schema_id, table, data_schema = avro_metadata(avro_envelope(record["value"]))
        catalog[schema_id] = (table, data_schema)
    return partial(avro_changes, catalog=catalog)


_AVRO_IN_PYTHON = (
    "Avro: DuckDB has no Avro reader here (its extension would be downloaded) and Spark's "
    "from_avro cannot read a DT message without its MD message's data schema; fastavro decodes"
)

BASELINES: dict[str, Baseline] = {
    "qlik_json": Baseline(
        changes=json_changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
    ),
    "qlik_avro": Baseline(
        changes=avro_changes,
        spark_changes=spark_avro_changes,
        python_decode=_AVRO_IN_PYTHON,
    ),
}
"""``qlik_json`` and ``qlik_avro`` -> their baselines."""
