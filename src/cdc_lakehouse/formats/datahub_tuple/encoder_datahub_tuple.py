"""Encoder of DataHub Tuple topics read through DataHub's Kafka interface (docs/formats.md
section 2; seed 002).

One topic per table, ``<prefix>.datahub_tuple.<table>`` (seed 002: one table per Tuple
topic). Each record is a flat JSON object: the table's columns, then the meta columns DataWorks
Data Integration adds to the topics it creates::

    {"customer_id": 1, "name": "x", ...,
     "_sequence_id_": "1649991610688000001", "_operation_type_": "U",
     "_excute_time_": 1649991756000, "_source_table_": "customers",
     "_before_image_": "Y", "_after_image_": "N"}

- Ops (seed 002's example table): insert ``I`` (N / Y), update ``U`` as two records sharing
  ``_sequence_id_`` (before half Y / N first, after half N / Y), delete ``D`` (Y / N).
  Snapshot rows are ``I`` (the full load has no op of its own). Tuple carries no DDL and no
  heartbeats: truncates and heartbeats of the history produce nothing. A schema change
  (``SchemaChange``) raises ValueError: a Tuple topic's schema is fixed.
- ``_sequence_id_``: 19 digits, task start ms + 6-digit counter (as DataWorks, seed 002).
  ``_excute_time_`` (the seed's spelling): commit time, epoch ms UTC.
- No database, schema or key is carried: ingest needs the table's key columns declared in
  seeds/cdc_declared_keys.csv.
- Values by DataHub field type (:func:`source_type`; DataHub Tuple types: BIGINT, INTEGER,
  DOUBLE, BOOLEAN, TIMESTAMP in microseconds, STRING, DECIMAL): integers as JSON integers,
  DECIMAL as a JSON number with exactly ``scale`` fraction digits, DOUBLE as Java prints it,
  BOOLEAN true / false, STRING as is. DataHub has no binary or date type: binary is a base64
  STRING (as DataWorks writes BYTES, seed 000), date and timestamp are TIMESTAMP epoch
  microseconds, UTC (a date is its midnight).
- Kafka key: the primary key values' text; none for a table without a key (seed 002: such
  tables are sharded randomly).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from cdc_lakehouse.tools.simulate.encoders._alibaba_values import (
    SequenceIds,
    dumps,
    epoch_us,
    json_text,
    key_text,
    task_start_ms,
)
from cdc_lakehouse.tools.simulate.encoders._alibaba_values import json_value as alibaba_json_value
from cdc_lakehouse.tools.simulate.history import (
    Column,
    History,
    Row,
    RowChange,
    SchemaChange,
    TableSpec,
    Value,
)
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "datahub_tuple"
FEATURES: frozenset[str] = frozenset({"key_update", "keyless_table"})
SEND_DELAY_MS = 5

_TYPES = {
    "int": "INTEGER",
    "bigint": "BIGINT",
    "decimal": "DECIMAL",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
    "string": "STRING",
    "binary": "STRING",
    "date": "TIMESTAMP",
    "timestamp": "TIMESTAMP",
}


def topic_of(table: TableSpec, prefix: str) -> str:
    return f"{prefix}.{FORMAT}.{table.name}"


def topics(history: History, prefix: str) -> list[str]:
    """One topic per table of the history, in table order."""
    return [topic_of(table, prefix) for table in history.tables]


def source_type(column: Column) -> str:
    """The DataHub Tuple field type of the column (the records themselves carry no types)."""
    return _TYPES[column.type]


def json_value(column: Column, value: Value) -> Any:
    """The JSON value of the column in a Tuple record (see module doc)."""
    return alibaba_json_value(column, value, date=_date_epoch_us, timestamp=epoch_us)


def value_text(column: Column, value: Value) -> str | None:
    """The image text the decoder yields for ``value`` (None for NULL)."""
    return json_text(json_value(column, value))


def _record(
    table: TableSpec, row: Row, op: str, sequence_id: str, commit_ms: int, flags: tuple[str, str]
) -> bytes:
    record: dict[str, Any] = {
        column.name: json_value(column, row[column.name]) for column in table.columns
    }
    record.update(
        {
            "_sequence_id_": sequence_id,
            "_operation_type_": op,
            "_excute_time_": commit_ms,
            "_source_table_": table.name,
            "_before_image_": flags[0],
            "_after_image_": flags[1],
        }
    )
    return dumps(record).encode("utf-8")


def _records(change: RowChange) -> list[tuple[Row, str, tuple[str, str]]]:
    """(row, op, (before flag, after flag)) of each record of one change, in order."""
    if change.op in ("insert", "snapshot"):
        assert change.after is not None
        return [(change.after, "I", ("N", "Y"))]
    if change.op == "delete":
        assert change.before is not None
        return [(change.before, "D", ("Y", "N"))]
    assert change.before is not None and change.after is not None
    return [(change.before, "U", ("Y", "N")), (change.after, "U", ("N", "Y"))]


def encode(history: History, prefix: str) -> list[Message]:
    """Every record in production order (see module doc)."""
    sequence_ids = SequenceIds(task_start_ms(history.items))
    messages: list[Message] = []
    for transaction in history.transactions:
        for event in transaction.events:
            if isinstance(event, SchemaChange):
                raise ValueError(
                    "datahub_tuple cannot express a schema change: a Tuple topic has a fixed "
                    f"schema (table {event.table.name}, {event.kind} {event.column})"
                )
            if not isinstance(event, RowChange):
                continue  # Tuple topics carry no DDL (seed 002)
            sequence_id = sequence_ids.next()
            for row, op, flags in _records(event):
                key = key_text(event.table, row, value_text)
                messages.append(
                    Message(
                        topic=topic_of(event.table, prefix),
                        key=key.encode("utf-8") if key is not None else None,
                        value=_record(
                            event.table, row, op, sequence_id, transaction.commit_time_ms, flags
                        ),
                        timestamp_ms=transaction.commit_time_ms + SEND_DELAY_MS,
                        sequence=transaction.sequence,
                    )
                )
    return messages


def _date_epoch_us(value: dt.date) -> int:
    """A DataHub TIMESTAMP for a date: epoch microseconds of its midnight, UTC."""
    return epoch_us(dt.datetime.combine(value, dt.time()))
