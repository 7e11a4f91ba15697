"""Simulator encoder of DTS Avro (docs/formats.md section 4a; seed 003) for a MySQL source: one
topic ``<prefix>.dts_avro``, one plain-Avro ``Record`` per Kafka message, written with
:mod:`cdc_lakehouse.formats.dts_avro.avro_writer` (newer schema revision, ``bornTimestamp`` in
seconds as real producers write it).

Records per history item, in production order (``id`` counts up from :data:`FIRST_ID` over
the whole stream, so (``sourceTimestamp``, ``id``) orders every record):

- snapshot transaction: one ``INIT`` per row (after image only), no BEGIN / COMMIT.
- other transaction: ``BEGIN``, then per event ``INSERT`` / ``UPDATE`` / ``DELETE`` (a
  snapshot row reaching a change transaction is an ``INSERT``) or, for a truncate, a ``DDL``
  whose ``afterImages`` is the text ``TRUNCATE TABLE `<table>``` (objectName ``db.table``;
  docs/formats.md's vocabulary: truncate = DDL text), then ``COMMIT``. BEGIN / COMMIT are sent
  only when the transaction has a row change (MySQL logs a DDL without them).
- schema change (``SchemaChange``): a ``DDL`` like the truncate's (objectName ``db.table``,
  ``fields`` null, no Kafka key) whose ``afterImages`` is the MySQL statement of
  :mod:`._ddl` (a rename spelled ``RENAME COLUMN `old` TO `new```). Row records after it
  carry the new spec in ``fields``; a column a row lacks (a before image written before an
  ADD COLUMN / RENAME) is EmptyObject ``NULL``.
- heartbeat: ``HEARTBEAT`` (no object, fields or images).

Row images follow MySQL's ``binlog_row_image``: transactions with an even ``sequence`` are
written FULL (whole before and after rows); odd ones MINIMAL (before image: the identifying
columns, i.e. the key, or every column without a key; after image of an update: only the
changed columns). A column not written is EmptyObject ``NONE`` (not provided), SQL NULL is
EmptyObject ``NULL``.

Record fields: ``sourceTimestamp`` = commit time in epoch *seconds*; ``sourcePosition``
``<offset>@<file>``; ``sourceTxid`` = the history's transaction id (``0`` for heartbeats);
``tags``: ``pk_uk_info`` (``{"PRIMARY":[...]}``, absent without a key) and
``readerThroughoutTime`` (epoch ms when DTS read the record: commit + 250 ms). Kafka
timestamp: commit + 250 ms. Kafka key: the row's identity text (see ``_dts_common``), None
for BEGIN / COMMIT / DDL / HEARTBEAT.

Value types and texts (what :mod:`cdc_lakehouse.formats.dts_avro.decoder` yields), MySQL column type
and its binlog ``dataTypeNumber`` (docs/formats.md 4a):

=========  ===================  ====  =================  ==================================
logical    MySQL type           code  Avro value type    decoded text
=========  ===================  ====  =================  ==================================
int        int                  3     Integer            ``-42``
bigint     bigint               8     Integer            ``9223372036854775807``
decimal    decimal(p,s)         246   Decimal            exact, ``s`` fraction digits
double     double               5     Float              Python ``repr`` (``1e-05``)
boolean    tinyint(1)           1     Integer            ``1`` / ``0``
string     varchar(n) / text    15 /  Character          the text (utf8mb4)
                                252
binary     varbinary(n) / blob  15 /  BinaryObject       base64
                                252
date       date                 10    DateTime (Y-M-D)   ``2024-02-29``
timestamp  datetime(3)          18    DateTime + micros  ``1969-12-31 23:59:59.999000``
=========  ===================  ====  =================  ==================================

A ``timestamp`` is a MySQL DATETIME(3) holding the UTC wall time (a MySQL TIMESTAMP cannot hold
times before 1970). TEXT and BLOB share the binlog code 252, VARCHAR and VARBINARY the code
15: the value type (Character / BinaryObject) tells them apart, ``fields`` does not.
"""

