"""Hand-written DTS Shareplex JSON messages for the pipeline tests, and the state they must
produce.

Messages go to the registered topic ``dts.cases.shareplex`` (format dts_shareplex_json):
changes on partitions 0-2, quarantined messages on partition 4, for tables of schema ``EDGE``.
Each case states what a reader of docs/formats.md section 4b expects. Ordering is (scn, seq) - the
Kafka partition / offset only break ties.
"""

from __future__ import annotations

import json
from typing import Any

from cdc_lakehouse.formats.dts_shareplex import decoder as shareplex_decoder
from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as xt
from tests.dbt_models import fault_matrix_cases as fm
from tests.dbt_models import schema_evolution_cases as evolution
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

TOPIC = "dts.cases.shareplex"


def msg(
    op: str,
    scn: int | str | None,
    *,
    seq: int | None = 1,
    size: int | None = 1,
    table: str | None = "EDGE.ORDERS",
    data: dict[str, Any] | None = None,
    key: dict[str, Any] | None = None,
    trans: str = "1.0.1",
    time: str = "2024-01-02T03:04:05",
    **meta: Any,
) -> str:
    """A Shareplex JSON message as text (absent arguments are left out of meta)."""
    body: dict[str, Any] = {"time": time, "userid": 84, "op": op, "trans": trans}
    if scn is not None:
        body["scn"] = str(scn)
    if seq is not None:
        body["seq"] = seq
    if size is not None:
        body["size"] = size
    if seq is not None and size is not None:
        body["idx"] = f"{seq}/{size}"
    if table is not None:
        body["table"] = table
    body.update(meta)
    message: dict[str, Any] = {"meta": body}
    if data is not None:
        message["data"] = data
    if key is not None:
        message["key"] = key
    return json.dumps(message)


def row(id_: str, status: str, amount: str = "1.00", note: str | None = "n") -> dict[str, Any]:
    """A whole EDGE.ORDERS row (all values strings, as Shareplex sends them)."""
    return {"ID": id_, "STATUS": status, "AMOUNT": amount, "NOTE": note}


# (partition, value) in offset order per partition.
CHANGES: list[tuple[int, str]] = [
    # ID 1: insert (exact decimal text, NULL) delivered twice -> one row as sent.
    (0, msg("ins", 100, data=row("1", "new", "12345678901234567890123.456789", None))),
    (0, msg("ins", 100, data=row("1", "new", "12345678901234567890123.456789", None))),
    # ID 2: insert then a partial upd (only STATUS) -> the other columns keep their values.
    # The newer upd arrives first, on another partition.
    (2, msg("upd", 201, data={"STATUS": "shipped"}, key={"ID": "2"})),
    (1, msg("ins", 200, data=row("2", "new", "2.00", "n2"))),
    # ID 3: insert, del, then an older upd delivered late -> gone.
    (0, msg("ins", 300, data=row("3", "new"))),
    (0, msg("del", 302, data={"ID": "3"})),
    (2, msg("upd", 301, data={"STATUS": "late"}, key={"ID": "3"})),
    # ID 4 -> 40: an upd that changes the key: key has the old value, data the new one.
    (0, msg("ins", 400, data=row("4", "new"))),
    (0, msg("upd", 401, data={"ID": "40"}, key={"ID": "4"})),
    # ID 5 and 6: one transaction of three operations (same scn, seq 1..3 of size 3), the
    # last delivered first -> seq orders them; is_last_event_in_transaction on seq 3.
    (1, msg("upd", 500, seq=3, size=3, trans="5.0.9", data={"STATUS": "c"}, key={"ID": "5"})),
    (1, msg("ins", 500, seq=1, size=3, trans="5.0.9", data=row("5", "a"))),
    (1, msg("upd", 500, seq=2, size=3, trans="5.0.9", data={"STATUS": "b"}, key={"ID": "5"})),
    # ID 7: the documented long spellings INSERT / UPDATE / DELETE behave like ins / upd / del.
    (2, msg("INSERT", 700, data=row("7", "new"))),
    (2, msg("UPDATE", 701, data={"NOTE": None}, key={"ID": "7"})),
    # ID 8 -> 80: a split update: UPDATE BEFORE (old row) and UPDATE AFTER (new values, no
    # key), seq 1 and 2 of one transaction -> only ID 80 remains.
    (0, msg("ins", 800, data=row("8", "new"))),
    (0, msg("UPDATE BEFORE", 801, seq=1, size=2, trans="8.0.1", data=row("8", "new"))),
    (
        0,
        msg("UPDATE AFTER", 801, seq=2, size=2, trans="8.0.1", data=row("80", "moved")),
    ),
    # ID 9: DELETE (long spelling) with data holding the identifying values.
    (1, msg("ins", 900, data=row("9", "new"))),
    (1, msg("DELETE", 901, data={"ID": "9"})),
    # scn compares as a number: 99 < 1000 even though "99" > "1000" as text.
    (2, msg("ins", 99, table="EDGE.NUMS", data={"K": "1", "V": "old"}, key={"K": "1"})),
    (2, msg("upd", 1000, table="EDGE.NUMS", data={"V": "new"}, key={"K": "1"})),
    # time with Z, offset and fraction; posttime; no seq / size but idx.
    (
        2,
        msg(
            "ins",
            1100,
            seq=None,
            size=None,
            table="EDGE.TIMES",
            time="2024-01-02T03:04:05.250Z",
            posttime="2024-01-02T03:04:09Z",
            idx="2/4",
            rowid="AAAR1QAAEAAAACXAAA",
            data={"K": "1"},
            key={"K": "1"},
        ),
    ),
    # DDL-like ops -> schema_changes
    (1, msg("TRUNCATE", 1200, table="EDGE.NUMS")),
    (1, msg("DROP COLUMN", 1201, table="EDGE.NUMS", data={"V": None})),
    # EDGE.LATE_KEYED: only inserts in the first ingest batch, so no key to learn yet (keyed
    # by all columns); its upd / del arrive in a later batch (INCREMENT) and teach the key ID
    (5, msg("ins", 1300, table="EDGE.LATE_KEYED", data={"ID": "1", "STATUS": "new"})),
    (5, msg("ins", 1301, table="EDGE.LATE_KEYED", data={"ID": "2", "STATUS": "new"})),
]

