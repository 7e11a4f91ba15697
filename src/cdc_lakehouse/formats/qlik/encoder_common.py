"""What the two Qlik encoders (``qlik_json``, ``qlik_avro``) share: the plan of the messages a
Qlik Replicate task with a Kafka target writes for a history, independent of the framing.

Sources of the facts: docs/formats.md section 5 and seed 004 (metadata and data messages), Qlik
Replicate's "Kafka target data types" page (Replicate type -> JSON / Avro primitive type,
"binary values are represented as hexadecimal digits") and "MySQL source data types" page
(source type -> Replicate type).

The simulated task (``TASK`` = the database of the history's first table) replicates a MySQL
source: MySQL has no schemas, so a table's Qlik ``lineage.schema`` is its database (or the
``TableSpec.schema`` when one is given). One topic per format carries every table, metadata
and data messages alike.

Messages, in production order:

1. one metadata (MD) message per table, up front (``Message.sequence`` 0), table version 1:
   columns by ordinal (1-based, the ``TableSpec`` order), Qlik type, length / precision /
   scale, ``primaryKeyPosition`` (0 = not in the key), ``nullable``, and the Avro
   ``dataSchema`` of its data messages;
2. one data (DT) message per row change, in commit order, and a new MD message per schema
   change (see below):

   - snapshot rows -> ``REFRESH`` (full load): ``changeSequence``, ``timestamp``,
     ``streamPosition``, ``transactionId`` empty, no ``changeMask``, no transaction counters;
   - insert -> ``INSERT``: ``data`` = the row;
   - update -> ``UPDATE``: ``data`` = the row after, ``beforeData`` = the row before (the
     task includes before images, so primary-key updates are visible);
   - delete -> ``DELETE``: ``data`` = the deleted row (the project's decoder and public
     consumers such as michelin's Qlik SMT read a DELETE's row from ``data``).

   CDC headers: ``changeSequence`` = ``YYYYMMDDHHmmSShh`` of the commit time (UTC) + a
   19-digit counter over every CDC change of the task (strictly increasing in commit order);
   ``timestamp`` = commit time ``YYYY-MM-DDTHH:MM:SS.mmm`` (UTC); ``streamPosition`` = a
   MySQL binlog position text; ``transactionId`` = 32 hex digits of the transaction's
   ``sequence``; ``transactionEventCounter`` (1-based) and ``transactionLastEvent``.

Schema changes (``SchemaChange``; docs/formats.md 5: every source DDL increments
``tableVersion`` and produces a new MD message): at the DDL's place in the stream, a new MD
message of the table (``Message.sequence`` = the DDL's transaction, Kafka timestamp and
``lineage.timestamp`` = its commit time) with ``tableVersion`` + 1, the new ``tableStructure``
(ordinals 1..n in the new spec's column order: an added column takes its position and shifts
the later ones, a renamed column keeps its ordinal, a dropped one is gone), a new
``dataSchema`` and therefore a new ``schemaId``. DT messages after it follow the new structure
(masks over the new ordinals) and reference the new ``schemaId`` (``externalSchemaId`` /
``messageSchemaId``), so the decoder pairs each DT with its exact table version. A column a row
lacks (a before image written before an ADD COLUMN / RENAME) is sent as null, provided.

Masks (bit ``ordinal - 1`` of the mask's integer value, as the project's decoder reads them):

- ``changeMask``: INSERT every column, UPDATE the changed columns, DELETE the key columns
  (every column for a table without a key); LOB columns (NCLOB, BLOB) never (seed 004).
- ``columnMask``: every column, except in a *partial* UPDATE: a table with a key whose
  source lacks full supplemental logging (seed 004's Oracle note) only carries its key and
  changed columns; the other columns are sent as null with their columnMask bit clear (not
  provided). Which updates are partial is a deterministic choice per change (a CRC of the
  transaction id and the change's position: about half of them), so runs are reproducible and
  both full and partial updates occur. Tables without a key never get partial updates (their
  row identity is every column).

Kafka key: the row's key column texts (every column for a table without a key) joined by
``+``, UTF-8; None for MD messages. Kafka timestamp: the commit time (MD: the first item's).

Stream shape (:class:`StreamShape`, the encoders' ``shape=``): by default (:data:`DEFAULT`)
one topic carries every table and each DT names its MD's ``schemaId`` twice, in
``headers.externalSchemaId`` and in the envelope's ``messageSchemaId``. :data:`REAL_STREAM`
is the shape of a real Qlik Replicate JSON stream (issue 48): the "include external schema
id header" option off (``externalSchemaId`` null), a DT envelope ``messageSchemaId`` that no
MD carries, and one topic per table holding its MD and DT messages (Qlik's topic-per-table
layout), so a DT can only be matched to its MD by its topic (docs/formats.md 5a).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Context, Decimal
from typing import Any

from cdc_lakehouse.formats.qlik.avro_writer import QlikColumn, QlikTable
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

FEATURES = frozenset({"snapshot", "key_update", "keyless_table", "partial_update"})


@dataclass(frozen=True)
class StreamShape:
    """How a simulated Qlik task lays out its messages (see module doc).

    - ``external_schema_id``: DTs carry ``headers.externalSchemaId`` = their MD's ``schemaId``
      (Qlik's "include external schema id header" option); else it is null.
    - ``envelope_schema_id``: a DT envelope's ``messageSchemaId`` is its MD's ``schemaId``;
      else it is an id no MD carries (:func:`unrelated_schema_id`).
    - ``topic_per_table``: one topic per table (:func:`table_topic`), else one per format.
    - ``embedded_schema``: Avro only: each DT envelope embeds its writer schema
      (``messageSchema``, a self-describing message) beside ``messageSchemaId``.
    """

    external_schema_id: bool = True
    envelope_schema_id: bool = True
    topic_per_table: bool = False
    embedded_schema: bool = False


DEFAULT = StreamShape()
"""The encoders' default: exact schema ids everywhere, one topic per format."""
REAL_STREAM = StreamShape(external_schema_id=False, envelope_schema_id=False, topic_per_table=True)
"""A real Qlik Replicate JSON stream's shape (issue 48; see module doc)."""


def table_topic(prefix: str, format_: str, spec: TableSpec) -> str:
    """The topic of one table's messages with ``topic_per_table``:
    ``<prefix>.<format>.<schema or database>.<table>``."""
    return f"{prefix}.{format_}.{spec.schema or spec.database}.{spec.name}"


def stream_topics(history: History, prefix: str, format_: str, shape: StreamShape) -> list[str]:
    """Every topic an encoder of ``format_`` writes ``history`` to with ``shape``: one per
    table of the history (in order) with ``topic_per_table``, else ``<prefix>.<format>``."""
    if not shape.topic_per_table:
        return [f"{prefix}.{format_}"]
    return [table_topic(prefix, format_, spec) for spec in history.tables]


def unrelated_schema_id(table: QlikTable) -> str:
    """A DT envelope ``messageSchemaId`` that names no MD (32 hex digits derived from the
    table version's ``schemaId``, never equal to one)."""
    return hashlib.md5(f"envelope:{table.id}".encode()).hexdigest().upper()


SERVER = "qlik-replicate-sim"
LOB_TYPES = frozenset({"NCLOB", "CLOB", "BLOB"})
BINLOG_FILE = "mysql-bin.000001"
_OPERATIONS = {"snapshot": "REFRESH", "insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}


# --------------------------------------------------------------------------- types and values


def qlik_type(column: Column) -> tuple[str, int, int, int]:
    """(Qlik type, length, precision, scale) of a MySQL column of ``column``'s logical type.

    MySQL source types (Qlik "MySQL source data types"): int -> INT4, bigint -> INT8,
    decimal(p,s) -> NUMERIC(p,s), double -> REAL8, bit(1) -> BOOLEAN, varchar(n) utf8mb4 ->
    WSTRING(n), longtext -> NCLOB, varbinary(n) -> BYTES(n), longblob -> BLOB, date -> DATE,
    datetime(3) -> DATETIME (scale 3).
    """
    match column.type:
        case "int":
            return "INT4", 4, 10, 0
        case "bigint":
            return "INT8", 8, 19, 0
        case "decimal":
            return "NUMERIC", 0, column.precision or 38, column.scale or 0
        case "double":
            return "REAL8", 8, 14, 0
        case "boolean":
            return "BOOLEAN", 1, 1, 0
        case "string":
            return ("WSTRING", column.length, 0, 0) if column.length else ("NCLOB", 0, 0, 0)
        case "binary":
            return ("BYTES", column.length, 0, 0) if column.length else ("BLOB", 0, 0, 0)
        case "date":
            return "DATE", 0, 0, 0
        case "timestamp":
            return "DATETIME", 0, 0, 3
    raise ValueError(f"unknown logical type {column.type!r}")


def source_type(column: Column) -> str:
    """The column's type as it lands in ``column_types``: the decoder's rendering of the MD
    message (``WSTRING(50)``, ``NUMERIC(12,2)``, ``BYTES(16)``, else the bare type)."""
    name, length, precision, scale = qlik_type(column)
    if name == "NUMERIC":
        return f"NUMERIC({precision},{scale})"
    if name in ("WSTRING", "STRING", "BYTES") and length:
        return f"{name}({length})"
    return name


def decimal_text(column: Column, value: Decimal) -> str:
    """Fixed-point text with exactly ``scale`` digits; zero is never negative."""
    scale = column.scale or 0
    context = Context(prec=len(value.as_tuple().digits) + scale + 40)
    quantized = value.quantize(Decimal(1).scaleb(-scale), context=context)
    if quantized == 0:
        quantized = abs(quantized)
    return format(quantized, "f")


def timestamp_text(value: dt.datetime) -> str:
    """Qlik DATETIME text ``YYYY-MM-DD HH:MM:SS.ffffff`` (the bundled samples' spelling)."""
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d} "
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


def date_text(value: dt.date) -> str:
    return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"


def value_text(column: Column, value: Value) -> str | None:
    """The text the project's decoder yields for ``value`` in both Qlik formats (None = NULL).

    int / bigint: decimal digits; decimal: fixed-point with ``scale`` digits; double: Python's
    shortest round-trip ``repr`` (``1.5``, ``1e+100``); boolean: ``true`` / ``false``; string:
    itself; binary: uppercase hex digits; date: ``YYYY-MM-DD``; timestamp:
    ``YYYY-MM-DD HH:MM:SS.ffffff``.
    """
    if value is None:
        return None
    match column.type:
        case "int" | "bigint":
            return str(int(value))  # type: ignore[arg-type]
        case "decimal":
            return decimal_text(column, Decimal(value))  # type: ignore[arg-type]
        case "double":
            return repr(float(value))  # type: ignore[arg-type]
        case "boolean":
            return "true" if value else "false"
        case "string":
            return str(value)
        case "binary":
            return bytes(value).hex().upper()  # type: ignore[arg-type]
        case "date":
            return date_text(value)  # type: ignore[arg-type]
        case "timestamp":
            return timestamp_text(value)  # type: ignore[arg-type]
    raise ValueError(f"unknown logical type {column.type!r}")


def wire_value(column: Column, value: Value) -> Any:
    """The value as both framings carry it (Qlik "Kafka target data types", no logical types):
    INT4 / INT8 / REAL8 / BOOLEAN as numbers and booleans, binary as bytes (JSON writes them as
    hex digits), NUMERIC / DATE / DATETIME / strings as text."""
    if value is None:
        return None
    match column.type:
        case "int" | "bigint":
            return int(value)  # type: ignore[arg-type]
        case "double":
            return float(value)  # type: ignore[arg-type]
        case "boolean":
            return bool(value)
        case "binary":
            return bytes(value)  # type: ignore[arg-type]
    return value_text(column, value)


# --------------------------------------------------------------------------- tables


def task_name(history: History) -> str:
    """The simulated Qlik task: named after the source database (``source_database``)."""
    return history.tables[0].database if history.tables else "cdc_simulator"


def metadata_time(history: History) -> int:
    """Epoch ms of the MD messages: the first item's commit time (0 for an empty history)."""
    return history.items[0].commit_time_ms if history.items else 0


def ms_text(epoch_ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmm`` (UTC) of epoch milliseconds."""
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=epoch_ms)
    return f"{date_text(moment)}T{moment:%H:%M:%S}.{moment.microsecond // 1000:03d}"


def qlik_table(spec: TableSpec, task: str, timestamp_ms: int, version: int = 1) -> QlikTable:
    """``spec`` as its MD message describes it, as table version ``version``."""
    columns = []
    for column in spec.columns:
        name, length, precision, scale = qlik_type(column)
        position = spec.key_columns.index(column.name) + 1 if column.name in spec.key_columns else 0
        columns.append(
            QlikColumn(
                column.name,
                name,
                length=length,
                precision=precision,
                scale=scale,
                primary_key_position=position,
                nullable=column.nullable,
            )
        )
    return QlikTable(
        server=SERVER,
        task=task,
        schema=spec.schema or spec.database,
        table=spec.name,
        version=version,
        columns=tuple(columns),
        timestamp=ms_text(timestamp_ms),
    )


def _bits(spec: TableSpec, names: set[str] | frozenset[str] | tuple[str, ...]) -> int:
    return sum(1 << index for index, name in enumerate(spec.column_names) if name in names)


def _lob_columns(spec: TableSpec) -> frozenset[str]:
    return frozenset(c.name for c in spec.columns if qlik_type(c)[0] in LOB_TYPES)


# --------------------------------------------------------------------------- data messages


@dataclass(frozen=True)
class DataMessage:
    """One DT message before framing. ``data`` / ``before``: every column of the table in
    ordinal order, Python values of :func:`wire_value` (a column not provided is None and its
    ``column_mask`` bit is clear). Masks are integers (bit ``ordinal - 1``)."""

    spec: TableSpec
    operation: str
    data: dict[str, Any]
    before: dict[str, Any] | None
    change_sequence: str
    timestamp: str
    stream_position: str
    transaction_id: str
    change_mask: int | None
    column_mask: int
    transaction_event_counter: int | None
    transaction_last_event: bool | None
    key: bytes
    timestamp_ms: int
    sequence: int


def key_text(spec: TableSpec, row: Row) -> str:
    """The Kafka key text of a row: its key columns' texts (every column without a key)."""
    names = spec.key_columns or spec.column_names
    return "+".join(value_text(spec.column(n), row.get(n)) or "" for n in names)


def is_partial(change: RowChange, transaction: Transaction, index: int) -> bool:
    """Whether this UPDATE is sent with only its key and changed columns (see module doc)."""
    if change.op != "update" or not change.table.key_columns:
        return False
    provided = set(change.table.key_columns) | set(change.changed_columns)
    if provided >= set(change.table.column_names):
        return False
    return zlib.crc32(f"{transaction.transaction_id}/{index}".encode()) % 2 == 0


def _image(spec: TableSpec, row: Row | None, provided: set[str] | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        c.name: wire_value(c, row.get(c.name)) if provided is None or c.name in provided else None
        for c in spec.columns
    }


@dataclass(frozen=True)
class MetadataMessage:
    """One MD message before framing: ``table`` (version, columns, ``schemaId``, data schema)
    describes ``spec``; sent at ``timestamp_ms`` for history item ``sequence`` (0: up front)."""

    spec: TableSpec
    table: QlikTable
    timestamp_ms: int
    sequence: int


def _identity(spec: TableSpec) -> tuple[str, str | None, str]:
    return spec.database, spec.schema, spec.name


def stream(history: History) -> Iterator[MetadataMessage | DataMessage]:
    """The MD and DT messages of ``history`` in production order; see module doc.

    Raises:
        ValueError: the history holds a truncate (Qlik's Kafka target sends no data message
            for it) or a table not listed in ``history.tables`` (nor made by a schema change).
    """
    task = task_name(history)
    md_time = metadata_time(history)
    versions: dict[tuple[str, str | None, str], int] = {}
    for spec in history.tables:
        versions[_identity(spec)] = 1
        yield MetadataMessage(spec, qlik_table(spec, task, md_time), md_time, 0)
    known = set(history.tables)
    counter = 0
    for item in history.items:
        if isinstance(item, Heartbeat):
            continue  # Qlik's Kafka target sends no heartbeat messages
        changes = [e for e in item.events if isinstance(e, RowChange)]
        if any(isinstance(e, Truncate) for e in item.events):
            raise ValueError("qlik formats cannot express a truncate (no data message for it)")
        moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=item.commit_time_ms)
        index = 0
        for event in item.events:
            if isinstance(event, SchemaChange):
                identity = _identity(event.table)
                if identity not in versions:
                    raise ValueError(f"table {event.table.name} is not among the history's tables")
                versions[identity] += 1
                known.add(event.table)
                table = qlik_table(event.table, task, item.commit_time_ms, versions[identity])
                yield MetadataMessage(event.table, table, item.commit_time_ms, item.sequence)
                continue
            assert isinstance(event, RowChange)
            index += 1
            change = event
            spec = change.table
            if spec not in known:
                raise ValueError(f"table {spec.name} is not among the history's tables")
            every = _bits(spec, spec.column_names)
            lobs = _lob_columns(spec)
            row = change.after if change.after is not None else change.before
            assert row is not None
            operation = _OPERATIONS[change.op]
            key = key_text(spec, row).encode("utf-8")
            if operation == "REFRESH":
                yield DataMessage(
                    spec, operation, _image(spec, change.after, None) or {}, None,
                    "", "", "", "", None, every, None, None,
                    key, item.commit_time_ms, item.sequence,
                )  # fmt: skip
                continue
            counter += 1
            provided: set[str] | None = None
            if operation == "INSERT":
                changed = set(spec.column_names)
                data, before = _image(spec, change.after, None), None
            elif operation == "DELETE":
                changed = set(spec.key_columns or spec.column_names)
                data, before = _image(spec, change.before, None), None
            else:
                changed = set(change.changed_columns)
                if is_partial(change, item, index):
                    provided = set(spec.key_columns) | changed
                data = _image(spec, change.after, provided)
                before = _image(spec, change.before, provided)
            assert data is not None
            yield DataMessage(
                spec=spec,
                operation=operation,
                data=data,
                before=before,
                change_sequence=f"{moment:%Y%m%d%H%M%S}{moment.microsecond // 10000:02d}"
                f"{counter:019d}",
                timestamp=ms_text(item.commit_time_ms),
                stream_position=f"{BINLOG_FILE}:{4 + 256 * counter}",
                transaction_id=format(item.sequence, "032X"),
                change_mask=_bits(spec, changed - lobs),
                column_mask=every if provided is None else _bits(spec, provided),
                transaction_event_counter=index,
                transaction_last_event=index == len(changes),
                key=key,
                timestamp_ms=item.commit_time_ms,
                sequence=item.sequence,
            )


def data_messages(history: History) -> Iterator[DataMessage]:
    """The DT messages of ``history`` in production (commit) order (:func:`stream` without
    its MD messages).

    Raises:
        ValueError: as :func:`stream`.
    """
    for message in stream(history):
        if isinstance(message, DataMessage):
            yield message


def hex_mask(mask: int | None) -> str | None:
    """A mask as uppercase hex digits, two per byte (``0x0B`` -> ``"0B"``), as JSON sends it."""
    if mask is None:
        return None
    return format(mask, "X").zfill(2 * max(1, (mask.bit_length() + 7) // 8))