from __future__ import annotations

import base64
import datetime as dt
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from cdc_lakehouse.formats.dts_avro import avro_writer as avro
from cdc_lakehouse.formats.dts_avro.decoder import MYSQL_TYPE_NAMES
from cdc_lakehouse.tools.simulate.encoders import _ddl
from cdc_lakehouse.tools.simulate.encoders import _dts_common as common
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    Row,
    RowChange,
    SchemaChange,
    TableSpec,
    Transaction,
    Truncate,
    Value,
)
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "dts_avro"
FEATURES = frozenset(
    {"snapshot", "truncate", "heartbeat", "key_update", "keyless_table", "partial_update"}
)
FIRST_ID = 1_000_001
"""``id`` of the first record of a stream."""
SOURCE_VERSION = "8.0.28"
"""``source.version``: the MySQL server version."""

_OPERATION = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE", "snapshot": "INSERT"}


def topics(history: History, prefix: str) -> list[str]:
    """The one topic every record of ``history`` goes to."""
    return [f"{prefix}.{FORMAT}"]


def type_number(column: Column) -> int:
    """The MySQL binlog type code (``dataTypeNumber``) of ``column`` (see module doc)."""
    if column.type in ("string", "binary"):
        return 15 if column.length is not None else 252
    return {
        "int": 3,
        "bigint": 8,
        "decimal": 246,
        "double": 5,
        "boolean": 1,
        "date": 10,
        "timestamp": 18,
    }[column.type]


def source_type(column: Column) -> str:
    """What the decoder reports in ``column_types``: the binlog type name of the column's
    ``dataTypeNumber`` (``LONG``, ``NEWDECIMAL``, ``DATETIME2``, ...)."""
    return MYSQL_TYPE_NAMES[type_number(column)]


def value_text(column: Column, value: Value) -> str | None:
    """The decoder's text of ``value`` (module doc table); None for SQL NULL."""
    if value is None:
        return None
    if column.type == "boolean":
        return "1" if value else "0"
    if isinstance(value, Decimal):
        return common.plain_decimal(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dt.datetime):
        return common.date_time_text(value, fraction_digits=6)
    if isinstance(value, dt.date):
        return common.iso_date(value)
    return str(value)


def element(column: Column, value: Value) -> Any:
    """The Avro image element of ``value`` in ``column`` (EmptyObject NULL for None)."""
    if value is None:
        return avro.NULL
    if column.type == "boolean":
        return avro.integer(1 if value else 0, precision=1)
    if isinstance(value, Decimal):
        text = common.plain_decimal(value)
        return avro.decimal(text, precision=column.precision, scale=column.scale)
    if isinstance(value, float):
        return avro.floating(value)
    if isinstance(value, bytes):
        return avro.binary_object("VARBINARY" if column.length else "BLOB", value)
    if isinstance(value, dt.datetime):
        return avro.date_time(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
        )
    if isinstance(value, dt.date):
        return avro.date_time(value.year, value.month, value.day)
    if isinstance(value, str):
        return avro.character(value, "utf8mb4")
    return avro.integer(value)


def _image(table: TableSpec, row: Row, names: tuple[str, ...]) -> dict[str, Any]:
    """The friendly image mapping of ``row`` restricted to ``names`` (others become NONE)."""
    return {name: element(table.column(name), row.get(name)) for name in names}


def object_name(table: TableSpec) -> str:
    """``db.table`` or ``db.schema.table``, a dot inside a name escaped as ``\\u002E``."""
    parts = [table.database, table.schema, table.name]
    return ".".join(p.replace(".", "\\u002E") for p in parts if p is not None)


