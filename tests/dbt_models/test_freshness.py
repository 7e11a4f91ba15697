"""Freshness (issue 22): silver.source_freshness with its two data tests, and `dbt source
freshness` on bronze.kafka_records, on the session lake.

The lake holds the topics of freshness_cases.py: one that sends only heartbeats (newest at
NEWEST_HEARTBEAT) and a registered one that never sent anything. Every dbt command below pins
"now" (var cdc_freshness_now) - the fixtures' event times are old - and narrows the data tests
to the topics under test (var cdc_freshness_topics). The commands differ only in vars read at
run time, so they share one parsed manifest (a change of vars makes dbt parse the whole
project again).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.formats.registry import load_registry
from tests.dbt_models.freshness_cases import HEARTBEATS_TOPIC, NEWEST_HEARTBEAT, SILENT_TOPIC

WARN_AFTER_S = 60
ERROR_AFTER_S = 120
NODE_TESTS = ("source_freshness_warn_after", "source_freshness_error_after")
HEARTBEAT_TIME = NEWEST_HEARTBEAT.strftime("%Y-%m-%d %H:%M:%S")


@pytest.fixture(scope="module")
def manifest(built_lake, run_dbt) -> Any:
    """The parsed project, for every command of this module (see the module docstring)."""
    return run_dbt("parse").result


def build_freshness(
    spark, run_dbt: Callable, manifest: Any, after_heartbeat_s: int, topics: list[str]
) -> dict[str, Any]:
    """`dbt build -s source_freshness` with "now" pinned ``after_heartbeat_s`` seconds after the
    newest heartbeat and the data tests on ``topics``: the data tests' dbt statuses and
    failure counts, and the view's rows by (grain, topic)."""
    now = NEWEST_HEARTBEAT + timedelta(seconds=after_heartbeat_s)
    dbt_vars = {
        "cdc_freshness_now": now.strftime("%Y-%m-%d %H:%M:%S"),
        "cdc_freshness_warn_after_s": WARN_AFTER_S,
        "cdc_freshness_error_after_s": ERROR_AFTER_S,
        "cdc_freshness_topics": topics,
    }
    result = run_dbt(
        "build",
        "--select",
        "source_freshness",
        "--vars",
        json.dumps(dbt_vars),
        expect_success=False,
        manifest=manifest,
    )
    assert result.exception is None, result.exception
    tests = {
        r.node.name: (str(r.status), r.failures)
        for r in result.result.results
        if r.node.resource_type == "test"
    }
    rows = spark.sql(
        """
        select grain, kafka_topic, is_registered, is_monitored, source_table,
            cast(newest_event_time as string) as newest_event_time,
            cast(newest_heartbeat_time as string) as newest_heartbeat_time,
            cast(measured_at as string) as measured_at, lag_s, freshness_status
        from silver.source_freshness
        """
    ).collect()
    by_key: dict[tuple[str, str], Any] = {}
    for row in rows:
        if row.grain == "topic":
            assert (row.grain, row.kafka_topic) not in by_key, row
            by_key[(row.grain, row.kafka_topic)] = row
    return {"tests": tests, "rows": rows, "topics": by_key}


@pytest.fixture(scope="module")
def fresh(spark, run_dbt, manifest) -> dict[str, Any]:
    """30 s after the newest heartbeat: below both thresholds."""
    return build_freshness(spark, run_dbt, manifest, 30, [HEARTBEATS_TOPIC])


@pytest.fixture(scope="module")
def warned(spark, run_dbt, manifest) -> dict[str, Any]:
    """90 s after: past the warn threshold (60 s), below the error threshold (120 s)."""
    return build_freshness(spark, run_dbt, manifest, 90, [HEARTBEATS_TOPIC])


@pytest.fixture(scope="module")
def errored(spark, run_dbt, manifest) -> dict[str, Any]:
    """150 s after, the silent topic monitored too: both past the error threshold."""
    return build_freshness(spark, run_dbt, manifest, 150, [HEARTBEATS_TOPIC, SILENT_TOPIC])


def test_the_view_measures_against_the_current_utc_time(spark, built_lake):
    # as the session's `dbt build` left it: no var, so current_timestamp() when read (this
    # test comes first in the file: the fixtures below rebuild the view with a pinned now)
    skew = spark.sql(
        "select max(abs(unix_seconds(measured_at) - unix_seconds(current_timestamp())))"
        " from silver.source_freshness"
    ).first()[0]
    assert skew is not None and skew <= 5


