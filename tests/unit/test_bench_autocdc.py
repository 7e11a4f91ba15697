"""The bench's AutoCDC baseline (Spark Declarative Pipelines' ``create_auto_cdc_flow``, SCD
type 1) runs on change events shaped like ``silver.change_events``, and its comparison with
gold names the differences by class: on a tiny history with a partial update, a delete, a
producer-retry duplicate and a key move, AutoCDC loses the columns the partial image did not
carry and keeps the moved row's old key live, and agrees on the delete and the duplicate."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_lakehouse.tools.bench import report
from cdc_lakehouse.tools.bench.baselines import autocdc
from tests.unit.test_bench_report import _document, _format_result

TOPIC = "sim.autocdc_test"
SOURCE = "autocdc_test.change_events"

# (row_key, before_row_key, op, before_image, after_image, partial, ordering_key, offset)
CHANGES = [
    # A: inserted, then a partial update that carries column a only
    ('{"id":"1"}', None, "insert", None, {"id": "1", "a": "x", "b": "y"}, False, "01", 0),
    ('{"id":"1"}', '{"id":"1"}', "update", {"id": "1"}, {"a": "z"}, True, "02", 1),
    # B: inserted, then deleted
    ('{"id":"2"}', None, "insert", None, {"id": "2", "a": "x"}, False, "01", 2),
    ('{"id":"2"}', None, "delete", {"id": "2", "a": "x"}, None, False, "03", 3),
    # C: inserted, delivered twice (a producer retry at a later offset), then updated
    ('{"id":"3"}', None, "insert", None, {"id": "3", "a": "x"}, False, "01", 4),
    ('{"id":"3"}', None, "insert", None, {"id": "3", "a": "x"}, False, "01", 5),
    (
        '{"id":"3"}',
        '{"id":"3"}',
        "update",
        {"id": "3", "a": "x"},
        {"id": "3", "a": "w"},
        False,
        "04",
        6,
    ),
    # D: inserted, then an update that moves it to key E
    ('{"id":"4"}', None, "insert", None, {"id": "4", "a": "x"}, False, "01", 7),
    (
        '{"id":"5"}',
        '{"id":"4"}',
        "update",
        {"id": "4", "a": "x"},
        {"id": "5", "a": "x"},
        False,
        "05",
        8,
    ),
]
GOLD = {
    # what gold.current_rows holds after CHANGES (docs/architecture.md, models/marts/current_state)
    ("t", '{"id":"1"}'): {"id": "1", "a": "z", "b": "y"},
    ("t", '{"id":"3"}'): {"id": "3", "a": "w"},
    ("t", '{"id":"5"}'): {"id": "5", "a": "x"},
}


def _change_events(spark) -> None:
    """CHANGES as a Delta table of silver.change_events' columns (source_schema NULL, as a
    MySQL source's: AutoCDC refuses NULL keys, the baseline gives '')."""
    rows = [
        {
            "source_format": "dts_canal_json",
            "source_database": "shop",
            "source_schema": None,
            "source_table": "t",
            "row_key": row_key,
            "before_row_key": before_key,
            "op": op,
            "before_image": before,
            "after_image": after,
            "after_image_is_partial": partial,
            # fixed width, then the Kafka coordinates, as the pipeline's ordering keys
            "ordering_key": f"{ordering}:{offset:04d}",
            "event_time": None,
            "source_sequence_id": None,
            "source_scn": None,
            "source_position": ordering,
            "transaction_id": None,
            "kafka_topic": TOPIC,
        }
        for row_key, before_key, op, before, after, partial, ordering, offset in CHANGES
    ]
    schema = (
        "source_format string, source_database string, source_schema string, "
        "source_table string, row_key string, before_row_key string, op string, "
        "before_image map<string,string>, after_image map<string,string>, "
        "after_image_is_partial boolean, ordering_key string, event_time timestamp, "
        "source_sequence_id string, source_scn string, source_position string, "
        "transaction_id string, kafka_topic string"
    )
    spark.sql("create database if not exists autocdc_test")
    spark.createDataFrame(rows, schema).write.mode("overwrite").format("delta").saveAsTable(SOURCE)


def test_classify_names_each_difference_by_its_first_trait() -> None:
    gold = {("t", "a"): {"id": "1", "b": "y"}, ("t", "b"): {"id": "2"}, ("t", "c"): {"id": "3"}}
    rows = {("t", "a"): {"id": "1"}, ("t", "c"): {"id": "3"}, ("t", "old"): {"id": "0"}}
    traits = {("t", "a"): {"redelivery", "partial_image"}, ("t", "old"): {"key_move"}}
    result = autocdc.classify(gold, rows, traits, held_twice=2)
    assert result["equal_rows"] == 1
    by_class = result["by_class"]
    assert set(by_class) == {"partial_image", "key_move", "other", "held_twice"}
    assert (by_class["partial_image"]["values"], by_class["partial_image"]["missing"]) == (1, 0)
    assert by_class["key_move"]["extra"] == 1
    assert by_class["other"]["missing"] == 1  # ("t", "b"): no trait explains it
    assert by_class["held_twice"]["extra"] == 2
    assert result["differing"] == 5
    assert "t:a b: gold 'y', AutoCDC None" in by_class["partial_image"]["examples"][0]


