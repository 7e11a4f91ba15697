"""Encoder of the open-source Debezium connectors' change events as Kafka Connect's JsonConverter
writes them (registry format ``debezium_json``).

References: Debezium 2.7 documentation, "Debezium connector for PostgreSQL" and "Debezium
connector for MySQL", sections "Data change events" (key, value envelope ``before`` /
``after`` / ``source`` / ``op`` / ``ts_ms`` / ``transaction``, the ``source`` fields of each
connector, tombstones, primary-key updates) and "Data type mappings" (Kafka Connect types and
``io.debezium.time.*`` / ``org.apache.kafka.connect.data.Decimal`` logical types); Kafka
Connect ``JsonConverter`` (``schemas.enable``).

Two connectors in one history. The history's tables sorted by name: a table at an even index
(0, 2, ...) is rendered as captured by the **PostgreSQL** connector with
``schemas.enable=true`` (``{"schema": ..., "payload": ...}`` for key and value), a table at an
odd index as captured by the **MySQL** connector with ``schemas.enable=false`` (the payload
object itself). :func:`connector` tells which.

Topics: one per table, Debezium's default naming: ``<prefix>.<schema>.<table>`` for
PostgreSQL (schema ``public`` when the table spec has none), ``<prefix>.<database>.<table>``
for MySQL. The topic prefix (``topic.prefix``) is also ``source.name``.

Value (payload; with schemas wrapped with its Kafka Connect struct)::

    {"before": {...} | null, "after": {...} | null, "source": {...},
     "transaction": null, "op": "c" | "u" | "d" | "r" | "t",
     "ts_ms": <processed by the connector, ms>, "ts_us": ..., "ts_ns": ...}

- insert ``c`` (after), update ``u`` (before and after, whole rows: PostgreSQL tables have
  ``REPLICA IDENTITY FULL``, MySQL ``binlog_row_image=FULL``), delete ``d`` (before), each
  delete followed by a tombstone (same key, NULL value; ``tombstones.on.delete=true``).
- Snapshot rows: ``r`` (after) with ``source.snapshot`` ``"true"``, ``"last"`` for the last
  snapshot row of each connector; streamed changes have ``"false"``.
- A primary-key update is a ``d`` of the old key (+ tombstone) and a ``c`` of the new key, as
  Debezium emits it (the ``__debezium.newkey`` / ``__debezium.oldkey`` headers are left out:
  messages carry no headers). An update of a table without a key (whose identity is every
  column) stays one ``u``.
- Truncate: ``t`` (before and after null, no key, no tombstone) for PostgreSQL tables
  (``skipped.operations=none``: Debezium 2.x skips truncates by default). The MySQL
  connector emits no truncate event (a TRUNCATE is DDL for it), so a truncate of a MySQL
  table produces nothing: ``truncate`` is not in :data:`FEATURES`, the gold of such a history
  would keep the MySQL rows.
- Not rendered: heartbeats (Debezium writes them to a separate ``__debezium-heartbeat.<prefix>``
  topic, not part of this format's change topics; ``heartbeat`` is not in :data:`FEATURES`),
  schema changes (each message's schema describes the table version of its change; a column
  a row lacks is NULL; the MySQL schema-change topic is not rendered), transaction metadata
  (``provide.transaction.metadata=false``: ``transaction`` is null).
- Partial updates and multi-row messages are not expressible: every event carries whole row
  images, one row per message (a multi-row MySQL statement is one binlog rows event whose
  rows are numbered by ``source.row``, which the history may still exercise).

``source``, PostgreSQL: ``version`` (``2.7.3.Final``), ``connector`` ``postgresql``, ``name``
(the prefix), ``ts_ms`` (commit time), ``snapshot``, ``db`` (the database), ``sequence``
(``["<last commit lsn>","<lsn>"]`` as a JSON string), ``ts_us`` / ``ts_ns``, ``schema``,
``table``, ``txId``, ``lsn`` (strictly increasing per change; every snapshot row carries the
snapshot's LSN, a primary-key update's ``d`` and ``c`` share theirs), ``xmin`` null.

``source``, MySQL: ``version``, ``connector`` ``mysql``, ``name``, ``ts_ms``, ``snapshot``,
``db``, ``sequence`` null, ``ts_us`` / ``ts_ns``, ``table``, ``server_id`` 1, ``gtid`` null,
``file`` (``mysql-bin.000003``, rotated to the next file every :data:`BINLOG_ROTATE_EVERY`
MySQL transactions, position restarting), ``pos`` (the rows event's position; adjacent
changes of one table with one op in a transaction form one rows event), ``row`` (index in the
rows event), ``thread``, ``query`` null. Snapshot rows carry the snapshot's binlog position
(row 0).

Ordering (what a later change of the same row is): PostgreSQL ``source.lsn``; MySQL (number of
``source.file`` after its last ``.``, ``source.pos``, ``source.row``); then Kafka partition,
offset, topic.

Kafka key: the primary key as JSON, with schemas ``{"schema": {"type": "struct", "fields":
[...], "optional": false, "name": "<topic>.Key"}, "payload": {...}}`` (the topic is
``<prefix>.<schema>.<table>``), schemaless ``{"customer_id": 1}``; None (no key) for a table
without a primary key.

Values (:func:`value_text` is the decoded text, the same for both connectors; the Kafka Connect
type is :func:`source_type`):

- int ``int32``, bigint ``int64``: JSON integers.
- decimal ``bytes (org.apache.kafka.connect.data.Decimal)``, schema parameters ``scale`` and
  ``connect.decimal.precision``. PostgreSQL (``decimal.handling.mode=precise``, the default):
  base64 of the two's-complement big-endian unscaled integer (Java
  ``BigInteger.toByteArray``); MySQL (schemaless, ``decimal.handling.mode=string``): the plain
  text as a JSON string. Either way the text is the plain decimal with exactly ``scale``
  fraction digits (``-12.50``; Java ``BigDecimal.toPlainString``).
- double ``double``: a JSON number as Java prints it (``1.0E21``, ``-0.5``).
- boolean ``boolean`` (MySQL ``BIT(1)``): ``true`` / ``false``.
- string ``string``: as is. binary ``bytes``: base64 (``binary.handling.mode=bytes``).
- date ``int32 (io.debezium.time.Date)``: days since 1970-01-01.
- timestamp ``int64 (io.debezium.time.MicroTimestamp)``: microseconds since the epoch, UTC
  (PostgreSQL ``timestamp(6)``, MySQL ``DATETIME(6)``; the default ``time.precision.mode`` of each).

Type texts follow the Lindorm encoder / decoder convention (``<type> (<logical name>)``).
MySQL tables are schemaless, so their messages declare no types: :func:`column_types` is None
for them (the decoder's ``column_types`` stays NULL), while :func:`source_type` always gives
the type a schema would declare (the PostgreSQL tables').
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, TypeAlias

from cdc_lakehouse.tools.simulate.encoders._alibaba_values import (
    RawNumber,
    base64_text,
    dumps,
    epoch_days,
    epoch_us,
    java_double_text,
)
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    Row,
    RowChange,
    TableSpec,
    Transaction,
    Truncate,
    Value,
)
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "debezium_json"
FEATURES: frozenset[str] = frozenset({"snapshot", "key_update", "keyless_table"})
"""Snapshot reads, primary-key updates and keyless tables work for both connectors. Not:
``truncate`` (MySQL emits no truncate event), ``heartbeat`` (separate heartbeat topic, not
rendered), ``partial_update`` (whole images), ``multi_row_message`` (one row per message)."""

Connector: TypeAlias = Literal["postgresql", "mysql"]

VERSION = "2.7.3.Final"
PG_DEFAULT_SCHEMA = "public"
PROCESSING_DELAY_MS = 5
"""``payload.ts_ms`` (and the Kafka timestamp) = commit time + this."""
FIRST_TX_ID = 750
FIRST_LSN = 0x2_1A0_0000  # 564,133,888; any start works
LSN_STEP_CHANGE = 104
LSN_STEP_COMMIT = 56
BINLOG_BASENAME = "mysql-bin"
FIRST_BINLOG = 3
BINLOG_ROTATE_EVERY = 20
"""MySQL transactions per binlog file (the position restarts in the next file)."""
BINLOG_START_POS = 157  # after the format description and previous-GTIDs events
BINLOG_GTID_BEGIN_BYTES = 148  # GTID event + BEGIN query event
BINLOG_TABLE_MAP_BYTES = 62
BINLOG_ROW_BYTES = 96
BINLOG_XID_BYTES = 31
SERVER_ID = 1
THREAD_ID = 7

DECIMAL = "org.apache.kafka.connect.data.Decimal"
DATE = "io.debezium.time.Date"
MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
_TYPES: dict[str, tuple[str, str | None]] = {
    "int": ("int32", None),
    "bigint": ("int64", None),
    "decimal": ("bytes", DECIMAL),
    "double": ("double", None),
    "boolean": ("boolean", None),
    "string": ("string", None),
    "binary": ("bytes", None),
    "date": ("int32", DATE),
    "timestamp": ("int64", MICRO_TIMESTAMP),
}


# --------------------------------------------------------------------------- tables


def connector(history: History, table_name: str) -> Connector:
    """``postgresql`` for a table at an even index of the history's tables sorted by name,
    ``mysql`` at an odd one. Raises KeyError for an unknown table."""
    names = sorted({table.name for table in history.tables})
    if table_name not in names:
        raise KeyError(f"the history has no table {table_name!r}")
    return "postgresql" if names.index(table_name) % 2 == 0 else "mysql"


def topic_of(table: TableSpec, kind: Connector, prefix: str) -> str:
    """Debezium's default topic of a table: ``<prefix>.<schema>.<table>`` (PostgreSQL),
    ``<prefix>.<database>.<table>`` (MySQL)."""
    namespace = (table.schema or PG_DEFAULT_SCHEMA) if kind == "postgresql" else table.database
    return f"{prefix}.{namespace}.{table.name}"


def topics(history: History, prefix: str) -> list[str]:
    """One topic per table, in the order of the history's tables."""
    return [topic_of(table, connector(history, table.name), prefix) for table in history.tables]