# Messages of a later ingest batch (fixture simulated_increments, first increment).
INCREMENT: list[tuple[int, str]] = [
    (5, msg("upd", 1302, table="EDGE.LATE_KEYED", data={"STATUS": "paid"}, key={"ID": "1"})),
    (5, msg("del", 1303, table="EDGE.LATE_KEYED", data={"ID": "2"})),
]
EXPECTED_LATE_KEYED = {'{"ID":"1"}': {"ID": "1", "STATUS": "paid"}}
"""gold.current_rows of EDGE.LATE_KEYED after INCREMENT: the first batch's inserts are keyed
by the key learned later, in an incremental run as in a full refresh."""

# (value or None for a Kafka NULL value, expected reason)
BROKEN: list[tuple[str | None, str]] = [
    ("not json", "invalid_json"),
    ('{"meta": {"op": "ins"', "invalid_json"),
    ("[1, 2]", "not_an_object"),
    ('{"data": {"ID": "1"}}', "missing_required_field"),
    ('{"meta": {"scn": "1"}, "data": {"ID": "1"}}', "missing_required_field"),
    ('{"meta": "ins"}', "invalid_field_type"),
    (msg("ins", "12a", data=row("1", "x")), "invalid_field_type"),
    (msg("ins", 1, time="yesterday", data=row("1", "x")), "invalid_field_type"),
    (msg("ins", 1, data=row("1", "x"), idx="x"), "invalid_field_type"),
    (msg("upsert", 1, data=row("1", "x")), "unknown_op"),
    (msg("INS", 1, data=row("1", "x")), "unknown_op"),
    (msg("ins", None, data=row("1", "x")), "missing_required_field"),
    (msg("ins", 1, table=None, data=row("1", "x")), "missing_required_field"),
    (msg("ins", 1), "missing_required_field"),
    (msg("upd", 1, data={"STATUS": "x"}), "missing_required_field"),
    (msg("del", 1), "missing_required_field"),
    (msg("ins", 1, data={}), "missing_key_column"),
    (msg("ins", "1" * 31, data=row("1", "x")), "invalid_field_type"),
    (None, "empty_value"),
]

EXPECTED_ORDERS: dict[str, dict[str, str | None]] = {
    '{"ID":"1"}': {
        "ID": "1",
        "STATUS": "new",
        "AMOUNT": "12345678901234567890123.456789",
        "NOTE": None,
    },
    '{"ID":"2"}': {"ID": "2", "STATUS": "shipped", "AMOUNT": "2.00", "NOTE": "n2"},
    '{"ID":"40"}': {"ID": "40", "STATUS": "new", "AMOUNT": "1.00", "NOTE": "n"},
    '{"ID":"5"}': {"ID": "5", "STATUS": "c", "AMOUNT": "1.00", "NOTE": "n"},
    '{"ID":"7"}': {"ID": "7", "STATUS": "new", "AMOUNT": "1.00", "NOTE": None},
    '{"ID":"80"}': {"ID": "80", "STATUS": "moved", "AMOUNT": "1.00", "NOTE": "n"},
}
"""gold.current_rows of EDGE.ORDERS (partial upd images merged with the previous change)."""
EXPECTED_NUMS = {'{"K":"1"}': {"K": "1", "V": "new"}}


