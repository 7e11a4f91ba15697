"""Encoder of Lindorm data subscription messages, Debezium format V2.0 (docs/formats.md section 3;
seed 001).

One topic, ``<prefix>.lindorm_debezium``, for every table. Message::

    {"schema": {Kafka Connect struct of op, ts_ms, before, after, source} | {},
     "payload": {"op": "c" | "u" | "d", "ts_ms": <written to Kafka, ms>,
                 "before": {...} | null, "after": {...} | null,
                 "source": {"version": "v2.0", "db": "ld-sim", "namespace": <database>,
                            "table": <table>, "ts_ms": <changed in Lindorm, ms>}}}

What is rendered (seed 001):

- insert ``c`` (after), update ``u`` (before and after: whole rows), delete ``d`` (before).
  Snapshot rows are ``c``: seed 001 documents ``r`` (full export) as "not produced for now";
  ``snapshot_op="r"`` renders them as ``r``.
- Lindorm cannot update a primary key (its writes are upserts by key): an update that changes
  the key is rendered as ``d`` of the old row and ``c`` of the new one. Truncates and
  heartbeats are not carried (no such message in seed 001) and produce nothing; neither are
  schema changes (``SchemaChange``: Lindorm sends no DDL message; each message's ``schema``
  struct describes the table version of its change, and a column a row lacks, written before
  an ADD COLUMN / RENAME, is left out like a NULL).
- No log position or transaction id: ``source.ts_ms`` = commit time (ms, UTC), ``payload.ts_ms``
  = commit time + 8 ms (the Kafka write), which is also the Kafka timestamp.
- Lindorm stores no cell for NULL: a NULL column is left out of the image (seed 001's column
  delete: a column missing from ``after`` is removed). With ``include_schema`` (the default,
  seed 001: "the schema is included by default") the struct names every column, so the
  decoder completes missing columns as NULL. ``include_schema=False`` writes ``"schema": {}``
  like seed 001's examples; NULL columns are then simply absent.
- No key information is carried for SQL tables: ingest needs the key columns declared in
  seeds/cdc_declared_keys.csv. Kafka key: the key values' text (``a,b`` for a composite key).

SQL table values (Kafka Connect JSON conventions; :func:`source_type` is the schema type as the
decoder reports it): int ``int32`` and bigint ``int64`` JSON integers; decimal ``bytes`` with
logical type ``org.apache.kafka.connect.data.Decimal`` written as a JSON number with exactly
``scale`` fraction digits (JsonConverter ``decimal.format=NUMERIC``); double ``double`` as Java
prints it; boolean ``boolean``; string ``string``; binary ``bytes`` as base64; date ``int32``
``org.apache.kafka.connect.data.Date`` (days since 1970-01-01); timestamp ``int64``
``org.apache.kafka.connect.data.Timestamp`` (epoch ms, UTC).

HBase tables (``hbase_tables``: names of tables with exactly one key column): the key column is
``ROW``, every other column ``f_<column>`` (family ``f``), and each value is base64 of the bytes
of HBase ``Bytes.toBytes`` (:func:`hbase_bytes`); the decoder turns bytes that are UTF-8 text
back into text and keeps others as base64 (:func:`hbase_value_text`). Schema types are
``bytes``.
"""

from __future__ import annotations

import datetime as dt
import struct
from decimal import Decimal
from typing import Any

from cdc_lakehouse.tools.simulate.encoders._alibaba_values import (
    base64_text,
    date_epoch_ms,
    dumps,
    epoch_days,
    epoch_ms,
    json_text,
    key_text,
)
from cdc_lakehouse.tools.simulate.encoders._alibaba_values import json_value as alibaba_json_value
from cdc_lakehouse.tools.simulate.history import Column, History, Row, RowChange, TableSpec, Value
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "lindorm_debezium"
FEATURES: frozenset[str] = frozenset()
CLUSTER = "ld-sim"
VERSION = "v2.0"
KAFKA_DELAY_MS = 8
HBASE_ROW_KEY = "ROW"
HBASE_FAMILY = "f"