def test_autocdc_differs_from_gold_by_partial_image_and_key_move_only(
    spark, tmp_path: Path
) -> None:
    _change_events(spark)
    try:
        result = autocdc.run(spark, [TOPIC], tmp_path / "pipeline", source_table=SOURCE)
        traits = autocdc.identity_traits(spark, [TOPIC], source_table=SOURCE)
    finally:
        spark.sql(f"drop table if exists {SOURCE}")
    rows = result.baseline.rows
    # the delete applied, the duplicate changed nothing, the partial image replaced the row
    assert rows == {
        ("t", '{"id":"1"}'): {"a": "z"},
        ("t", '{"id":"3"}'): {"id": "3", "a": "w"},
        ("t", '{"id":"4"}'): {"id": "4", "a": "x"},
        ("t", '{"id":"5"}'): {"id": "5", "a": "x"},
    }
    assert result.target_rows == len(rows)
    assert result.baseline.events == len(CHANGES)
    assert result.baseline.seconds > 0
    assert any("COMPLETED" in message for message in result.messages)
    assert traits[("t", '{"id":"1"}')] == {"partial_image"}
    assert traits[("t", '{"id":"3"}')] == {"redelivery"}
    assert traits[("t", '{"id":"4"}')] == traits[("t", '{"id":"5"}')] == {"key_move"}
    compared = autocdc.classify(GOLD, rows, traits, result.target_rows - len(rows))
    assert compared["equal_rows"] == 2
    assert {
        name: (e["missing"], e["extra"], e["values"]) for name, e in compared["by_class"].items()
    } == {"partial_image": (0, 0, 1), "key_move": (0, 1, 0)}


def test_autocdc_still_refuses_a_delta_target(spark, tmp_path: Path) -> None:
    """Why the baseline's target is Spark's in-memory catalog: with Delta 4.4.0 the flow does
    not start. When this fails, Delta's tables support row-level operations: move the target
    to Delta (autocdc.run's delta_target) and drop the test jar."""
    _change_events(spark)
    try:
        with pytest.raises(autocdc.AutoCdcError, match="AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE"):
            autocdc.run(
                spark, [TOPIC], tmp_path / "pipeline", source_table=SOURCE, delta_target=True
            )
    finally:
        spark.sql(f"drop table if exists {SOURCE}")
    assert not spark.catalog.databaseExists(autocdc.DELTA_DATABASE)


def test_autocdc_refuses_no_topics(spark, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one topic"):
        autocdc.run(spark, [], tmp_path)


def test_report_puts_autocdc_beside_silver_to_gold_and_names_the_classes() -> None:
    result = _format_result("dts_canal_json", silver_s=10.0, gold_s=30.0, pyspark_s=8.0)
    result["stages"]["silver_to_gold"]["cpu_seconds"] = 45.0
    compared = autocdc.classify(
        {("t", "a"): {"a": "1", "b": "2"}},
        {("t", "a"): {"a": "1"}},
        {("t", "a"): {"partial_image"}},
    )
    result["autocdc"] = {
        "engine": "x",
        "seconds": 12.0,
        "cpu_seconds": 15.0,
        "events": 1000,
        "events_per_s": 1000 / 12.0,
        "peak_rss_bytes": 2**30,
        "cores": 2,
        "target_rows": 1,
        "equals_gold": compared["differing"] == 0,
        "comparison": compared,
    }
    document = _document([result], [])
    summary = report.summary(document)
    assert summary["autocdc_silver_to_gold_ratio_by_format"] == {
        "dts_canal_json": {"wall": 2.5, "cpu": 3.0}
    }
    assert summary["autocdc_equals_gold"] == {"dts_canal_json": False}
    text = report.markdown(document)
    section = text[text.index("## Spark's AutoCDC") :].splitlines()
    row = next(line for line in section if line.startswith("| dts_canal_json |"))
    # silver -> gold 30 s (45 CPU s) against AutoCDC 12 s (15): 2.50x wall, 3.00x CPU;
    # bronze -> silver + AutoCDC = 22 s
    assert "| 30.0 (45.0) | 12.0 (15.0) | 2.50x, 3.00x | 22.0 | 40.0 | 8.0 | 0; 1 differ |" in row
    assert "| dts_canal_json | partial_image | 0 | 0 | 1 | a change carried a partial" in text
    assert "AutoCDC 12.0 s (differs from gold)" in report.format_line(result)
