"""Encoder of the ``qlik_avro`` format: Qlik Replicate's Kafka target writing Avro messages
(docs/formats.md section 5, seed 004; what is sent and when: :mod:`._qlik`).

Kafka value = one Avro ``MessageEnvelope`` (plain Avro binary, no schema-registry header;
:mod:`cdc_lakehouse.formats.qlik.avro_writer`):

- MD: the metadata message encoded with the envelope's embedded metadata schema, one per
  table, up front, and a new one (``tableVersion`` + 1, new ``schemaId`` and
  ``dataSchema``) at each schema change;
- DT: the data message encoded with the table's ``dataSchema`` (the one its MD message
  carries), referenced by the envelope's ``messageSchemaId`` and by
  ``headers.externalSchemaId`` (= the MD ``schemaId``); masks as big-endian bytes.

``shape=`` (:class:`~cdc_lakehouse.formats.qlik.encoder_common.StreamShape`) gives other layouts:
``externalSchemaId`` null, an envelope ``messageSchemaId`` no MD carries (such a DT names no
writer schema the decoder will use: it waits for an MD of that id, docs/formats.md 5a), one
topic per table, the data schema embedded in each DT envelope (``messageSchema``).

Values (Qlik "Kafka target data types", Avro primitive types, "use logical data types" off):
INT4 -> int, INT8 -> long, REAL8 -> double, BOOLEAN -> boolean, BYTES / BLOB -> bytes,
NUMERIC / DATE / DATETIME / WSTRING / NCLOB -> string (same text as JSON); a column that is
not provided (columnMask bit clear) is null.
"""

from __future__ import annotations

import io
from typing import Any

import fastavro

from cdc_lakehouse.formats.qlik import encoder_common as _qlik
from cdc_lakehouse.formats.qlik.avro_writer import QlikTable, encode_metadata, envelope, mask_bytes
from cdc_lakehouse.formats.qlik.encoder_common import (
    DEFAULT,
    FEATURES,
    StreamShape,
    source_type,
    value_text,
)
from cdc_lakehouse.tools.simulate.history import History, TableSpec
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "qlik_avro"
__all__ = ["FEATURES", "FORMAT", "encode", "source_type", "topics", "value_text"]


def topics(history: History, prefix: str, shape: StreamShape = DEFAULT) -> list[str]:
    """The one topic every table's MD and DT messages go to, ``<prefix>.qlik_avro``; with
    ``shape.topic_per_table``, one per table (``_qlik.table_topic``)."""
    return _qlik.stream_topics(history, prefix, FORMAT, shape)


def _data_value(
    table: QlikTable, dt: _qlik.DataMessage, parsed: Any, shape: StreamShape = DEFAULT
) -> bytes:
    record = {
        "data": dt.data,
        "beforeData": dt.before,
        "headers": {
            "operation": dt.operation,
            "changeSequence": dt.change_sequence,
            "timestamp": dt.timestamp,
            "streamPosition": dt.stream_position,
            "transactionId": dt.transaction_id,
            "changeMask": mask_bytes(dt.change_mask),
            "columnMask": mask_bytes(dt.column_mask),
            "externalSchemaId": table.id if shape.external_schema_id else None,
            "transactionEventCounter": dt.transaction_event_counter,
            "transactionLastEvent": dt.transaction_last_event,
        },
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parsed, record)
    envelope_id = table.id if shape.envelope_schema_id else _qlik.unrelated_schema_id(table)
    schema_text = table.data_schema_text() if shape.embedded_schema else None
    return envelope("DT", out.getvalue(), schema_id=envelope_id, schema_text=schema_text)


def encode(history: History, prefix: str, shape: StreamShape = DEFAULT) -> list[Message]:
    """Every message of ``history`` in production order: the MD messages, then the DT ones
    (with a new MD message at each schema change), laid out as ``shape`` says (module doc)."""
    one_topic = f"{prefix}.{FORMAT}"
    tables: dict[TableSpec, tuple[QlikTable, Any]] = {}  # spec -> current MD, parsed schema
    messages: list[Message] = []
    for dt in _qlik.stream(history):
        topic = _qlik.table_topic(prefix, FORMAT, dt.spec) if shape.topic_per_table else one_topic
        if isinstance(dt, _qlik.MetadataMessage):
            tables[dt.spec] = (dt.table, fastavro.parse_schema(dt.table.data_schema()))
            value = encode_metadata(dt.table)
            messages.append(Message(topic, None, value, dt.timestamp_ms, dt.sequence))
            continue
        table, parsed = tables[dt.spec]
        value = _data_value(table, dt, parsed, shape)
        messages.append(Message(topic, dt.key, value, dt.timestamp_ms, dt.sequence))
    return messages
