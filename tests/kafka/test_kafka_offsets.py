"""The Kafka options of the ingest job without a broker: where a partition's next batch
begins (retention), Spark's source options, client properties for the two clients, the
checkpoint's offsets logs, and Spark's data-loss error as one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.tools.kafka.client import (
    MissingOffsetsError,
    consumer_config,
    librdkafka_properties,
    parse_properties,
)
from ingest.cli import _kafka_error_in
from ingest.kafka_stream import (
    KafkaOptions,
    check_checkpoint_topics,
    check_options,
    initial_offsets,
    nothing_read_yet,
    resolve_begin,
    select_topics,
    source_options,
)
from ingest.offsets import batch_ranges, last_committed_offsets

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


def test_spark_source_options_and_properties_spark_sets_itself() -> None:
    options = KafkaOptions(
        "h:1",
        properties={"security.protocol": "SASL_SSL", "bootstrap.servers": "other:2"},
        starting_offsets="latest",
        on_missing_offsets="skip",
    )
    assert source_options(options, ["a", "b"], 500) == {
        "kafka.bootstrap.servers": "h:1",
        "subscribe": "a,b",
        "startingOffsets": "latest",
        "failOnDataLoss": "false",
        "includeHeaders": "true",
        "kafka.security.protocol": "SASL_SSL",
        "maxOffsetsPerTrigger": "500",
    }
    assert source_options(KafkaOptions("h:1"), ["a"], None)["failOnDataLoss"] == "true"
    assert "maxOffsetsPerTrigger" not in source_options(KafkaOptions("h:1"), ["a"], None)
    check_options(options)
    for key in ("auto.offset.reset", "enable.auto.commit", "value.deserializer"):
        with pytest.raises(ConfigError, match=f"--kafka-property {key}: Spark's Kafka source"):
            check_options(KafkaOptions("h:1", properties={key: "x"}))


def test_properties_for_the_two_clients() -> None:
    props = parse_properties(["security.protocol=SASL_SSL", "sasl.password=a=b"])
    assert props == {"security.protocol": "SASL_SSL", "sasl.password": "a=b"}
    with pytest.raises(ConfigError, match="use key=value"):
        parse_properties(["=x"])
    # Java client names are for Spark's source; librdkafka keeps the names it has
    both = {
        "sasl.mechanism": "PLAIN",
        "sasl.username": "u",
        "sasl.jaas.config": "org.apache.kafka.common.security.plain.PlainLoginModule required;",
        "ssl.truststore.location": "/x.jks",
        "sasl.login.callback.handler.class": "x.Y",
    }
    assert librdkafka_properties(both) == {"sasl.mechanism": "PLAIN", "sasl.username": "u"}
    conf = consumer_config("h:1", {"enable.auto.commit": "true", "sasl.mechanism": "PLAIN"})
    assert conf["enable.auto.commit"] is False and conf["sasl.mechanism"] == "PLAIN"
    assert conf["socket.timeout.ms"] == 10_000 and conf["group.id"]
    assert select_topics(["a", "b"], None, "reg") == ("a", "b")
    assert select_topics(["a", "b"], ["b", "b"], "reg") == ("b",)
    with pytest.raises(ConfigError, match="'c' not in reg"):
        select_topics(["a", "b"], ["c"], "reg")


def write_entry(checkpoint: Path, log: str, batch: int, offsets: dict | None) -> None:
    (checkpoint / log).mkdir(parents=True, exist_ok=True)
    body = "v1\n{}" if offsets is None else f"v1\n{{}}\n{json.dumps(offsets)}"
    (checkpoint / log / str(batch)).write_text(body)


def test_checkpoint_offsets_logs(tmp_path: Path) -> None:
    assert last_committed_offsets(tmp_path) is None
    assert initial_offsets(tmp_path) is None and not nothing_read_yet(tmp_path)
    write_entry(tmp_path, "offsets", 0, {"a": {"0": 3}})
    write_entry(tmp_path, "offsets", 1, {"a": {"0": 5, "1": 2}})
    write_entry(tmp_path, "commits", 0, None)
    assert last_committed_offsets(tmp_path) == {A0: 3}
    assert batch_ranges(tmp_path, 0) == ({}, {A0: 3})
    assert batch_ranges(tmp_path, 1) == ({A0: 3}, {A0: 5, A1: 2})
    assert batch_ranges(tmp_path, 2) is None
    # Spark's Kafka source keeps the query's initial offsets in sources/0/0
    (tmp_path / "sources" / "0").mkdir(parents=True)
    (tmp_path / "sources" / "0" / "0").write_bytes(b'\x00v1\n{"a":{"0":3}}')
    assert initial_offsets(tmp_path) == {A0: 3}
    assert nothing_read_yet(tmp_path)
    write_entry(tmp_path, "commits", 1, None)
    assert not nothing_read_yet(tmp_path)


def test_spark_data_loss_error_is_one_line() -> None:
    text = (
        "[STREAM_FAILED] Query [id = 1] terminated with exception: Job aborted due to stage "
        "failure: org.apache.spark.SparkException: [KAFKA_DATA_LOSS.COULD_NOT_READ_OFFSET_RANGE] "
        "Some data may have been lost because they are not available in Kafka any more;\n"
        "either the data was aged out ...\nReason:\nCould not read records in offset [10, 20) "
        "for topic partition k-0\nwith consumer group spark-kafka-source-x. SQLSTATE: 22000\n"
        "\tat org.apache.spark..."
    )
    message = _kafka_error_in(text)
    assert message == (
        "Spark's Kafka source stopped: Could not read records "
        "in offset [10, 20) for topic partition k-0 with consumer group "
        "spark-kafka-source-x: records to ingest are no longer on the broker (deleted by "
        "retention, or their topic or partition was deleted). Rerun with --on-missing-offsets "
        "skip to go on from the first offset still there, or drop the table and its "
        "checkpoint to ingest from scratch."
    )
    assert _kafka_error_in("[STREAM_FAILED] other") is None
    # as a Spark 4.2 query reports it (no error class in the text)
    text = (
        "[STREAM_FAILED] Query [id = 3] terminated with exception: Some data may have been "
        "lost because they are not available in Kafka any more;\neither ...\nReason: "
        "Partitions Set(t-1, t-0) have been deleted. SQLSTATE: XXKST\n=== Streaming Query ==="
    )
    message = _kafka_error_in(text)
    assert message is not None
    assert message.startswith("Spark's Kafka source stopped: Partitions Set(t-1, t-0) have ")


def test_a_checkpoint_keeps_its_topics(tmp_path: Path) -> None:
    check_checkpoint_topics(["a"], tmp_path)  # no checkpoint yet
    write_entry(tmp_path, "offsets", 0, {"a": {"0": 3}, "b": {"0": 1}})
    check_checkpoint_topics(["a", "b", "c"], tmp_path)  # topics added: fine
    with pytest.raises(ConfigError, match=r"reads topic\(s\) b too, which this run leaves out"):
        check_checkpoint_topics(["a"], tmp_path)
