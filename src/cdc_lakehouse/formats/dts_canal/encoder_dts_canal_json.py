"""Simulator encoder of DTS Canal JSON (docs/formats.md section 4c; seed 003), open-source meaning
(DTS instances created from 2022-03-20: ``data`` = the rows after the change, ``old`` = the
changed columns' old values) for a MySQL source: one topic ``<prefix>.dts_canal_json``, UTF-8.

One message per row statement: consecutive row changes of a transaction on the same table with
the same op form one statement (at most :data:`MAX_ROWS` rows) and one message whose ``data``
array holds each row (docs/formats.md: each element is its own change):

- insert: ``type`` ``INSERT``, ``data`` the new rows, no ``old``.
- snapshot (full load): ``type`` ``INIT``, like an insert.
- update: ``type`` ``UPDATE``, ``data`` the whole new rows, ``old`` aligned with ``data``,
  each element holding only the columns whose value changed, with their old values (JSON null
  for an old NULL; ``{}`` when nothing changed, so the arrays stay aligned).
- delete: ``type`` ``DELETE``, ``data`` the whole deleted rows, no ``old``.
- truncate: ``isDdl`` true, ``type`` ``TRUNCATE`` (canal's event type), ``sql``
  ``TRUNCATE TABLE `<table>```, no ``data`` / ``mysqlType`` / ``sqlType`` / ``pkNames``.
- schema change (``SchemaChange``): ``isDdl`` true, ``type`` ``ALTER``, ``sql`` the MySQL
  statement of :mod:`._ddl` (a rename spelled ``RENAME COLUMN `old` TO `new```), ``data``
  null, ``database`` / ``table`` set, no ``mysqlType`` / ``sqlType`` / ``pkNames``. Row
  messages after it follow the new spec (``mysqlType``, ``sqlType``, ``data`` keys); a column
  a row lacks (written before an ADD COLUMN / RENAME) is null, and counts as changed in ``old``.
Heartbeats are not rendered (Canal has none).

Other fields: ``database`` / ``table``; ``pkNames`` (null for a table without a key, as
canal leaves it); ``mysqlType`` column -> MySQL type name *without* length / precision (the
seed: DTS does not carry precision parameters, e.g. ``bigint``, ``varchar``); ``sqlType``
column -> java.sql.Types code (the seed's example: ``bigint`` -5, ``varchar`` 12); ``es`` =
commit time in epoch ms (docs/formats.md: binlog time, ms; ``es_in_seconds=True`` truncates it to
whole seconds as MySQL's binlog header time would, the seed's example ends in ``000``); ``ts``
= ``es`` + 250 ms (write time); ``id`` a serial counting from 1 per stream; ``gtid``
``<server uuid>:<item sequence>``; ``sql`` ``""`` for DML. Kafka key: the identity text of the
message's first row (canal hashes a message to one partition); None for DDL. Kafka timestamp:
commit + 250 ms.

Values are JSON strings or null, as canal renders MySQL values:

=========  ============  =======  =========================================================
logical    mysqlType     sqlType  text
=========  ============  =======  =========================================================
int        int           4        ``-42``
bigint     bigint        -5       ``9223372036854775807``
decimal    decimal       3        exact, ``s`` fraction digits (BigDecimal.toPlainString)
double     double        8        Java ``Double.toString`` (``1.0E-5``, ``0.1``, ``1.0E7``)
boolean    tinyint       -6       ``1`` / ``0`` (MySQL BOOLEAN is TINYINT(1))
string     varchar/text  12/2005  the text
binary     varbinary/    -3/2004  each byte as one ISO-8859-1 character (canal's
           blob                   ``new String(bytes, "ISO-8859-1")``)
date       date          91       ``2024-02-29``
timestamp  datetime      93       ``1969-12-31 23:59:59.999`` (DATETIME(3), UTC wall time)
=========  ============  =======  =========================================================
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

from cdc_lakehouse.tools.simulate.encoders import _ddl
from cdc_lakehouse.tools.simulate.encoders import _dts_common as common
from cdc_lakehouse.tools.simulate.history import (
    Column,
    History,
    RowChange,
    SchemaChange,
    TableSpec,
    Transaction,
    Truncate,
    Value,
)
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "dts_canal_json"
FEATURES = frozenset({"snapshot", "truncate", "key_update", "keyless_table", "multi_row_message"})
MAX_ROWS = 20
"""Most rows in one message (one statement)."""
SERVER_UUID = "3ccc1ca4-0b8e-11ee-9d2a-00163e0a1c2f"
"""MySQL server uuid of the GTIDs."""

_TYPE = {"insert": "INSERT", "snapshot": "INIT", "update": "UPDATE", "delete": "DELETE"}
_MYSQL_TYPES: dict[str, tuple[str, int]] = {
    "int": ("int", 4),
    "bigint": ("bigint", -5),
    "decimal": ("decimal", 3),
    "double": ("double", 8),
    "boolean": ("tinyint", -6),
    "date": ("date", 91),
    "timestamp": ("datetime", 93),
}


def topics(history: History, prefix: str) -> list[str]:
    """The one topic every message of ``history`` goes to."""
    return [f"{prefix}.{FORMAT}"]


def _mysql_type(column: Column) -> tuple[str, int]:
    """(mysqlType, sqlType) of ``column`` (module doc table)."""
    if column.type == "string":
        return ("varchar", 12) if column.length is not None else ("text", 2005)
    if column.type == "binary":
        return ("varbinary", -3) if column.length is not None else ("blob", 2004)
    return _MYSQL_TYPES[column.type]


def source_type(column: Column) -> str:
    """``mysqlType`` of ``column``: the MySQL type name without parameters (seed 003)."""
    return _mysql_type(column)[0]


def value_text(column: Column, value: Value) -> str | None:
    """The text canal sends for ``value`` (module doc table); None for SQL NULL."""
    if value is None:
        return None
    if column.type == "boolean":
        return "1" if value else "0"
    if isinstance(value, Decimal):
        return common.plain_decimal(value)
    if isinstance(value, float):
        return common.java_double(value)
    if isinstance(value, bytes):
        return value.decode("latin-1")
    if isinstance(value, dt.datetime):
        return common.date_time_text(value, fraction_digits=3)
    if isinstance(value, dt.date):
        return common.iso_date(value)
    return str(value)


def _statements(transaction: Transaction) -> list[list[RowChange] | Truncate | SchemaChange]:
    """The transaction's events grouped into statements (see module doc)."""
    out: list[list[RowChange] | Truncate | SchemaChange] = []
    for event in transaction.events:
        if isinstance(event, Truncate | SchemaChange):
            out.append(event)
            continue
        last = out[-1] if out else None
        if (
            isinstance(last, list)
            and len(last) < MAX_ROWS
            and last[0].table == event.table
            and last[0].op == event.op
        ):
            last.append(event)
        else:
            out.append([event])
    return out