def test_every_registry_topic_has_one_topic_row(fresh, project_dir: Path):
    registry = set(load_registry(project_dir=project_dir))
    registered = {topic for (_, topic), row in fresh["topics"].items() if row.is_registered}
    assert registered == registry
    assert {row.measured_at for row in fresh["rows"]} == {
        (NEWEST_HEARTBEAT + timedelta(seconds=30)).strftime("%Y-%m-%d %H:%M:%S")
    }


def test_a_heartbeat_only_topic_is_fresh(fresh):
    row = fresh["topics"][("topic", HEARTBEATS_TOPIC)]
    assert (row.newest_event_time, row.newest_heartbeat_time) == (None, HEARTBEAT_TIME)
    assert (row.lag_s, row.freshness_status, row.is_monitored) == (30.0, "pass", True)
    # it has no table (heartbeats name none), and the data tests pass on it
    assert not [
        r for r in fresh["rows"] if r.kafka_topic == HEARTBEATS_TOPIC and r.grain != "topic"
    ]
    assert fresh["tests"] == {name: ("pass", 0) for name in NODE_TESTS}


def test_a_silent_topic_is_stale(fresh, errored):
    row = fresh["topics"][("topic", SILENT_TOPIC)]
    assert (row.newest_event_time, row.newest_heartbeat_time, row.lag_s) == (None, None, None)
    # stale at the worst configured level, though not monitored here (is_monitored)
    assert (row.freshness_status, row.is_monitored) == ("error", False)
    # monitored, it fails the build (with the heartbeat topic, past the error threshold)
    assert errored["topics"][("topic", SILENT_TOPIC)].is_monitored


def test_a_table_takes_the_heartbeats_of_its_topic(fresh):
    # datahub.sample.yunshi_db (sample dump): a heartbeat newer than table tableName's changes
    tables = {
        r.source_table: r
        for r in fresh["rows"]
        if r.grain == "table" and r.kafka_topic == "datahub.sample.yunshi_db"
    }
    topic = fresh["topics"][("topic", "datahub.sample.yunshi_db")]
    assert tables["tableName"].newest_heartbeat_time == topic.newest_heartbeat_time
    assert tables["tableName"].newest_event_time == "2020-05-24 10:14:29"
    assert tables["tableName"].lag_s == topic.lag_s  # measured from the newer heartbeat


def test_the_data_tests_warn_past_the_warn_threshold(warned):
    row = warned["topics"][("topic", HEARTBEATS_TOPIC)]
    assert (row.lag_s, row.freshness_status) == (90.0, "warn")
    assert warned["tests"] == {
        "source_freshness_warn_after": ("warn", 1),
        "source_freshness_error_after": ("pass", 0),
    }


def test_the_data_tests_fail_past_the_error_threshold(errored):
    row = errored["topics"][("topic", HEARTBEATS_TOPIC)]
    assert (row.lag_s, row.freshness_status) == (150.0, "error")
    # one failing row per monitored topic: the heartbeat topic (late) and the silent one
    assert errored["tests"] == {
        "source_freshness_warn_after": ("warn", 2),
        "source_freshness_error_after": ("fail", 2),
    }


@pytest.mark.parametrize(
    ("after_load", "status"),
    [(timedelta(minutes=10), "pass"), (timedelta(hours=2), "warn"), (timedelta(days=2), "error")],
)
def test_dbt_source_freshness_of_bronze(spark, run_dbt, manifest, after_load, status):
    # _bronze__sources.yml: loaded_at_field ingested_at, warn after 1 hour, error after 1 day
    newest = spark.sql("select cast(max(ingested_at) as string) from bronze.kafka_records").first()[
        0
    ]
    now = datetime.fromisoformat(newest) + after_load
    result = run_dbt(
        "source",
        "freshness",
        "--vars",
        json.dumps({"cdc_freshness_now": now.isoformat(sep=" ")}),
        expect_success=False,
        manifest=manifest,
    )
    assert result.exception is None, result.exception
    (source,) = [r for r in result.result.results if r.node.resource_type == "source"]
    assert (source.node.name, str(source.status)) == ("kafka_records", status)
    assert source.age == pytest.approx(after_load.total_seconds(), abs=0.001)
