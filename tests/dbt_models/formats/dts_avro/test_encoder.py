"""The simulator's DTS Avro encoder (``dts_avro``) on the hand-made DTS history
(tests/dbt_models/formats/dts_history.py: every op and every logical type, edge values
included): it round-trips through the project's Python decoder with no error, the right ops,
and images equal to the encoder's ``value_text`` of the logical values (partial images:
exactly the changed columns plus what the format always sends)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from cdc_lakehouse.formats.dts_avro import decoder as avro_decoder
from cdc_lakehouse.formats.dts_avro import encoder_dts_avro as dts_avro
from cdc_lakehouse.tools.simulate.history import Heartbeat, History, RowChange, Truncate
from tests.dbt_models.formats.dts_history import (
    ALL,
    HISTORY,
    check_one_rows_changes_share_a_kafka_key,
    check_topics_are_registered,
    image_texts,
)


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
                    "before_image": image_texts(dts_avro, table, event.before, before_names),
                    "after_image": image_texts(dts_avro, table, event.after, after_names),
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


# --- shared by the DTS encoders (tests/dbt_models/formats/dts_history.py) ---------------


def test_topics_are_registered() -> None:
    check_topics_are_registered("dts_avro")


def test_one_rows_changes_share_a_kafka_key() -> None:
    check_one_rows_changes_share_a_kafka_key(
        "dts_avro"
    )  # ROW_B: insert, partial update, NULL update