# --------------------------------------------------------------------------- values


def unscaled(column: Column, value: Decimal) -> int:
    """The unscaled integer of a decimal at the column's scale (exact, any precision)."""
    scale = column.scale or 0
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int), "finite decimals only"
    number = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift < 0:
        raise ValueError(f"{value} has more than {scale} fraction digits")
    number *= 10**shift
    return -number if sign else number


def decimal_bytes(number: int) -> bytes:
    """Java ``BigInteger.toByteArray()``: minimal two's-complement big-endian bytes."""
    length = (number + (number < 0)).bit_length() // 8 + 1
    return number.to_bytes(length, "big", signed=True)


def plain_decimal(number: int, scale: int) -> str:
    """Java ``BigDecimal.toPlainString()`` of ``number * 10**-scale``: exactly ``scale``
    fraction digits (``-12.50``, ``0.00``); a negative scale appends zeros."""
    sign = "-" if number < 0 else ""
    digits = str(abs(number))
    if scale <= 0:
        return sign + digits + "0" * -scale
    digits = digits.rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def value_text(column: Column, value: Value) -> str | None:
    """The image text the decoder yields (None for NULL); the same for both connectors."""
    if value is None:
        return None
    kind = column.type
    if kind in ("int", "bigint"):
        return str(int(value))  # type: ignore[arg-type]
    if kind == "decimal":
        assert isinstance(value, Decimal)
        return plain_decimal(unscaled(column, value), column.scale or 0)
    if kind == "double":
        assert isinstance(value, float)
        return java_double_text(value)
    if kind == "boolean":
        return "true" if value else "false"
    if kind == "string":
        assert isinstance(value, str)
        return value
    if kind == "binary":
        assert isinstance(value, bytes)
        return base64_text(value)
    if kind == "date":
        assert isinstance(value, dt.date)
        return str(epoch_days(value))
    if kind == "timestamp":
        assert isinstance(value, dt.datetime)
        return str(epoch_us(value))
    raise ValueError(f"unknown logical type {kind!r}")