def _change_lines(changes: list[tuple[int, str]], offsets: Offsets) -> list[DumpLine]:
    """Dump lines of ``changes`` on TOPIC, numbering each partition's offsets on from
    ``offsets``."""
    return [
        dump_line(TOPIC, partition, offsets(TOPIC, partition), value, timestamp=1704164645000)
        for partition, value in changes
    ]


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    lines = _change_lines(CHANGES, Offsets())
    lines += [dump_line(TOPIC, 4, offset, value) for offset, (value, _reason) in enumerate(BROKEN)]
    return lines


def increment_dump_lines(batch: int) -> list[DumpLine] | None:
    """INCREMENT (the offsets after CHANGES') as topic dump lines, in the first incremental
    batch (``batch`` 0; nothing for the others)."""
    if batch != 0:
        return None
    offsets = Offsets()
    _change_lines(CHANGES, offsets)
    return _change_lines(INCREMENT, offsets)


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> xt.Case:
    """Shareplex names the table and its columns upper case."""
    return xt.Case(_cross_topic_messages, xt.TABLE.upper(), "ID", "NAME", 2)


def _cross_topic_messages(side: str) -> list[str | bytes]:
    table = f"{xt.DB}.{xt.TABLE}".upper()
    return [
        msg("ins", 5000, table=table, data={"ID": "1", "NAME": f"{side}-insert"}),
        msg("upd", 5001, table=table, data={"NAME": f"{side}-update"}, key={"ID": "1"}),
    ]


def fault_matrix(format_: str) -> fm.FaultMatrix:
    """Shareplex names the table and its columns upper case."""

    def message(scn: Any, row: dict[str, Any] | None, *, op: Any = "ins", **meta: Any) -> bytes:
        body = {
            "time": "2023-11-14T22:13:20",
            "userid": 84,
            "op": op,
            "scn": str(scn),
            "trans": "7.0.1",
            "seq": 1,
            "size": 1,
            "table": f"{fm.PREFIX.upper()}.{format_.upper()}",
            "idx": "1/1",
            **meta,
        }
        out: dict[str, Any] = {"meta": body}
        if row is not None:
            out["data"] = {k.upper(): v for k, v in row.items()}
            if op in ("upd", "del"):
                out["key"] = {"ID": row.get("id")}
        return fm.duplicate_column(fm.json_bytes(out), "NOTE")

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(1000 + seq, row)

    # an ins carries no key: the table's key is learned from an upd / del (docs/formats.md 4b)
    teach_key = message(1100, {"id": 1, "note": "plain"}, op="upd")
    faults = [
        fm.Fault("unknown op", message(1009, fm.GOOD_ROWS[1], op="merge"), "unknown_op", "merge"),
        fm.Fault("op is a number", message(1009, fm.GOOD_ROWS[1], op=3), "invalid_field_type"),
        fm.Fault(
            "event time is not a time",
            message(1009, fm.GOOD_ROWS[1], time="yesterday"),
            "invalid_field_type",
            "meta.time",
        ),
        fm.Fault(
            "scn of 60 digits",
            message(fm.SIXTY_DIGITS, fm.GOOD_ROWS[1]),
            "invalid_field_type",
            "scn",
        ),
    ]
    return fm.FaultMatrix(good, faults, last=[teach_key], upper_case=True)


def number_form_image(format_name: str, raw: bytes) -> dict[str, str | None]:
    """The row values the decoder reads from one insert (column names lower case)."""
    row = shareplex_decoder.decode_one(raw)
    assert row["decode_error"] is None, row["decode_error_detail"]
    return {name.lower(): text for name, text in row["data_image"]}


def schema_changes(format_name: str) -> evolution.SchemaChanges:
    """Shareplex sends no DDL for ADD / RENAME."""
    return evolution.SchemaChanges([], [evolution.DROP_NOTE, evolution.TRUNCATE], typed=False)


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN, on partition 4: the last lines of the dump; nothing else of the topic is
    quarantined."""
    return conformance.broken_at_end(f"kafka_topic = '{TOPIC}'", dump_lines(), BROKEN)


def truncates(format_name: str) -> list[conformance.Truncate]:
    """The TRUNCATE of EDGE.NUMS (Oracle: a schema, no database)."""
    return [conformance.Truncate(None, "EDGE", "NUMS", "TRUNCATE")]
