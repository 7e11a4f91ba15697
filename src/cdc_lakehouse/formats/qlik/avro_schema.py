"""Avro schemas of the Qlik Replicate / Qlik Talend Data Integration Kafka target.

Shared by the decoder (:mod:`cdc_lakehouse.formats.qlik.decoder`) and the encoder
(:mod:`cdc_lakehouse.formats.qlik.avro_writer`). Source: seed 004 (metadata and data message fields,
docs/formats.md section 5) and Qlik's public "Replicate envelope" page (the envelope schema below
is the one published there, field for field).

- :data:`ENVELOPE_SCHEMA`: ``MessageEnvelope``; ``magic`` is the fixed 5 bytes ``atMSG``,
  ``type`` is ``MD`` (metadata) or ``DT`` (data), ``message`` the Avro-encoded payload.
- :data:`METADATA_SCHEMA`: the metadata message with the fields seed 004 lists (``schemaId``,
  ``lineage``, ``tableStructure.tableColumns`` as a map column -> properties, ``dataSchema``).
  Qlik does not print the Avro text of this schema in the seed; this is our rendering of the
  documented fields. The decoder prefers the schema embedded in the envelope
  (``messageSchema``) and falls back to this one.
- :func:`data_schema`: the schema of a table's data messages (what an MD message carries in
  ``dataSchema``): ``data`` and ``beforeData`` records with one nullable field per column,
  and ``headers`` with the documented header fields (``changeMask`` / ``columnMask`` as bytes).
"""

from __future__ import annotations

from typing import Any

NAMESPACE = "com.attunity.queue.msg"
MAGIC = b"atMSG"

ENVELOPE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "MessageEnvelope",
    "namespace": NAMESPACE,
    "fields": [
        {"name": "magic", "type": {"type": "fixed", "name": "Magic", "size": 5}},
        {"name": "type", "type": "string"},
        {"name": "headers", "type": ["null", {"type": "map", "values": "string"}]},
        {"name": "messageSchemaId", "type": ["null", "string"]},
        {"name": "messageSchema", "type": ["null", "string"]},
        {"name": "message", "type": "bytes"},
    ],
}

METADATA_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "MetadataMessage",
    "namespace": NAMESPACE,
    "fields": [
        {"name": "schemaId", "type": "string"},
        {
            "name": "lineage",
            "type": {
                "type": "record",
                "name": "Lineage",
                "fields": [
                    {"name": "server", "type": "string"},
                    {"name": "task", "type": "string"},
                    {"name": "schema", "type": "string"},
                    {"name": "table", "type": "string"},
                    {"name": "tableVersion", "type": "int"},
                    {"name": "timestamp", "type": "string"},
                ],
            },
        },
        {
            "name": "tableStructure",
            "type": {
                "type": "record",
                "name": "TableStructure",
                "fields": [
                    {
                        "name": "tableColumns",
                        "type": {
                            "type": "map",
                            "values": {
                                "type": "record",
                                "name": "ColumnMetadata",
                                "fields": [
                                    {"name": "ordinal", "type": "int"},
                                    {"name": "type", "type": "string"},
                                    {"name": "length", "type": ["null", "int"]},
                                    {"name": "precision", "type": ["null", "int"]},
                                    {"name": "scale", "type": ["null", "int"]},
                                    {"name": "primaryKeyPosition", "type": "int"},
                                    {"name": "nullable", "type": ["null", "boolean"]},
                                ],
                            },
                        },
                    }
                ],
            },
        },
        {"name": "dataSchema", "type": "string"},
    ],
}

OPERATIONS = ["INSERT", "UPDATE", "DELETE", "REFRESH"]

HEADERS_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "Headers",
    "namespace": NAMESPACE,
    "fields": [
        {
            "name": "operation",
            "type": {"type": "enum", "name": "operation", "symbols": OPERATIONS},
        },
        {"name": "changeSequence", "type": "string"},
        {"name": "timestamp", "type": "string"},
        {"name": "streamPosition", "type": "string"},
        {"name": "transactionId", "type": "string"},
        {"name": "changeMask", "type": ["null", "bytes"]},
        {"name": "columnMask", "type": ["null", "bytes"]},
        {"name": "externalSchemaId", "type": ["null", "string"]},
        {"name": "transactionEventCounter", "type": ["null", "long"]},
        {"name": "transactionLastEvent", "type": ["null", "boolean"]},
    ],
}

# Qlik type -> Avro type of a data column (Replicate's default, without the "logical data
# types" option: exact numbers, dates and times travel as strings).
AVRO_TYPES: dict[str, str] = {
    "BOOLEAN": "boolean",
    "INT1": "int",
    "INT2": "int",
    "INT4": "int",
    "UINT1": "int",
    "UINT2": "int",
    "INT8": "long",
    "UINT4": "long",
    "REAL4": "float",
    "REAL8": "double",
    "BYTES": "bytes",
    "BLOB": "bytes",
}


def data_schema(
    task: str, schema: str, table: str, columns: list[tuple[str, str]]
) -> dict[str, Any]:
    """The Avro schema of one table's data messages.

    Args:
        task, schema, table: lineage of the table (they name the record's namespace).
        columns: (column name, Qlik type) in ordinal order; each becomes a nullable field of
            ``data`` / ``beforeData`` (Avro type from :data:`AVRO_TYPES`, else ``string``).
    """
    fields = [
        {"name": name, "type": ["null", AVRO_TYPES.get(qlik_type.upper(), "string")]}
        for name, qlik_type in columns
    ]
    return {
        "type": "record",
        "name": "DataRecord",
        "namespace": f"{NAMESPACE}.{_ident(task)}.{_ident(schema)}.{_ident(table)}",
        "fields": [
            {"name": "data", "type": {"type": "record", "name": "Data", "fields": fields}},
            {"name": "beforeData", "type": ["null", "Data"]},
            {"name": "headers", "type": HEADERS_SCHEMA},
        ],
    }


def _ident(name: str) -> str:
    text = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return text if text and not text[0].isdigit() else f"_{text}"
