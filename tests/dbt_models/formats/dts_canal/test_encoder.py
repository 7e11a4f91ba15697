"""The simulator's DTS encoders (dts_avro, dts_shareplex_json, dts_canal_json) on a hand-made
history with every op and every logical type (edge values included). Avro and Shareplex
round-trip through the project's Python decoders: no error, the right ops, and images equal to
the encoder's ``value_text`` of the logical values (partial images: exactly the changed columns
plus what the format always sends). Canal JSON is decoded in SQL (the exact JSON function of
``stg_dts_canal__events``), so its messages are checked as sent, read with the project's exact
JSON reader: each ``data`` / ``old`` element against the history (the SQL decoding is checked by
that function's tests and the end-to-end pipeline tests, not re-implemented here)."""

from __future__ import annotations

import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.decode.json_text import loads, value_text
from cdc_lakehouse.formats.dts_avro import decoder as avro_decoder
from cdc_lakehouse.formats.dts_avro import encoder_dts_avro as dts_avro
from cdc_lakehouse.formats.dts_canal import encoder_dts_canal_json as dts_canal_json
from cdc_lakehouse.formats.dts_shareplex import decoder as shareplex_decoder
from cdc_lakehouse.formats.dts_shareplex import encoder_dts_shareplex_json as dts_shareplex_json
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.encoders._dts_common import java_double, oracle_number
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

REPO = Path(__file__).resolve().parents[4]

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


def _texts(module: Any, table: TableSpec, row: Row | None, names: tuple[str, ...]) -> Any:
    if row is None:
        return None
    return {name: module.value_text(table.column(name), row[name]) for name in names}


def _changes(history: History) -> list[tuple[Transaction, RowChange | Truncate]]:
    return [(t, e) for t in history.transactions for e in t.events]


# --- DTS Avro ----------------------------------------------------------------------------


def _avro_expected(history: History) -> list[dict[str, Any]]:
    """(operation, table, before, after) of every record, as the module doc describes."""
    out: list[dict[str, Any]] = []
    for item in history.items:
        if isinstance(item, Heartbeat):
            out.append({"operation": "HEARTBEAT"})
            continue
        rows = [e for e in item.events if isinstance(e, RowChange)]
        if rows and not item.is_snapshot:
            out.append({"operation": "BEGIN"})
        minimal = item.sequence % 2 == 1
        for event in item.events:
            if isinstance(event, Truncate):
                out.append({"operation": "DDL", "ddl_text": "TRUNCATE TABLE `log`"})
                continue
            table = event.table
            identity = table.key_columns or table.column_names
            before_names = identity if minimal else table.column_names
            after_names = (
                event.changed_columns if minimal and event.op == "update" else table.column_names
            )
            operation = (
                "INIT" if item.is_snapshot else {"snapshot": "INSERT"}.get(event.op, event.op)
            ).upper()
            out.append(
                {
                    "operation": operation,
                    "source_table": table.name,
                    "before_image": _texts(dts_avro, table, event.before, before_names),
                    "after_image": _texts(dts_avro, table, event.after, after_names),
                }
            )
        if rows and not item.is_snapshot:
            out.append({"operation": "COMMIT"})
    return out


