"""The local Apache Kafka broker (:mod:`cdc_lakehouse.tools.kafka.broker`): what a user of ``make
kafka-broker``, ``make demo-kafka`` and the tests notices: it answers, logs to its file, stops
cleanly, says in one line why it did not start, and does not outlive a killed parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.jars import JarsMissingError
from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.tools.kafka.broker import LocalBroker, failure_cause, free_port, main
from tests.kafka.helpers import create_topics

PROJECT_DIR = Path(__file__).resolve().parents[2]

BIND_FAILURE = """\
[2026-12-01 22:52:24,388] ERROR Exiting Kafka due to fatal exception during startup. (kafka.Kafka$)
java.lang.RuntimeException: Received a fatal error while waiting for the Acceptors
\tat kafka.server.BrokerServer.startup(BrokerServer.scala:500)
Caused by: java.lang.RuntimeException: Unable to start acceptor for PLAINTEXT
\tat kafka.network.DataPlaneAcceptor.start(SocketServer.scala:100)
Caused by: org.apache.kafka.common.KafkaException: Socket server failed to bind to \
127.0.0.1:9: Address already in use.
Caused by: java.net.BindException: Address already in use
\tat java.base/sun.nio.ch.Net.bind0(Native Method)
\t... 9 more
[2026-12-01 22:52:24,390] INFO shutting down (kafka.server.BrokerServer)
"""


def alive(pid: int) -> bool:
    """Is ``pid`` a live process (not gone, not a zombie)?"""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_failure_cause_is_the_most_telling_line_of_the_log() -> None:
    assert failure_cause(BIND_FAILURE) == (
        "Socket server failed to bind to 127.0.0.1:9: Address already in use."
    )
    assert failure_cause('Exception in thread "main" java.lang.RuntimeException: bad id\n') == (
        "bad id"
    )
    assert failure_cause("Error: Could not find or load main class kafka.Kafka\n") == (
        "Error: Could not find or load main class kafka.Kafka"
    )
    assert failure_cause("[x] INFO starting\nsomething odd\n") == "something odd"
    assert failure_cause("") == "no output"


def test_missing_jars_say_run_make_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDC_JARS_DIR", str(tmp_path))
    with pytest.raises(JarsMissingError, match="run make install"):
        LocalBroker().start()
    assert main(["--port", str(free_port())]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "make install" in err


def test_a_taken_port_stops_the_start_with_one_line_and_leaves_nothing(
    kafka_broker: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = int(kafka_broker.rsplit(":", 1)[1])
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    broker = LocalBroker(port=port)
    with pytest.raises(ConfigError) as failed:
        broker.start()
    message = str(failed.value)
    assert message == (
        f"the Kafka broker on 127.0.0.1:{port} exited with code 1 on start: Socket server "
        f"failed to bind to 127.0.0.1:{port}: Address already in use."
    )
    assert broker.pid is None and list(tmp_path.iterdir()) == []  # its temp dir is gone


def test_start_answers_stop_reaps_and_removes_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with LocalBroker() as broker:
        pid = broker.pid
        assert pid is not None and alive(pid)
        assert os.getpgid(pid) == pid  # a process group of its own
        (data,) = tmp_path.iterdir()
        create_topics(broker.bootstrap_servers, ["b.ready"], partitions=1)  # takes topics at once
        log = (data / "broker.log").read_text()
        assert "Kafka Server started" in log
    assert not alive(pid)
    assert list(tmp_path.iterdir()) == []


def test_the_broker_command_logs_to_its_file_and_dies_with_its_parent(tmp_path: Path) -> None:
    """``python -m cdc_lakehouse.tools.kafka.broker`` SIGKILLed: its JVM does not linger."""
    ready, log = tmp_path / "ready", tmp_path / "broker.log"
    port = free_port()
    command = [sys.executable, "-m", "cdc_lakehouse.tools.kafka.broker", "--port", str(port)]
    command += ["--data-dir", str(tmp_path / "data"), "--log", str(log), "--ready-file", str(ready)]
    proc = subprocess.Popen(
        command,
        cwd=PROJECT_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not ready.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the broker did not start in 180 s"
            time.sleep(0.2)
        assert ready.read_text() == f"127.0.0.1:{port}\n"
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
        (jvm,) = (int(pid) for pid in children)
        assert alive(jvm)
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=30)
        deadline = time.monotonic() + 30
        while alive(jvm) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not alive(jvm), "the broker outlived the process that started it"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    # the terminal got one line; the broker's own log went to its file
    assert out.splitlines() == [
        f"kafka: Apache Kafka 4.2.0 (KRaft) listening on 127.0.0.1:{port}; data in "
        f"{tmp_path / 'data'}, log {log}"
    ]
    assert err == ""
    assert "Kafka Server started" in log.read_text()