_DECIMAL = "org.apache.kafka.connect.data.Decimal"
_DATE = "org.apache.kafka.connect.data.Date"
_TIMESTAMP = "org.apache.kafka.connect.data.Timestamp"
_TYPES = {
    "int": ("int32", None),
    "bigint": ("int64", None),
    "decimal": ("bytes", _DECIMAL),
    "double": ("double", None),
    "boolean": ("boolean", None),
    "string": ("string", None),
    "binary": ("bytes", None),
    "date": ("int32", _DATE),
    "timestamp": ("int64", _TIMESTAMP),
}
_TEXT_CONTROLS = frozenset("\t\n\r")


def topics(history: History, prefix: str) -> list[str]:
    """The one topic of the whole history."""
    return [f"{prefix}.{FORMAT}"]


def source_type(column: Column) -> str:
    """The column's type as the decoder reports it from the schema struct of a SQL table
    (``int32``, ``bytes (org.apache.kafka.connect.data.Decimal)``, ...)."""
    kind, logical = _TYPES[column.type]
    return f"{kind} ({logical})" if logical else kind


def json_value(column: Column, value: Value) -> Any:
    """The JSON value of a SQL table's column (see module doc)."""
    return alibaba_json_value(column, value, date=epoch_days, timestamp=epoch_ms)


def value_text(column: Column, value: Value) -> str | None:
    """The image text the decoder yields for a SQL table's value (None for NULL)."""
    return json_text(json_value(column, value))


def hbase_column_name(table: TableSpec, column: str) -> str:
    """The HBase column name of a logical column: ``ROW`` for the key, ``f_<column>`` else."""
    return HBASE_ROW_KEY if column in table.key_columns else f"{HBASE_FAMILY}_{column}"


def hbase_bytes(column: Column, value: Value) -> bytes:
    """HBase ``Bytes.toBytes`` of a non-NULL value: int 4 and bigint 8 bytes big-endian,
    double 8 bytes IEEE 754, boolean ``0xFF`` / ``0x00``, decimal ``Bytes.toBytes(BigDecimal)``
    (4-byte scale + two's-complement unscaled value), string UTF-8, binary as is, date and
    timestamp as the 8-byte epoch milliseconds (UTC; a date is its midnight)."""
    kind = column.type
    if kind == "int":
        return struct.pack(">i", value)
    if kind == "bigint":
        return struct.pack(">q", value)
    if kind == "double":
        return struct.pack(">d", value)
    if kind == "boolean":
        return b"\xff" if value else b"\x00"
    if kind == "decimal":
        assert isinstance(value, Decimal)
        sign, digits, exponent = value.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        scale = -int(exponent)
        length = (unscaled + (unscaled < 0)).bit_length() // 8 + 1
        return struct.pack(">i", scale) + unscaled.to_bytes(length, "big", signed=True)
    if kind == "string":
        assert isinstance(value, str)
        return value.encode("utf-8")
    if kind == "binary":
        assert isinstance(value, bytes)
        return value
    if kind == "date":
        assert isinstance(value, dt.date)
        return struct.pack(">q", date_epoch_ms(value))
    if kind == "timestamp":
        assert isinstance(value, dt.datetime)
        return struct.pack(">q", epoch_ms(value))
    raise ValueError(f"unknown logical type {kind!r}")


def hbase_value_text(column: Column, value: Value) -> str | None:
    """The image text the decoder yields for an HBase table's value: the bytes as text when they
    are UTF-8 without control characters other than tab / LF / CR, else their base64."""
    if value is None:
        return None
    data = hbase_bytes(column, value)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return base64_text(data)
    if any((ord(ch) < 32 and ch not in _TEXT_CONTROLS) or ord(ch) == 127 for ch in text):
        return base64_text(data)
    return text


def _field_schema(column: Column, name: str, optional: bool, hbase: bool) -> dict[str, Any]:
    if hbase:
        return {"type": "bytes", "optional": optional, "field": name}
    kind, logical = _TYPES[column.type]
    field: dict[str, Any] = {"type": kind, "optional": optional}
    if logical is not None:
        field["name"] = logical
        field["version"] = 1
    if column.type == "decimal":
        field["parameters"] = {
            "scale": str(column.scale or 0),
            "connect.decimal.precision": str(column.precision or 38),
        }
    field["field"] = name
    return field