def test_dts_avro_round_trip() -> None:
    messages = dts_avro.encode(HISTORY, "sim")
    decoded = [avro_decoder.decode_one(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected = _avro_expected(HISTORY)
    assert len(decoded) == len(expected)
    for got, want in zip(decoded, expected, strict=True):
        images = {k: dict(got[k]) if got[k] is not None else None for k in want if "image" in k}
        assert {**{k: got[k] for k in want}, **images} == want
    ids = [d["record_id"] for d in decoded]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    # ordering key: (sourceTimestamp, id) follows production order
    keys = [(d["source_timestamp"], d["record_id"]) for d in decoded]
    assert keys == sorted(keys)


def test_dts_avro_record_details() -> None:
    messages = dts_avro.encode(HISTORY, "sim")
    decoded = [avro_decoder.decode_one(m.value) for m in messages]
    first = decoded[0]  # INIT of ALL
    assert first["object_name"] == "fixture.all_types"
    assert first["key_columns"] == ["id"]
    assert dict(first["column_types"]) == {c.name: dts_avro.source_type(c) for c in ALL.columns}
    assert dict(first["column_types"])["amount"] == "NEWDECIMAL"
    assert dict(first["column_types"])["at"] == "DATETIME2"
    assert first["source_type"] == "MySQL"
    log_insert = next(d for d in decoded if d["source_table"] == "log")
    assert log_insert["key_columns"] is None  # no pk_uk_info: every column identifies
    # partial update (minimal image): NONE columns flagged
    partial = [d for d in decoded if d["operation"] == "UPDATE" and d["after_image_is_partial"]]
    # odd transactions are MINIMAL: the full update (3), the NULL update (5), the PK update (7)
    assert [sorted(dict(d["after_image"])) for d in partial] == [
        sorted(set(ALL.column_names) - {"id"}),
        sorted(set(ALL.column_names) - {"id"}),
        ["k2"],
    ]
    assert [dict(d["before_image"]) for d in partial][2] == {"k1": "10", "k2": "1"}
    # Kafka keys: rows keyed by identity, control records unkeyed
    by_op = [(d["operation"], m.key) for d, m in zip(decoded, messages, strict=True)]
    assert all(key is None for op, key in by_op if op in ("BEGIN", "COMMIT", "DDL", "HEARTBEAT"))
    assert messages[0].key == b"1"
    ddl = next(d for d in decoded if d["operation"] == "DDL")
    assert ddl["source_table"] == "log"
    assert [m.sequence for m in messages] == sorted(m.sequence for m in messages)


def test_dts_avro_value_texts() -> None:
    col = ALL.column
    assert dts_avro.value_text(col("amount"), Decimal("0E-10")) == "0.0000000000"
    assert dts_avro.value_text(col("ratio"), 1e-5) == "1e-05"
    assert dts_avro.value_text(col("flag"), True) == "1"
    assert dts_avro.value_text(col("code"), b"\xff\x00") == "/wA="
    assert dts_avro.value_text(col("day"), dt.date(1, 2, 3)) == "0001-02-03"
    assert (
        dts_avro.value_text(col("at"), dt.datetime(1969, 12, 31, 23, 59, 59, 999_000))
        == "1969-12-31 23:59:59.999000"
    )


# --- Shareplex JSON ----------------------------------------------------------------------


def _shareplex_expected(history: History) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _item, event in _changes(history):
        if isinstance(event, Truncate):
            out.append({"op_code": "TRUNCATE", "data_image": None, "key_image": None})
            continue
        table = event.table
        identity = table.key_columns or table.column_names
        m = dts_shareplex_json
        if event.op in ("insert", "snapshot"):
            want = {
                "op_code": "ins",
                "data_image": _texts(m, table, event.after, table.column_names),
            }
            want["key_image"] = None
        elif event.op == "update":
            want = {
                "op_code": "upd",
                "data_image": _texts(m, table, event.after, event.changed_columns),
                "key_image": _texts(m, table, event.before, identity),
            }
        else:
            want = {
                "op_code": "del",
                "data_image": _texts(m, table, event.before, identity),
                "key_image": None,
            }
        out.append(want)
    return out


def test_dts_shareplex_round_trip() -> None:
    messages = dts_shareplex_json.encode(HISTORY, "sim")
    decoded = [shareplex_decoder.decode_one(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected = _shareplex_expected(HISTORY)
    got = [
        {
            "op_code": d["op_code"],
            "data_image": dict(d["data_image"]) if d["data_image"] is not None else None,
            "key_image": dict(d["key_image"]) if d["key_image"] is not None else None,
        }
        for d in decoded
    ]
    assert got == expected
    # ordering key (scn, seq) follows production order; seq / size describe the transaction
    order = [(int(d["scn"]), d["seq"]) for d in decoded]
    assert order == sorted(order) and len(set(order)) == len(order)
    multi = [d for d in decoded if d["size"] == 4]
    assert [d["seq"] for d in multi] == [1, 2, 3, 4]
    assert {d["table_name"] for d in decoded} == {
        "fixture.all_types",
        "fixture.pairs",
        "fixture.log",
    }
    assert decoded[0]["event_time_ms"] == HISTORY.transactions[0].commit_time_ms // 1000 * 1000


def test_dts_shareplex_value_texts() -> None:
    col = ALL.column
    text = dts_shareplex_json.value_text
    assert text(col("amount"), Decimal("12.5000000000")) == "12.5"
    assert text(col("amount"), Decimal("-0E-10")) == "0"
    assert text(col("name"), "") is None  # Oracle: '' is NULL
    assert text(col("code"), b"\xff\x00") == "FF00"
    assert text(col("day"), dt.date(1969, 7, 20)) == "1969-07-20T00:00:00"
    assert text(col("at"), dt.datetime(1900, 1, 1, 0, 0, 0, 5_000)) == "1900-01-01T00:00:00.005"
    assert dts_shareplex_json.source_type(col("amount")) == "NUMBER(38,10)"
    assert oracle_number(Decimal("100.00")) == "100"


# --- Canal JSON --------------------------------------------------------------------------


def _canal_expected(history: History) -> list[dict[str, Any]]:
    """One entry per row of the Canal messages (an element of ``data``; a DDL message is one),
    as the encoder's module doc describes: insert / snapshot (INIT) send the after image in
    ``data`` and no ``old``; an update the whole after image in ``data`` and in ``old`` the
    before values of the changed columns only; a delete the before image in ``data``."""
    out: list[dict[str, Any]] = []
    for _item, event in _changes(history):
        if isinstance(event, Truncate):
            out.append({"type": "TRUNCATE", "isDdl": True, "data": None, "old": None})
            continue
        table = event.table
        names = table.column_names
        m = dts_canal_json
        row = event.before if event.op == "delete" else event.after
        out.append(
            {
                "type": "INIT" if event.op == "snapshot" else event.op.upper(),
                "isDdl": False,
                "data": _texts(m, table, row, names),
                "old": _texts(m, table, event.before, event.changed_columns)
                if event.op == "update"
                else None,
            }
        )
    return out


def _canal_rows(message: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one Canal message as sent: one per element of ``data`` (one for a message
    without ``data``, a DDL), with ``data[i]`` and ``old[i]`` as value texts (or None)."""

    def texts(row: dict[str, Any] | None) -> dict[str, str | None] | None:
        return None if row is None else {k: value_text(v) for k, v in row.items()}

    data, old = message.get("data"), message.get("old")
    if old is not None:
        assert data is not None and len(old) == len(data)  # aligned with data
    return [
        {
            "type": message["type"],
            "isDdl": message["isDdl"],
            "data": texts(data[index]) if data else None,
            "old": texts(old[index]) if old else None,
        }
        for index in range(len(data) if data else 1)
    ]


def test_dts_canal_round_trip() -> None:
    messages = dts_canal_json.encode(HISTORY, "sim")
    sent = [loads(m.value) for m in messages]  # exact JSON: refuses duplicate keys, keeps text
    rows = [row for message in sent for row in _canal_rows(message)]
    assert rows == _canal_expected(HISTORY)
    # the three LOG inserts of transaction 2 are one message (one statement)
    assert [len(_canal_rows(message)) for message in sent][:4] == [1, 1, 1, 3]
    assert sent[3]["table"] == "log"
    ddl = next(message for message in sent if message["isDdl"])
    assert ddl["sql"] == "TRUNCATE TABLE `log`"
    first = sent[0]
    assert first["pkNames"] == ["id"]
    assert first["mysqlType"] == {c.name: dts_canal_json.source_type(c) for c in ALL.columns}
    assert value_text(first["sqlType"]["big"]) == "-5"
    assert next(message for message in sent if message["table"] == "log")["pkNames"] is None
    es = [message["es"] for message in sent]
    assert es == sorted(es)


def test_dts_canal_es_in_seconds() -> None:
    messages = dts_canal_json.encode(HISTORY, "sim", es_in_seconds=True)
    es = [json.loads(m.value)["es"] for m in messages]
    assert all(value % 1000 == 0 for value in es)


def test_dts_canal_value_texts() -> None:
    col = ALL.column
    text = dts_canal_json.value_text
    assert text(col("ratio"), 1e-5) == "1.0E-5"
    assert text(col("ratio"), 1e7) == "1.0E7"
    assert text(col("ratio"), 0.001) == "0.001"
    assert text(col("ratio"), 5e-324) == "4.9E-324"
    assert text(col("amount"), Decimal("0E-10")) == "0.0000000000"
    assert text(col("code"), b"\xff\x00") == "\xff\x00"
    assert text(col("at"), dt.datetime(1969, 12, 31, 23, 59, 59, 999_000)) == (
        "1969-12-31 23:59:59.999"
    )
    assert java_double(-0.0) == "-0.0"


# --- all three ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["dts_avro", "dts_shareplex_json", "dts_canal_json"])
def test_topics_are_registered(name: str) -> None:
    module = ENCODERS[name]
    assert name == module.FORMAT
    with (REPO / "sample_data" / "seeds" / "cdc_example_topics.csv").open(newline="") as handle:
        registry = {row["topic"]: row for row in csv.DictReader(handle)}
    for topic in module.topics(HISTORY, "sim"):
        assert topic in registry
        assert registry[topic]["format"] == name
    assert {m.topic for m in module.encode(HISTORY, "sim")} == set(module.topics(HISTORY, "sim"))


@pytest.mark.parametrize("name", ["dts_avro", "dts_shareplex_json", "dts_canal_json"])
def test_one_rows_changes_share_a_kafka_key(name: str) -> None:
    module = ENCODERS[name]
    keys = {
        m.key for m in module.encode(HISTORY, "sim") if m.key is not None and m.key.startswith(b"2")
    }
    assert keys == {b"2"}  # ROW_B: insert, partial update, NULL update
