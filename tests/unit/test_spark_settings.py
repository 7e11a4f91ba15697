"""The ``CDC_SPARK_*`` settings: what each accepts, and what a bad value does to the commands.

- In-process: :func:`cdc_lakehouse.runtime.spark_master.check_master_url` and the checks of the
  driver memory, shuffle partitions, UI switch and executors' memory and cores
  (:mod:`cdc_lakehouse.runtime.settings`), and the Spark configuration a good value gives.
- Subprocesses (what a user runs): ``python -m ingest``, ``python -m cdc_lakehouse.tools.summary``
  and ``dbt build`` with a bad value exit 2 with the one line naming the variable and what it
  accepts, before any JVM starts and before the lake is created. Before these checks each
  value reached Spark: a 12-line Java stack trace (``bogus://x``), the JVM's "Invalid maximum
  heap size" (``3gb``), 21-27 lines of ``SparkContext`` errors (``100m``, ``yes``,
  ``local[0]``), each followed by the ingest job's "unexpected ... error" line.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.settings import ConfigError, load_settings
from cdc_lakehouse.runtime.spark_master import MasterUnreachableError, check_master_url
from cdc_lakehouse.runtime.spark_session import check_spark_settings, spark_conf

PROJECT_DIR = Path(__file__).resolve().parents[2]
DBT = str(Path(sys.executable).with_name("dbt"))

MASTER_ACCEPTS = "use local, local[N], local[*], local[N,F], spark://HOST:PORT, yarn or k8s://"
BAD_SETTINGS = [
    ("CDC_SPARK_MASTER", "bogus://x", f"is not a Spark master URL: {MASTER_ACCEPTS}"),
    ("CDC_SPARK_MASTER", "local[0]", "is not a Spark master URL"),
    ("CDC_SPARK_MASTER", "localhost", "is not a Spark master URL"),
    ("CDC_SPARK_DRIVER_MEMORY", "lots", "is not a JVM memory size Spark accepts: use a whole"),
    ("CDC_SPARK_DRIVER_MEMORY", "3gb", "the unit k, m, g or t, at least 512m"),
    ("CDC_SPARK_DRIVER_MEMORY", "100m", "at least 512m (e.g. 512m, 3g; default 3g)"),
    ("CDC_SPARK_SHUFFLE_PARTITIONS", "0", "is not a positive integer: use a whole number >= 1"),
    ("CDC_SPARK_SHUFFLE_PARTITIONS", "abc", "(default 8)"),
    ("CDC_SPARK_UI", "yes", "is not true or false: use true or false (default false)"),
]
"""``(variable, bad value, part of its message)``."""


# --------------------------------------------------------------------------- in-process


@pytest.mark.parametrize(
    "master",
    [
        "local",
        "local[1]",
        "local[16]",
        "local[*]",
        "local[2,3]",
        "local[*, 4]",
        "spark://h:7077",
        "spark://a:7077,b:7078",
        "yarn",
        "k8s://https://api.example:6443",
        "k8s://api.example:6443",
        "k8s://http://127.0.0.1:8001",
    ],
)
def test_master_urls_spark_accepts_pass(master: str) -> None:
    check_master_url(master)


@pytest.mark.parametrize(
    "master",
    [
        "bogus://x",
        "localhost",
        "local[0]",
        "local[]",
        "local[-1]",
        "local[2,0]",
        "local[ 2 ]",
        "local[2,3,4]",
        "LOCAL[2]",
        "yarn-client",
        "mesos://h:5050",
        "k8s://",
        "k8s://ftp://h",
        "spark://h",
        "sc://h:15002",
    ],
)
def test_master_urls_spark_refuses_are_one_line(master: str) -> None:
    with pytest.raises(MasterUnreachableError) as err:
        check_master_url(master)
    message = str(err.value)
    assert message.startswith(f"CDC_SPARK_MASTER={master} is not a")
    assert "\n" not in message


@pytest.mark.parametrize(("name", "value", "message"), BAD_SETTINGS)
def test_bad_spark_settings_are_one_line_naming_the_variable(
    name: str, value: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as err:
        check_spark_settings()
    assert str(err.value).startswith(f"{name}={value!r} " if name != "CDC_SPARK_MASTER" else name)
    assert message in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ConfigError):  # the settings every session is built from, too
        load_settings()
    with pytest.raises(ConfigError):
        load_settings({name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("CDC_SPARK_EXECUTOR_MEMORY", "2 g"),
        ("CDC_SPARK_EXECUTOR_MEMORY", "256m"),
        ("CDC_SPARK_EXECUTOR_CORES", "0"),
        ("CDC_SPARK_EXECUTOR_CORES", "two"),
    ],
)
def test_bad_executor_settings_stop_a_cluster_master_only(
    name: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, value)
    check_spark_settings()  # local[*]: no executors to size
    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://127.0.0.1:7077")
    with pytest.raises(ConfigError, match=rf"^{name}='{value}' is not a"):
        check_spark_settings()


def test_good_spark_settings_reach_the_spark_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake = {"CDC_LAKE_DIR": str(tmp_path)}
    for name in ("CDC_SPARK_MASTER", "CDC_SPARK_SHUFFLE_PARTITIONS", "CDC_SPARK_UI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CDC_SPARK_DRIVER_MEMORY", "512M")
    conf = spark_conf(load_settings())  # the process's environment
    assert conf["spark.master"] == "local[*]"
    assert conf["spark.driver.memory"] == "512M"
    assert (conf["spark.sql.shuffle.partitions"], conf["spark.ui.enabled"]) == ("8", "false")
    env = {
        **lake,
        "CDC_SPARK_MASTER": " local[2] ",
        "CDC_SPARK_SHUFFLE_PARTITIONS": " 4 ",
        "CDC_SPARK_UI": "TRUE",
        "CDC_SPARK_DRIVER_MEMORY": "",  # blank: the default
    }
    conf = spark_conf(load_settings(env))
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.driver.memory"] == "3g"
    assert (conf["spark.sql.shuffle.partitions"], conf["spark.ui.enabled"]) == ("4", "true")


# --------------------------------------------------------------------------- commands


COMMANDS = {
    "ingest": [sys.executable, "-m", "ingest", "--dump", "sample_data/dump"],
    "summary": [sys.executable, "-m", "cdc_lakehouse.tools.summary"],
    "dbt build": [DBT, "build", "--project-dir", ".", "--profiles-dir", "."],
}


def run_with(command: str, name: str, value: str, work: Path) -> subprocess.CompletedProcess:
    """``command`` from the project directory with ``name=value`` and a lake of its own."""
    env = dict(os.environ, CDC_LAKE_DIR=str(work / "lake"), **{name: value})
    env.pop("CDC_METASTORE_JDBC_URL", None)
    argv = COMMANDS[command]
    if command == "dbt build":
        argv = [*argv, "--target-path", str(work / "target"), "--log-path", str(work / "logs")]
    return subprocess.run(
        argv, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize(("name", "value", "message"), BAD_SETTINGS)
def test_ingest_with_a_bad_spark_setting_stops_with_one_line(
    name: str, value: str, message: str, tmp_path: Path
) -> None:
    result = run_with("ingest", name, value, tmp_path)
    assert (result.returncode, result.stdout) == (2, ""), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr  # nothing else: no JVM started
    assert result.stderr.startswith(f"error: {name}=") and message in result.stderr
    assert not (tmp_path / "lake").exists()


@pytest.mark.parametrize(
    ("command", "name", "value"),
    [
        ("summary", "CDC_SPARK_UI", "yes"),
        ("dbt build", "CDC_SPARK_MASTER", "bogus://x"),
        ("dbt build", "CDC_SPARK_DRIVER_MEMORY", "3gb"),
    ],
)
def test_summary_and_dbt_with_a_bad_spark_setting_stop_with_one_line(
    command: str, name: str, value: str, tmp_path: Path
) -> None:
    result = run_with(command, name, value, tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    if command == "dbt build":  # dbt prints the error on stdout, under its own two lines
        lines = [line for line in result.stdout.splitlines() if f"{name}=" in line]
        assert len(lines) == 1, result.stdout
        assert "Encountered an error:" in result.stdout
        assert "Configuration Error" in result.stdout
        assert "Traceback" not in result.stdout + result.stderr
    else:
        assert result.stdout == "" and result.stderr.count("\n") == 1, result.stderr
        lines = result.stderr.splitlines()
    assert lines[0].strip().removeprefix("error: ").startswith(f"{name}=")
    assert not (tmp_path / "lake").exists()