def _schema(table: TableSpec, hbase: bool) -> dict[str, Any]:
    columns = [
        _field_schema(
            column,
            hbase_column_name(table, column.name) if hbase else column.name,
            column.name not in table.key_columns,
            hbase,
        )
        for column in table.columns
    ]
    source = [
        {"type": kind, "optional": False, "field": name}
        for kind, name in (
            ("string", "version"),
            ("string", "db"),
            ("string", "namespace"),
            ("string", "table"),
            ("int64", "ts_ms"),
        )
    ]
    return {
        "type": "struct",
        "fields": [
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": False, "field": "ts_ms"},
            {"type": "struct", "fields": columns, "optional": True, "field": "before"},
            {"type": "struct", "fields": columns, "optional": True, "field": "after"},
            {"type": "struct", "fields": source, "optional": False, "field": "source"},
        ],
        "optional": False,
    }


def _image(table: TableSpec, row: Row | None, hbase: bool) -> dict[str, Any] | None:
    if row is None:
        return None
    image: dict[str, Any] = {}
    for column in table.columns:
        value = row.get(column.name)
        if value is None:
            continue  # Lindorm keeps no cell for NULL
        if hbase:
            name = hbase_column_name(table, column.name)
            image[name] = base64_text(hbase_bytes(column, value))
        else:
            image[column.name] = json_value(column, value)
    if hbase:  # the row key first, as in seed 001's HBase example
        image = {HBASE_ROW_KEY: image.pop(HBASE_ROW_KEY), **image}
    return image


def _kafka_key(table: TableSpec, row: Row, hbase: bool) -> bytes | None:
    if hbase:
        column = table.column(table.key_columns[0])
        text = hbase_value_text(column, row[column.name])
    else:
        text = key_text(table, row, value_text)
    return text.encode("utf-8") if text is not None else None


def _ops(change: RowChange, snapshot_op: str) -> list[tuple[str, Row | None, Row | None]]:
    if change.op == "snapshot":
        return [(snapshot_op, None, change.after)]
    if change.op == "insert":
        return [("c", None, change.after)]
    if change.op == "delete":
        return [("d", change.before, None)]
    if change.moves_key:
        return [("d", change.before, None), ("c", None, change.after)]
    return [("u", change.before, change.after)]


def encode(
    history: History,
    prefix: str,
    *,
    include_schema: bool = True,
    snapshot_op: str = "c",
    hbase_tables: frozenset[str] = frozenset(),
) -> list[Message]:
    """Every message in production order (see module doc). ``include_schema``: full Kafka
    Connect struct (default) or ``{}``; ``snapshot_op``: ``c`` (default) or ``r``;
    ``hbase_tables``: tables rendered as HBase tables (exactly one key column each)."""
    topic = topics(history, prefix)[0]
    schemas: dict[TableSpec, dict[str, Any]] = {}
    messages: list[Message] = []
    for transaction in history.transactions:
        commit_ms = transaction.commit_time_ms
        for event in transaction.events:
            if not isinstance(event, RowChange):
                continue  # no truncate or DDL message in seed 001
            table = event.table
            hbase = table.name in hbase_tables
            if hbase and len(table.key_columns) != 1:
                raise ValueError(f"HBase table {table.name} needs exactly one key column (ROW)")
            if table not in schemas:
                schemas[table] = _schema(table, hbase) if include_schema else {}
            for op, before, after in _ops(event, snapshot_op):
                payload = {
                    "op": op,
                    "ts_ms": commit_ms + KAFKA_DELAY_MS,
                    "before": _image(table, before, hbase),
                    "after": _image(table, after, hbase),
                    "source": {
                        "version": VERSION,
                        "db": CLUSTER,
                        "namespace": table.database,
                        "table": table.name,
                        "ts_ms": commit_ms,
                    },
                }
                row = after if after is not None else before
                assert row is not None
                messages.append(
                    Message(
                        topic=topic,
                        key=_kafka_key(table, row, hbase),
                        value=dumps({"schema": schemas[table], "payload": payload}).encode(),
                        timestamp_ms=commit_ms + KAFKA_DELAY_MS,
                        sequence=transaction.sequence,
                    )
                )
    return messages