def json_value(column: Column, value: Value, kind: Connector) -> Any:
    """The JSON value of a column value in a message of connector ``kind`` (module doc)."""
    if value is None:
        return None
    if column.type == "decimal":
        assert isinstance(value, Decimal)
        number = unscaled(column, value)
        if kind == "postgresql":
            return base64_text(decimal_bytes(number))
        return plain_decimal(number, column.scale or 0)
    if column.type == "boolean":
        return bool(value)
    text = value_text(column, value)
    if column.type in ("string", "binary"):
        return text
    return RawNumber(text)


def source_type(column: Column) -> str:
    """The column's type as a schema declares it (``int32``, ``bytes
    (org.apache.kafka.connect.data.Decimal)``, ``int32 (io.debezium.time.Date)``, ...)."""
    kind, logical = _TYPES[column.type]
    return f"{kind} ({logical})" if logical else kind


def column_types(history: History, table: TableSpec) -> dict[str, str] | None:
    """What the table's messages declare: column -> :func:`source_type` for a PostgreSQL table
    (schemas enabled), None for a MySQL table (schemaless: no types)."""
    if connector(history, table.name) == "mysql":
        return None
    return {column.name: source_type(column) for column in table.columns}


# --------------------------------------------------------------------------- schemas


def _field_schema(column: Column, optional: bool) -> dict[str, Any]:
    kind, logical = _TYPES[column.type]
    schema: dict[str, Any] = {"type": kind, "optional": optional}
    if logical is not None:
        schema["name"] = logical
        schema["version"] = 1
    if column.type == "decimal":
        schema["parameters"] = {
            "scale": str(column.scale or 0),
            "connect.decimal.precision": str(column.precision or 38),
        }
    schema["field"] = column.name
    return schema


