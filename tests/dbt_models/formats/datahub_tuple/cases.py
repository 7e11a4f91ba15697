"""Hand-written DataHub Tuple records for the pipeline tests, and the state they must produce.

Two registered topics (seeds/cdc_topics.csv):

- ``datahub.edge.tuple_keyed``: table ``accounts`` (``_source_table_``), key ``id`` declared in
  seeds/cdc_declared_keys.csv for every table of the topic.
- ``datahub.edge.tuple``: no declared key and no ``_source_table_``: the table is the topic's
  last dot-part, ``tuple``, and all columns identify a row.

Changes are on partitions 1-2, broken records on partition 3. Each case states in a comment
what a reader of docs/formats.md section 2 expects.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cdc_lakehouse.formats.datahub_tuple import decoder as datahub_tuple_decoder
from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as xt
from tests.dbt_models import fault_matrix_cases as fm
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

KEYED = "datahub.edge.tuple_keyed"
UNKEYED = "datahub.edge.tuple"


def raw(number_text: str) -> str:
    """A JSON number to be written with exactly this text (json.dumps would go through float)."""
    return f"__RAW__{number_text}__"


def record(
    op: str | None,
    seq: str | int | None,
    flags: tuple[str, str] | None,
    columns: dict[str, Any],
    *,
    table: str | None = "accounts",
    time_key: str = "_excute_time_",
    time_ms: int = 1700000000000,
) -> str:
    """A Tuple record as JSON text; ``flags`` = (_before_image_, _after_image_)."""
    meta: dict[str, Any] = {}
    if seq is not None:
        meta["_sequence_id_"] = seq
    if op is not None:
        meta["_operation_type_"] = op
    meta[time_key] = time_ms
    if table is not None:
        meta["_source_table_"] = table
    if flags is not None:
        meta["_before_image_"], meta["_after_image_"] = flags
    text = json.dumps({**meta, **columns}, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text


INSERT = ("N", "Y")
BEFORE = ("Y", "N")
AFTER = ("N", "Y")
DELETE = ("Y", "N")


def account(id_: int, status: str, **extra: Any) -> dict[str, Any]:
    return {"id": id_, "status": status, **extra}


# (topic, partition, value) in offset order per (topic, partition).
CHANGES: list[tuple[str, int, str]] = [
    # id 1: exact numbers and NULL, the same insert delivered twice -> one row, values as sent.
    (
        KEYED,
        1,
        record(
            "I",
            "100",
            INSERT,
            account(1, "new", amount=raw("12345678901234567890123.456789"), price=raw("1.50"))
            | {"note": None},
        ),
    ),
    (
        KEYED,
        1,
        record(
            "I",
            "100",
            INSERT,
            account(1, "new", amount=raw("12345678901234567890123.456789"), price=raw("1.50"))
            | {"note": None},
        ),
    ),
    # id 2: the newer update (both halves, partition 2) arrives before the older insert.
    (KEYED, 2, record("U", "205", BEFORE, account(2, "new"))),
    (KEYED, 2, record("U", "205", AFTER, account(2, "shipped"), time_key="_execute_time_")),
    (KEYED, 1, record("I", "201", INSERT, account(2, "new"))),
    # id 3: insert, delete, then an older update delivered late on another partition -> gone.
    (KEYED, 1, record("I", "300", INSERT, account(3, "new"))),
    (KEYED, 1, record("D", "302", DELETE, account(3, "new"))),
    (KEYED, 2, record("U", "301", BEFORE, account(3, "new"))),
    (KEYED, 2, record("U", "301", AFTER, account(3, "late"))),
    # id 4 -> 40: a key update, after half delivered first -> only id 40 remains.
    (KEYED, 1, record("I", "400", INSERT, account(4, "new"))),
    (KEYED, 1, record("U", "401", AFTER, account(40, "moved"))),
    (KEYED, 1, record("U", "401", BEFORE, account(4, "new"))),
    # id 5: an update-before half whose after half never arrives -> the row stays as it was.
    (KEYED, 1, record("I", "500", INSERT, account(5, "five"))),
    (KEYED, 1, record("U", "501", BEFORE, account(5, "five"))),
    # id 6: sequence ids of different lengths compare as numbers (998 < 1000).
    (KEYED, 2, record("U", "1000", BEFORE, account(6, "first"))),
    (KEYED, 2, record("U", "1000", AFTER, account(6, "updated"))),
    (KEYED, 1, record("I", "998", INSERT, account(6, "first"))),
    # id 7: flags absent on an insert are implied (N / Y); sequence id as a JSON number.
    (KEYED, 1, record("I", 700, None, account(7, "implied"))),
    # no declared key, no _source_table_: all columns identify the row, table "tuple".
    (UNKEYED, 1, record("I", "10", INSERT, {"a": 1, "b": "x"}, table=None)),
    (UNKEYED, 1, record("U", "11", BEFORE, {"a": 1, "b": "x"}, table=None)),
    (UNKEYED, 1, record("U", "11", AFTER, {"a": 1, "b": "y"}, table=None)),
    (UNKEYED, 2, record("I", "20", INSERT, {"a": 2, "b": "z"}, table=None)),
    (UNKEYED, 2, record("D", "21", DELETE, {"a": 2, "b": "z"}, table=None)),
    (UNKEYED, 1, record("I", "30", INSERT, {"a": 3, "b": "w"}, table=None)),
    (UNKEYED, 2, record("I", "30", INSERT, {"a": 3, "b": "w"}, table=None)),
]

# (topic, value or None for a Kafka NULL value, value_base64 or None, expected reason)
BROKEN: list[tuple[str, str | None, str | None, str]] = [
    (UNKEYED, "not json at all", None, "invalid_json"),
    (UNKEYED, '{"_operation_type_": "I"', None, "invalid_json"),
    (UNKEYED, "[1, 2]", None, "not_an_object"),
    (UNKEYED, None, None, "empty_value"),
    (UNKEYED, None, base64.b64encode(b"\xff\xfe{}").decode(), "invalid_utf8"),
    (UNKEYED, record("X", "800", INSERT, {"a": 8}), None, "unknown_op"),
    (UNKEYED, record("i", "801", INSERT, {"a": 8}), None, "unknown_op"),
    (UNKEYED, record(None, "802", INSERT, {"a": 8}), None, "missing_required_field"),
    (UNKEYED, record("I", None, INSERT, {"a": 8}), None, "missing_required_field"),
    (UNKEYED, record("U", "803", None, {"a": 8}), None, "missing_required_field"),
    (UNKEYED, record("I", "804", ("Y", "N"), {"a": 8}), None, "inconsistent_image_flags"),
    (UNKEYED, record("U", "805", ("Y", "Y"), {"a": 8}), None, "inconsistent_image_flags"),
    (UNKEYED, record("D", "806", ("N", "N"), {"a": 8}), None, "inconsistent_image_flags"),
    (UNKEYED, record("I", "12a", INSERT, {"a": 8}), None, "invalid_field_type"),
    (UNKEYED, record("I", "807", ("n", "y"), {"a": 8}), None, "invalid_field_type"),
    (UNKEYED, record("I", "808", INSERT, {}), None, "missing_key_column"),
    (KEYED, record("I", "809", INSERT, {"status": "no id"}), None, "missing_key_column"),
]

EXPECTED_ACCOUNTS = {
    '{"id":"1"}': {
        "id": "1",
        "status": "new",
        "amount": "12345678901234567890123.456789",
        "price": "1.50",
        "note": None,
    },
    '{"id":"2"}': {"id": "2", "status": "shipped"},
    '{"id":"40"}': {"id": "40", "status": "moved"},
    '{"id":"5"}': {"id": "5", "status": "five"},
    '{"id":"6"}': {"id": "6", "status": "updated"},
    '{"id":"7"}': {"id": "7", "status": "implied"},
}
EXPECTED_UNKEYED = {
    '{"a":"1","b":"y"}': {"a": "1", "b": "y"},
    '{"a":"3","b":"w"}': {"a": "3", "b": "w"},
}


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    offsets = Offsets()
    lines = [
        dump_line(topic, partition, offsets(topic, partition), value, timestamp=1700000000000)
        for topic, partition, value in CHANGES
    ]
    for topic, value, value_b64, _reason in BROKEN:
        offset = offsets(topic, 3)
        lines.append(
            dump_line(topic, 3, offset, value, timestamp=1700000000000, value_base64=value_b64)
        )
    return lines


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> xt.Case:
    """The update is two records (before half, after half): three rows per topic."""
    return xt.Case(_cross_topic_messages, xt.TABLE, "id", "name", 3)


def _cross_topic_messages(side: str) -> list[str | bytes]:
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    return [
        record("I", "100", INSERT, inserted, table=xt.TABLE),
        record("U", "101", BEFORE, inserted, table=xt.TABLE, time_ms=xt.T + 1),
        record("U", "101", AFTER, updated, table=xt.TABLE, time_ms=xt.T + 1),
    ]


def fault_matrix(format_: str) -> fm.FaultMatrix:
    def record(seq: Any, row: dict[str, Any], *, op: Any = "I", **meta: Any) -> bytes:
        message = {
            "_sequence_id_": str(seq),
            "_operation_type_": op,
            "_excute_time_": fm.T_MS,
            "_source_table_": format_,
            "_before_image_": "N",
            "_after_image_": "Y",
            **meta,
            **row,
        }
        return fm.duplicate_column(fm.json_bytes(message))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return record(seq, row)

    faults = [
        fm.Fault("unknown op", record(9, fm.GOOD_ROWS[1], op="X"), "unknown_op", "X"),
        fm.Fault(
            "key column missing",
            record(9, {"note": "no id", "amount": fm.raw("1")}),
            "missing_key_column",
            "id",
        ),
        fm.Fault("op is a number", record(9, fm.GOOD_ROWS[1], op=5), "invalid_field_type"),
        fm.Fault(
            "execute time of 60 digits",
            record(9, fm.GOOD_ROWS[1], _excute_time_=fm.raw(fm.SIXTY_DIGITS)),
            "invalid_field_value",
            "_excute_time_",
        ),
        fm.Fault(
            "sequence id of 60 digits",
            record(fm.SIXTY_DIGITS, fm.GOOD_ROWS[1]),
            "invalid_field_type",
            "_sequence_id_",
        ),
    ]
    return fm.FaultMatrix(good, faults)


def number_form_image(format_name: str, raw: bytes) -> dict[str, str | None]:
    """The row values the decoder reads from one insert (column names lower case)."""
    row = datahub_tuple_decoder.decode_one(raw)
    assert row["decode_error"] is None, row["decode_error_detail"]
    return {name.lower(): text for name, text in row["row_image"]}


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN, on partition 3 of both topics: the last lines of the dump."""
    where = "source_format = 'datahub_tuple' and kafka_topic like 'datahub.edge.%'"
    return conformance.broken_at_end(where, dump_lines(), BROKEN)


# No truncate: DataHub Tuple records carry row changes only (no truncate message).
truncates = None
