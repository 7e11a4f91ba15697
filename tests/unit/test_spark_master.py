"""CDC_SPARK_MASTER: the check made before the JVM starts, and the settings of a cluster master;
the local cluster's command line where it needs no JVM."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from cdc_lakehouse.runtime import cluster
from cdc_lakehouse.runtime.settings import SparkSettings, load_settings
from cdc_lakehouse.runtime.spark_master import (
    MasterUnreachableError,
    check_master,
    master_conf,
    spark_master,
    standalone_addresses,
)
from cdc_lakehouse.runtime.spark_session import spark_conf


def _closed_port() -> int:
    """A loopback port nobody listens on (bound, then released)."""
    return cluster.free_port()


def test_master_url_default_and_parsing() -> None:
    assert spark_master({}) == "local[*]"
    assert spark_master({"CDC_SPARK_MASTER": " spark://h:7077 "}) == "spark://h:7077"
    assert standalone_addresses("local[2]") == []
    assert standalone_addresses("yarn") == []
    assert standalone_addresses("k8s://https://api:6443") == []
    assert standalone_addresses("spark://a:7077,b:7078") == [("a", 7077), ("b", 7078)]
    assert standalone_addresses("spark://[::1]:7077") == [("::1", 7077)]
    for bad in ("spark://host", "spark://:7077", "spark://h:0", "spark://h:port"):
        with pytest.raises(MasterUnreachableError, match="is not a standalone master URL"):
            standalone_addresses(bad)


def test_only_spark_urls_are_checked() -> None:
    for master in ("local", "local[*]", "yarn", "k8s://https://nowhere.invalid:6443"):
        check_master(master, timeout_s=0.1)


def test_a_refused_or_unresolved_master_is_one_line() -> None:
    port = _closed_port()
    with pytest.raises(MasterUnreachableError) as refused:
        check_master(f"spark://127.0.0.1:{port}")
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"CDC_SPARK_MASTER=spark://127.0.0.1:{port}: no Spark master ")
    assert f"127.0.0.1:{port}: connection refused" in message
    assert "make spark-cluster" in message
    with pytest.raises(MasterUnreachableError, match=r"host nowhere\.invalid does not resolve"):
        check_master("spark://nowhere.invalid:7077")


def test_one_answering_master_of_a_list_is_enough() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        check_master(f"spark://127.0.0.1:{port}")
        check_master(f"spark://127.0.0.1:{_closed_port()},127.0.0.1:{port}")


def test_cluster_settings_only_for_a_cluster_master(tmp_path: Path) -> None:
    assert master_conf(SparkSettings.from_env({})) == {}
    assert master_conf(SparkSettings.from_env({"CDC_SPARK_MASTER": "spark://h:7077"})) == {
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.executor.memory": "2g",
        "spark.pyspark.python": sys.executable,
    }
    env = {
        "CDC_SPARK_MASTER": "yarn",
        "CDC_SPARK_DRIVER_HOST": "10.0.0.5",
        "CDC_SPARK_EXECUTOR_MEMORY": "8g",
        "CDC_SPARK_EXECUTOR_CORES": "4",
        "CDC_SPARK_EXECUTOR_PYTHON": "/opt/cdc/venv/bin/python",
    }
    conf = master_conf(SparkSettings.from_env(env))
    assert conf["spark.driver.host"] == "10.0.0.5"
    assert conf["spark.executor.memory"] == "8g"
    assert conf["spark.executor.cores"] == "4"
    assert conf["spark.pyspark.python"] == "/opt/cdc/venv/bin/python"


def test_spark_conf_carries_the_cluster_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("CDC_LAKE_DIR", str(tmp_path))
    monkeypatch.setenv("CDC_SPARK_MASTER", "spark://127.0.0.1:7077")
    monkeypatch.setenv("CDC_SPARK_EXECUTOR_MEMORY", "1g")
    conf = spark_conf(load_settings())
    assert conf["spark.master"] == "spark://127.0.0.1:7077"
    assert conf["spark.executor.memory"] == "1g"
    assert conf["spark.driver.host"] == "127.0.0.1"
    monkeypatch.delenv("CDC_SPARK_MASTER")
    assert "spark.executor.memory" not in spark_conf(load_settings())


def test_cluster_commands_without_a_cluster(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cluster.main(["status", "--dir", str(tmp_path)]) == 0
    assert "no cluster was started from" in capsys.readouterr().out
    assert cluster.main(["stop", "--dir", str(tmp_path)]) == 0
    assert "stopped nothing" in capsys.readouterr().out
    assert cluster.spark_home().joinpath("bin", "spark-class").is_file()


def test_cluster_start_refuses_a_port_in_use(tmp_path: Path, capsys: pytest.CaptureFixture):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code = cluster.main(["start", "--dir", str(tmp_path), "--port", str(port)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: the master port 127.0.0.1:{port} is in use")
    assert err.count("\n") == 1
    assert not (tmp_path / "logs").exists()  # nothing started
