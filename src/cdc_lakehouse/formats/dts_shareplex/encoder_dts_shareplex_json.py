"""Simulator encoder of DTS Shareplex JSON (docs/formats.md section 4b; seed 003) for an Oracle
source: one topic ``<prefix>.dts_shareplex_json``, one JSON object
``{"meta": {...}, "data": {...}, "key": {...}}`` per operation, UTF-8.

Messages per event of a transaction (heartbeats are not rendered: Shareplex has none):

- insert (and a snapshot row: Shareplex has no full-load op): ``op`` ``ins``, ``data`` the
  whole new row.
- update: ``op`` ``upd``, ``data`` only the changed columns (new values; an empty object when
  nothing changed), ``key`` the identifying columns of the row *before* the change (the key
  columns, or every column of a table without a key), so a key update has the old key in
  ``key`` and the new one in ``data`` (docs/formats.md: "key holds the old identifying values").
- delete: ``op`` ``del``, ``data`` the identifying columns of the deleted row.
- truncate: ``op`` ``TRUNCATE`` (the documented spelling), no ``data``.
- schema change (``SchemaChange``): a dropped column is ``op`` ``DROP COLUMN`` (the
  documented spelling; ``meta`` like a truncate's), ``data`` = ``{<dropped column>: null}``;
  Shareplex sends nothing for an added, renamed or widened column (values simply appear under
  the new names in later messages), so those events produce no message (a schema change is
  alone in its transaction: that transaction sends nothing).

``meta``: ``time`` = commit time, UTC ``yyyy-MM-ddTHH:mm:ss`` without ``Z`` (as the seed's
examples), ``posttime`` = commit + 1 s; ``scn`` = :data:`FIRST_SCN` + 8 x item ``sequence``
(one commit SCN per transaction, increasing); ``seq`` / ``size`` / ``idx`` = position of the
operation in the transaction (1-based) / operations in it / ``"seq/size"``; ``trans`` an
Oracle-style transaction id ``usn.slot.sequence``; ``userid`` 84; ``rowid`` an 18-character
Oracle ROWID made from the row's identity (not used as a key); ``table`` ``SCHEMA.TABLE``
with the table's schema, or its database when it has none (``shop.customers``). Kafka
timestamp: commit + 250 ms. Kafka key: the row's identity text; None for TRUNCATE.

Values are JSON strings or null (docs/formats.md 4b), as Oracle renders them:

=========  ======================  ==============================================
logical    Oracle type             text
=========  ======================  ==============================================
int        NUMBER(10)              ``-42``
bigint     NUMBER(19)              ``9223372036854775807``
decimal    NUMBER(p,s)             NUMBER keeps no scale: ``12.5`` for 12.50, ``3``
double     BINARY_DOUBLE           Python ``repr`` (``1e-05``, ``0.1``)
boolean    NUMBER(1)               ``1`` / ``0``
string     VARCHAR2(n CHAR) / CLOB the text; the empty string is NULL (Oracle)
binary     RAW(n) / BLOB           upper-case hex (``RAWTOHEX``)
date       DATE                    ``2024-02-29T00:00:00`` (an Oracle DATE has a time)
timestamp  TIMESTAMP(3)            ``1969-12-31T23:59:59.999`` (UTC wall time)
=========  ======================  ==============================================

Shareplex messages declare no column types, so the decoder's ``column_types`` stays NULL;
:func:`source_type` gives the Oracle type for reference.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
from decimal import Decimal
from typing import Any

from cdc_lakehouse.tools.simulate.encoders import _dts_common as common
from cdc_lakehouse.tools.simulate.history import (
    Column,
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

FORMAT = "dts_shareplex_json"
FEATURES = frozenset({"truncate", "key_update", "keyless_table", "partial_update"})
FIRST_SCN = 14_589_063_118_712
"""SCN before the first transaction (the seed's example SCN)."""
USER_ID = 84
POST_LAG_MS = 1000
"""``meta.posttime`` - ``meta.time``."""


def topics(history: History, prefix: str) -> list[str]:
    """The one topic every message of ``history`` goes to."""
    return [f"{prefix}.{FORMAT}"]


def source_type(column: Column) -> str:
    """The Oracle column type (module doc table)."""
    kind = column.type
    if kind == "decimal":
        return f"NUMBER({column.precision},{column.scale})"
    if kind == "string":
        return f"VARCHAR2({column.length} CHAR)" if column.length is not None else "CLOB"
    if kind == "binary":
        return f"RAW({column.length})" if column.length is not None else "BLOB"
    return {
        "int": "NUMBER(10)",
        "bigint": "NUMBER(19)",
        "double": "BINARY_DOUBLE",
        "boolean": "NUMBER(1)",
        "date": "DATE",
        "timestamp": "TIMESTAMP(3)",
    }[kind]


def value_text(column: Column, value: Value) -> str | None:
    """The text Shareplex sends for ``value`` (module doc table); None for SQL NULL and, as in
    Oracle, for the empty string."""
    if value is None:
        return None
    if column.type == "boolean":
        return "1" if value else "0"
    if isinstance(value, Decimal):
        return common.oracle_number(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, bytes):
        return value.hex().upper()
    if isinstance(value, dt.datetime):
        return common.date_time_text(value, separator="T", fraction_digits=3)
    if isinstance(value, dt.date):
        return f"{common.iso_date(value)}T00:00:00"
    if isinstance(value, str):
        return value or None
    return str(value)


def table_name(table: TableSpec) -> str:
    """``meta.table``: ``SCHEMA.TABLE`` (the database stands in for a missing schema)."""
    return f"{table.schema or table.database}.{table.name}"


def _values(table: TableSpec, row: Row, names: tuple[str, ...]) -> dict[str, str | None]:
    return {name: value_text(table.column(name), row.get(name)) for name in names}


def _rowid(table: TableSpec, row: Row) -> str:
    """A stable 18-character Oracle-like ROWID of a row identity."""
    digest = hashlib.sha1(
        table_name(table).encode() + b"\0" + common.kafka_key(table, row, value_text)
    ).digest()
    return "AAAR" + base64.b64encode(digest, altchars=b"+/").decode("ascii")[:14]


def _time(epoch_ms: int) -> str:
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=epoch_ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _body(change: RowChange) -> tuple[str, dict[str, Any]]:
    """(meta.op, the data / key part of the message) of a row change."""
    table = change.table
    identity = common.identity_columns(table)
    if change.op in ("insert", "snapshot"):
        assert change.after is not None
        return "ins", {"data": _values(table, change.after, table.column_names)}
    if change.op == "update":
        assert change.before is not None and change.after is not None
        return "upd", {
            "data": _values(table, change.after, change.changed_columns),
            "key": _values(table, change.before, identity),
        }
    assert change.before is not None
    return "del", {"data": _values(table, change.before, identity)}


def _transaction(topic: str, transaction: Transaction) -> list[Message]:
    commit = transaction.commit_time_ms
    size = len(transaction.events)
    sequence = transaction.sequence
    out: list[Message] = []
    for seq, event in enumerate(transaction.events, start=1):
        if isinstance(event, SchemaChange) and event.kind != "drop_column":
            continue  # no Shareplex message for ADD / RENAME / MODIFY COLUMN
        meta: dict[str, Any] = {
            "time": _time(commit),
            "userid": USER_ID,
            "op": "TRUNCATE",
            "scn": str(FIRST_SCN + 8 * sequence),
            "trans": f"{sequence % 13}.{sequence % 32}.{sequence}",
            "seq": seq,
            "size": size,
            "table": table_name(event.table),
            "idx": f"{seq}/{size}",
            "posttime": _time(commit + POST_LAG_MS),
        }
        parts: dict[str, Any] = {}
        key: bytes | None = None
        if isinstance(event, SchemaChange):
            meta["op"] = "DROP COLUMN"
            parts = {"data": {event.column: None}}
        elif not isinstance(event, Truncate):
            meta["op"], parts = _body(event)
            row = event.before if event.before is not None else event.after
            assert row is not None
            meta["rowid"] = _rowid(event.table, row)
            key = common.change_key(event, value_text)
        value = json.dumps({"meta": meta, **parts}, ensure_ascii=False).encode("utf-8")
        out.append(Message(topic, key, value, commit + common.SEND_LAG_MS, sequence))
    return out


def encode(history: History, prefix: str) -> list[Message]:
    """Every message of ``history`` in production order (see module doc)."""
    topic = topics(history, prefix)[0]
    out: list[Message] = []
    for item in history.items:
        if isinstance(item, Transaction):
            out.extend(_transaction(topic, item))
    return out