def _images(change: RowChange, minimal: bool) -> tuple[Mapping[str, Any] | None, ...]:
    """(before, after) friendly images of a row change (see module doc: FULL / MINIMAL)."""
    table = change.table
    every = table.column_names
    before = after = None
    if change.before is not None:
        names = common.identity_columns(table) if minimal else every
        before = _image(table, change.before, names)
    if change.after is not None:
        names = change.changed_columns if minimal and change.before is not None else every
        after = _image(table, change.after, names)
    return before, after


class _Stream:
    """The record counter of one stream: ``id`` and ``sourcePosition`` offsets."""

    def __init__(self) -> None:
        self.next_id = FIRST_ID

    def record(self, operation: str, commit_ms: int, **fields: Any) -> bytes:
        """The next record's Avro bytes (``fields``: keyword arguments of ``make_record``)."""
        record_id = self.next_id
        self.next_id += 1
        seconds = commit_ms // 1000
        tags = dict(fields.pop("tags", {}))
        tags["readerThroughoutTime"] = str(commit_ms + common.SEND_LAG_MS)
        record = avro.make_record(
            operation,
            record_id=record_id,
            source_timestamp=seconds,
            source_position=f"{record_id * 128}@7",
            source_version=SOURCE_VERSION,
            tags=tags,
            born_timestamp=seconds,
            **fields,
        )
        return avro.encode(record)


def _change_record(
    stream: _Stream, transaction: Transaction, change: RowChange, operation: str
) -> bytes:
    table = change.table
    before, after = _images(change, minimal=transaction.sequence % 2 == 1)
    return stream.record(
        operation,
        transaction.commit_time_ms,
        object_name=object_name(table),
        columns=[(c.name, type_number(c)) for c in table.columns],
        before=before,
        after=after,
        primary_key=table.key_columns or None,
        source_txid=transaction.transaction_id,
    )


def _transaction(stream: _Stream, topic: str, transaction: Transaction) -> list[Message]:
    commit = transaction.commit_time_ms
    sent = commit + common.SEND_LAG_MS

    def message(raw: bytes, key: bytes | None) -> Message:
        return Message(topic, key, raw, sent, transaction.sequence)

    if transaction.is_snapshot:
        return [
            message(
                _change_record(stream, transaction, event, "INIT"),
                common.change_key(event, value_text),
            )
            for event in transaction.events
            if isinstance(event, RowChange)
        ]
    has_rows = any(isinstance(event, RowChange) for event in transaction.events)
    out: list[Message] = []
    txid = transaction.transaction_id
    if has_rows:
        out.append(message(stream.record("BEGIN", commit, source_txid=txid), None))
    for event in transaction.events:
        if isinstance(event, Truncate):
            raw = stream.record(
                "DDL",
                commit,
                object_name=object_name(event.table),
                after=f"TRUNCATE TABLE `{event.table.name}`",
                source_txid=txid,
            )
            out.append(message(raw, None))
        elif isinstance(event, SchemaChange):
            raw = stream.record(
                "DDL",
                commit,
                object_name=object_name(event.table),
                after=_ddl.statement(event, rename=_ddl.RENAME_TO),
                source_txid=txid,
            )
            out.append(message(raw, None))
        else:
            raw = _change_record(stream, transaction, event, _OPERATION[event.op])
            out.append(message(raw, common.change_key(event, value_text)))
    if has_rows:
        out.append(message(stream.record("COMMIT", commit, source_txid=txid), None))
    return out


def encode(history: History, prefix: str) -> list[Message]:
    """Every record of ``history`` in production order (see module doc)."""
    topic = topics(history, prefix)[0]
    stream = _Stream()
    out: list[Message] = []
    for item in history.items:
        if isinstance(item, Heartbeat):
            raw = stream.record("HEARTBEAT", item.commit_time_ms)
            out.append(
                Message(topic, None, raw, item.commit_time_ms + common.SEND_LAG_MS, item.sequence)
            )
        else:
            out.extend(_transaction(stream, topic, item))
    return out
