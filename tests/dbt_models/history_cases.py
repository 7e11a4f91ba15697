"""Hand-written truncate cases for gold.row_history (SCD2), in three formats.

The other ``*_cases.py`` dumps hold inserts, updates, deletes, late changes, key moves,
partial updates and duplicates, but no truncate between changes of one table. These records
add them, each on its own registered topic (seeds/cdc_topics.csv):

- ``dataworks.history.mysql`` (DataWorks JSON, docs/formats.md section 1): table
  ``hist_db.hist_orders`` truncated by op TRUNCATE, and ``hist_db.hist_other`` truncated by a
  QUERY record whose statement names the table (the record's schema.source has no table).
- ``dts.history.avro`` (DTS Avro, section 4a): ``hist.hist_items`` truncated by a DDL record
  whose objectName is the database only, so the table comes from the statement.
- ``dts.history.canal`` (DTS Canal JSON, section 4c): ``hist_canal.hist_rows`` truncated by an
  isDdl message.

Each truncate lies between changes of its table; some changes after it are delivered before
it (another partition). Each case says which versions gold.row_history must give.
"""

from __future__ import annotations

import json
from typing import Any

from cdc_lakehouse.formats.dts_avro import avro_writer as avro
from tests.dbt_models.conformance import Truncate
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

DATAWORKS_TOPIC = "dataworks.history.mysql"
AVRO_TOPIC = "dts.history.avro"
CANAL_TOPIC = "dts.history.canal"
DATAWORKS_DB = "hist_db"
AVRO_DB = "hist"
CANAL_DB = "hist_canal"

_ORDER_COLUMNS = [{"name": "id", "type": "LONG"}, {"name": "status", "type": "STRING"}]
EVENT_MS = 1710000000000  # DataWorks eventTime base (ms); + sequence number


def dataworks(
    op: str,
    seq: int,
    *,
    table: str | None = "hist_orders",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    ddl: str | None = None,
) -> str:
    """A DataWorks message (eventTime = EVENT_MS + seq seconds); ``table`` None leaves
    schema.source.tableName out."""
    source: dict[str, Any] = {"dbType": "MySQL", "dbName": DATAWORKS_DB}
    if table is not None:
        source["tableName"] = table
    return json.dumps(
        {
            "schema": {
                "dataColumn": None if ddl is not None else _ORDER_COLUMNS,
                "primaryKey": None if ddl is not None else ["id"],
                "source": source,
            },
            "payload": {
                "before": {"dataColumn": before} if before is not None else None,
                "after": {"dataColumn": after} if after is not None else None,
                "sequenceId": str(seq),
                "op": op,
                "timestamp": {"eventTime": EVENT_MS + seq * 1000},
                "ddl": {"text": ddl} if ddl is not None else None,
            },
            "version": "1.0.0",
        }
    )


def dw_row(id_: int, status: str) -> dict[str, Any]:
    return {"id": id_, "status": status}


# (partition, value) in offset order per partition.
DATAWORKS_CHANGES: list[tuple[int, str]] = [
    # id 3 is inserted after the truncate (seq 125) but delivered first -> untouched by it.
    (2, dataworks("INSERT", 125, after=dw_row(3, "after"))),
    # id 1: insert, update, TRUNCATE (seq 120), insert again -> four versions, the third a
    # deleted one at the truncate.
    (0, dataworks("INSERT", 100, after=dw_row(1, "new"))),
    (0, dataworks("UPDATE_AFTER", 110, before=dw_row(1, "new"), after=dw_row(1, "paid"))),
    # id 2: inserted and deleted before the truncate -> no truncate version.
    (0, dataworks("INSERT", 101, after=dw_row(2, "new"))),
    (0, dataworks("DELETE", 105, before=dw_row(2, "new"))),
    # id 4: insert; its update (seq 115, older than the truncate) is delivered after the
    # truncate on another partition -> insert, update, truncated.
    (0, dataworks("INSERT", 102, after=dw_row(4, "new"))),
    (1, dataworks("TRUNCATE", 120, ddl="TRUNCATE TABLE hist_orders")),
    (2, dataworks("UPDATE_AFTER", 115, before=dw_row(4, "new"), after=dw_row(4, "late"))),
    (0, dataworks("INSERT", 130, after=dw_row(1, "again"))),
    # hist_other: a QUERY record whose statement is a truncate of `hist_db`.`hist_other`; the
    # record names no table -> id 1 (before it) truncated, id 2 (after it) untouched.
    (0, dataworks("INSERT", 200, table="hist_other", after=dw_row(1, "x"))),
    (
        1,
        dataworks("QUERY", 210, table=None, ddl="truncate table `hist_db`.`hist_other`"),
    ),
    (0, dataworks("INSERT", 220, table="hist_other", after=dw_row(2, "y"))),
]

_ITEMS = [("id", 3), ("status", 253), ("amount", 246)]


