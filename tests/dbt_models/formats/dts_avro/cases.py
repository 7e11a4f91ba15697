"""Hand-written DTS Avro records for the pipeline tests, and the state they must produce.

Records go to the registered topic ``dts.cases.avro`` (format dts_avro): changes and control
records on partitions 0-2, undecodable / quarantined records on partition 4, for tables of
database ``edge``. They are encoded with the project's encoder
(cdc_lakehouse.formats.dts_avro.avro_writer)
from the schema of docs/formats.md section 4a; each case states what a reader of it expects.
Ordering is (sourceTimestamp seconds, id) - the Kafka partition / offset only break ties.
"""

from __future__ import annotations

from typing import Any

from cdc_lakehouse.formats.dts_avro import avro_writer as avro
from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as xt
from tests.dbt_models import fault_matrix_cases as fm
from tests.dbt_models import schema_evolution_cases as evolution
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

TOPIC = "dts.cases.avro"
ORDERS = [("id", 3), ("status", 253), ("amount", 246), ("note", 15)]
ORDER_TYPES = {"id": "LONG", "status": "VAR_STRING", "amount": "NEWDECIMAL", "note": "VARCHAR"}
NONE = avro.NONE


def order(id_: int, status: str, amount: str = "1.00", note: Any = "n") -> dict[str, Any]:
    """A whole orders row (amount as exact decimal text)."""
    return {"id": id_, "status": status, "amount": avro.decimal(amount), "note": note}


def change(op: str, rid: int, ts: int, **kw: Any) -> dict[str, Any]:
    """A change of edge.dts_orders (primary key id) unless overridden."""
    args: dict[str, Any] = {
        "object_name": "edge.dts_orders",
        "columns": ORDERS,
        "primary_key": ["id"],
    }
    args.update(kw)
    return avro.make_record(op, record_id=rid, source_timestamp=ts, **args)


def marker(op: str, rid: int, ts: int, **kw: Any) -> dict[str, Any]:
    """A record without a row (transaction marker, heartbeat, unmapped operation)."""
    return avro.make_record(op, record_id=rid, source_timestamp=ts, **kw)


BIG = "12345678901234567890123.456789"

