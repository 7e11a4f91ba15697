"""The DataWorks "sync all data to Kafka" JSON envelope, which is also the DataHub Blob record
(docs/formats.md sections 1 and 2; seeds 000 and 002). ``dataworks_json`` and ``datahub_blob`` are
thin modules over :func:`encode_envelopes`.

Message (one Kafka value, UTF-8 JSON)::

    {"schema": {"dataColumn": [{"name", "type"}], "primaryKey": [...] | null,
                "source": {"dbType", "dbVersion", "dbName", ["schemaName",] "tableName"}},
     "payload": {"before": {"dataColumn": {...}} | null, "after": ... | null,
                 "sequenceId": "<19 digits>", "op": "...",
                 "timestamp": {"eventTime", "systemTime", "checkpointTime"}, "ddl": null},
     "version": "0.0.1"}

What the encoder renders, per history item:

- snapshot rows and inserts: ``INSERT`` with ``after`` (DataWorks has no full-load op: the full
  load arrives as INSERT records whose sequenceIds sort before the incremental ones);
- updates: ``UPDATE_BEFOR`` (``before``) then ``UPDATE_AFTER`` (``after``) sharing one
  sequenceId, or with ``one_message_updates`` one ``UPDATE_AFTER`` carrying both images (the
  task option "one Kafka record per source update", seed 000). An update that changes the key
  is the same pair: the before half under the old key, the after half under the new one;
- deletes: ``DELETE`` with ``before``;
- truncates: ``TRUNCATE`` with ``ddl.text`` = ``TRUNCATE TABLE `<table>``` and the table in
  ``schema.source`` (the shape of seed 002's DDL example; ``ddlMeta``, an opaque Java
  serialization, is not produced);
- schema changes (``SchemaChange``): ``ALTER`` with the table in ``schema.source`` (like
  TRUNCATE), its own sequenceId, and ``ddl`` = ``{"text": <MySQL statement>, "ddlMeta":
  <opaque>}``: the statement of :mod:`._ddl` with a rename spelled ``CHANGE COLUMN `old`
  `new` <type>`` (what DataWorks' MySQL reader logs), ``ddlMeta`` base64 of a stand-in for the
  Java-serialized FastSQL statement (the Java serialization magic ``ACED0005`` followed by the
  statement's UTF-8 bytes; opaque to consumers, as in real messages). No Kafka key. Data
  messages after it declare the new columns in ``schema.dataColumn`` (the event's spec); a
  column a row lacks (a before image written before an ADD COLUMN / RENAME) is JSON null;
- heartbeats: ``MHEARTBEAT`` with only ``timestamp.eventTime`` / ``checkpointTime``.

Values (schema.dataColumn type; seed 000 "field types"): int / bigint LONG (JSON integer);
decimal DOUBLE, a JSON number with exactly ``scale`` fraction digits (DataX reads DECIMAL into
its double column keeping the BigDecimal text); double DOUBLE, Java ``Double.toString`` text;
boolean BOOLEAN (true / false); string STRING; binary BYTES (base64, java.util.Base64); date and
timestamp DATE (13-digit epoch milliseconds, UTC; a date is its midnight). SQL NULL is JSON null.

Times: ``eventTime`` = the transaction's commit time (ms), ``checkpointTime`` = eventTime,
``systemTime`` = eventTime + 3 ms (read by the sync), Kafka timestamp = eventTime + 5 ms.

Kafka key: the primary key values' text (``a,b`` for a composite key). Tables without a key:
``keyless_key`` decides (None = no key, DataWorks; ``"table"`` = the table name, DataHub Blob
shards such tables by table name). Truncates and heartbeats have no key.

Tables without a key: with ``row_id_column`` the MySQL source's hidden implicit primary key
``#alibaba_rds_row_id#`` (LONG) is added as a data column (docs/formats.md section 1; RDS MySQL adds
it when its implicit-primary-key feature is on), stable across updates of the row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from cdc_lakehouse.tools.simulate.encoders import _ddl
from cdc_lakehouse.tools.simulate.encoders._alibaba_values import (
    SequenceIds,
    base64_text,
    date_epoch_ms,
    dumps,
    epoch_ms,
    json_text,
    key_text,
    task_start_ms,
)
from cdc_lakehouse.tools.simulate.encoders._alibaba_values import json_value as alibaba_json_value
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    Row,
    RowChange,
    SchemaChange,
    TableSpec,
    Truncate,
    Value,
)
from cdc_lakehouse.tools.simulate.messages import Message

ROW_ID_COLUMN = "#alibaba_rds_row_id#"
VERSION = "0.0.1"  # every published example message (seeds 000, 002)
SYSTEM_DELAY_MS = 3
SEND_DELAY_MS = 5
JAVA_SERIALIZATION_MAGIC = b"\xac\xed\x00\x05"

_TYPES = {
    "int": "LONG",
    "bigint": "LONG",
    "decimal": "DOUBLE",
    "double": "DOUBLE",
    "boolean": "BOOLEAN",
    "string": "STRING",
    "binary": "BYTES",
    "date": "DATE",
    "timestamp": "DATE",
}


@dataclass(frozen=True)
class EnvelopeOptions:
    """How one producer writes the envelope.

    - ``one_message_updates``: one UPDATE_AFTER with both images instead of two messages.
    - ``update_before_op``: ``UPDATE_BEFOR`` (documented, seeds 000 / 002) or ``UPDATE_BEFORE``.
    - ``write_null_fields``: write absent envelope fields as JSON null (seed 000's DataWorks
      examples) or leave them out (seed 002's DataHub Blob examples, fastjson's default).
    - ``keyless_key``: Kafka key of rows of tables without a key (None or ``"table"``).
    - ``row_id_column``: add ``#alibaba_rds_row_id#`` to tables without a key.
    """

    one_message_updates: bool = False
    update_before_op: Literal["UPDATE_BEFOR", "UPDATE_BEFORE"] = "UPDATE_BEFOR"
    write_null_fields: bool = True
    keyless_key: Literal["table"] | None = None
    row_id_column: bool = False


def source_type(column: Column) -> str:
    """The DataWorks type of ``schema.dataColumn`` (BOOLEAN, DOUBLE, DATE, BYTES, LONG, STRING)."""
    return _TYPES[column.type]


def json_value(column: Column, value: Value) -> Any:
    """The JSON value of ``payload.<image>.dataColumn.<column>`` (see module doc)."""
    return alibaba_json_value(column, value, date=date_epoch_ms, timestamp=epoch_ms)


def value_text(column: Column, value: Value) -> str | None:
    """The image text the decoder yields for ``value`` (None for NULL)."""
    return json_text(json_value(column, value))


class _RowIds:
    """The hidden ``#alibaba_rds_row_id#`` of each live row of each keyless table."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, ...], dict[tuple[Value, ...], int]] = {}
        self._next: dict[tuple[str, ...], int] = {}

    @staticmethod
    def _table(table: TableSpec) -> tuple[str, ...]:
        return (table.database, table.schema or "", table.name)

    def apply(self, change: RowChange) -> tuple[int | None, int | None]:
        """(row id of the before image, row id of the after image)."""
        table = self._table(change.table)
        ids = self._ids.setdefault(table, {})
        before_id = after_id = None
        if change.before is not None:
            before_id = ids.pop(change.table.key_of(change.before), None)
        if change.after is not None:
            after_id = before_id
            if after_id is None:
                after_id = self._next.get(table, 1)
                self._next[table] = after_id + 1
            ids[change.table.key_of(change.after)] = after_id
        return before_id, after_id

    def truncate(self, table: TableSpec) -> None:
        self._ids.pop(self._table(table), None)


