"""Hand-written DataWorks messages for the pipeline tests, and the state they must produce.

Messages go to the registered topic ``dataworks.sample.mysql`` on partitions 1-3 (the bundled
sample dump uses partition 0), for tables of database ``edge_db``. Each case states in a
comment what a reader of docs/formats.md section 1 expects.
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

TOPIC = "dataworks.sample.mysql"
DB = "edge_db"

ORDER_COLUMNS = [
    {"name": "id", "type": "LONG"},
    {"name": "status", "type": "STRING"},
    {"name": "amount", "type": "DOUBLE"},
    {"name": "price", "type": "DOUBLE"},
    {"name": "ratio", "type": "DOUBLE"},
    {"name": "note", "type": "STRING"},
]


def raw(number_text: str) -> str:
    """A JSON number to be written with exactly this text (json.dumps would go through float)."""
    return f"__RAW__{number_text}__"


def message(
    op: str,
    seq: str | int | None,
    *,
    table: str = "orders",
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    primary_key: list[str] | None = None,
    columns: list[dict[str, str]] | None = None,
    event_ms: int = 1700000000000,
) -> str:
    """A DataWorks message as JSON text (placeholders from :func:`raw` become bare numbers)."""
    payload: dict[str, Any] = {
        "before": {"dataColumn": before} if before is not None else None,
        "after": {"dataColumn": after} if after is not None else None,
        "sequenceId": seq,
        "op": op,
        "timestamp": {"eventTime": event_ms, "systemTime": event_ms + 5},
        "ddl": None,
    }
    if seq is None:
        del payload["sequenceId"]
    envelope = {
        "schema": {
            "dataColumn": columns if columns is not None else ORDER_COLUMNS,
            "primaryKey": primary_key if primary_key is not None else ["id"],
            "source": {"dbType": "MySQL", "dbName": DB, "tableName": table},
        },
        "payload": payload,
        "version": "1.0.0",
    }
    text = json.dumps(envelope, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text


def order(id_: int, status: str, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "status": status, **extra}


NOKEY_COLUMNS = [{"name": "a", "type": "LONG"}, {"name": "b", "type": "STRING"}]

# (partition, value) in offset order per partition.
CHANGES: list[tuple[int, str | None]] = [
    # id 1: exact numbers (a 30-digit DOUBLE, 1.50, DOUBLE sent as text), NULL, and the same
    # insert delivered twice -> one row, values as sent.
    (
        1,
        message(
            "INSERT",
            "100",
            after=order(
                1,
                "new",
                amount=raw("12345678901234567890123.456789"),
                price=raw("1.50"),
                ratio="1.100000",
                note=None,
            ),
        ),
    ),
    (
        1,
        message(
            "INSERT",
            "100",
            after=order(
                1,
                "new",
                amount=raw("12345678901234567890123.456789"),
                price=raw("1.50"),
                ratio="1.100000",
                note=None,
            ),
        ),
    ),
    # id 2: the newer update arrives (partition 2) before the older insert -> update wins.
    (2, message("UPDATE_AFTER", "205", before=order(2, "new"), after=order(2, "shipped"))),
    (2, message("INSERT", "201", after=order(2, "new"))),
    # id 3: insert, delete, then an older update delivered late on another partition -> gone.
    (1, message("INSERT", "300", after=order(3, "new"))),
    (1, message("DELETE", "302", before=order(3, "new"))),
    (2, message("UPDATE_AFTER", "301", before=order(3, "new"), after=order(3, "late"))),
    # id 4 -> 40: a primary-key update as two messages, after half delivered first, with the
    # other spelling UPDATE_BEFORE -> only id 40 remains.
    (1, message("INSERT", "400", after=order(4, "new"))),
    (1, message("UPDATE_AFTER", "401", after=order(40, "moved"))),
    (1, message("UPDATE_BEFORE", "401", before=order(4, "new"))),
    # id 5: an update-before half whose after half never arrives -> the row stays as it was.
    (1, message("INSERT", "500", after=order(5, "five"))),
    (1, message("UPDATE_BEFOR", "501", before=order(5, "five"))),
    # id 6: insert, delete, insert again -> the re-inserted row.
    (2, message("INSERT", "600", after=order(6, "first"))),
    (2, message("DELETE", "601", before=order(6, "first"))),
    (2, message("INSERT", "602", after=order(6, "again"))),
    # a table with neither primary key nor row id: all columns identify the row.
    (
        1,
        message(
            "INSERT",
            "700",
            table="nokey",
            after={"a": 1, "b": "x"},
            primary_key=[],
            columns=NOKEY_COLUMNS,
        ),
    ),
    (
        1,
        message(
            "DELETE",
            "701",
            table="nokey",
            before={"a": 1, "b": "x"},
            primary_key=[],
            columns=NOKEY_COLUMNS,
        ),
    ),
    (
        1,
        message(
            "INSERT",
            "702",
            table="nokey",
            after={"a": 2, "b": "y"},
            primary_key=[],
            columns=NOKEY_COLUMNS,
        ),
    ),
    # control events
    (1, message("TRANSACTION_BEGIN", "99")),
    (
        1,
        json.dumps(
            {
                "schema": {},
                "payload": {"op": "MHEARTBEAT", "timestamp": {"eventTime": 1700000001000}},
                "version": "0.0.1",
            }
        ),
    ),
]

# (value or None for a Kafka NULL value, value_base64 or None, expected reason)
BROKEN: list[tuple[str | None, str | None, str]] = [
    ("not json at all", None, "invalid_json"),
    ('{"payload": {"op": "INSERT"', None, "invalid_json"),
    ("[1, 2]", None, "not_an_object"),
    (message("UPSERT", "800", after=order(8, "x")), None, "unknown_op"),
    (message("insert", "801", after=order(8, "x")), None, "unknown_op"),
    (message("INSERT", None, after=order(8, "x")), None, "missing_required_field"),
    (message("INSERT", "802"), None, "missing_required_field"),
    (message("INSERT", "803", after={"status": "no id"}), None, "missing_key_column"),
    (message("INSERT", "12a", after=order(8, "x")), None, "invalid_field_type"),
    ('{"payload": "INSERT"}', None, "invalid_field_type"),
    (None, None, "empty_value"),
    (None, base64.b64encode(b"\xff\xfe{}").decode(), "invalid_utf8"),
    # decoded by the exact JSON function (offsets 12-): the checks its SQL model adds
    ('{"payload": {"op": "INSERT", "x": NaN}}', None, "invalid_json"),
    ('{"payload": {"op": "INSERT", "op": "DELETE"}}', None, "duplicate_key"),
    (
        message("INSERT", "804", after=order(8, "x")).replace('"804"', "8.04"),
        None,
        "invalid_field_type",
    ),
    ('{"payload": {"op": "INSERT", "after": {"dataColumn": [1]}}}', None, "invalid_field_type"),
    ('{"schema": {"primaryKey": "id"}, "payload": {"op": "INSERT"}}', None, "invalid_field_type"),
    (
        message("INSERT", "805", after=order(8, "x")).replace("1700000000000", '"soon"'),
        None,
        "invalid_field_type",
    ),
    (
        message("INSERT", "806", after=order(8, "x")).replace("1700000000000", "-62135596800001"),
        None,
        "invalid_field_value",
    ),
    (
        message("INSERT", "807", after=order(8, "x"), columns=[{"name": "id"}, {"name": "id"}]),
        None,
        "invalid_field_value",
    ),
    # a number where the op code's text belongs is that text: no DataWorks op
    (
        '{"schema": {"source": {"tableName": "orders"}}, "payload": {"op": 5, "sequenceId": 808}}',
        None,
        "unknown_op",
    ),
]
BROKEN_DETAILS = {
    12: "not valid JSON",
    13: "the key 'op' appears twice in one object",
    14: "payload.sequenceId must be a string of digits",
    15: "payload.after.dataColumn must be an object, not an array",
    16: "schema.primaryKey must be an array, not a string",
    17: "payload.timestamp.eventTime must be epoch milliseconds",
    18: "payload.timestamp.eventTime = -62135596800001 is not a time in the years 1-9999 "
    "(epoch ms)",
    19: "schema.dataColumn names the column id twice",
    20: "payload.op 5 is not a DataWorks op",
}
"""Offset in partition 3 -> what its quarantine row's reason_detail says (or starts with)."""

