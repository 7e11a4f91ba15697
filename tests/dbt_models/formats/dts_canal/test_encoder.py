"""The simulator's DTS Canal JSON encoder (``dts_canal_json``) on the hand-made DTS history
(tests/dbt_models/formats/dts_history.py: every op and every logical type, edge values
included). Canal JSON is decoded in SQL (the exact JSON function of ``stg_dts_canal__events``),
so its messages are checked as sent, read with the project's exact JSON reader: each ``data`` /
``old`` element against the history (the SQL decoding is checked by that function's tests and
the end-to-end pipeline tests, not re-implemented here)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal
from typing import Any

from cdc_lakehouse.decode.json_text import loads, value_text
from cdc_lakehouse.formats.dts_canal import encoder_dts_canal_json as dts_canal_json
from cdc_lakehouse.tools.simulate.encoders._dts_common import java_double
from cdc_lakehouse.tools.simulate.history import History, Truncate
from tests.dbt_models.formats.dts_history import (
    ALL,
    HISTORY,
    check_one_rows_changes_share_a_kafka_key,
    check_topics_are_registered,
    events_of,
    image_texts,
)


def _canal_expected(history: History) -> list[dict[str, Any]]:
    """One entry per row of the Canal messages (an element of ``data``; a DDL message is one),
    as the encoder's module doc describes: insert / snapshot (INIT) send the after image in
    ``data`` and no ``old``; an update the whole after image in ``data`` and in ``old`` the
    before values of the changed columns only; a delete the before image in ``data``."""
    out: list[dict[str, Any]] = []
    for _item, event in events_of(history):
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
                "data": image_texts(m, table, row, names),
                "old": image_texts(m, table, event.before, event.changed_columns)
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


# --- shared by the DTS encoders (tests/dbt_models/formats/dts_history.py) ---------------


def test_topics_are_registered() -> None:
    check_topics_are_registered("dts_canal_json")


def test_one_rows_changes_share_a_kafka_key() -> None:
    check_one_rows_changes_share_a_kafka_key(
        "dts_canal_json"
    )  # ROW_B: insert, partial update, NULL update
