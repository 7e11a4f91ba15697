"""Offset decisions of the Kafka source without a broker: new partitions, retention
(offsets that no longer exist: Tansu 0.6 has no DeleteRecords, so this is tested here), read
limits, the checkpoint's offsets log, and option parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc_lakehouse.ingest.cli import _kafka_error_in
from cdc_lakehouse.ingest.kafka_offsets import plan_end_offsets, resolve_begin
from cdc_lakehouse.ingest.kafka_stream import select_topics
from cdc_lakehouse.ingest.offsets import batch_ranges, last_committed_offsets
from cdc_lakehouse.kafka.client import MissingOffsetsError, consumer_config, parse_properties
from cdc_lakehouse.settings import ConfigError

A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def test_resolve_begin_new_partition_retention_fail_and_skip() -> None:
    assert resolve_begin(A0, {}, 5, "fail") == (5, 0)  # new partition: earliest
    assert resolve_begin(A0, {A0: 7}, 5, "fail") == (7, 0)
    assert resolve_begin(A0, {A0: 5}, 5, "fail") == (5, 0)
    assert resolve_begin(A0, {A0: 2}, 5, "skip") == (5, 3)
    with pytest.raises(
        MissingOffsetsError,
        match=r"a partition 0: the checkpoint continues at "
        r"offset 2 but the broker's first offset is 5: 3 offset\(s\)",
    ):
        resolve_begin(A0, {A0: 2}, 5, "fail")


def test_plan_end_offsets_caps_never_moves_back_and_keeps_quiet_partitions_out() -> None:
    start = {A0: 10, B0: 4}
    begin = {A0: 10, A1: 0, B0: 4}
    target = {A0: 20, A1: 3, B0: 4}
    assert plan_end_offsets(begin, target, start) == {A0: 20, A1: 3, B0: 4}
    assert plan_end_offsets(begin, target, start, 12) == {A0: 20, A1: 2, B0: 4}
    assert plan_end_offsets(begin, target, start, 4) == {A0: 14, B0: 4}
    assert plan_end_offsets(begin, {A0: 8}, start) == {A0: 10, B0: 4}  # never backwards
    assert plan_end_offsets({A0: 10, B0: 4}, {A0: 10, B0: 4}, start) == start  # no new data
    # skipped offsets move the start forward even without records (or budget)
    assert plan_end_offsets({A0: 15}, {A0: 15}, {A0: 10}, 0) == {A0: 15}


def write_entry(checkpoint: Path, log: str, batch: int, offsets: dict | None) -> None:
    (checkpoint / log).mkdir(parents=True, exist_ok=True)
    body = "v1\n{}" if offsets is None else f"v1\n{{}}\n{json.dumps(offsets)}"
    (checkpoint / log / str(batch)).write_text(body)


def test_checkpoint_offsets_log(tmp_path: Path) -> None:
    assert last_committed_offsets(tmp_path) is None
    write_entry(tmp_path, "offsets", 0, {"a": {"0": 3}})
    write_entry(tmp_path, "offsets", 1, {"a": {"0": 5, "1": 2}})
    write_entry(tmp_path, "commits", 0, None)
    assert last_committed_offsets(tmp_path) == {A0: 3}
    assert batch_ranges(tmp_path, 0) == ({}, {A0: 3})
    assert batch_ranges(tmp_path, 1) == ({A0: 3}, {A0: 5, A1: 2})
    assert batch_ranges(tmp_path, 2) is None


def test_options_topics_properties_and_errors_from_spark_text() -> None:
    assert select_topics(["a", "b"], None, "reg") == ("a", "b")
    assert select_topics(["a", "b"], ["b", "b"], "reg") == ("b",)
    with pytest.raises(ConfigError, match="'c' not in reg"):
        select_topics(["a", "b"], ["c"], "reg")
    props = parse_properties(["security.protocol=SASL_SSL", "sasl.password=a=b"])
    assert props == {"security.protocol": "SASL_SSL", "sasl.password": "a=b"}
    with pytest.raises(ConfigError, match="use key=value"):
        parse_properties(["=x"])
    conf = consumer_config("h:1", {"enable.auto.commit": "true", "sasl.mechanism": "PLAIN"})
    assert conf["enable.auto.commit"] is False and conf["sasl.mechanism"] == "PLAIN"
    assert conf["socket.timeout.ms"] == 10_000 and conf["group.id"]
    text = "[STREAM_FAILED] x\ncdc_lakehouse.kafka.client.MissingOffsetsError: a partition 0: y\n"
    assert _kafka_error_in(text) == "a partition 0: y"
    assert _kafka_error_in("[STREAM_FAILED] other") is None
