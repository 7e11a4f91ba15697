"""Hand-written plain Debezium JSON records for the pipeline tests, and the state they must
produce (docs/formats.md section 6, after Debezium's PostgreSQL and MySQL connector docs).

Two registered topics (seeds/cdc_topics.csv): ``dbz.edge.postgres`` (PostgreSQL connector, JSON
converter with schemas: database ``dbz_inventory``, schema ``public``) and ``dbz.edge.mysql`` (MySQL
connector, schemaless: database ``dbz_shop``). Changes are on partitions 0-1, broken records on
partition 3 of ``dbz.edge.postgres``. Each case says in a comment what a reader of the spec
expects.

And what the tests shared by all formats ask of it (tests/dbt_models/conformance.py):
``cross_topic_case``, ``fault_matrix``, ``broken_records``. No ``schema_changes``: the change
simulator's schema-evolution stream does not render Debezium.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.dbt_models import conformance
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

PG_TOPIC = "dbz.edge.postgres"
MYSQL_TOPIC = "dbz.edge.mysql"
PG_DB = "dbz_inventory"
PG_SCHEMA = "public"
MYSQL_DB = "dbz_shop"
DECIMAL = "org.apache.kafka.connect.data.Decimal"

T = 1700000000000  # source.ts_ms base (ms)


def decimal_b64(unscaled: int) -> str:
    """base64 of the two's-complement big-endian bytes of ``unscaled`` (Kafka Connect's
    Decimal as the JSON converter writes it)."""
    length = unscaled.bit_length() // 8 + 1
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


# --------------------------------------------------------------------------- PostgreSQL

ACCOUNT_FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "name"},
    {
        "type": "bytes",
        "optional": True,
        "name": DECIMAL,
        "version": 1,
        "parameters": {"scale": "2", "connect.decimal.precision": "30"},
        "field": "balance",
    },
    {
        "type": "int32",
        "optional": True,
        "name": "io.debezium.time.Date",
        "version": 1,
        "field": "opened",
    },
]
SCRATCH_FIELDS = [
    {"type": "int32", "optional": False, "field": "id"},
    {"type": "string", "optional": True, "field": "note"},
]
ACCOUNT_TYPES = {
    "id": "int32",
    "name": "string",
    "balance": f"bytes ({DECIMAL})",
    "opened": "int32 (io.debezium.time.Date)",
}

PG_SOURCE_FIELDS = [
    {"type": "string", "optional": False, "field": name}
    for name in ("version", "connector", "name", "db", "schema", "table")
] + [
    {"type": "int64", "optional": False, "field": "ts_ms"},
    {
        "type": "string",
        "optional": True,
        "name": "io.debezium.data.Enum",
        "version": 1,
        "parameters": {"allowed": "true,last,false,incremental"},
        "default": "false",
        "field": "snapshot",
    },
    {"type": "string", "optional": True, "field": "sequence"},
    {"type": "int64", "optional": True, "field": "txId"},
    {"type": "int64", "optional": True, "field": "lsn"},
]


def pg_value_schema(fields: list[dict[str, Any]], table: str) -> dict[str, Any]:
    row = f"dbserver1.{PG_SCHEMA}.{table}.Value"
    return {
        "type": "struct",
        "fields": [
            {"type": "struct", "fields": fields, "optional": True, "name": row, "field": "before"},
            {"type": "struct", "fields": fields, "optional": True, "name": row, "field": "after"},
            {
                "type": "struct",
                "fields": PG_SOURCE_FIELDS,
                "optional": False,
                "name": "io.debezium.connector.postgresql.Source",
                "field": "source",
            },
            {"type": "string", "optional": False, "field": "op"},
            {"type": "int64", "optional": True, "field": "ts_ms"},
            {
                "type": "struct",
                "fields": [
                    {"type": "string", "optional": False, "field": "id"},
                    {"type": "int64", "optional": False, "field": "total_order"},
                    {"type": "int64", "optional": False, "field": "data_collection_order"},
                ],
                "optional": True,
                "name": "event.block",
                "field": "transaction",
            },
        ],
        "optional": False,
        "name": f"dbserver1.{PG_SCHEMA}.{table}.Envelope",
    }


def pg_key(id_: int, table: str = "accounts") -> str:
    """A PostgreSQL record key with schemas: its payload names the key column."""
    return dumps(
        {
            "schema": {
                "type": "struct",
                "fields": [{"type": "int32", "optional": False, "field": "id"}],
                "optional": False,
                "name": f"dbserver1.{PG_SCHEMA}.{table}.Key",
            },
            "payload": {"id": id_},
        }
    )


def account(id_: int, name: str, unscaled: int | None = None, opened: int = 19700) -> dict:
    """A row of public.accounts as the connector writes it (balance: a Connect Decimal)."""
    balance = None if unscaled is None else decimal_b64(unscaled)
    return {"id": id_, "name": name, "balance": balance, "opened": opened}


def pg(
    op: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    lsn: int | None,
    *,
    table: str | None = "accounts",
    snapshot: str = "false",
    fields: list[dict[str, Any]] | None = None,
    tx: int = 700,
) -> str:
    """A PostgreSQL change event value with schemas."""
    source: dict[str, Any] = {
        "version": "2.7.0.Final",
        "connector": "postgresql",
        "name": "dbserver1",
        "ts_ms": T + (lsn or 0),
        "snapshot": snapshot,
        "db": PG_DB,
        "sequence": dumps([str(lsn), str(lsn)]) if lsn is not None else None,
        "schema": PG_SCHEMA,
        "table": table,
        "txId": tx,
        "lsn": lsn,
        "xmin": None,
    }
    if table is None:
        del source["table"]
    if lsn is None:
        del source["lsn"]
    payload = {
        "before": before,
        "after": after,
        "source": source,
        "op": op,
        "ts_ms": T + (lsn or 0) + 7,
        "transaction": None,
    }
    schema_fields = (
        fields
        if fields is not None
        else (ACCOUNT_FIELDS if table in ("accounts", None) else SCRATCH_FIELDS)
    )
    return dumps(
        {"schema": pg_value_schema(schema_fields, table or "accounts"), "payload": payload}
    )


BIG = 2**70 + 5  # an unscaled integer beyond 64 bits
BIG_TEXT = "11805916207174113034.29"

# (partition, key, value) in offset order per partition, topic dbz.edge.postgres; value None is
# a tombstone.
PG_CHANGES: list[tuple[int, str | None, str | None]] = [
    # ids 1, 2: snapshot rows (op r, both at the snapshot's lsn; the Kafka offset orders them)
    (0, pg_key(1), pg("r", None, account(1, "a", 10000), 1000, snapshot="true")),
    (0, pg_key(2), pg("r", None, account(2, "b", 0), 1000, snapshot="last")),
    # id 3: an insert with a negative decimal -> -12.50
    (0, pg_key(3), pg("c", None, account(3, "c", -1250), 2000)),
    # id 1: an update with the whole before image (REPLICA IDENTITY FULL); balance beyond 64 bits
    (0, pg_key(1), pg("u", account(1, "a", 10000), account(1, "a", BIG), 3000)),
    # id 3: an update without before image (REPLICA IDENTITY DEFAULT) -> name c2
    (0, pg_key(3), pg("u", None, account(3, "c2", -1250), 4000)),
    # id 2: deleted, then its tombstone (a control event, nothing to apply)
    (0, pg_key(2), pg("d", account(2, "b", 0), None, 5000)),
    (0, pg_key(2), None),
    # table scratch: one row, then TRUNCATE (op t, table from source) -> empty
    (0, pg_key(1, "scratch"), pg("c", None, {"id": 1, "note": "x"}, 6000, table="scratch")),
    (0, None, pg("t", None, None, 7500, table="scratch")),
    (0, pg_key(4), pg("c", None, account(4, "d", 1), 7000)),
    # id 5: out of order - the update (lsn 9000) is delivered before its insert (lsn 8000)
    (0, pg_key(5), pg("u", account(5, "old", 5), account(5, "new", 5), 9000)),
    (0, pg_key(5), pg("c", None, account(5, "old", 5), 8000)),
    # id 6: one insert delivered twice (offsets 12 and 13) -> one row
    (0, pg_key(6), pg("c", None, account(6, "dup", 600), 10000)),
    (0, pg_key(6), pg("c", None, account(6, "dup", 600), 10000)),
]
PG_TOMBSTONE_OFFSET = 6
PG_TRUNCATE_OFFSET = 8

EXPECTED_ACCOUNTS = {
    '{"id":"1"}': {"id": "1", "name": "a", "balance": BIG_TEXT, "opened": "19700"},
    '{"id":"3"}': {"id": "3", "name": "c2", "balance": "-12.50", "opened": "19700"},
    '{"id":"4"}': {"id": "4", "name": "d", "balance": "0.01", "opened": "19700"},
    '{"id":"5"}': {"id": "5", "name": "new", "balance": "0.05", "opened": "19700"},
    '{"id":"6"}': {"id": "6", "name": "dup", "balance": "6.00", "opened": "19700"},
}


# --------------------------------------------------------------------------- MySQL


def my(
    op: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    file: str,
    pos: int,
    row: int = 0,
    *,
    table: str = "orders",
) -> str:
    """A MySQL change event value, schemaless (the payload at top level)."""
    return dumps(
        {
            "before": before,
            "after": after,
            "source": {
                "version": "2.7.0.Final",
                "connector": "mysql",
                "name": "shopserver",
                "ts_ms": T + pos,
                "snapshot": "false",
                "db": MYSQL_DB,
                "table": table,
                "server_id": 223344,
                "gtid": None,
                "file": file,
                "pos": pos,
                "row": row,
                "thread": 7,
                "query": None,
            },
            "op": op,
            "ts_ms": T + pos + 5,
            "transaction": None,
        }
    )


def my_key(id_: int) -> str:
    return dumps({"id": id_})


def order(id_: int, amount: str, name: str = "o") -> dict[str, Any]:
    """A row of shop.orders: decimals come as strings (decimal.handling.mode=string)."""
    return {"id": id_, "name": name, "amount": amount, "created": "2024-01-02T03:04:05Z"}


F9, F10 = "mysql-bin.000009", "mysql-bin.000010"

MYSQL_CHANGES: list[tuple[int, str | None, str | None]] = [
    # id 10: the update in binlog file 10 at pos 100 is delivered before the insert in file 9 at
    # pos 900: the file number orders first, so the update stays -> 29.90
    (0, my_key(10), my("u", order(10, "19.90"), order(10, "29.90"), F10, 100)),
    (0, my_key(10), my("c", None, order(10, "19.90"), F9, 900)),
    # id 11: two rows of one binlog event (same file and pos), row 1 delivered first -> second
    (0, my_key(11), my("u", order(11, "1.00", "first"), order(11, "1.00", "second"), F10, 500, 1)),
    (0, my_key(11), my("c", None, order(11, "1.00", "first"), F10, 500, 0)),
    # id 12: inserted and deleted, then the tombstone -> gone
    (0, my_key(12), my("c", None, order(12, "5.5"), F10, 600)),
    (0, my_key(12), my("d", order(12, "5.5"), None, F10, 700)),
    (0, my_key(12), None),
    # table events_log without primary key: a NULL Kafka key, every column identifies the row
    (1, None, my("c", None, {"a": 1, "b": "x"}, F10, 800, table="events_log")),
    (1, None, my("c", None, {"a": 2, "b": "y"}, F10, 801, table="events_log")),
    (1, None, my("d", {"a": 1, "b": "x"}, None, F10, 802, table="events_log")),
]

EXPECTED_ORDERS = {
    '{"id":"10"}': {"id": "10", "name": "o", "amount": "29.90", "created": "2024-01-02T03:04:05Z"},
    '{"id":"11"}': {
        "id": "11",
        "name": "second",
        "amount": "1.00",
        "created": "2024-01-02T03:04:05Z",
    },
}
EXPECTED_EVENTS_LOG = {'{"a":"2","b":"y"}': {"a": "2", "b": "y"}}


# --------------------------------------------------------------------------- broken records

_GOOD = json.loads(pg("c", None, account(90, "x", 1), 20000))


def _broken(edit) -> str:
    message = json.loads(json.dumps(_GOOD))
    edit(message)
    return dumps(message)


def _set(path: list[str], value: Any):
    def edit(message: dict[str, Any]) -> None:
        target = message
        for part in path[:-1]:
            target = target[part]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return edit


_DELETE = object()

# (key, value, expected reason, expected detail or None to check only that one is given);
# topic dbz.edge.postgres, partition 3, in offset order.
BROKEN: list[tuple[str | None, str, str, str | None]] = [
    ('{"id": 90}', '{"payload": {"op": "c"', "invalid_json", None),
    (
        pg_key(90),
        _broken(_set(["payload", "op"], "x")),
        "unknown_op",
        "payload.op x is not a Debezium op (c, u, d, r, t)",
    ),
    (
        pg_key(90),
        _broken(_set(["payload", "source", "table"], _DELETE)),
        "missing_required_field",
        "payload.source.table is missing",
    ),
    (
        pg_key(90),
        _broken(_set(["payload", "source", "lsn"], _DELETE)),
        "missing_required_field",
        "payload.source has neither lsn (PostgreSQL) nor file and pos (MySQL): the change "
        "cannot be ordered",
    ),
    (
        pg_key(90),
        _broken(_set(["payload", "after", "balance"], "not*base64!")),
        "invalid_field_value",
        f"payload.after.balance is not base64 of an unscaled integer ({DECIMAL})",
    ),
    (pg_key(90), dumps({"schema": None}), "missing_required_field", "payload is missing"),
    (
        pg_key(90),
        _broken(_set(["payload", "op"], _DELETE)),
        "missing_required_field",
        "payload.op is missing",
    ),
    (
        pg_key(90),
        _broken(_set(["payload", "after"], None)),
        "missing_required_field",
        "op c without payload.after",
    ),
    (
        pg_key(90),
        _broken(_set(["payload", "after", "id"], _DELETE)),
        "missing_key_column",
        "key column(s) missing from the image: id",
    ),
    (pg_key(90), "", "empty_value", None),
    (
        pg_key(90),
        _broken(_set(["payload", "source", "lsn"], "12x")),
        "invalid_field_type",
        "payload.source.lsn must be a non-negative integer",
    ),
]
BROKEN_PARTITION = 3


# --------------------------------------------------------------------------- the dump


def _lines(topic: str, changes: list[tuple[int, str | None, str | None]]) -> list[DumpLine]:
    offsets = Offsets()
    return [
        dump_line(topic, partition, offsets(topic, partition), value, timestamp=T, key=key)
        for partition, key, value in changes
    ]


def dump_lines() -> list[DumpLine]:
    """The cases of both topics as topic dump lines (the broken records last)."""
    broken = [(BROKEN_PARTITION, key, value) for key, value, _r, _d in BROKEN]
    return (
        _lines(PG_TOPIC, PG_CHANGES) + _lines(MYSQL_TOPIC, MYSQL_CHANGES) + _lines(PG_TOPIC, broken)
    )


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> Any:
    """Row 1 of xtopic.xtopic_items through both topics, keyed by :data:`CROSS_TOPIC_KEY`."""
    from tests.dbt_models import cross_topic_cases as xtopic

    return xtopic.Case(
        cross_topic_messages, xtopic.TABLE, "id", "name", 2, record_key=CROSS_TOPIC_KEY
    )


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN, on partition 3 of dbz.edge.postgres: the last lines of the dump."""
    return conformance.broken_at_end(
        f"kafka_topic = '{PG_TOPIC}' and kafka_partition = {BROKEN_PARTITION}",
        dump_lines(),
        [(key, value, reason) for key, value, reason, _detail in BROKEN],
    )


