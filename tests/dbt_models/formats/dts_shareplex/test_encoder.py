"""The simulator's Shareplex JSON encoder (``dts_shareplex_json``) on the hand-made DTS history
(tests/dbt_models/formats/dts_history.py: every op and every logical type, edge values
included): it round-trips through the project's Python decoder with no error, the right ops,
and images equal to the encoder's ``value_text`` of the logical values (partial images:
exactly the changed columns plus what the format always sends)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from cdc_lakehouse.formats.dts_shareplex import decoder as shareplex_decoder
from cdc_lakehouse.formats.dts_shareplex import encoder_dts_shareplex_json as dts_shareplex_json
from cdc_lakehouse.tools.simulate.encoders._dts_common import oracle_number
from cdc_lakehouse.tools.simulate.history import History, Truncate
from tests.dbt_models.formats.dts_history import (
    ALL,
    HISTORY,
    check_one_rows_changes_share_a_kafka_key,
    check_topics_are_registered,
    events_of,
    image_texts,
)


def _shareplex_expected(history: History) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for _item, event in events_of(history):
        if isinstance(event, Truncate):
            out.append({"op_code": "TRUNCATE", "data_image": None, "key_image": None})
            continue
        table = event.table
        identity = table.key_columns or table.column_names
        m = dts_shareplex_json
        if event.op in ("insert", "snapshot"):
            want = {
                "op_code": "ins",
                "data_image": image_texts(m, table, event.after, table.column_names),
            }
            want["key_image"] = None
        elif event.op == "update":
            want = {
                "op_code": "upd",
                "data_image": image_texts(m, table, event.after, event.changed_columns),
                "key_image": image_texts(m, table, event.before, identity),
            }
        else:
            want = {
                "op_code": "del",
                "data_image": image_texts(m, table, event.before, identity),
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


# --- shared by the DTS encoders (tests/dbt_models/formats/dts_history.py) ---------------


def test_topics_are_registered() -> None:
    check_topics_are_registered("dts_shareplex_json")


def test_one_rows_changes_share_a_kafka_key() -> None:
    check_one_rows_changes_share_a_kafka_key(
        "dts_shareplex_json"
    )  # ROW_B: insert, partial update, NULL update