def _plain(kind: str, name: str, optional: bool = False) -> dict[str, Any]:
    return {"type": kind, "optional": optional, "field": name}


_PG_SOURCE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        _plain("string", "version"),
        _plain("string", "connector"),
        _plain("string", "name"),
        _plain("int64", "ts_ms"),
        {
            "type": "string",
            "optional": True,
            "name": "io.debezium.data.Enum",
            "version": 1,
            "parameters": {"allowed": "true,last,false,incremental"},
            "default": "false",
            "field": "snapshot",
        },
        _plain("string", "db"),
        _plain("string", "sequence", True),
        _plain("int64", "ts_us", True),
        _plain("int64", "ts_ns", True),
        _plain("string", "schema"),
        _plain("string", "table"),
        _plain("int64", "txId", True),
        _plain("int64", "lsn", True),
        _plain("int64", "xmin", True),
    ],
    "optional": False,
    "name": "io.debezium.connector.postgresql.Source",
    "field": "source",
}

_TRANSACTION_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        _plain("string", "id"),
        _plain("int64", "total_order"),
        _plain("int64", "data_collection_order"),
    ],
    "optional": True,
    "name": "event.block",
    "version": 1,
    "field": "transaction",
}


def _columns_schema(table: TableSpec) -> list[dict[str, Any]]:
    keys = set(table.key_columns)
    return [
        _field_schema(column, column.name not in keys and column.nullable)
        for column in table.columns
    ]


def _value_schema(table: TableSpec, topic: str) -> dict[str, Any]:
    columns = _columns_schema(table)
    row = {"type": "struct", "fields": columns, "optional": True, "name": f"{topic}.Value"}
    return {
        "type": "struct",
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            _PG_SOURCE_SCHEMA,
            _TRANSACTION_SCHEMA,
            _plain("string", "op"),
            _plain("int64", "ts_ms", True),
            _plain("int64", "ts_us", True),
            _plain("int64", "ts_ns", True),
        ],
        "optional": False,
        "name": f"{topic}.Envelope",
        "version": 2,
    }


def _key_schema(table: TableSpec, topic: str) -> dict[str, Any]:
    fields = [_field_schema(table.column(name), False) for name in table.key_columns]
    return {"type": "struct", "fields": fields, "optional": False, "name": f"{topic}.Key"}


# --------------------------------------------------------------------------- positions


@dataclass
class _Positions:
    """The log positions of both connectors as the history is rendered."""

    lsn: int = FIRST_LSN
    last_commit_lsn: int | None = None
    tx_id: int = FIRST_TX_ID
    binlog: int = FIRST_BINLOG
    pos: int = BINLOG_START_POS
    mysql_transactions: int = 0
    snapshot_lsn: int | None = None
    snapshot_tx_id: int | None = None
    snapshot_binlog: tuple[int, int] | None = None

    def binlog_file(self, number: int | None = None) -> str:
        return f"{BINLOG_BASENAME}.{self.binlog if number is None else number:06d}"


