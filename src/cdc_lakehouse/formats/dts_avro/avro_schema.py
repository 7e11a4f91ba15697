"""Avro schema `com.alibaba.dts.formats.avro.Record` of DTS Avro (docs/formats.md 4a; seed 003).

Two revisions, as Python dicts ready for :func:`fastavro.parse_schema`:

- :func:`record_schema` ``(with_born_timestamp=False)``: the older revision (no ``bornTimestamp``).
- :func:`record_schema` ``(with_born_timestamp=True)``: the newer revision, which appends
  ``bornTimestamp`` long (epoch milliseconds, default 0).

Field order and union member order follow docs/formats.md exactly; the binary encoding depends on
both. Value types (union members of the image arrays) are defined once, in ``beforeImages``,
and referenced by full name in ``afterImages`` (Avro forbids redefining a named type).
:data:`PARSED_OLD` / :data:`PARSED_NEW` are the parsed schemas.
"""

from __future__ import annotations

from typing import Any

import fastavro

NAMESPACE = "com.alibaba.dts.formats.avro"

SOURCE_TYPES = [
    "MySQL",
    "Oracle",
    "SQLServer",
    "PostgreSQL",
    "MongoDB",
    "Redis",
    "DB2",
    "PPAS",
    "DRDS",
    "HBASE",
    "HDFS",
    "FILE",
    "OTHER",
]
OPERATIONS = [
    "INSERT",
    "UPDATE",
    "DELETE",
    "DDL",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "ABORT",
    "HEARTBEAT",
    "CHECKPOINT",
    "COMMAND",
    "FILL",
    "FINISH",
    "CONTROL",
    "RDB",
    "NOOP",
    "INIT",
]
EMPTY_OBJECT_SYMBOLS = ["NULL", "NONE"]

# Union member order of an image element (after "null").
VALUE_TYPE_NAMES = [
    "Integer",
    "Character",
    "Decimal",
    "Float",
    "Timestamp",
    "DateTime",
    "TimestampWithTimeZone",
    "BinaryGeometry",
    "TextGeometry",
    "BinaryObject",
    "TextObject",
    "EmptyObject",
]

_NULL_INT: list[Any] = ["null", "int"]


def _record(name: str, fields: list[tuple[str, Any]]) -> dict[str, Any]:
    return {
        "type": "record",
        "name": name,
        "namespace": NAMESPACE,
        "fields": [{"name": n, "type": t} for n, t in fields],
    }


def _value_types() -> list[dict[str, Any]]:
    """Full definitions of the image value types, in union order (fresh dicts each call)."""
    date_time = _record(
        "DateTime",
        [
            (part, list(_NULL_INT))
            for part in ("year", "month", "day", "hour", "minute", "second", "millis")
        ],
    )
    return [
        _record("Integer", [("precision", "int"), ("value", "string")]),
        _record("Character", [("charset", "string"), ("value", "bytes")]),
        _record("Decimal", [("value", "string"), ("precision", "int"), ("scale", "int")]),
        _record("Float", [("value", "double"), ("precision", "int"), ("scale", "int")]),
        _record("Timestamp", [("timestamp", "long"), ("millis", "int")]),
        date_time,
        _record(
            "TimestampWithTimeZone",
            [("value", f"{NAMESPACE}.DateTime"), ("timezone", "string")],
        ),
        _record("BinaryGeometry", [("type", "string"), ("value", "bytes")]),
        _record("TextGeometry", [("type", "string"), ("value", "string")]),
        _record("BinaryObject", [("type", "string"), ("value", "bytes")]),
        _record("TextObject", [("type", "string"), ("value", "string")]),
        {
            "type": "enum",
            "name": "EmptyObject",
            "namespace": NAMESPACE,
            "symbols": list(EMPTY_OBJECT_SYMBOLS),
        },
    ]


def record_schema(with_born_timestamp: bool) -> dict[str, Any]:
    """The ``Record`` schema dict of one revision (a fresh, unparsed dict)."""
    defined = ["null", *_value_types()]
    referenced = ["null", *(f"{NAMESPACE}.{name}" for name in VALUE_TYPE_NAMES)]
    fields: list[dict[str, Any]] = [
        {"name": "version", "type": "int"},
        {"name": "id", "type": "long"},
        {"name": "sourceTimestamp", "type": "long"},
        {"name": "sourcePosition", "type": "string"},
        {"name": "safeSourcePosition", "type": "string"},
        {"name": "sourceTxid", "type": "string"},
        {
            "name": "source",
            "type": _record(
                "Source",
                [
                    (
                        "sourceType",
                        {
                            "type": "enum",
                            "name": "SourceType",
                            "namespace": NAMESPACE,
                            "symbols": list(SOURCE_TYPES),
                        },
                    ),
                    ("version", "string"),
                ],
            ),
        },
        {
            "name": "operation",
            "type": {
                "type": "enum",
                "name": "Operation",
                "namespace": NAMESPACE,
                "symbols": list(OPERATIONS),
            },
        },
        {"name": "objectName", "type": ["null", "string"], "default": None},
        {
            "name": "processTimestamps",
            "type": ["null", {"type": "array", "items": "long"}],
            "default": None,
        },
        {"name": "tags", "type": {"type": "map", "values": "string"}, "default": {}},
        {
            "name": "fields",
            "type": [
                "null",
                "string",
                {
                    "type": "array",
                    "items": _record("Field", [("name", "string"), ("dataTypeNumber", "int")]),
                },
            ],
            "default": None,
        },
        {
            "name": "beforeImages",
            "type": ["null", "string", {"type": "array", "items": defined}],
            "default": None,
        },
        {
            "name": "afterImages",
            "type": ["null", "string", {"type": "array", "items": referenced}],
            "default": None,
        },
    ]
    if with_born_timestamp:
        fields.append({"name": "bornTimestamp", "type": "long", "default": 0})
    return {"type": "record", "name": "Record", "namespace": NAMESPACE, "fields": fields}


PARSED_OLD = fastavro.parse_schema(record_schema(with_born_timestamp=False))
PARSED_NEW = fastavro.parse_schema(record_schema(with_born_timestamp=True))
