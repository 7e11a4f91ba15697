"""Unit tests of the simulator encoder datahub_tuple (no Spark): the hand-made history of
tests/dbt_models/formats/alibaba_history.py (every op and every logical type) goes through the
project's Python decoder and comes back with no decode error, the right ops and images equal to
the encoder's ``value_text``; the topics are registered, and the keyless tables' keys declared."""

from __future__ import annotations

import datetime as dt

from cdc_lakehouse.formats.datahub_tuple import encoder_datahub_tuple as datahub_tuple
from cdc_lakehouse.formats.datahub_tuple.decoder import decode_one as decode_tuple
from tests.dbt_models.formats.alibaba_history import (
    EDGE,
    KINDS,
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
    tu = datahub_tuple.value_text
    # TIMESTAMP: epoch us
    assert tu(col["at"], EDGE["at"]) == "-2147483647877000"
    assert tu(col["day"], dt.date(1970, 1, 2)) == "86400000000"
    check_scale_and_encodings(tu)
    assert datahub_tuple.source_type(col["at"]) == "TIMESTAMP"


def test_tuple_records_round_trip_through_the_decoder():
    hist = history()
    messages = datahub_tuple.encode(hist, "sim")
    decoded = [decode_tuple(m.value) for m in messages]
    assert [d["decode_error"] for d in decoded] == [None] * len(decoded)
    expected = []
    for event in hist.row_changes:
        before = image(datahub_tuple, event.table, event.before)
        after = image(datahub_tuple, event.table, event.after)
        topic = f"sim.datahub_tuple.{event.table.name}"
        if event.op in ("insert", "snapshot"):
            expected.append((topic, "I", "N", "Y", after))
        elif event.op == "delete":
            expected.append((topic, "D", "Y", "N", before))
        else:
            expected += [(topic, "U", "Y", "N", before), (topic, "U", "N", "Y", after)]
    got = [
        (
            m.topic,
            d["op_code"],
            d["before_image_flag"],
            d["after_image_flag"],
            pairs(d["row_image"]),
        )
        for m, d in zip(messages, decoded, strict=True)
    ]
    assert got == expected  # the truncate and the heartbeat produce nothing
    assert [d["source_table"] for d in decoded][:2] == ["kinds", "kinds"]
    assert decoded[0]["execute_time_ms"] == 1_700_000_000_000
    update = [d for d in decoded if d["op_code"] == "U"]
    assert update[0]["sequence_id"] == update[1]["sequence_id"]
    assert {m.key for m in messages if m.topic.endswith(".events")} == {None}
    assert datahub_tuple.topics(hist, "sim") == [
        "sim.datahub_tuple.kinds",
        "sim.datahub_tuple.lines",
        "sim.datahub_tuple.events",
    ]


def test_every_topic_of_the_simulator_is_registered_with_its_format():
    check_topics_are_registered("datahub_tuple")


def test_tables_whose_messages_carry_no_key_have_declared_keys():
    declared = declared_keys()
    for table in SIM_TABLES:
        keys = "|".join(table.key_columns) or None
        tuple_topic = datahub_tuple.topic_of(table, "sim")
        assert declared.get((tuple_topic, table.name)) == keys