def _snapshot_marks(history: History) -> dict[tuple[int, int], str]:
    """(item index, event index) -> ``source.snapshot`` of every snapshot row: ``true``,
    ``last`` for each connector's last one."""
    marks: dict[tuple[int, int], str] = {}
    last: dict[Connector, tuple[int, int]] = {}
    for i, item in enumerate(history.items):
        if not isinstance(item, Transaction):
            continue
        for j, event in enumerate(item.events):
            if isinstance(event, RowChange) and event.op == "snapshot":
                marks[(i, j)] = "true"
                last[connector(history, event.table.name)] = (i, j)
    for position in last.values():
        marks[position] = "last"
    return marks


def _statements(events: tuple[Any, ...]) -> Iterator[list[tuple[int, Any]]]:
    """Runs of adjacent row changes of one table and one op (a MySQL rows event each); any
    other event alone."""
    run: list[tuple[int, Any]] = []
    for index, event in enumerate(events):
        if (
            run
            and isinstance(event, RowChange)
            and isinstance(run[-1][1], RowChange)
            and run[-1][1].table.name == event.table.name
            and run[-1][1].op == event.op
        ):
            run.append((index, event))
            continue
        if run:
            yield run
        run = [(index, event)]
    if run:
        yield run


# --------------------------------------------------------------------------- messages


def _image(table: TableSpec, row: Row | None, kind: Connector) -> dict[str, Any] | None:
    if row is None:
        return None
    # after a schema change a row may lack a column of the spec: NULL
    return {c.name: json_value(c, row.get(c.name), kind) for c in table.columns}


def _kafka_key(table: TableSpec, row: Row, kind: Connector, topic: str) -> bytes | None:
    if not table.key_columns:
        return None
    payload = {name: json_value(table.column(name), row[name], kind) for name in table.key_columns}
    if kind == "postgresql":
        return dumps({"schema": _key_schema(table, topic), "payload": payload}).encode()
    return dumps(payload).encode()


def _ops(change: RowChange) -> list[tuple[str, Row | None, Row | None]]:
    if change.op == "snapshot":
        return [("r", None, change.after)]
    if change.op == "insert":
        return [("c", None, change.after)]
    if change.op == "delete":
        return [("d", change.before, None)]
    if change.moves_key and change.table.key_columns:
        return [("d", change.before, None), ("c", None, change.after)]
    return [("u", change.before, change.after)]