# (partition, record) in offset order per partition.
CHANGES: list[tuple[int, dict[str, Any]]] = [
    # id 1: exact decimal and NULL; the same record delivered twice -> one row, values as sent.
    (0, change("INSERT", 100, 1000, after=order(1, "new", BIG, None))),
    (0, change("INSERT", 100, 1000, after=order(1, "new", BIG, None))),
    # id 2: the newer update (partition 2) arrives before the older insert -> the update wins.
    (2, change("UPDATE", 201, 1001, before=order(2, "new"), after=order(2, "shipped"))),
    (1, change("INSERT", 200, 1000, after=order(2, "new"))),
    # id 3: insert, delete, then an older update delivered late elsewhere -> gone.
    (0, change("INSERT", 300, 1000, after=order(3, "new"))),
    (0, change("DELETE", 302, 1002, before=order(3, "new"))),
    (2, change("UPDATE", 301, 1001, before=order(3, "new"), after=order(3, "late"))),
    # id 4 -> 40: a primary-key update -> only id 40 remains.
    (0, change("INSERT", 400, 1000, after=order(4, "new"))),
    (0, change("UPDATE", 401, 1001, before=order(4, "new"), after=order(40, "moved"))),
    # id 5: a partial update (amount and note NONE = not provided) -> they keep their values.
    (0, change("INSERT", 500, 1000, after=order(5, "new", "5.00", "n5"))),
    (
        1,
        change(
            "UPDATE",
            501,
            1001,
            before={"id": 5, "status": "new", "amount": NONE, "note": NONE},
            after={"id": 5, "status": "paid", "amount": NONE, "note": NONE},
        ),
    ),
    # id 6: two updates in the same second: the higher id wins, whatever the delivery order.
    (1, change("INSERT", 600, 1000, after=order(6, "new"))),
    (2, change("UPDATE", 602, 1001, before=order(6, "a"), after=order(6, "b"))),
    (1, change("UPDATE", 601, 1001, before=order(6, "new"), after=order(6, "a"))),
    # id 7: a full-load row (INIT) with a later sourceTimestamp than a change of the same key
    # still orders before it -> the change wins.
    (0, change("UPDATE", 701, 1500, before=order(7, "snap"), after=order(7, "live"))),
    (1, change("INIT", 700, 5000, after=order(7, "snap"))),
    # id 8: a full-load row (FILL) alone -> the snapshot row.
    (1, change("FILL", 800, 900, after=order(8, "filled"))),
    # id 9: an update whose after image does not provide the key column (NONE): the row is
    # found through the before image.
    (0, change("INSERT", 900, 1000, after=order(9, "new", "9.00", "n9"))),
    (
        0,
        change(
            "UPDATE",
            901,
            1001,
            before=order(9, "new", "9.00", "n9"),
            after={"id": NONE, "status": "nine", "amount": NONE, "note": NONE},
        ),
    ),
    # a unique key (no PRIMARY): the row is identified by code.
    (
        1,
        change(
            "INSERT",
            1000,
            1000,
            object_name="edge.uk_table",
            columns=[("code", 253), ("qty", 3)],
            primary_key=None,
            unique_keys={"uk_code": ["code"]},
            after={"code": "A", "qty": 1},
        ),
    ),
    # no pk_uk_info: all columns identify the row.
    (
        1,
        change(
            "INSERT",
            1100,
            1000,
            object_name="edge.nokey",
            columns=[("a", 3), ("b", 253)],
            primary_key=None,
            after={"a": 1, "b": "x"},
        ),
    ),
    (
        1,
        change(
            "DELETE",
            1101,
            1001,
            object_name="edge.nokey",
            columns=[("a", 3), ("b", 253)],
            primary_key=None,
            before={"a": 1, "b": "x"},
        ),
    ),
    (
        1,
        change(
            "INSERT",
            1102,
            1002,
            object_name="edge.nokey",
            columns=[("a", 3), ("b", 253)],
            primary_key=None,
            after={"a": 2, "b": "y"},
        ),
    ),
    # dots inside names are escaped as the text \u002E.
    (
        2,
        change(
            "INSERT",
            1200,
            1000,
            object_name="my\\u002Edb.order\\u002Eitems",
            columns=[("id", 3)],
            after={"id": 1},
        ),
    ),
    # a PostgreSQL source: db.schema.table, dataTypeNumber kept as text, old revision.
    (
        2,
        change(
            "INSERT",
            1300,
            1000,
            object_name="pgdb.public.accounts",
            columns=[("id", 20), ("name", 1043)],
            source_type="PostgreSQL",
            source_version="14.2",
            source_txid="778",
            born_timestamp=None,
            after={"id": 1, "name": "ann"},
        ),
    ),
    # control records and a DDL
    (2, marker("BEGIN", 1400, 1100, source_txid="555")),
    (2, marker("ROLLBACK", 1401, 1100, source_txid="555")),
    (2, marker("ABORT", 1402, 1100, source_txid="556")),
    (2, marker("CHECKPOINT", 1403, 1101, born_timestamp=None)),
    (
        2,
        marker(
            "DDL",
            1404,
            1102,
            object_name="my\\u002Edb",
            after="ALTER TABLE `order.items` ADD COLUMN qty int",
        ),
    ),
]

CONTROL = [
    ("BEGIN", "transaction_begin"),
    ("ROLLBACK", "transaction_rollback"),
    ("ABORT", "transaction_rollback"),
    ("CHECKPOINT", "heartbeat"),
]


