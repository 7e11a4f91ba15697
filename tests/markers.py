"""The ``unit`` marker: which tests ``make test-unit`` runs (no Spark, JVM, dbt, broker, metastore).

A test is ``unit`` unless one of these holds:

* it requests (directly or through another fixture) a fixture of :data:`HEAVY_FIXTURES`: the
  SparkSession, the session lake, the Kafka broker, the metastore server, the standalone
  cluster (every fixture of tests/dbt_models/conftest.py builds on ``spark``), or a module's
  own fixture that starts one of them (named ``path::fixture``);
* it carries a marker of :data:`HEAVY_MARKERS` (``dbt``, ``delta``);
* its node id starts with a prefix of :data:`HEAVY_TESTS`: tests that start a JVM, dbt or a
  server in a subprocess of their own, with no fixture to tell.

The rule is applied at collection (:func:`mark_unit_tests`, from tests/conftest.py), so a new
test that uses ``spark`` is left out of ``make test-unit`` without a word; a new test that
starts a JVM in a subprocess of its own belongs in :data:`HEAVY_TESTS` (``make test-unit``
hides Java: such a test fails there instead of hanging or passing by luck).
"""

from __future__ import annotations

import pytest

HEAVY_FIXTURES = frozenset(
    {
        "spark",
        "lake_dir",
        "kafka_broker",
        "metastore",
        "spark_cluster",
        "tests/cluster/test_spark_servers.py::server",
        "tests/ingest/test_busy_metastore.py::holder",
        "tests/unit/test_bench_spark_stages.py::event_log",
    }
)
"""Fixtures that start Spark (the JVM), a Kafka broker, a PostgreSQL metastore or a cluster:
tests/conftest.py's and tests/cluster/conftest.py's by name, a module's own as
``path::fixture``."""

HEAVY_MARKERS = frozenset({"dbt", "delta"})
"""Markers of tests that run dbt on a lake or need the Delta Lake jars."""

HEAVY_TESTS: tuple[str, ...] = (
    "tests/kafka/test_broker.py::test_start_answers_stop_reaps_and_removes_its_data",
    "tests/kafka/test_broker.py::test_the_broker_command_logs_to_its_file_and_dies_with_its_parent",
    # the project's commands against a metastore URL: they load PostgreSQL's JDBC driver
    # (make postgresql-packages, which make test-unit does not install)
    "tests/live/test_shared_metastore.py::test_unreachable_metastore_stops_with_one_line",
    "tests/live/test_shared_metastore.py::test_metastore_of_lakes_in_a_closed_directory",
    "tests/live/test_shared_metastore.py::test_a_cluster_made_in_the_lake_before_stays_in_use",
)
"""Node id prefixes of tests that start a JVM, dbt or a server without a fixture."""


def is_unit(item: pytest.Item) -> bool:
    """Whether the test needs none of Spark, the JVM, dbt, a broker, a metastore."""
    module = item.nodeid.split("::", 1)[0]
    for name in getattr(item, "fixturenames", ()):
        if name in HEAVY_FIXTURES or f"{module}::{name}" in HEAVY_FIXTURES:
            return False
    if any(item.get_closest_marker(name) for name in HEAVY_MARKERS):
        return False
    return not item.nodeid.startswith(HEAVY_TESTS)


def mark_unit_tests(items: list[pytest.Item]) -> None:
    """Adds the ``unit`` marker to every test :func:`is_unit` accepts."""
    for item in items:
        if is_unit(item):
            item.add_marker(pytest.mark.unit)


def only_unit_tests(session: pytest.Session) -> bool:
    """Whether every test the session runs is ``unit`` (``make test-unit``, ``pytest -m unit``,
    or a run of unit test files): then nothing starts a JVM."""
    return all(item.get_closest_marker("unit") for item in session.items)
