"""The hand-made history of the encoder tests of DataWorks JSON / DataHub Blob, DataHub Tuple
and Lindorm (tests/dbt_models/formats/<staging_folder>/test_encoder.py of dataworks,
datahub_tuple, lindorm): every op (snapshot, heartbeat, insert, update, update setting NULL,
key update, delete, truncate), a composite-key table and a keyless table, every logical type
with edge values; and the checks those encoders share."""

from __future__ import annotations

import csv
import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    Row,
    RowChange,
    TableSpec,
    Transaction,
    Truncate,
)

EXAMPLE_SEEDS = Path(__file__).resolve().parents[3] / "sample_data" / "seeds"

KINDS = TableSpec(
    "shop",
    None,
    "kinds",
    (
        Column("id", "int", nullable=False),
        Column("big", "bigint"),
        Column("amount", "decimal", precision=38, scale=10),
        Column("ratio", "double"),
        Column("flag", "boolean"),
        Column("name", "string"),
        Column("blob", "binary"),
        Column("day", "date"),
        Column("at", "timestamp"),
    ),
    ("id",),
)
LINES = TableSpec(
    "shop",
    None,
    "lines",
    (Column("order_id", "bigint"), Column("line_no", "int"), Column("note", "string")),
    ("order_id", "line_no"),
)
EVENTS = TableSpec("shop", None, "events", (Column("a", "string"), Column("b", "int")))

EDGE = {
    "id": 2,
    "big": -(2**63),
    "amount": Decimal("1234567890123456789012345678.1234567890"),
    "ratio": 1e-5,
    "flag": False,
    "name": 'héllo 世界 🎉 "quoted" \\ \n tab\t',
    "blob": b"\xff\x00\xfe\x80",
    "day": dt.date(1900, 1, 1),
    "at": dt.datetime(1901, 12, 13, 20, 45, 52, 123000),
}
PLAIN = {
    "id": 1,
    "big": 2**63 - 1,
    "amount": Decimal("-0.0000000001"),
    "ratio": 123456789.0,
    "flag": True,
    "name": "",
    "blob": b"",
    "day": dt.date(2024, 2, 29),
    "at": dt.datetime(2024, 2, 29, 23, 59, 59, 999000),
}


def kinds(**values: Any) -> Row:
    return {**PLAIN, **values}


def change(table: TableSpec, op: str, before: Row | None, after: Row | None) -> RowChange:
    return RowChange(table, op, before, after)  # type: ignore[arg-type]


def history() -> History:
    """Every op: snapshot, heartbeat, insert, update, update setting NULL, key update, delete,
    truncate; a composite-key table and a keyless table; every logical type with edge values."""
    row1 = kinds()
    row1b = kinds(name="x" * 100_000, ratio=0.1, amount=Decimal("0E-10"), flag=False)
    row1_null = {**row1b, **{k: None for k in PLAIN if k != "id"}}
    row2 = dict(EDGE)
    row20 = {**EDGE, "id": 20}
    line = {"order_id": 9_000_000_000, "line_no": 1, "note": "n"}
    line2 = {**line, "line_no": 2, "note": None}
    ev = {"a": "x", "b": 1}
    ev2 = {"a": "x", "b": 2}
    items = [
        Transaction("t1", 1, 1_700_000_000_000, (change(KINDS, "snapshot", None, row1),), True),
        Heartbeat(2, 1_700_000_000_500),
        Transaction(
            "t3",
            3,
            1_700_000_001_000,
            (
                change(KINDS, "insert", None, row2),
                change(LINES, "insert", None, line),
                change(EVENTS, "insert", None, ev),
            ),
        ),
        Transaction("t4", 4, 1_700_000_002_000, (change(KINDS, "update", row1, row1b),)),
        Transaction("t5", 5, 1_700_000_003_000, (change(KINDS, "update", row1b, row1_null),)),
        Transaction(
            "t6",
            6,
            1_700_000_004_000,
            (
                change(KINDS, "update", row2, row20),
                change(LINES, "update", line, line2),
                change(EVENTS, "update", ev, ev2),
            ),
        ),
        Transaction(
            "t7",
            7,
            1_700_000_005_000,
            (change(KINDS, "delete", row20, None), change(EVENTS, "delete", ev2, None)),
        ),
        Transaction("t8", 8, 1_700_000_006_000, (Truncate(LINES),)),
    ]
    return History((KINDS, LINES, EVENTS), tuple(items))


def image(encoder: Any, table: TableSpec, row: Row | None) -> dict[str, str | None] | None:
    if row is None:
        return None
    return {c.name: encoder.value_text(c, row[c.name]) for c in table.columns}


def pairs(decoded: list[tuple[str, str | None]] | None) -> dict[str, str | None] | None:
    return None if decoded is None else dict(decoded)


def check_scale_and_encodings(value_text: Any) -> None:
    """What every one of these encoders' ``value_text`` shares: decimals keep their scale,
    never an exponent; binary is base64; booleans are ``false`` / ``true``; NULL is None."""
    col = {c.name: c for c in KINDS.columns}
    assert value_text(col["amount"], Decimal("0E-10")) == "0.0000000000"
    assert value_text(col["blob"], b"\xff\x00") == "/wA="
    assert value_text(col["flag"], False) == "false"
    assert value_text(col["name"], None) is None


SIM_TABLES = (
    TableSpec("shop", None, "customers", (Column("customer_id", "int"),), ("customer_id",)),
    TableSpec(
        "shop",
        None,
        "orders",
        (Column("order_id", "bigint"), Column("line_no", "int")),
        ("order_id", "line_no"),
    ),
    TableSpec("shop", None, "audit_log", (Column("event", "string"),)),
)


def check_topics_are_registered(*names: str) -> None:
    """Every topic the encoders ``names`` write for :data:`SIM_TABLES` is in the example
    registry (sample_data/seeds/cdc_example_topics.csv) with its format."""
    with (EXAMPLE_SEEDS / "cdc_example_topics.csv").open(encoding="utf-8") as handle:
        registry = {row["topic"]: row["format"] for row in csv.DictReader(handle)}
    hist = History(SIM_TABLES)
    for name in names:
        encoder = ENCODERS[name]
        assert name == encoder.FORMAT
        for topic in encoder.topics(hist, "sim"):
            assert registry.get(topic) == name, topic


def declared_keys() -> dict[tuple[str, str], str]:
    """(topic, source table) -> key columns of the example declared keys
    (sample_data/seeds/cdc_example_declared_keys.csv)."""
    with (EXAMPLE_SEEDS / "cdc_example_declared_keys.csv").open(encoding="utf-8") as handle:
        return {(r["topic"], r["source_table"]): r["key_columns"] for r in csv.DictReader(handle)}