def _truncated(born: int | None) -> bytes:
    raw = avro.encode(change("INSERT", 99, 1000, after=order(99, "cut"), born_timestamp=born))
    return raw[: len(raw) // 2]


# (raw value bytes or None for a Kafka NULL value, expected reason)
BROKEN: list[tuple[bytes | None, str]] = [
    (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", "avro_schema_mismatch"),
    (b'{"operation": "INSERT"}', "avro_schema_mismatch"),
    (_truncated(1700000000), "avro_schema_mismatch"),
    (_truncated(None), "avro_schema_mismatch"),
    (
        avro.encode(change("INSERT", 98, 1000, after=order(98, "x"))) + b"\x00\x00",
        "avro_schema_mismatch",
    ),
    (None, "empty_value"),
    (
        avro.encode(
            {**change("INSERT", 97, 1000, after=order(97, "x")), "afterImages": [avro.integer(1)]}
        ),
        "invalid_field_value",
    ),
    (
        avro.encode(change("INSERT", 96, 1000, after=order(96, "x"), tags={"pk_uk_info": "{bad"})),
        "invalid_field_value",
    ),
    (avro.encode(change("INSERT", -5, 1000, after=order(95, "x"))), "invalid_field_value"),
    (
        avro.encode(change("INSERT", 94, 1000, object_name="a.b.c.d", after=order(94, "x"))),
        "invalid_field_value",
    ),
    *[
        (avro.encode(marker(op, 90, 1000)), "unknown_op")
        for op in ("COMMAND", "FINISH", "CONTROL", "RDB", "NOOP")
    ],
    (
        avro.encode(change("INSERT", 89, 1000, object_name="edge", after=order(89, "x"))),
        "missing_required_field",
    ),
    (avro.encode(change("INSERT", 88, 1000)), "missing_required_field"),
    (avro.encode(change("DELETE", 87, 1000)), "missing_required_field"),
    (avro.encode(marker("DDL", 86, 1000, object_name="edge")), "missing_required_field"),
    (
        avro.encode(change("INSERT", 85, 1000, after={"id": NONE, "status": "no id"})),
        "missing_key_column",
    ),
    (
        avro.encode(change("DELETE", 84, 1000, before={"id": NONE, "status": "no id"})),
        "missing_key_column",
    ),
]


EXPECTED_ORDERS: dict[str, dict[str, str | None]] = {
    '{"id":"1"}': {"id": "1", "status": "new", "amount": BIG, "note": None},
    '{"id":"2"}': {"id": "2", "status": "shipped", "amount": "1.00", "note": "n"},
    '{"id":"40"}': {"id": "40", "status": "moved", "amount": "1.00", "note": "n"},
    '{"id":"5"}': {"id": "5", "status": "paid", "amount": "5.00", "note": "n5"},
    '{"id":"6"}': {"id": "6", "status": "b", "amount": "1.00", "note": "n"},
    '{"id":"7"}': {"id": "7", "status": "live", "amount": "1.00", "note": "n"},
    '{"id":"8"}': {"id": "8", "status": "filled", "amount": "1.00", "note": "n"},
    '{"id":"9"}': {"id": "9", "status": "nine", "amount": "9.00", "note": "n9"},
}
"""gold.current_rows of edge.dts_orders (partial images merged with the previous change)."""
PARTIAL_ROW_KEYS = ('{"id":"5"}', '{"id":"9"}')
EXPECTED_UK = {'{"code":"A"}': {"code": "A", "qty": "1"}}
EXPECTED_NOKEY = {'{"a":"2","b":"y"}': {"a": "2", "b": "y"}}


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    offsets = Offsets()
    lines = [
        dump_line(
            TOPIC,
            partition,
            offsets(TOPIC, partition),
            avro.encode(record),
            timestamp=record["sourceTimestamp"] * 1000,
        )
        for partition, record in CHANGES
    ]
    lines += [dump_line(TOPIC, 4, offset, raw) for offset, (raw, _reason) in enumerate(BROKEN)]
    return lines


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> xt.Case:
    return xt.Case(_cross_topic_messages, xt.TABLE, "id", "name", 2)


def _cross_topic_messages(side: str) -> list[str | bytes]:
    args: dict[str, Any] = {
        "object_name": f"{xt.DB}.{xt.TABLE}",
        "columns": [("id", 3), ("name", 253)],
        "primary_key": ["id"],
    }
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    return [
        avro.encode(
            avro.make_record("INSERT", record_id=100, source_timestamp=1000, after=inserted, **args)
        ),
        avro.encode(
            avro.make_record(
                "UPDATE",
                record_id=101,
                source_timestamp=1001,
                before=inserted,
                after=updated,
                **args,
            )
        ),
    ]


def fault_matrix(format_: str) -> fm.FaultMatrix:
    columns = [("id", 8), ("note", 252), ("amount", 246)]

    def record(rid: int, row: dict[str, Any] | None, op: str = "INSERT", **kw: Any) -> bytes:
        values = None
        if row is not None:
            values = {
                name: (
                    avro.decimal(str(value)[len("__RAW__") : -2])
                    if str(value).startswith("__RAW__")
                    else value
                )
                for name, value in row.items()
            }
        args: dict[str, Any] = {
            "object_name": f"{fm.PREFIX}.{format_}",
            "columns": columns,
            "primary_key": ["id"],
            "after": values,
        }
        args.update(kw)
        return avro.encode(
            avro.make_record(op, record_id=rid, source_timestamp=1_700_000_000 + rid, **args)
        )

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return record(seq, row)

    whole = record(9, fm.GOOD_ROWS[1])
    faults = [
        fm.Fault("Kafka NULL value", None, "empty_value"),
        fm.Fault("zero bytes", b"", "empty_value"),
        fm.Fault("garbage bytes", b"\x13\x37not avro at all\xff" * 4, "avro_schema_mismatch"),
        fm.Fault("truncated record", whole[: len(whole) // 2], "avro_schema_mismatch"),
        fm.Fault(
            "a string claiming 2^62 bytes",
            b"\x00\xfe\xff\xff\xff\xff\xff\xff\xff\x7f" + b"x" * 16,
            "avro_schema_mismatch",
        ),
        fm.Fault("JSON instead of Avro", b'{"id":1}', "avro_schema_mismatch"),
        fm.Fault(
            "key column missing from the image",
            record(9, {"id": avro.NONE, "note": "no id", "amount": fm.raw("1")}),
            "missing_key_column",
            "id",
        ),
        fm.Fault(
            "sourceTimestamp after the year 9999",
            avro.encode(
                avro.make_record(
                    "INSERT",
                    record_id=9,
                    source_timestamp=2**62,
                    object_name=f"{fm.PREFIX}.{format_}",
                    columns=columns,
                    primary_key=["id"],
                    after={"id": 9, "note": "x", "amount": avro.decimal("1")},
                )
            ),
            "invalid_field_value",
            "sourceTimestamp",
        ),
        fm.Fault(
            "readerThroughoutTime of 60 digits",
            record(9, fm.GOOD_ROWS[1], tags={"readerThroughoutTime": fm.SIXTY_DIGITS}),
            "invalid_field_value",
            "readerThroughoutTime",
        ),
        fm.Fault(
            "pk_uk_info nested 1,000 levels",
            record(
                9, fm.GOOD_ROWS[1], primary_key=None, tags={"pk_uk_info": "[" * 1000 + "]" * 1000}
            ),
            "invalid_field_value",
            "pk_uk_info",
        ),
    ]
    return fm.FaultMatrix(good, faults)


def schema_changes(format_name: str) -> evolution.SchemaChanges:
    return evolution.EVERY_CHANGE_SENT


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN, on partition 4: the last lines of the dump; nothing else of the topic is
    quarantined (the sample's topic is another)."""
    return conformance.broken_at_end(f"kafka_topic = '{TOPIC}'", dump_lines(), BROKEN)


# No truncate in these cases: DTS Avro's (a DDL record whose objectName is the database only)
# is in history_cases.py.
truncates = None
