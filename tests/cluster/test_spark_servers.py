"""Spark's Thrift and Connect servers on a lake, started by the project's command with the one
Spark configuration (cdc_lakehouse.runtime.spark_server): over JDBC (the wheel's beeline) a Delta
table is created and described as Delta - the jars of spark.jars are loaded - and the Connect server
listens on its port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.spark_server import spark_home
from tests.ingest.test_ingest_job import reap_group

PROJECT_DIR = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 240


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.fixture
def server(tmp_path: Path):
    """``start(name) -> port``: the server running on a lake of its own; stopped after."""
    procs: list[subprocess.Popen[bytes]] = []
    env = {**os.environ, "CDC_LAKE_DIR": str(tmp_path / "lake"), "SPARK_LOCAL_IP": "127.0.0.1"}

    def start(name: str) -> int:
        port = _free_port()
        log = (tmp_path / f"{name}.log").open("wb")
        command = [
            sys.executable,
            "-m",
            "cdc_lakehouse.runtime.spark_server",
            name,
            "--port",
            str(port),
        ]
        proc = subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        procs.append(proc)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _listening(port):
            assert proc.poll() is None, (tmp_path / f"{name}.log").read_text()[-3000:]
            assert time.monotonic() < deadline, f"{name} server not up in {START_TIMEOUT_S} s"
            time.sleep(1)
        return port

    yield start
    for proc in procs:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        finally:
            reap_group(proc.pid)


def test_the_thrift_server_serves_delta_tables_over_jdbc(server) -> None:
    port = server("thrift")
    queries = "create table t using delta as select 1 as x; describe detail t; select x from t;"
    beeline = subprocess.run(
        [
            str(spark_home() / "bin" / "beeline"),
            "-u",
            f"jdbc:hive2://127.0.0.1:{port}",
            "--silent=true",
            "-e",
            queries,
        ],
        env={**os.environ, "SPARK_HOME": str(spark_home())},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert beeline.returncode == 0, beeline.stdout + beeline.stderr
    assert "| delta " in beeline.stdout, beeline.stdout


def test_the_connect_server_listens(server) -> None:
    assert _listening(server("connect"))
