"""The per-stage profile of the bench: Spark's event log (CDC_SPARK_EVENT_LOG_DIR), its jobs
named by the dbt node of their query (the sparksession adapter), read back per stage.

The event log must be on when the JVM starts, so a Spark application of its own runs in a
child process (the test session's shared SparkSession has it off)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_lakehouse.tools.bench import spark_stages

MODEL = "model.cdc_lakehouse.stg_dts_canal__events"
TEST = "test.cdc_lakehouse.column_checks_change_events.2123235004"

# what dbt sends: its query comment, then the SQL
COMMENT = '/* {"app": "dbt", "dbt_version": "1.11.16", "node_id": "%s"} */\n'

APPLICATION = f"""
import json, sys, time
from cdc_lakehouse.runtime.spark_session import get_spark
from dbt.adapters.sparksession.connections import describe_spark_jobs, node_of_query

spark = get_spark()
spark.sql("select 1").collect()  # no dbt node yet
started_ms = int(time.time() * 1000)
model_sql = {COMMENT % MODEL!r} + (
    "create table shuffled using parquet as "
    "select id % 97 as k, count(*) as n from range(200000) group by 1"
)
describe_spark_jobs(node_of_query(model_sql))
spark.sql(model_sql)
test_sql = {COMMENT % TEST!r} + "select sum(n) from shuffled"
describe_spark_jobs(node_of_query(test_sql))
spark.sql(test_sql).collect()
json.dump({{"application_id": spark.sparkContext.applicationId, "started_ms": started_ms,
           "log_dir": spark.conf.get("spark.eventLog.dir")}}, sys.stdout)
"""


@pytest.fixture(scope="module")
def event_log(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A finished Spark application's event log: a table written from a grouped query under
    a model's query comment, then a count under a test's."""
    root = tmp_path_factory.mktemp("event-log")
    env = {
        **os.environ,
        "CDC_LAKE_DIR": str(root / "lake"),
        "CDC_SPARK_EVENT_LOG_DIR": str(root / "events"),
    }
    done = subprocess.run(
        [sys.executable, "-c", APPLICATION], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    application = json.loads(done.stdout.strip().splitlines()[-1])
    path = spark_stages.event_log_file(application["log_dir"], application["application_id"])
    return {"path": path, "started_ms": application["started_ms"]}


def test_the_query_comment_names_the_node():
    from dbt.adapters.sparksession.connections import node_of_query

    assert node_of_query(COMMENT % MODEL + "select 1") == MODEL
    assert node_of_query("select 1") is None
    assert node_of_query('/* {"app": "dbt", "node_id": null} */ select 1') is None


def test_each_stage_is_attributed_to_the_node_whose_query_ran_it(event_log):
    stages = spark_stages.read_stages(event_log["path"], since_ms=event_log["started_ms"])
    nodes = {stage.node for stage in stages}
    assert nodes == {MODEL, TEST}, nodes
    model_stages = [s for s in stages if s.node == MODEL]
    # the grouped write: one stage writes the shuffle, one reads it and writes the table
    assert sum(s.shuffle_write_bytes for s in model_stages) > 0
    assert sum(s.shuffle_read_bytes for s in model_stages) > 0
    assert sum(s.output_bytes for s in model_stages) > 0
    test_stages = [s for s in stages if s.node == TEST]
    assert sum(s.input_records for s in test_stages) == 97  # it read the table's 97 rows
    assert all(s.seconds >= 0 and s.tasks >= 1 for s in stages)
    assert sum(s.executor_run_ms for s in model_stages) > 0


def test_stages_before_a_command_are_left_out(event_log):
    everything = spark_stages.read_stages(event_log["path"])
    assert "" in {stage.node for stage in everything}  # the first query, before any node
    since = spark_stages.read_stages(event_log["path"], since_ms=event_log["started_ms"])
    assert len(since) < len(everything)


def test_the_report_entries_name_the_node_and_the_bytes(event_log):
    stages = spark_stages.read_stages(event_log["path"], since_ms=event_log["started_ms"])
    entries = spark_stages.slowest(stages, top=2)
    assert len(entries) == 2
    assert entries[0]["seconds"] >= entries[1]["seconds"]
    assert {e["node"] for e in entries} <= {"stg_dts_canal__events", "column_checks_change_events"}
    totals = spark_stages.task_seconds_by_node(stages)
    assert set(totals) == {"stg_dts_canal__events", "column_checks_change_events"}
    assert totals["stg_dts_canal__events"] > 0
    text = spark_stages.stage_text(
        {
            "node": "int_row_versions",
            "stage_id": 41,
            "seconds": 3.1,
            "tasks": 8,
            "task_s": 5.2,
            "input_rows": 76260,
            "shuffle_read_mb": 0.0,
            "shuffle_write_mb": 12.0,
            "output_mb": 0.0,
        }
    )
    assert (
        text == "int_row_versions #41 3.10 s (8 tasks, 5.20 s of task time; read 76,260 rows; "
        "shuffle in / out 0.0 / 12.0 MB)"
    )


def test_node_names_of_the_report():
    assert spark_stages.node_name(MODEL) == "stg_dts_canal__events"
    assert spark_stages.node_name(TEST) == "column_checks_change_events"
    singular = "test.cdc_lakehouse.assert_every_bronze_record_accounted_for"
    assert spark_stages.node_name(singular) == "assert_every_bronze_record_accounted_for"
    assert spark_stages.node_name("") == "(no dbt node)"
    streaming = "ingest_bronze_kafka_records\nid = f1ab\nrunId = ca59\nbatch = 0"
    assert spark_stages.node_name(streaming) == "ingest_bronze_kafka_records"


def test_a_missing_event_log_is_named(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="no event log of local-1 in"):
        spark_stages.event_log_file(tmp_path.as_uri(), "local-1")
