"""The hand-made history of the DTS encoders' tests (dts_avro, dts_shareplex_json,
dts_canal_json: tests/dbt_models/formats/<staging_folder>/test_encoder.py), with every op and
every logical type (edge values included), and the checks every DTS encoder passes on it."""

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

REPO = Path(__file__).resolve().parents[3]

ALL = TableSpec(
    database="fixture",
    schema=None,
    name="all_types",
    columns=(
        Column("id", "int", nullable=False),
        Column("big", "bigint"),
        Column("amount", "decimal", precision=38, scale=10),
        Column("ratio", "double"),
        Column("flag", "boolean"),
        Column("name", "string", length=64),
        Column("note", "string"),
        Column("code", "binary", length=16),
        Column("blob", "binary"),
        Column("day", "date"),
        Column("at", "timestamp"),
    ),
    key_columns=("id",),
)
PAIR = TableSpec(
    database="fixture",
    schema=None,
    name="pairs",
    columns=(
        Column("k1", "bigint", nullable=False),
        Column("k2", "int", nullable=False),
        Column("label", "string", length=20),
    ),
    key_columns=("k1", "k2"),
)
LOG = TableSpec(
    database="fixture",
    schema=None,
    name="log",
    columns=(Column("message", "string"), Column("n", "int")),
)

ROW_A: Row = {
    "id": 1,
    "big": 9_223_372_036_854_775_807,
    "amount": Decimal("1234567890123456789012345678.1234567890"),
    "ratio": 1e-5,
    "flag": True,
    "name": "中文 ✓ 😀 Ünïcödé",
    "note": "x" * 20_000,
    "code": b"\xff\xfe\x00\x80",
    "blob": b"",
    "day": dt.date(1, 1, 1),
    "at": dt.datetime(1969, 12, 31, 23, 59, 59, 999_000),
}
ROW_B: Row = {
    "id": 2,
    "big": -9_223_372_036_854_775_808,
    "amount": Decimal("0E-10"),
    "ratio": -0.0,
    "flag": False,
    "name": "",
    "note": 'line1\nline2\t"quoted" \\ \u0000',
    "code": bytes(range(16)),
    "blob": bytes(range(256)),
    "day": dt.date(9999, 12, 31),
    "at": dt.datetime(1900, 1, 1),
}
ROW_A2: Row = {
    **{k: v for k, v in ROW_A.items()},
    "big": 0,
    "amount": Decimal("-0.0000000001"),
    "ratio": 1.5e300,
    "flag": False,
    "name": "updated",
    "note": "short",
    "code": b"\x00",
    "blob": "é".encode("latin-1"),
    "day": dt.date(1969, 7, 20),
    "at": dt.datetime(2038, 1, 19, 3, 14, 8, 123_000),
}
ROW_B_PARTIAL: Row = {**ROW_B, "ratio": 0.1}
ROW_B_NULLS: Row = {**ROW_B_PARTIAL, **{c: None for c in ALL.column_names if c != "id"}}
PAIR_1: Row = {"k1": 10, "k2": 1, "label": "a"}
PAIR_1_MOVED: Row = {"k1": 10, "k2": 2, "label": "a"}
PAIR_3: Row = {"k1": 30, "k2": 3, "label": None}
LOG_1: Row = {"message": "started", "n": 1}
LOG_2: Row = {"message": "started", "n": 2}
LOG_3: Row = {"message": "stopped", "n": 3}


def _txn(sequence: int, *events: RowChange | Truncate, snapshot: bool = False) -> Transaction:
    return Transaction(
        transaction_id=f"tx{sequence}",
        sequence=sequence,
        commit_time_ms=1_700_000_000_000 + 1_500 * sequence,
        events=events,
        is_snapshot=snapshot,
    )


def _ins(table: TableSpec, row: Row, op: str = "insert") -> RowChange:
    return RowChange(table, op, None, row)  # type: ignore[arg-type]


HISTORY = History(
    tables=(ALL, PAIR, LOG),
    items=(
        _txn(1, _ins(ALL, ROW_A, "snapshot"), _ins(PAIR, PAIR_1, "snapshot"), snapshot=True),
        # multi-row statements: two inserts into ALL / three into LOG
        _txn(2, _ins(ALL, ROW_B), _ins(LOG, LOG_1), _ins(LOG, LOG_2), _ins(LOG, LOG_3)),
        _txn(3, RowChange(ALL, "update", ROW_A, ROW_A2)),  # full update (every column)
        _txn(4, RowChange(ALL, "update", ROW_B, ROW_B_PARTIAL)),  # partial (one column)
        _txn(5, RowChange(ALL, "update", ROW_B_PARTIAL, ROW_B_NULLS)),  # set NULL
        Heartbeat(sequence=6, commit_time_ms=1_700_000_009_100),
        _txn(7, RowChange(PAIR, "update", PAIR_1, PAIR_1_MOVED), _ins(PAIR, PAIR_3)),  # PK update
        _txn(8, RowChange(ALL, "delete", ROW_A2, None), RowChange(LOG, "delete", LOG_2, None)),
        _txn(9, Truncate(LOG)),
        _txn(10, RowChange(PAIR, "update", PAIR_3, {**PAIR_3, "label": "c"})),
    ),
)


def image_texts(module: Any, table: TableSpec, row: Row | None, names: tuple[str, ...]) -> Any:
    if row is None:
        return None
    return {name: module.value_text(table.column(name), row[name]) for name in names}


def events_of(history: History) -> list[tuple[Transaction, RowChange | Truncate]]:
    return [(t, e) for t in history.transactions for e in t.events]


def check_topics_are_registered(name: str) -> None:
    """Every topic the encoder ``name`` writes is in the example registry, with its format."""
    module = ENCODERS[name]
    assert name == module.FORMAT
    with (REPO / "sample_data" / "seeds" / "cdc_example_topics.csv").open(newline="") as handle:
        registry = {row["topic"]: row for row in csv.DictReader(handle)}
    for topic in module.topics(HISTORY, "sim"):
        assert topic in registry
        assert registry[topic]["format"] == name
    assert {m.topic for m in module.encode(HISTORY, "sim")} == set(module.topics(HISTORY, "sim"))


def check_one_rows_changes_share_a_kafka_key(name: str) -> None:
    """The changes of one row (ROW_B: insert, partial update, NULL update) share its key."""
    module = ENCODERS[name]
    keys = {
        m.key for m in module.encode(HISTORY, "sim") if m.key is not None and m.key.startswith(b"2")
    }
    assert keys == {b"2"}
