"""Unit tests of the simulator encoder lindorm_debezium (no Spark): the hand-made history of
tests/dbt_models/formats/alibaba_history.py (every op and every logical type) goes through the
project's Python decoder and comes back with no decode error, the right ops and images equal to
the encoder's ``value_text``; the topic is registered, and the keyless tables' keys declared."""

from __future__ import annotations

import base64
import datetime as dt
import json

from cdc_lakehouse.formats.lindorm import encoder_lindorm_debezium as lindorm_debezium
from cdc_lakehouse.formats.lindorm.decoder import decode_one as decode_lindorm
from cdc_lakehouse.tools.simulate.history import History
from tests.dbt_models.formats.alibaba_history import (
    EDGE,
    KINDS,
    PLAIN,
    SIM_TABLES,
    check_scale_and_encodings,
    check_topics_are_registered,
    declared_keys,
    history,
    image,
    pairs,
)


def test_value_texts_pin_units_and_encodings():
    col = {c.name: c for c in KINDS.columns}
    ld = lindorm_debezium.value_text
    # Connect Date: days; Connect Timestamp: ms
    assert ld(col["day"], dt.date(1969, 12, 31)) == "-1"
    assert ld(col["at"], dt.datetime(1970, 1, 1, 0, 0, 1)) == "1000"
    check_scale_and_encodings(ld)
    assert lindorm_debezium.source_type(col["day"]) == "int32 (org.apache.kafka.connect.data.Date)"


def test_lindorm_sql_messages_round_trip_through_the_decoder():
    hist = history()
    messages = lindorm_debezium.encode(hist, "sim")
    decoded = [decode_lindorm(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected = []
    for event in hist.row_changes:
        before = image(lindorm_debezium, event.table, event.before)
        after = image(lindorm_debezium, event.table, event.after)
        if event.op in ("insert", "snapshot"):
            expected.append(("c", None, after))
        elif event.op == "delete":
            expected.append(("d", before, None))
        elif event.moves_key:  # Lindorm upserts by key: a key change is delete + insert
            expected += [("d", before, None), ("c", None, after)]
        else:
            expected.append(("u", before, after))
    got = [(d["op_code"], pairs(d["before_image"]), pairs(d["after_image"])) for d in decoded]
    assert got == expected
    assert all(d["table_kind"] == "sql" for d in decoded)
    first = decoded[0]
    assert (first["source_database"], first["source_schema"], first["source_table"]) == (
        "ld-sim",
        "shop",
        "kinds",
    )
    assert (first["source_ts_ms"], first["payload_ts_ms"]) == (1_700_000_000_000, 1_700_000_000_008)
    assert dict(first["column_types"]) == {
        c.name: lindorm_debezium.source_type(c) for c in KINDS.columns
    }
    # NULL columns are left out of the message (no cell) and completed by the schema
    null_update = decoded[5]  # t5: every column but id set to NULL
    assert null_update["removed_columns"] == [c for c in PLAIN if c != "id"]
    assert b'"name":null' not in messages[5].value


def test_lindorm_without_schema_and_with_snapshot_reads():
    hist = history()
    messages = lindorm_debezium.encode(hist, "sim", include_schema=False, snapshot_op="r")
    decoded = [decode_lindorm(m.value) for m in messages]
    assert decoded[0]["op_code"] == "r" and decoded[0]["schema_declared"] is False
    # without a schema a NULL set by an update is still NULL: the before image names it
    assert pairs(decoded[5]["after_image"])["name"] is None


def test_lindorm_hbase_tables_are_base64_with_row_and_family_columns():
    hist = history()
    messages = lindorm_debezium.encode(hist, "sim", hbase_tables=frozenset({"kinds"}))
    kinds_messages = [m for m in messages if b'"table":"kinds"' in m.value]
    decoded = [decode_lindorm(m.value) for m in kinds_messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    assert all(d["table_kind"] == "hbase" for d in decoded)
    raw = json.loads(kinds_messages[0].value)["payload"]["after"]
    assert next(iter(raw)) == "ROW" and base64.b64decode(raw["ROW"]) == b"\x00\x00\x00\x01"
    assert base64.b64decode(raw["f_name"]) == b""
    expected = {
        lindorm_debezium.hbase_column_name(KINDS, c.name): lindorm_debezium.hbase_value_text(
            c, PLAIN[c.name]
        )
        for c in KINDS.columns
    }
    assert pairs(decoded[0]["after_image"]) == expected
    edge = pairs(decoded[1]["after_image"])
    assert edge["f_name"] == EDGE["name"]  # UTF-8 text comes back as text
    assert edge["f_blob"] == "/wD+gA=="  # non-UTF-8 bytes stay base64
    assert (
        edge["f_amount"]
        == base64.b64encode(
            b"\x00\x00\x00\x0a" + (12345678901234567890123456781234567890).to_bytes(16, "big")
        ).decode()
    )
    assert edge["f_flag"] == "AA=="
    # HBase NULL = no cell; the schema completes it
    assert pairs(decoded[3]["after_image"])["f_name"] is None


def test_every_topic_of_the_simulator_is_registered_with_its_format():
    check_topics_are_registered("lindorm_debezium")


def test_tables_whose_messages_carry_no_key_have_declared_keys():
    declared = declared_keys()
    for table in SIM_TABLES:
        keys = "|".join(table.key_columns) or None
        assert declared.get(("sim.lindorm_debezium", table.name)) == keys
    assert lindorm_debezium.topics(History(SIM_TABLES), "sim") == ["sim.lindorm_debezium"]