EXPECTED_ORDERS = {
    '{"id":"1"}': {
        "id": "1",
        "status": "new",
        "amount": "12345678901234567890123.456789",
        "price": "1.50",
        "ratio": "1.100000",
        "note": None,
    },
    '{"id":"2"}': {"id": "2", "status": "shipped"},
    '{"id":"40"}': {"id": "40", "status": "moved"},
    '{"id":"5"}': {"id": "5", "status": "five"},
    '{"id":"6"}': {"id": "6", "status": "again"},
}
EXPECTED_NOKEY = {'{"a":"2","b":"y"}': {"a": "2", "b": "y"}}


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    offsets = Offsets()
    lines = [
        dump_line(TOPIC, partition, offsets(TOPIC, partition), value, timestamp=1700000000000)
        for partition, value in CHANGES
    ]
    for offset, (value, value_b64, _reason) in enumerate(BROKEN):
        lines.append(
            dump_line(TOPIC, 3, offset, value, timestamp=1700000000000, value_base64=value_b64)
        )
    return lines


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> xt.Case:
    """Both formats of the folder: one INSERT and one UPDATE per topic."""
    return xt.Case(_cross_topic_messages, xt.TABLE, "id", "name", 2)


def _cross_topic_messages(side: str) -> list[str | bytes]:
    columns = [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"}]
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    messages = [
        message("INSERT", "100", table=xt.TABLE, after=inserted, columns=columns),
        message(
            "UPDATE_AFTER", "101", table=xt.TABLE, before=inserted, after=updated, columns=columns
        ),
    ]
    database = f'"dbName":"{DB}"'
    return [m.replace(database, f'"dbName":"{xt.DB}"') for m in messages]


def fault_matrix(format_: str) -> fm.FaultMatrix:
    """Both formats of the folder: the DataWorks envelope."""

    def envelope(
        seq: Any, row: dict[str, Any] | None, *, op: str = "INSERT", **payload: Any
    ) -> bytes:
        message = {
            "schema": {
                "dataColumn": [
                    {"name": "id", "type": "LONG"},
                    {"name": "note", "type": "STRING"},
                    {"name": "amount", "type": "DOUBLE"},
                ],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": fm.PREFIX, "tableName": format_},
            },
            "payload": {
                "before": None,
                "after": {"dataColumn": row} if row is not None else None,
                "sequenceId": str(seq),
                "op": op,
                "timestamp": {"eventTime": fm.T_MS + int(seq), "systemTime": fm.T_MS + int(seq)},
                "ddl": None,
                **payload,
            },
            "version": "1.0.0",
        }
        return fm.duplicate_column(fm.json_bytes(message))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return envelope(seq, row)

    faults = [
        fm.Fault("unknown op", envelope(9, fm.GOOD_ROWS[1], op="UPSERT"), "unknown_op", "UPSERT"),
        fm.Fault(
            "key column missing",
            envelope(9, {"note": "no id", "amount": fm.raw("1")}),
            "missing_key_column",
            "id",
        ),
        # a number is read as its text (the exact JSON function's string fields): 7 is no op
        fm.Fault(
            "op is a number",
            envelope(9, fm.GOOD_ROWS[1], op=7),  # type: ignore[arg-type]
            "unknown_op",
            "payload.op 7",
        ),
        fm.Fault(
            "event time of 60 digits",
            envelope(9, fm.GOOD_ROWS[1], timestamp={"eventTime": fm.raw(fm.SIXTY_DIGITS)}),
            "invalid_field_value",
            "eventTime",
        ),
        fm.Fault(
            "sequenceId of 60 digits",
            envelope(fm.SIXTY_DIGITS, fm.GOOD_ROWS[1], timestamp={"eventTime": fm.T_MS}),
            "invalid_field_type",
            "sequenceId",
        ),
        fm.Fault(
            "the payload named twice",
            envelope(9, fm.GOOD_ROWS[1]).replace(b'"version"', b'"payload":{},"version"'),
            "duplicate_key",
            "'payload'",
        ),
    ]
    return fm.FaultMatrix(good, faults)


def schema_changes(format_name: str) -> evolution.SchemaChanges:
    """DataWorks / Blob send the MySQL 5.7 CHANGE COLUMN: a rename, then the column's type."""
    first = [
        evolution.ADD_STOCK,
        evolution.RENAME,
        ("change_column_type", "title", None, "string"),
    ]
    second = [evolution.WIDEN, evolution.DROP_NOTE, evolution.TRUNCATE]
    return evolution.SchemaChanges(first, second, typed=True)


def broken_records(format_name: str) -> conformance.BrokenRecords | None:
    """BROKEN, on partition 3 of TOPIC (a dataworks_json topic): the last lines of the dump.
    DataHub Blob: none (its envelope is DataWorks', whose broken records are these)."""
    if format_name != "dataworks_json":
        return None
    where = f"kafka_partition = 3 and kafka_topic = '{TOPIC}'"
    return conformance.broken_at_end(where, dump_lines(), BROKEN)


# No truncate in these cases: DataWorks JSON's (op TRUNCATE, a QUERY record naming the table)
# are in history_cases.py; DataHub Blob shares its envelope.
truncates = None
