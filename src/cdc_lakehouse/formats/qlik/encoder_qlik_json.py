"""Encoder of the ``qlik_json`` format: Qlik Replicate's Kafka target writing JSON messages in
the ``atMSG`` envelope (docs/formats.md section 5, seed 004; what is sent and when: :mod:`._qlik`).

Kafka value = UTF-8 JSON (non-ASCII text as is), one envelope per message:

- MD: ``{"magic": "atMSG", "type": "MD", "headers": null, "messageSchemaId": null,
  "messageSchema": null, "message": <metadata message>}`` (``schemaId``, ``lineage``,
  ``tableStructure.tableColumns``, ``dataSchema``), one per table, up front, and a new one
  (``tableVersion`` + 1, new ``schemaId``) at each schema change;
- DT: the same envelope with ``"type": "DT"`` and ``messageSchemaId`` = the ``schemaId`` of
  the table's current version; ``message`` = ``{"data", "beforeData", "headers"}``,
  ``headers`` with ``externalSchemaId`` (Qlik's "include external schema id header" option)
  and the masks as hex digits (``"0B"``).

``shape=`` (:class:`~cdc_lakehouse.formats.qlik.encoder_common.StreamShape`) gives other layouts:
``_qlik.REAL_STREAM`` is a real Qlik Replicate JSON stream's (issue 48): ``externalSchemaId``
null, a DT envelope ``messageSchemaId`` no MD carries, one topic per table.

Values (Qlik "Kafka target data types", JSON column): INT4 / INT8 / REAL8 as JSON numbers
(REAL8 in Python's shortest round-trip spelling), BOOLEAN as true / false, BYTES / BLOB as
uppercase hex digits, NUMERIC / DATE / DATETIME / WSTRING / NCLOB as strings; a column that
is not provided (columnMask bit clear) is ``null``.
"""

from __future__ import annotations

import json
from typing import Any

from cdc_lakehouse.formats.qlik import encoder_common as _qlik
from cdc_lakehouse.formats.qlik.avro_writer import QlikTable
from cdc_lakehouse.formats.qlik.encoder_common import (
    DEFAULT,
    FEATURES,
    StreamShape,
    source_type,
    value_text,
)
from cdc_lakehouse.tools.simulate.history import History, TableSpec
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "qlik_json"
__all__ = ["FEATURES", "FORMAT", "encode", "source_type", "topics", "value_text"]


def topics(history: History, prefix: str, shape: StreamShape = DEFAULT) -> list[str]:
    """The one topic every table's MD and DT messages go to, ``<prefix>.qlik_json``; with
    ``shape.topic_per_table``, one per table (``_qlik.table_topic``)."""
    return _qlik.stream_topics(history, prefix, FORMAT, shape)


def _json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _envelope(message_type: str, message: dict[str, Any], schema_id: str | None) -> bytes:
    return _json(
        {
            "magic": "atMSG",
            "type": message_type,
            "headers": None,
            "messageSchemaId": schema_id,
            "messageSchema": None,
            "message": message,
        }
    )


def _row(values: dict[str, Any] | None) -> dict[str, Any] | None:
    if values is None:
        return None
    return {
        name: value.hex().upper() if isinstance(value, bytes) else value
        for name, value in values.items()
    }


def encode(history: History, prefix: str, shape: StreamShape = DEFAULT) -> list[Message]:
    """Every message of ``history`` in production order: the MD messages, then the DT ones
    (with a new MD message at each schema change), laid out as ``shape`` says (module doc)."""
    one_topic = f"{prefix}.{FORMAT}"
    tables: dict[TableSpec, QlikTable] = {}  # spec -> its current MD
    messages: list[Message] = []
    for dt in _qlik.stream(history):
        topic = _qlik.table_topic(prefix, FORMAT, dt.spec) if shape.topic_per_table else one_topic
        if isinstance(dt, _qlik.MetadataMessage):
            tables[dt.spec] = dt.table
            value = _envelope("MD", dt.table.metadata_message(), None)
            messages.append(Message(topic, None, value, dt.timestamp_ms, dt.sequence))
            continue
        table = tables[dt.spec]
        headers = {
            "operation": dt.operation,
            "changeSequence": dt.change_sequence,
            "timestamp": dt.timestamp,
            "streamPosition": dt.stream_position,
            "transactionId": dt.transaction_id,
            "changeMask": _qlik.hex_mask(dt.change_mask),
            "columnMask": _qlik.hex_mask(dt.column_mask),
            "externalSchemaId": table.id if shape.external_schema_id else None,
            "transactionEventCounter": dt.transaction_event_counter,
            "transactionLastEvent": dt.transaction_last_event,
        }
        message = {"data": _row(dt.data), "beforeData": _row(dt.before), "headers": headers}
        envelope_id = table.id if shape.envelope_schema_id else _qlik.unrelated_schema_id(table)
        value = _envelope("DT", message, envelope_id)
        messages.append(Message(topic, dt.key, value, dt.timestamp_ms, dt.sequence))
    return messages
