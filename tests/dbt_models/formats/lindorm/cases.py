"""Hand-written Lindorm data subscription messages (Debezium V2.0) for the pipeline tests, and
the state they must produce.

Two registered topics (seeds/cdc_topics.csv), cluster ``ld-edge``, namespace ``edge``:

- ``lindorm.edge.sql``: SQL table ``accounts`` with the key ``tenant|id`` declared in
  seeds/cdc_declared_keys.csv, and SQL table ``unkeyed`` without a declared key (all columns
  identify a row). Broken messages are on its partition 3.
- ``lindorm.edge.hbase``: HBase table ``profiles`` (``ROW`` key, base64 values).

Each case states in a comment what a reader of docs/formats.md section 3 expects.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cdc_lakehouse.formats.lindorm import decoder as lindorm_decoder
from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as xt
from tests.dbt_models import fault_matrix_cases as fm
from tests.dbt_models import schema_evolution_cases as evolution
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

SQL_TOPIC = "lindorm.edge.sql"
HBASE_TOPIC = "lindorm.edge.hbase"
DB = "ld-edge"
NAMESPACE = "edge"


def raw(number_text: str) -> str:
    """A JSON number to be written with exactly this text (json.dumps would go through float)."""
    return f"__RAW__{number_text}__"


def message(
    op: str,
    source_ms: int | None,
    *,
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    table: str | None = "accounts",
    payload_ms: int | None = None,
    source: dict[str, Any] | None = None,
) -> str:
    """A Lindorm Debezium message as JSON text (placeholders of :func:`raw` become numbers)."""
    src: dict[str, Any] = {"version": "v1.0", "db": DB, "namespace": NAMESPACE}
    if table is not None:
        src["table"] = table
    if source_ms is not None:
        src["ts_ms"] = source_ms
    src.update(source or {})
    payload = {
        "op": op,
        "ts_ms": payload_ms if payload_ms is not None else (source_ms or 0) + 8,
        "before": before,
        "after": after,
        "source": src,
    }
    text = json.dumps({"schema": {}, "payload": payload}, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text


def acct(id_: int, name: str, **extra: Any) -> dict[str, Any]:
    return {"tenant": "t1", "id": id_, "name": name, **extra}


def b64(data: bytes | str) -> str:
    return base64.b64encode(data.encode() if isinstance(data, str) else data).decode()


def hbase(row: bytes | str, **cells: bytes | str | None) -> dict[str, Any]:
    image: dict[str, Any] = {"ROW": b64(row)}
    image.update({k: (b64(v) if v is not None else None) for k, v in cells.items()})
    return image


LONG_42 = (42).to_bytes(8, "big")  # HBase Bytes.toBytes(42L)

# (topic, partition, value) in offset order per (topic, partition).
CHANGES: list[tuple[str, int, str]] = [
    # (t1, 1): exact numbers and NULL, the same insert delivered twice -> one row as sent.
    (SQL_TOPIC, 1, message("c", 1000, after=acct(1, "one", price=raw("1.50"), note=None))),
    (SQL_TOPIC, 1, message("c", 1000, after=acct(1, "one", price=raw("1.50"), note=None))),
    # (t1, 2): the newer update (partition 2) arrives before the older insert -> update wins.
    (SQL_TOPIC, 2, message("u", 2050, before=acct(2, "two"), after=acct(2, "two v2"))),
    (SQL_TOPIC, 1, message("c", 2000, after=acct(2, "two"))),
    # (t1, 3): insert, delete, then an older update delivered late on another partition -> gone.
    (SQL_TOPIC, 1, message("c", 3000, after=acct(3, "three"))),
    (SQL_TOPIC, 1, message("d", 3002, before=acct(3, "three"))),
    (SQL_TOPIC, 2, message("u", 3001, before=acct(3, "three"), after=acct(3, "late"))),
    # (t1, 4) -> (t1, 40): a key update -> only id 40 remains.
    (SQL_TOPIC, 1, message("c", 4000, after=acct(4, "four"))),
    (SQL_TOPIC, 1, message("u", 4001, before=acct(4, "four"), after=acct(40, "forty"))),
    # (t1, 5): a column delete: after lacks email -> email is NULL, not the old value.
    (SQL_TOPIC, 1, message("c", 5000, after=acct(5, "five", email="five@example.com"))),
    (
        SQL_TOPIC,
        1,
        message("u", 5001, before=acct(5, "five", email="five@example.com"), after=acct(5, "5")),
    ),
    # (t1, 6): a snapshot row, then an update -> the update; (t1, 7): a snapshot row only.
    (SQL_TOPIC, 2, message("u", 6001, before=acct(6, "six"), after=acct(6, "six v2"))),
    (SQL_TOPIC, 1, message("r", 6000, after=acct(6, "six"))),
    (SQL_TOPIC, 1, message("r", 7000, after=acct(7, "seven"))),
    # (t1, 8): same source.ts_ms, payload.ts_ms decides (the update, on the lower partition).
    (SQL_TOPIC, 1, message("u", 8000, payload_ms=8010, before=acct(8, "8"), after=acct(8, "8b"))),
    (SQL_TOPIC, 2, message("c", 8000, payload_ms=8005, after=acct(8, "8"))),
    # table unkeyed, no declared key: all columns identify the row.
    (SQL_TOPIC, 1, message("c", 100, table="unkeyed", after={"a": 1, "b": "x"})),
    (
        SQL_TOPIC,
        1,
        message("u", 101, table="unkeyed", before={"a": 1, "b": "x"}, after={"a": 1, "b": "y"}),
    ),
    (SQL_TOPIC, 1, message("c", 102, table="unkeyed", after={"a": 2, "b": "z", "c": "q"})),
    (
        SQL_TOPIC,
        1,
        message(
            "u",
            103,
            table="unkeyed",
            before={"a": 2, "b": "z", "c": "q"},
            after={"a": 2, "b": "z"},
        ),
    ),
    # HBase: user1 put, then its f_age cell deleted -> f_age NULL.
    (
        HBASE_TOPIC,
        1,
        message("c", 1000, table="profiles", after=hbase("user1", f_name="lucky", f_age="7")),
    ),
    (
        HBASE_TOPIC,
        1,
        message(
            "u",
            1001,
            table="profiles",
            before=hbase("user1", f_name="lucky", f_age="7"),
            after=hbase("user1", f_name="lucky"),
        ),
    ),
    # user2: a binary value (a long) stays base64; a binary row key \x00\x01 too.
    (HBASE_TOPIC, 1, message("c", 1100, table="profiles", after=hbase("user2", f_count=LONG_42))),
    (HBASE_TOPIC, 2, message("c", 1200, table="profiles", after=hbase(b"\x00\x01", f_name="bin"))),
    # user3: put then row delete -> gone.
    (HBASE_TOPIC, 2, message("c", 1300, table="profiles", after=hbase("user3", f_name="x"))),
    (HBASE_TOPIC, 2, message("d", 1301, table="profiles", before=hbase("user3", f_name="x"))),
]

# (value or None for a Kafka NULL value, value_base64 or None, expected reason) on SQL_TOPIC
# partition 3.
BROKEN: list[tuple[str | None, str | None, str]] = [
    ("not json at all", None, "invalid_json"),
    ('{"payload": {"op": "c"', None, "invalid_json"),
    ("[1, 2]", None, "not_an_object"),
    (None, None, "empty_value"),
    (None, base64.b64encode(b"\xff\xfe{}").decode(), "invalid_utf8"),
    ('{"schema": {}}', None, "missing_required_field"),
    (message("x", 9000, after=acct(9, "x")), None, "unknown_op"),
    (message("C", 9001, after=acct(9, "x")), None, "unknown_op"),
    (message("c", 9002, after=acct(9, "x"), table=None), None, "missing_required_field"),
    (message("c", None, after=acct(9, "x")), None, "missing_required_field"),
    (message("c", 9003), None, "missing_required_field"),
    (message("d", 9004), None, "missing_required_field"),
    (message("c", 9005, after={"id": 9, "name": "no tenant"}), None, "missing_key_column"),
    (message("c", 9006, after=acct(9, "x"), source={"ts_ms": "later"}), None, "invalid_field_type"),
    (
        message("c", 9007, table="profiles", after={"ROW": b64("u9"), "f_name": "not base64!"}),
        None,
        "invalid_field_type",
    ),
]

EXPECTED_ACCOUNTS = {
    '{"id":"1","tenant":"t1"}': {
        "tenant": "t1",
        "id": "1",
        "name": "one",
        "price": "1.50",
        "note": None,
    },
    '{"id":"2","tenant":"t1"}': {"tenant": "t1", "id": "2", "name": "two v2"},
    '{"id":"40","tenant":"t1"}': {"tenant": "t1", "id": "40", "name": "forty"},
    '{"id":"5","tenant":"t1"}': {"tenant": "t1", "id": "5", "name": "5", "email": None},
    '{"id":"6","tenant":"t1"}': {"tenant": "t1", "id": "6", "name": "six v2"},
    '{"id":"7","tenant":"t1"}': {"tenant": "t1", "id": "7", "name": "seven"},
    '{"id":"8","tenant":"t1"}': {"tenant": "t1", "id": "8", "name": "8b"},
}
EXPECTED_NOKEY = {
    '{"a":"1","b":"y"}': {"a": "1", "b": "y"},
    '{"a":"2","b":"z","c":null}': {"a": "2", "b": "z", "c": None},
}
EXPECTED_PROFILES = {
    '{"ROW":"user1"}': {"ROW": "user1", "f_name": "lucky", "f_age": None},
    '{"ROW":"user2"}': {"ROW": "user2", "f_count": "AAAAAAAAACo="},
    '{"ROW":"AAE="}': {"ROW": "AAE=", "f_name": "bin"},
}


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    offsets = Offsets()
    lines = [
        dump_line(topic, partition, offsets(topic, partition), value, timestamp=1700000000000)
        for topic, partition, value in CHANGES
    ]
    for value, value_b64, _reason in BROKEN:
        offset = offsets(SQL_TOPIC, 3)
        lines.append(
            dump_line(SQL_TOPIC, 3, offset, value, timestamp=1700000000000, value_base64=value_b64)
        )
    return lines


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).


def cross_topic_case(format_name: str) -> xt.Case:
    return xt.Case(_cross_topic_messages, xt.TABLE, "id", "name", 2)


def _cross_topic_messages(side: str) -> list[str | bytes]:
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    source = {"db": xt.DB, "namespace": xt.DB}
    return [
        message("c", xt.T, after=inserted, table=xt.TABLE, source=source),
        message("u", xt.T + 1000, before=inserted, after=updated, table=xt.TABLE, source=source),
    ]


def fault_matrix(format_: str) -> fm.FaultMatrix:
    def message(ts: Any, row: dict[str, Any] | None, *, op: Any = "c", **source: Any) -> bytes:
        payload = {
            "op": op,
            "ts_ms": fm.T_MS + 5,
            "before": None,
            "after": row,
            "source": {
                "version": "v1.0",
                "db": fm.PREFIX,
                "namespace": fm.PREFIX,
                "table": format_,
                "ts_ms": ts,
                **source,
            },
        }
        return fm.duplicate_column(fm.json_bytes({"schema": {}, "payload": payload}))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(fm.T_MS + seq, row)

    faults = [
        fm.Fault("unknown op", message(fm.T_MS + 9, fm.GOOD_ROWS[1], op="x"), "unknown_op", "x"),
        fm.Fault(
            "key column missing",
            message(fm.T_MS + 9, {"note": "no id", "amount": fm.raw("1")}),
            "missing_key_column",
            "id",
        ),
        fm.Fault(
            "op is a number", message(fm.T_MS + 9, fm.GOOD_ROWS[1], op=1), "invalid_field_type"
        ),
        fm.Fault(
            "source time of 60 digits",
            message(fm.raw(fm.SIXTY_DIGITS), fm.GOOD_ROWS[1]),
            "invalid_field_value",
            "ts_ms",
        ),
        fm.Fault(
            "source time is text",
            message("yesterday", fm.GOOD_ROWS[1]),
            "invalid_field_type",
            "ts_ms",
        ),
    ]
    return fm.FaultMatrix(good, faults)


def number_form_image(format_name: str, raw: bytes) -> dict[str, str | None]:
    """The row values the decoder reads from one insert (column names lower case)."""
    row = lindorm_decoder.decode_one(raw)
    assert row["decode_error"] is None, row["decode_error_detail"]
    return {name.lower(): text for name, text in row["after_image"]}


def schema_changes(format_name: str) -> evolution.SchemaChanges:
    """Lindorm sends no DDL."""
    return evolution.SchemaChanges([], [], typed=False)


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN, on partition 3 of the SQL topic: the last lines of the dump."""
    where = f"kafka_topic = '{SQL_TOPIC}' and kafka_partition = 3"
    return conformance.broken_at_end(where, dump_lines(), BROKEN)


# No truncate: Lindorm sends no truncate or DDL message, row changes only.
truncates = None
