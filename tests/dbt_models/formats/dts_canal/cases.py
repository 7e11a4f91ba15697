"""Hand-written DTS Canal JSON messages for the pipeline tests, and the state they must produce.

Two registered topics (seeds/cdc_topics.csv): ``dts.edge.canal`` (open-source data / old
meaning) with database ``canal_edge``, and ``dts.edge.canal_legacy`` (``canal_legacy_swap``
true: ``old`` holds the new row, ``data`` the old one, DELETE rows in ``old``) with database
``canal_edge_legacy``. Changes are on partitions 1-2, broken messages on partition 3. Each
case says in a comment what a reader of docs/formats.md section 4c expects.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as xt
from tests.dbt_models import fault_matrix_cases as fm
from tests.dbt_models import schema_evolution_cases as evolution
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

TOPIC = "dts.edge.canal"
LEGACY_TOPIC = "dts.edge.canal_legacy"
DB = "canal_edge"
LEGACY_DB = "canal_edge_legacy"

ITEM_TYPES = {"id": "bigint(20)", "name": "varchar(32)", "note": "text"}


def item(id_: int, name: str, note: str | None = None) -> dict[str, Any]:
    """A whole row of table items (Canal sends every value as a string)."""
    return {"id": str(id_), "name": name, "note": note}


def canal(
    type_: str | None,
    data: list[Any] | None = None,
    old: list[Any] | None = None,
    *,
    es: int | None = 1700000000000,
    table: str | None = "items",
    database: str = DB,
    pk_names: list[str] | None = None,
    is_ddl: bool = False,
    sql: str = "",
    types: dict[str, str] | None = None,
    gtid: str | None = None,
) -> str:
    """A Canal JSON message as text; the placeholder ``"__RAW__x__"`` becomes the bare ``x``."""
    message: dict[str, Any] = {
        "data": data,
        "database": database,
        "es": es,
        "id": 1,
        "isDdl": is_ddl,
        "mysqlType": None if is_ddl else (types if types is not None else ITEM_TYPES),
        "old": old,
        "pkNames": None if is_ddl else (pk_names if pk_names is not None else ["id"]),
        "sql": sql,
        "sqlType": None,
        "table": table,
        "ts": (es or 1700000000000) + 100,
        "type": type_,
    }
    if gtid is not None:
        message["gtid"] = gtid
    for key, value in (("es", es), ("table", table), ("type", type_)):
        if value is None:
            del message[key]
    text = json.dumps(message, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text


T = 1700000000000  # es base (ms)

# (partition, value) in offset order per partition, topic dts.edge.canal.
CHANGES: list[tuple[int, str]] = [
    # ids 1-3: a multi-row insert, a multi-row update (1, 2) and a multi-row delete (2, 3)
    # -> only id 1 remains, updated.
    (1, canal("INSERT", [item(1, "a"), item(2, "b"), item(3, "c")], es=T + 1000)),
    (
        1,
        canal(
            "UPDATE",
            [item(1, "a2"), item(2, "b2")],
            [{"name": "a"}, {"name": "b"}],
            es=T + 2000,
        ),
    ),
    (1, canal("DELETE", [item(2, "b2"), item(3, "c")], es=T + 3000)),
    # ids 4, 5: the same two-row insert delivered twice -> one row each; id 5's note is a
    # JSON number 1.50 and keeps its text.
    (1, canal("INSERT", [item(4, "d"), item(5, "e", "__RAW__1.50__")], es=T + 3500)),
    (1, canal("INSERT", [item(4, "d"), item(5, "e", "__RAW__1.50__")], es=T + 3500)),
    # id 6: the newer update (partition 2, es 5000) is read before this older insert -> update.
    (1, canal("INSERT", [item(6, "old")], es=T + 4000)),
    # id 7: insert, delete (partition 2, es 6000), then an older update delivered late -> gone.
    (1, canal("INSERT", [item(7, "x")], es=T + 4000)),
    (1, canal("UPDATE", [item(7, "late")], [{"name": "x"}], es=T + 5000)),
    # id 8: insert and update in the same millisecond: es ties, Kafka offset decides -> second.
    (1, canal("INSERT", [item(8, "first")], es=T + 7000)),
    (1, canal("UPDATE", [item(8, "second")], [{"name": "first"}], es=T + 7000)),
    # id 11 -> 110: a primary-key update (old carries the old id) -> only id 110 remains.
    (1, canal("INSERT", [item(11, "k")], es=T + 8000)),
    (1, canal("UPDATE", [item(110, "k")], [{"id": "11"}], es=T + 8001)),
    # id 12: note changes from NULL to "filled": old {"note": null} means "was NULL".
    (1, canal("INSERT", [item(12, "n")], es=T + 9000)),
    (1, canal("UPDATE", [item(12, "n", "filled")], [{"note": None}], es=T + 9001)),
    # ids 13, 14: full-load INIT rows (es older than everything), then an update of 13.
    (1, canal("INIT", [item(13, "s"), item(14, "t")], es=T + 500)),
    (1, canal("UPDATE", [item(13, "s2")], [{"name": "s"}], es=T + 10000)),
    # id 15: an update in the same millisecond as its INIT row on partition 2: the snapshot
    # orders first (rank 0 before partition) -> changed.
    (1, canal("UPDATE", [item(15, "changed")], [{"name": "snap"}], es=T + 11000)),
    # DDL: ALTER and TRUNCATE -> silver.schema_changes.
    (
        1,
        canal(
            "ALTER",
            es=T + 12000,
            is_ddl=True,
            sql="ALTER TABLE items ADD COLUMN note2 text",
        ),
    ),
    # table logs without a primary key: all columns identify the row.
    (
        1,
        canal(
            "INSERT",
            [{"a": "1", "b": "x"}],
            table="logs",
            pk_names=[],
            types={"a": "int", "b": "char(1)"},
            es=T + 13000,
        ),
    ),
    (
        1,
        canal(
            "DELETE",
            [{"a": "1", "b": "x"}],
            table="logs",
            pk_names=[],
            types={"a": "int", "b": "char(1)"},
            es=T + 13001,
        ),
    ),
    (
        1,
        canal(
            "INSERT",
            [{"a": "2", "b": "y"}],
            table="logs",
            pk_names=[],
            types={"a": "int", "b": "char(1)"},
            es=T + 13002,
        ),
    ),
    (
        1,
        canal(
            "TRUNCATE",
            table="scratch",
            es=T + 14000,
            is_ddl=True,
            sql="TRUNCATE TABLE scratch",
        ),
    ),
    # id 30: an update without old (open-source canal leaves it out when no column changed):
    # before = after.
    (1, canal("INSERT", [item(30, "same")], es=T + 15000)),
    (1, canal("UPDATE", [item(30, "same")], es=T + 15001)),
    # id 31: values that are not JSON strings keep their exact text (1e3, a 41-digit decimal,
    # true, -0.0); old names a column data does not carry: it stays in the before image.
    (
        1,
        canal(
            "INSERT",
            [{"id": "31", "name": "__RAW__1e3__", "note": "__RAW__-0.0__"}],
            es=T + 16000,
        ),
    ),
    (
        1,
        canal(
            "UPDATE",
            [
                {
                    "id": "31",
                    "name": "__RAW__12345678901234567890123.456789012345678901__",
                    "note": "__RAW__true__",
                }
            ],
            [{"name": "__RAW__1e3__", "gone": "x"}],
            es=T + 16001,
        ),
    ),
    # id 32: es as a string of digits, id "0", a gtid; isDdl absent on a DML type.
    (
        1,
        canal("INSERT", [item(32, "g")], es=T + 17000, gtid="3E11FA47-71CA-11E1:23")
        .replace(f'"es":{T + 17000}', f'"es":"{T + 17000}"')
        .replace('"id":1,', '"id":"0",')
        .replace('"isDdl":false,', ""),
    ),
    # a DDL type without isDdl is a DDL; a QUERY with an empty table has no table.
    (
        1,
        canal("CREATE", es=T + 18000, is_ddl=True, sql="CREATE TABLE t2 (a int)").replace(
            '"isDdl":true,', ""
        ),
    ),
    (1, canal("QUERY", es=T + 18001, is_ddl=True, table="", sql="CREATE DATABASE x")),
    (2, canal("UPDATE", [item(6, "new")], [{"name": "old"}], es=T + 5000)),
    (2, canal("DELETE", [item(7, "x")], es=T + 6000)),
    (2, canal("INIT", [item(15, "snap")], es=T + 11000)),
]

# Legacy topic dts.edge.canal_legacy (partition 1): old = new row, data = old row.
LEGACY_CHANGES: list[tuple[int, str]] = [
    # id 20: inserted (row in data, old null), then updated: data = before, old = after
    # (a whole row, as legacy instances send by default) -> name "after".
    (1, canal("INSERT", [item(20, "before")], database=LEGACY_DB, es=T + 1000)),
    (
        1,
        canal(
            "UPDATE",
            [item(20, "before")],
            [item(20, "after")],
            database=LEGACY_DB,
            es=T + 2000,
        ),
    ),
    # id 21: inserted with its row in old, deleted with its row in old (data null) -> gone.
    (1, canal("INSERT", None, [item(21, "x")], database=LEGACY_DB, es=T + 1000)),
    (1, canal("DELETE", None, [item(21, "x")], database=LEGACY_DB, es=T + 3000)),
    # id 22: a legacy update whose old holds only the changed column: the after image is data
    # overlaid with old -> {22, p2, q}.
    (
        1,
        canal(
            "UPDATE",
            [item(22, "p", "q")],
            [{"name": "p2"}],
            database=LEGACY_DB,
            es=T + 2500,
        ),
    ),
]

# (value or None for a Kafka NULL value, value_base64 or None, expected reason); topic
# dts.edge.canal, partition 3, in offset order.
BROKEN: list[tuple[str | None, str | None, str]] = [
    # truncated JSON
    ('{"data":[{"id":"90"}],"database":"canal_edge","type":"INSERT"', None, "invalid_json"),
    ("[1, 2]", None, "not_an_object"),
    (canal(None, [item(91, "x")]), None, "missing_required_field"),
    # data not an array
    (
        '{"data":{"id":"91","name":"x"},"database":"canal_edge","es":1700000000000,'
        '"isDdl":false,"pkNames":["id"],"table":"items","type":"INSERT"}',
        None,
        "invalid_field_type",
    ),
    # one element of a multi-row message is not an object: the whole message
    (canal("INSERT", [item(92, "x"), "oops"]), None, "invalid_field_type"),
    # old misaligned with data (open-source canal drops the old element of an unchanged row)
    (canal("UPDATE", [item(1, "z"), item(4, "z")], [{"name": "a2"}]), None, "invalid_field_type"),
    # unknown types (case-sensitive), multi-row: one quarantine row for the message
    (canal("UPSERT", [item(93, "x"), item(94, "y")]), None, "unknown_op"),
    (canal("insert", [item(93, "x")]), None, "unknown_op"),
    # one row of three lacks the key: the whole message (ids 95, 96 too) is quarantined
    (
        canal("INSERT", [item(95, "x"), {"name": "no id"}, item(96, "y")]),
        None,
        "missing_key_column",
    ),
    # a legacy-style DELETE (row in old, data null) on a topic with the open-source meaning
    (canal("DELETE", None, [item(1, "a2")]), None, "missing_required_field"),
    (canal("INSERT", [item(97, "x")], es=None), None, "missing_required_field"),
    (canal("INSERT", [item(97, "x")], table=None), None, "missing_required_field"),
    (canal("INSERT", []), None, "missing_required_field"),
    (canal("ALTER", is_ddl=True, sql=""), None, "missing_required_field"),
    (None, None, "empty_value"),
    (None, base64.b64encode(b"\xff\xfe{}").decode(), "invalid_utf8"),
    # fields of the wrong JSON type or value (docs/formats.md 4c: es / ts / id integers, or
    # strings of digits)
    (canal("INSERT", [item(98, "x")], es=-5), None, "invalid_field_type"),
    (
        canal("INSERT", [item(98, "x")]).replace(f'"es":{T}', '"es":1.5e12'),
        None,
        "invalid_field_type",
    ),
    (
        canal("INSERT", [item(98, "x")]).replace(f'"es":{T}', '"es":"soon"'),
        None,
        "invalid_field_type",
    ),
    (canal("INSERT", [item(98, "x")], es=10**18), None, "invalid_field_value"),
    (
        canal("INSERT", [item(98, "x")]).replace('"ts":', '"ts":true,"x":'),
        None,
        "invalid_field_type",
    ),
    (canal("INSERT", [item(98, "x")]).replace('"id":1,', '"id":"x1",'), None, "invalid_field_type"),
    (
        canal("INSERT", [item(98, "x")]).replace('"isDdl":false', '"isDdl":"false"'),
        None,
        "invalid_field_type",
    ),
    (
        canal("INSERT", [item(98, "x")]).replace('"pkNames":["id"]', '"pkNames":"id"'),
        None,
        "invalid_field_type",
    ),
    (
        canal("INSERT", [item(98, "x")]).replace('"mysqlType":{', '"mysqlType":["id"],"y":{'),
        None,
        "invalid_field_type",
    ),
    (canal("INSERT", [item(98, "x")]).replace(f'"es":{T}', '"es":NaN'), None, "invalid_json"),
    (canal("UPDATE", [item(98, "x")], [None]), None, "invalid_field_type"),
    (canal("INSERT", [["98"]]), None, "invalid_field_type"),
]

# topic dts.edge.canal_legacy, partition 3.
LEGACY_BROKEN: list[tuple[str | None, str | None, str]] = [
    # like seed 003's legacy DELETE: old holds only a non-key column -> the deleted row
    # cannot be identified.
    (
        canal("DELETE", None, [{"name": "zzz"}], database=LEGACY_DB),
        None,
        "missing_key_column",
    ),
    # a legacy UPDATE needs both arrays
    (canal("UPDATE", [item(23, "x")], database=LEGACY_DB), None, "missing_required_field"),
]


def _values(id_: int, name: str, note: str | None = None) -> dict[str, str | None]:
    return {"id": str(id_), "name": name, "note": note}


EXPECTED_ITEMS = {
    '{"id":"1"}': _values(1, "a2"),
    '{"id":"30"}': _values(30, "same"),
    '{"id":"31"}': {
        "id": "31",
        "name": "12345678901234567890123.456789012345678901",
        "note": "true",
    },
    '{"id":"32"}': _values(32, "g"),
    '{"id":"4"}': _values(4, "d"),
    '{"id":"5"}': _values(5, "e", "1.50"),
    '{"id":"6"}': _values(6, "new"),
    '{"id":"8"}': _values(8, "second"),
    '{"id":"110"}': _values(110, "k"),
    '{"id":"12"}': _values(12, "n", "filled"),
    '{"id":"13"}': _values(13, "s2"),
    '{"id":"14"}': _values(14, "t"),
    '{"id":"15"}': _values(15, "changed"),
}
EXPECTED_LOGS = {'{"a":"2","b":"y"}': {"a": "2", "b": "y"}}
EXPECTED_LEGACY_ITEMS = {
    '{"id":"20"}': _values(20, "after"),
    '{"id":"22"}': _values(22, "p2", "q"),
}


def _records(
    topic: str, changes: list[tuple[int, str]], broken: list[tuple[str | None, str | None, str]]
) -> list[DumpLine]:
    offsets = Offsets()
    lines = [
        dump_line(topic, partition, offsets(topic, partition), value, timestamp=T)
        for partition, value in changes
    ]
    for offset, (value, value_b64, _reason) in enumerate(broken):
        lines.append(dump_line(topic, 3, offset, value, timestamp=T, value_base64=value_b64))
    return lines


def dump_lines() -> list[DumpLine]:
    """The cases of both topics as topic dump lines."""
    return _records(TOPIC, CHANGES, BROKEN) + _records(LEGACY_TOPIC, LEGACY_CHANGES, LEGACY_BROKEN)


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> xt.Case:
    """A Canal message holds rows: the ordering key has the row's index after the offset."""
    return xt.Case(_cross_topic_messages, xt.TABLE, "id", "name", 2, row_index_in_key=True)