def _schema(table: TableSpec, options: EnvelopeOptions) -> dict[str, Any]:
    columns: list[dict[str, Any]] = [
        {"name": column.name, "type": source_type(column)} for column in table.columns
    ]
    with_row_id = options.row_id_column and not table.key_columns
    if with_row_id:
        columns.append({"name": ROW_ID_COLUMN, "type": "LONG"})
    return {
        "dataColumn": columns,
        "primaryKey": list(table.key_columns) if table.key_columns else None,
        "source": _source(table),
    }


def _source(table: TableSpec) -> dict[str, Any]:
    source: dict[str, Any] = {"dbType": "MySQL", "dbVersion": "8.0", "dbName": table.database}
    if table.schema is not None:
        source["schemaName"] = table.schema
    source["tableName"] = table.name
    return source


def _image(table: TableSpec, row: Row | None, row_id: int | None) -> dict[str, Any] | None:
    if row is None:
        return None
    data = {column.name: json_value(column, row.get(column.name)) for column in table.columns}
    if row_id is not None:
        data[ROW_ID_COLUMN] = row_id
    return {"dataColumn": data}


def _timestamp(commit_ms: int, *, system: bool = True) -> dict[str, int]:
    if system:
        return {
            "eventTime": commit_ms,
            "systemTime": commit_ms + SYSTEM_DELAY_MS,
            "checkpointTime": commit_ms,
        }
    return {"eventTime": commit_ms, "checkpointTime": commit_ms}