def encode(history: History, prefix: str) -> list[Message]:
    """Every message in production order (see the module doc): per change its event, a
    delete's tombstone right after it."""
    kinds = {table.name: connector(history, table.name) for table in history.tables}
    marks = _snapshot_marks(history)
    at = _Positions()
    messages: list[Message] = []
    schemas: dict[tuple[TableSpec, str], dict[str, Any]] = {}

    def emit(
        table: TableSpec,
        op: str,
        before: Row | None,
        after: Row | None,
        source: dict[str, Any],
        commit_ms: int,
        sequence: int,
    ) -> None:
        kind = kinds[table.name]
        topic = topic_of(table, kind, prefix)
        processed_ms = commit_ms + PROCESSING_DELAY_MS
        payload: dict[str, Any] = {
            "before": _image(table, before, kind),
            "after": _image(table, after, kind),
            "source": source,
            "transaction": None,
            "op": op,
            "ts_ms": processed_ms,
            "ts_us": processed_ms * 1000,
            "ts_ns": processed_ms * 1_000_000,
        }
        if kind == "postgresql":
            if (table, topic) not in schemas:
                schemas[(table, topic)] = _value_schema(table, topic)
            value: dict[str, Any] = {"schema": schemas[(table, topic)], "payload": payload}
        else:
            value = payload
        row = after if after is not None else before
        key = _kafka_key(table, row, kind, topic) if row is not None else None
        messages.append(Message(topic, key, dumps(value).encode(), processed_ms, sequence))
        if op == "d":  # tombstones.on.delete
            messages.append(Message(topic, key, None, processed_ms, sequence))

    for i, item in enumerate(history.items):
        if isinstance(item, Heartbeat):
            continue  # heartbeat topic not rendered
        commit_ms = item.commit_time_ms
        common = {"version": VERSION, "name": prefix, "ts_ms": commit_ms}
        common |= {"ts_us": commit_ms * 1000, "ts_ns": commit_ms * 1_000_000}
        pg_touched = mysql_touched = False
        tx_id = at.tx_id
        for run in _statements(item.events):
            first = run[0][1]
            if not isinstance(first, RowChange | Truncate):
                continue  # schema change: no event
            table = first.table
            kind = kinds[table.name]
            if isinstance(first, Truncate):
                if kind == "postgresql":  # the MySQL connector emits no truncate event
                    at.lsn += LSN_STEP_CHANGE
                    pg_touched = True
                    source = _pg_source(common, table, "false", tx_id, at.lsn, at.last_commit_lsn)
                    emit(table, "t", None, None, source, commit_ms, item.sequence)
                continue
            snapshot = first.op == "snapshot"
            number = pos = 0
            if kind == "mysql":
                if snapshot:
                    if at.snapshot_binlog is None:
                        at.snapshot_binlog = (at.binlog, at.pos)
                    number, pos = at.snapshot_binlog
                else:
                    if not mysql_touched:
                        at.pos += BINLOG_GTID_BEGIN_BYTES
                    at.pos += BINLOG_TABLE_MAP_BYTES
                    number, pos = at.binlog, at.pos
                    at.pos += BINLOG_ROW_BYTES * len(run)
                    mysql_touched = True
            for row_index, (j, event) in enumerate(run):
                mark = marks.get((i, j), "false")
                if kind == "postgresql":
                    if snapshot:
                        if at.snapshot_lsn is None:
                            at.snapshot_lsn, at.snapshot_tx_id = at.lsn, at.tx_id
                            at.tx_id += 1
                        lsn, txid, previous = at.snapshot_lsn, at.snapshot_tx_id, None
                    else:
                        at.lsn += LSN_STEP_CHANGE
                        pg_touched = True
                        lsn, txid, previous = at.lsn, tx_id, at.last_commit_lsn
                    source = _pg_source(common, table, mark, txid, lsn, previous)
                else:
                    source = {
                        **_mysql_common(common, mark, table),
                        "file": at.binlog_file(number),
                        "pos": pos,
                        "row": 0 if snapshot else row_index,
                        "thread": None if snapshot else THREAD_ID,
                        "query": None,
                    }
                for op, before, after in _ops(event):
                    emit(table, op, before, after, source, commit_ms, item.sequence)
        if pg_touched:
            at.lsn += LSN_STEP_COMMIT
            at.last_commit_lsn = at.lsn
            at.tx_id += 1
        if mysql_touched:
            at.pos += BINLOG_XID_BYTES
            at.mysql_transactions += 1
            if at.mysql_transactions % BINLOG_ROTATE_EVERY == 0:
                at.binlog += 1
                at.pos = BINLOG_START_POS
    return messages


def _pg_source(
    common: dict[str, Any],
    table: TableSpec,
    snapshot: str,
    tx_id: int | None,
    lsn: int,
    previous: int | None,
) -> dict[str, Any]:
    sequence = dumps([None if previous is None else str(previous), str(lsn)])
    return {
        "version": common["version"],
        "connector": "postgresql",
        "name": common["name"],
        "ts_ms": common["ts_ms"],
        "snapshot": snapshot,
        "db": table.database,
        "sequence": sequence,
        "ts_us": common["ts_us"],
        "ts_ns": common["ts_ns"],
        "schema": table.schema or PG_DEFAULT_SCHEMA,
        "table": table.name,
        "txId": tx_id,
        "lsn": lsn,
        "xmin": None,
    }


def _mysql_common(common: dict[str, Any], snapshot: str, table: TableSpec) -> dict[str, Any]:
    return {
        "version": common["version"],
        "connector": "mysql",
        "name": common["name"],
        "ts_ms": common["ts_ms"],
        "snapshot": snapshot,
        "db": table.database,
        "sequence": None,
        "ts_us": common["ts_us"],
        "ts_ns": common["ts_ns"],
        "table": table.name,
        "server_id": SERVER_ID,
        "gtid": None,
    }
