"""Shared pytest fixtures: one lake directory and one SparkSession for the whole test session.

The SparkSession is created by :func:`cdc_lakehouse.runtime.spark_session.get_spark` with
``CDC_LAKE_DIR`` pointing at a temporary directory, so tests never touch ``./lake``. dbt runs
in-process (``dbtRunner``) and reuses the same session through the ``sparksession`` adapter.
Tests that need their own tables use their own table names or clean up what they create.

Before any test, ``python -m cdc_lakehouse.runtime.spark_session`` (``cdc-class-archive``) writes
the Spark driver JVM's
class-data-sharing archive if there is none (a minute, once per virtual environment), so that
the session's JVM and the commands the tests run start from it.

``metastore`` (module scope) is a PostgreSQL metastore server of the module's own
(:func:`tests.metastore.running_metastore`), for the tests of a shared metastore.

``make test`` runs the tests in two pytest-xdist workers (``-n 2 --dist loadscope``), each
with its own SparkSession, lake and temporary directory; tests/xdist_groups.py keeps together
what shares a fixture and starts the longest work first.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.markers import mark_unit_tests, only_unit_tests
from tests.xdist_groups import GroupScheduling, run_order

PROJECT_DIR = Path(__file__).resolve().parents[1]
# The tests run on the examples (the bundled sample's and the tests' topics, declared keys and
# typed gold models, sample_data/): switched on before any dbt parse, Spark session or
# registry read of the session (cdc_lakehouse.runtime.settings.examples_setting, dbt_project.yml).
os.environ["CDC_EXAMPLES"] = "true"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``unit`` marker on the tests that need no Spark, JVM, dbt, broker or metastore
    (:mod:`tests.markers`; before ``-m unit`` selects on it), then the longest work first
    (:func:`tests.xdist_groups.run_order`): with two workers, the last long group does not
    start when the other worker is nearly done. A stable sort: the tests of one group keep
    their file order."""
    mark_unit_tests(items)
    items.sort(key=lambda item: run_order(item.nodeid))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadscope`` (``make test``) sends each :func:`tests.xdist_groups.group` whole
    to one worker, in collection order."""
    if config.getvalue("dist") != "loadscope":
        return None
    config.option.loadscopereorder = False
    return GroupScheduling(config, log)


@pytest.fixture(scope="session")
def project_dir() -> Path:
    """The repository root (dbt project directory)."""
    return PROJECT_DIR


@pytest.fixture(scope="session", autouse=True)
def jvm_class_archive(request: pytest.FixtureRequest) -> None:
    """The driver JVM's class archive of the default configuration, written once if missing
    (:mod:`cdc_lakehouse.runtime.jvm_class_archive`); not when only ``unit`` tests run."""
    if only_unit_tests(request.session):
        return
    subprocess.run(
        [sys.executable, "-m", "cdc_lakehouse.runtime.spark_session"],
        cwd=PROJECT_DIR,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )


@pytest.fixture(scope="session")
def lake_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh ``CDC_LAKE_DIR`` for the test session (set in the environment)."""
    lake = tmp_path_factory.mktemp("lake")
    previous = os.environ.get("CDC_LAKE_DIR")
    os.environ["CDC_LAKE_DIR"] = str(lake)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")
    yield lake
    if previous is None:
        os.environ.pop("CDC_LAKE_DIR", None)
    else:
        os.environ["CDC_LAKE_DIR"] = previous


@pytest.fixture(scope="session")
def spark(lake_dir: Path):
    """The one SparkSession of the test session. It loads the bench's AutoCDC target catalog
    too (class path ``autocdc``, ``CDC_SPARK_EXTRA_JARS``; tests/unit/test_bench_autocdc.py)."""
    from cdc_lakehouse.runtime.jars import JarsMissingError, class_path
    from cdc_lakehouse.runtime.spark_session import get_spark

    try:
        extra = ",".join(str(jar) for jar in class_path("autocdc"))
    except JarsMissingError:
        extra = ""  # the AutoCDC test says what is missing
    os.environ.setdefault("CDC_SPARK_EXTRA_JARS", extra)
    session = get_spark()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An Apache Kafka broker (KRaft, one node, from the jars ``make install`` resolved:
    :class:`cdc_lakehouse.tools.kafka.broker.LocalBroker`) on a free loopback port for the whole
    test session, its data in a temporary directory; yields its bootstrap servers
    ``127.0.0.1:PORT``. Stopped (and its data removed) when the session ends; if pytest is
    killed, the broker dies with it. Its log: ``<pytest tmp>/kafka0/broker.log``."""
    from cdc_lakehouse.tools.kafka.broker import LocalBroker

    log = tmp_path_factory.mktemp("kafka") / "broker.log"
    with LocalBroker(log=log) as broker:
        yield broker.bootstrap_servers


@pytest.fixture(scope="module")
def metastore() -> Iterator[dict[str, str]]:
    """A running PostgreSQL metastore server for the module (each module its own: a lake's
    databases live in it); yields its ``CDC_METASTORE_*`` variables."""
    from tests.metastore import running_metastore

    with running_metastore() as env:
        yield env