def item_change(op: str, rid: int, ts: int, **kw: Any) -> dict[str, Any]:
    """A change of hist.hist_items (primary key id)."""
    return avro.make_record(
        op,
        record_id=rid,
        source_timestamp=ts,
        object_name=f"{AVRO_DB}.hist_items",
        columns=_ITEMS,
        primary_key=["id"],
        **kw,
    )


def item(id_: int, status: str, amount: str = "1.00") -> dict[str, Any]:
    return {"id": id_, "status": status, "amount": avro.decimal(amount)}


AVRO_CHANGES: list[tuple[int, dict[str, Any]]] = [
    # id 1: insert, truncate (ts 1002), insert again -> insert, truncated, insert.
    (0, item_change("INSERT", 10, 1000, after=item(1, "new"))),
    # id 2: insert, partial update (amount NONE = not provided) -> the truncate version keeps
    # the merged row {2, paid, 2.00}.
    (0, item_change("INSERT", 11, 1000, after=item(2, "new", "2.00"))),
    (
        1,
        item_change(
            "UPDATE",
            12,
            1001,
            before={"id": 2, "status": "new", "amount": avro.NONE},
            after={"id": 2, "status": "paid", "amount": avro.NONE},
        ),
    ),
    # id 3: a full-load row (INIT) with a later sourceTimestamp than the truncate still orders
    # before it (load rank 0) -> truncated.
    (2, item_change("INIT", 5, 2000, after=item(3, "loaded"))),
    (
        0,
        avro.make_record(
            "DDL",
            record_id=20,
            source_timestamp=1002,
            object_name=AVRO_DB,
            after="TRUNCATE TABLE `hist_items`",
        ),
    ),
    (0, item_change("INSERT", 30, 1003, after=item(1, "again"))),
]

CANAL_T = 1710000000000  # es base (ms)


def canal(
    type_: str,
    data: list[dict[str, Any]] | None,
    old: list[dict[str, Any]] | None = None,
    *,
    es: int,
    is_ddl: bool = False,
    sql: str = "",
) -> str:
    """A Canal JSON message of table hist_canal.hist_rows (primary key id)."""
    return json.dumps(
        {
            "data": data,
            "database": CANAL_DB,
            "es": es,
            "id": 1,
            "isDdl": is_ddl,
            "mysqlType": None if is_ddl else {"id": "bigint(20)", "name": "varchar(32)"},
            "old": old,
            "pkNames": None if is_ddl else ["id"],
            "sql": sql,
            "sqlType": None,
            "table": "hist_rows",
            "ts": es + 100,
            "type": type_,
        }
    )


CANAL_CHANGES: list[tuple[int, str]] = [
    # id 1: insert, update, truncate (es +3000), then id 1 inserted again (+4000, delivered
    # first on partition 1) -> insert, update, truncated, insert. id 2: deleted before the
    # truncate -> insert, delete only.
    (1, canal("INSERT", [{"id": "1", "name": "again"}], es=CANAL_T + 4000)),
    (0, canal("INSERT", [{"id": "1", "name": "a"}, {"id": "2", "name": "b"}], es=CANAL_T)),
    (0, canal("UPDATE", [{"id": "1", "name": "a2"}], [{"name": "a"}], es=CANAL_T + 1000)),
    (0, canal("DELETE", [{"id": "2", "name": "b"}], es=CANAL_T + 2000)),
    (
        0,
        canal(
            "TRUNCATE",
            None,
            es=CANAL_T + 3000,
            is_ddl=True,
            sql="TRUNCATE TABLE hist_rows",
        ),
    ),
]


def _lines(topic: str, changes: list[tuple[int, Any]]) -> list[DumpLine]:
    offsets = Offsets()
    return [
        dump_line(topic, partition, offsets(topic, partition), value, timestamp=EVENT_MS)
        for partition, value in changes
    ]


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    return (
        _lines(DATAWORKS_TOPIC, DATAWORKS_CHANGES)
        + _lines(AVRO_TOPIC, [(partition, avro.encode(r)) for partition, r in AVRO_CHANGES])
        + _lines(CANAL_TOPIC, CANAL_CHANGES)
    )


TRUNCATES: list[tuple[str, Truncate]] = [
    ("dataworks_json", Truncate(DATAWORKS_DB, None, "hist_orders", "TRUNCATE")),
    # QUERY record without a table: the table comes from the statement.
    ("dataworks_json", Truncate(DATAWORKS_DB, None, "hist_other", "QUERY")),
    # DTS Avro objectName is the database only.
    ("dts_avro", Truncate(AVRO_DB, None, "hist_items", "DDL")),
    ("dts_canal_json", Truncate(CANAL_DB, None, "hist_rows", "TRUNCATE")),
]
"""(format, row of silver.table_truncates) of each truncate of these cases
(tests/dbt_models/conformance.py ``truncates`` gives each format's own)."""