def _envelope(schema: dict[str, Any], payload: dict[str, Any], options: EnvelopeOptions) -> bytes:
    if not options.write_null_fields:
        payload = {key: value for key, value in payload.items() if value is not None}
        schema = {key: value for key, value in schema.items() if value is not None}
    return dumps({"schema": schema, "payload": payload, "version": VERSION}).encode("utf-8")


def _payload(
    op: str,
    sequence_id: str | None,
    commit_ms: int,
    *,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    ddl: dict[str, Any] | None = None,
    system_time: bool = True,
) -> dict[str, Any]:
    return {
        "before": before,
        "after": after,
        "sequenceId": sequence_id,
        "op": op,
        "timestamp": _timestamp(commit_ms, system=system_time),
        "ddl": ddl,
    }


def encode_envelopes(history: History, topic: str, options: EnvelopeOptions) -> list[Message]:
    """Every message of ``history`` on ``topic`` in production order (see module doc)."""
    sequence_ids = SequenceIds(task_start_ms(history.items))
    row_ids = _RowIds()
    messages: list[Message] = []

    def send(key: str | None, value: bytes, commit_ms: int, sequence: int) -> None:
        messages.append(
            Message(
                topic=topic,
                key=key.encode("utf-8") if key is not None else None,
                value=value,
                timestamp_ms=commit_ms + SEND_DELAY_MS,
                sequence=sequence,
            )
        )

    def row_key(table: TableSpec, row: Row) -> str | None:
        if table.key_columns:
            return key_text(table, row, value_text)
        return table.name if options.keyless_key == "table" else None

    for item in history.items:
        if isinstance(item, Heartbeat):
            schema: dict[str, Any] = {"dataColumn": None, "primaryKey": None, "source": None}
            payload = _payload("MHEARTBEAT", None, item.commit_time_ms, system_time=False)
            send(None, _envelope(schema, payload, options), item.commit_time_ms, item.sequence)
            continue
        commit_ms = item.commit_time_ms
        for event in item.events:
            if isinstance(event, Truncate):
                row_ids.truncate(event.table)
                schema = {"source": _source(event.table)}
                ddl = {"text": f"TRUNCATE TABLE `{event.table.name}`"}
                payload = _payload("TRUNCATE", sequence_ids.next(), commit_ms, ddl=ddl)
                send(None, _envelope(schema, payload, options), commit_ms, item.sequence)
                continue
            if isinstance(event, SchemaChange):
                schema = {"source": _source(event.table)}
                text = _ddl.statement(event, rename=_ddl.RENAME_CHANGE)
                ddl = {
                    "text": text,
                    "ddlMeta": base64_text(JAVA_SERIALIZATION_MAGIC + text.encode("utf-8")),
                }
                payload = _payload("ALTER", sequence_ids.next(), commit_ms, ddl=ddl)
                send(None, _envelope(schema, payload, options), commit_ms, item.sequence)
                continue
            table = event.table
            schema = _schema(table, options)
            before_id, after_id = (
                row_ids.apply(event)
                if options.row_id_column and not table.key_columns
                else (None, None)
            )
            before = _image(table, event.before, before_id)
            after = _image(table, event.after, after_id)
            sequence_id = sequence_ids.next()
            if event.op in ("insert", "snapshot"):
                assert event.after is not None
                payload = _payload("INSERT", sequence_id, commit_ms, after=after)
                send(
                    row_key(table, event.after),
                    _envelope(schema, payload, options),
                    commit_ms,
                    item.sequence,
                )
            elif event.op == "delete":
                assert event.before is not None
                payload = _payload("DELETE", sequence_id, commit_ms, before=before)
                send(
                    row_key(table, event.before),
                    _envelope(schema, payload, options),
                    commit_ms,
                    item.sequence,
                )
            else:
                assert event.before is not None and event.after is not None
                if options.one_message_updates:
                    payload = _payload(
                        "UPDATE_AFTER", sequence_id, commit_ms, before=before, after=after
                    )
                    send(
                        row_key(table, event.after),
                        _envelope(schema, payload, options),
                        commit_ms,
                        item.sequence,
                    )
                else:
                    first = _payload(
                        options.update_before_op, sequence_id, commit_ms, before=before
                    )
                    second = _payload("UPDATE_AFTER", sequence_id, commit_ms, after=after)
                    send(
                        row_key(table, event.before),
                        _envelope(schema, first, options),
                        commit_ms,
                        item.sequence,
                    )
                    send(
                        row_key(table, event.after),
                        _envelope(schema, second, options),
                        commit_ms,
                        item.sequence,
                    )
    return messages
