"""Encoder of Qlik Replicate / Qlik Talend Data Integration Kafka messages in Avro.

Produces exactly what :mod:`cdc_lakehouse.formats.qlik.decoder` reads for the ``qlik_avro`` format
(docs/formats.md section 5, seed 004):

- every Kafka value is one Avro ``MessageEnvelope`` (plain Avro binary, no schema-registry
  header) with ``magic = atMSG`` and ``type`` ``MD`` or ``DT``;
- an MD envelope carries the metadata message encoded with
  :data:`~cdc_lakehouse.formats.qlik.avro_schema.METADATA_SCHEMA`, embedded as ``messageSchema``;
- a DT envelope carries the data message encoded with the table's data schema (the
  ``dataSchema`` of its MD message) and names it by ``messageSchemaId`` = the MD's
  ``schemaId`` (or, with ``embed_schema=True``, embeds it as ``messageSchema``).

Masks are given as integers (bit ``ordinal - 1`` = column) and written as big-endian bytes,
the same bytes a JSON message spells as hex digits (``0x0B`` -> ``"0B"``).
"""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from typing import Any

import fastavro

from cdc_lakehouse.formats.qlik.avro_schema import (
    ENVELOPE_SCHEMA,
    MAGIC,
    METADATA_SCHEMA,
    data_schema,
)

_ENVELOPE = fastavro.parse_schema(ENVELOPE_SCHEMA)
_METADATA = fastavro.parse_schema(METADATA_SCHEMA)
METADATA_SCHEMA_TEXT = json.dumps(METADATA_SCHEMA, separators=(",", ":"))


@dataclass(frozen=True)
class QlikColumn:
    """One source column as a metadata message describes it."""

    name: str
    type: str
    length: int = 0
    precision: int = 0
    scale: int = 0
    primary_key_position: int = 0
    nullable: bool = True


@dataclass(frozen=True)
class QlikTable:
    """One version of a source table's structure (one metadata message)."""

    server: str
    task: str
    schema: str
    table: str
    version: int
    columns: tuple[QlikColumn, ...]
    timestamp: str = "2024-01-01T00:00:00.000"
    schema_id: str = field(default="")

    @property
    def id(self) -> str:
        """``schemaId``: given, else 32 hex digits derived from lineage and columns."""
        if self.schema_id:
            return self.schema_id
        text = json.dumps(
            [self.server, self.task, self.schema, self.table, self.version, self.columns],
            default=str,
        )
        return hashlib.md5(text.encode()).hexdigest().upper()

    def data_schema(self) -> dict[str, Any]:
        """The Avro schema of this table version's data messages."""
        return data_schema(
            self.task, self.schema, self.table, [(c.name, c.type) for c in self.columns]
        )

    def data_schema_text(self) -> str:
        """:meth:`data_schema` as compact JSON text (the MD message's ``dataSchema``)."""
        return json.dumps(self.data_schema(), separators=(",", ":"))

    def metadata_message(self) -> dict[str, Any]:
        """The metadata message as a dict (JSON shape; also the Avro record)."""
        return {
            "schemaId": self.id,
            "lineage": {
                "server": self.server,
                "task": self.task,
                "schema": self.schema,
                "table": self.table,
                "tableVersion": self.version,
                "timestamp": self.timestamp,
            },
            "tableStructure": {
                "tableColumns": {
                    c.name: {
                        "ordinal": ordinal,
                        "type": c.type,
                        "length": c.length,
                        "precision": c.precision,
                        "scale": c.scale,
                        "primaryKeyPosition": c.primary_key_position,
                        "nullable": c.nullable,
                    }
                    for ordinal, c in enumerate(self.columns, start=1)
                }
            },
            "dataSchema": self.data_schema_text(),
        }


def mask_bytes(mask: int | None) -> bytes | None:
    """A column mask integer as big-endian bytes (at least one byte); ``None`` stays ``None``."""
    if mask is None:
        return None
    return mask.to_bytes(max(1, (mask.bit_length() + 7) // 8), "big")


def _write(schema: Any, record: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, schema, record)
    return out.getvalue()


def envelope(
    message_type: str,
    message: bytes,
    *,
    schema_id: str | None = None,
    schema_text: str | None = None,
) -> bytes:
    """An Avro ``MessageEnvelope`` around already encoded ``message`` bytes."""
    return _write(
        _ENVELOPE,
        {
            "magic": MAGIC,
            "type": message_type,
            "headers": None,
            "messageSchemaId": schema_id,
            "messageSchema": schema_text,
            "message": message,
        },
    )


def encode_metadata(table: QlikTable) -> bytes:
    """The Kafka value of ``table``'s metadata message (MD envelope, schema embedded)."""
    return envelope(
        "MD",
        _write(_METADATA, table.metadata_message()),
        schema_id=None,
        schema_text=METADATA_SCHEMA_TEXT,
    )


def encode_data(
    table: QlikTable,
    operation: str,
    data: dict[str, Any] | None,
    *,
    before: dict[str, Any] | None = None,
    change_sequence: str = "",
    timestamp: str = "",
    stream_position: str = "",
    transaction_id: str = "",
    change_mask: int | None = None,
    column_mask: int | None = None,
    external_schema_id: str | None = None,
    transaction_event_counter: int | None = None,
    transaction_last_event: bool | None = None,
    embed_schema: bool = False,
    message_schema_id: str | None = None,
) -> bytes:
    """The Kafka value of one data message of ``table`` (DT envelope).

    ``data`` / ``before``: column -> Python value of the column's Avro type (missing columns
    are written as null). Masks are integers (see module doc). The envelope references the
    table's ``schemaId`` (``messageSchemaId``), or embeds the data schema when
    ``embed_schema`` is true; ``message_schema_id``, when given, is the envelope's
    ``messageSchemaId`` instead (beside an embedded schema too).
    """
    names = [c.name for c in table.columns]

    def row(values: dict[str, Any] | None) -> dict[str, Any] | None:
        return None if values is None else {n: values.get(n) for n in names}

    schema = table.data_schema()
    record = {
        "data": row(data or {}),
        "beforeData": row(before),
        "headers": {
            "operation": operation,
            "changeSequence": change_sequence,
            "timestamp": timestamp,
            "streamPosition": stream_position,
            "transactionId": transaction_id,
            "changeMask": mask_bytes(change_mask),
            "columnMask": mask_bytes(column_mask),
            "externalSchemaId": external_schema_id,
            "transactionEventCounter": transaction_event_counter,
            "transactionLastEvent": transaction_last_event,
        },
    }
    body = _write(fastavro.parse_schema(schema), record)
    if embed_schema:
        text = table.data_schema_text()
        return envelope("DT", body, schema_id=message_schema_id, schema_text=text)
    return envelope("DT", body, schema_id=message_schema_id or table.id)