def cross_topic_messages(side: str) -> list[str | bytes]:
    """Row 1 of xtopic.xtopic_items inserted and updated (MySQL,
    schemaless) at the same binlog positions in both topics (Kafka key: CROSS_TOPIC_KEY)."""
    from tests.dbt_models import cross_topic_cases as xtopic

    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    messages = [
        my("c", None, inserted, F10, 100, table=xtopic.TABLE),
        my("u", inserted, updated, F10, 200, table=xtopic.TABLE),
    ]
    return [m.replace(f'"db":"{MYSQL_DB}"', f'"db":"{xtopic.DB}"') for m in messages]


CROSS_TOPIC_KEY = my_key(1)
"""The Kafka key of cross_topic_messages' records."""

FAULT_KEY = my_key(0)
"""The Kafka key of every record of fault_matrix_cases' topic faults.debezium_json: it names
the key column (id); the values come from the image."""


def fault_matrix(format_: str) -> Any:
    """Good records and faults of topic faults.debezium_json, table faults.debezium_json
    (MySQL, schemaless; one PostgreSQL record with schemas for the Decimal fault), each record
    keyed by :data:`FAULT_KEY`. A Kafka NULL value is a tombstone here, not a fault."""
    from tests.dbt_models import fault_matrix_cases as fm

    def message(row: dict[str, Any] | None, *, op: Any = "c", **source: Any) -> bytes:
        value = {
            "before": None,
            "after": row,
            "source": {
                "connector": "mysql",
                "db": fm.PREFIX,
                "table": format_,
                "ts_ms": fm.T_MS,
                "file": "mysql-bin.000001",
                "pos": 4,
                "row": 0,
                **source,
            },
            "op": op,
            "ts_ms": fm.T_MS + 5,
        }
        value["source"] = {k: v for k, v in value["source"].items() if v is not _DELETE}
        return fm.duplicate_column(fm.json_bytes(value))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(row, pos=4 + seq)

    with_schema = json.loads(
        pg("c", None, account(1, "x", 1), 500, table=format_, fields=ACCOUNT_FIELDS)
    )
    with_schema["payload"]["source"]["db"] = fm.PREFIX
    with_schema["payload"]["after"]["balance"] = "%%%"
    faults = [
        fm.Fault("unknown op", message(fm.GOOD_ROWS[1], op="x"), "unknown_op", "payload.op x"),
        fm.Fault(
            "key column missing",
            message({"note": "no id", "amount": fm.raw("1")}),
            "missing_key_column",
            "id",
        ),
        fm.Fault(
            "source time of 60 digits",
            message(fm.GOOD_ROWS[1], ts_ms=fm.raw(fm.SIXTY_DIGITS)),
            "invalid_field_value",
            "payload.source.ts_ms",
        ),
        fm.Fault(
            "source time is text",
            message(fm.GOOD_ROWS[1], ts_ms="yesterday"),
            "invalid_field_type",
            "payload.source.ts_ms",
        ),
        fm.Fault(
            "no log position",
            message(fm.GOOD_ROWS[1], file=_DELETE, pos=_DELETE),
            "missing_required_field",
            "neither lsn",
        ),
        fm.Fault(
            "Connect Decimal not base64",
            dumps(with_schema).encode(),
            "invalid_field_value",
            "payload.after.balance",
        ),
    ]
    return fm.FaultMatrix(good, faults, tombstones=True, record_key=FAULT_KEY)


def truncates(format_name: str) -> list[conformance.Truncate]:
    """Op t of the PostgreSQL connector: table scratch, its table from source."""
    return [conformance.Truncate(PG_DB, "public", "scratch", "t")]