def _cross_topic_messages(side: str) -> list[str | bytes]:
    args: dict[str, Any] = {
        "database": xt.DB,
        "table": xt.TABLE,
        "types": {"id": "bigint(20)", "name": "varchar(32)"},
    }
    return [
        canal("INSERT", [{"id": "1", "name": f"{side}-insert"}], es=xt.T, **args),
        canal(
            "UPDATE",
            [{"id": "1", "name": f"{side}-update"}],
            [{"name": f"{side}-insert"}],
            es=xt.T + 1000,
            **args,
        ),
    ]


WIDE_ROWS = 10_000
"""Rows of the one wide Canal INSERT (:func:`fault_matrix`)."""
WIDE_FIRST_ID = 1_000_000


def wide_rows() -> dict[int, dict[str, Any]]:
    """The rows of the wide Canal INSERT: id -> column -> value (about 40 bytes each)."""
    return {
        id_: {"id": id_, "note": "w", "amount": str(id_ % 7)}
        for id_ in range(WIDE_FIRST_ID, WIDE_FIRST_ID + WIDE_ROWS)
    }


def fault_matrix(format_: str) -> fm.FaultMatrix:
    """Also one valid INSERT of :data:`WIDE_ROWS` rows (:func:`wide_rows`), last."""

    def message(es: Any, rows: list[dict[str, Any]] | None, *, type_: Any = "INSERT") -> bytes:
        out = {
            "data": [{k: fm.canal_text(v) for k, v in r.items()} for r in rows]
            if rows is not None
            else None,
            "database": fm.PREFIX,
            "es": es,
            "id": 1,
            "isDdl": False,
            "mysqlType": {"id": "bigint", "note": "text", "amount": "decimal(65,2)"},
            "old": None,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": None,
            "table": format_,
            "ts": fm.T_MS + 100,
            "type": type_,
        }
        return fm.duplicate_column(fm.json_bytes(out))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(fm.T_MS + seq, [row])

    faults = [
        fm.Fault(
            "unknown type", message(fm.T_MS + 9, [fm.GOOD_ROWS[1]], type_="UPSERT"), "unknown_op"
        ),
        fm.Fault(
            "key column missing",
            message(fm.T_MS + 9, [{"note": "no id", "amount": fm.raw("1")}]),
            "missing_key_column",
            "id",
        ),
        fm.Fault(
            "one bad row quarantines the whole message",
            message(fm.T_MS + 9, [fm.GOOD_ROWS[1], {"note": "no id"}]),
            "missing_key_column",
        ),
        # a number is read as its text (the exact JSON function's string fields): 4 is no DML type
        fm.Fault(
            "type is a number", message(fm.T_MS + 9, [fm.GOOD_ROWS[1]], type_=4), "unknown_op"
        ),
        fm.Fault(
            "es of 60 digits",
            message(fm.raw(fm.SIXTY_DIGITS), [fm.GOOD_ROWS[1]]),
            "invalid_field_value",
            "es",
        ),
        fm.Fault(
            "es of 18 digits (after the year 9999)",
            message(fm.raw("999999999999999999"), [fm.GOOD_ROWS[1]]),
            "invalid_field_value",
            "es",
        ),
        fm.Fault(
            "data is an object",
            fm.json_bytes({"data": {"id": "1"}, "type": "INSERT", "es": fm.T_MS, "table": format_}),
            "invalid_field_type",
            "data",
        ),
    ]
    # one valid INSERT of WIDE_ROWS rows (about 400 KB): repeating its bytes for each of its
    # rows makes 4 GB, past what one Arrow array holds (2 GiB); it stopped every build
    wide = message(fm.T_MS + 5, list(wide_rows().values()))
    return fm.FaultMatrix(good, faults, last=[wide], extra_gold_rows=wide_rows())


def schema_changes(format_name: str) -> evolution.SchemaChanges:
    return evolution.EVERY_CHANGE_SENT


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN and LEGACY_BROKEN, on partition 3 of each topic: the last lines of each topic's
    part of the dump."""
    current = conformance.broken_at_end("", _records(TOPIC, CHANGES, BROKEN), BROKEN)
    legacy = _records(LEGACY_TOPIC, LEGACY_CHANGES, LEGACY_BROKEN)
    old = conformance.broken_at_end("", legacy, LEGACY_BROKEN)
    return conformance.BrokenRecords(
        f"kafka_topic in ('{TOPIC}', '{LEGACY_TOPIC}') and kafka_partition = 3",
        current.records + old.records,
    )


def truncates(format_name: str) -> list[conformance.Truncate]:
    """The TRUNCATE statement (isDdl) of table scratch."""
    return [conformance.Truncate(DB, None, "scratch", "TRUNCATE")]