def _row(table: TableSpec, row: dict[str, Value], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: value_text(table.column(name), row.get(name)) for name in names}


def _rows_message(rows: list[RowChange], op: str) -> dict[str, Any]:
    table = rows[0].table
    names = table.column_names
    message: dict[str, Any] = {}
    if op == "delete":
        message["data"] = [_row(table, c.before, names) for c in rows if c.before is not None]
    else:
        message["data"] = [_row(table, c.after, names) for c in rows if c.after is not None]
    if op == "update":
        message["old"] = [
            _row(table, c.before, c.changed_columns) for c in rows if c.before is not None
        ]
    types = {c.name: _mysql_type(c) for c in table.columns}
    message.update(
        database=table.database,
        table=table.name,
        pkNames=list(table.key_columns) or None,
        isDdl=False,
        mysqlType={name: mysql for name, (mysql, _code) in types.items()},
        sqlType={name: code for name, (_mysql, code) in types.items()},
        sql="",
        type=_TYPE[op],
    )
    return message


def encode(history: History, prefix: str, *, es_in_seconds: bool = False) -> list[Message]:
    """Every message of ``history`` in production order (see module doc).

    Args:
        history: the logical history.
        prefix: topic prefix.
        es_in_seconds: write ``es`` as whole seconds (x 1000) like MySQL's binlog header
            time; the default keeps the commit millisecond.
    """
    topic = topics(history, prefix)[0]
    out: list[Message] = []
    serial = 0
    for item in history.items:
        if not isinstance(item, Transaction):
            continue
        commit = item.commit_time_ms
        es = commit - commit % 1000 if es_in_seconds else commit
        for statement in _statements(item):
            serial += 1
            if isinstance(statement, Truncate):
                table = statement.table
                body: dict[str, Any] = {
                    "database": table.database,
                    "table": table.name,
                    "isDdl": True,
                    "sql": f"TRUNCATE TABLE `{table.name}`",
                    "type": "TRUNCATE",
                }
                key = None
            elif isinstance(statement, SchemaChange):
                table = statement.table
                body = {
                    "data": None,
                    "database": table.database,
                    "table": table.name,
                    "isDdl": True,
                    "sql": _ddl.statement(statement, rename=_ddl.RENAME_TO),
                    "type": "ALTER",
                }
                key = None
            else:
                body = _rows_message(statement, statement[0].op)
                key = common.change_key(statement[0], value_text)
            body.update(
                es=es, ts=es + common.SEND_LAG_MS, id=serial, gtid=f"{SERVER_UUID}:{item.sequence}"
            )
            value = json.dumps(body, ensure_ascii=False).encode("utf-8")
            out.append(Message(topic, key, value, commit + common.SEND_LAG_MS, item.sequence))
    return out
