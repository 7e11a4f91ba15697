"""A local Apache Kafka broker for the tests and demos: one KRaft node from the Maven jars.

:class:`LocalBroker` runs the broker that ``make install`` resolved (``jvm/kafka/pom.xml``,
:func:`cdc_lakehouse.runtime.jars.class_path` ``"kafka"``) with the JDK on ``PATH``:

1. writes ``server.properties`` (one node that is broker and controller, ``node.id=1``, a
   ``PLAINTEXT`` listener on ``127.0.0.1:port`` and a ``CONTROLLER`` listener on a free
   loopback port, replication factors 1, no automatic topic creation, no time retention:
   records with old timestamps stay) and a log4j2
   configuration of its own into the data directory;
2. formats the storage (``java -cp <jars>/* kafka.tools.StorageTool format -t <cluster id>
   -c server.properties --ignore-formatted``: a data directory of an earlier run keeps its
   topics);
3. starts ``java -Xmx512m -cp <jars>/* kafka.Kafka server.properties`` in a process group of
   its own, which also dies when the process that started it dies (``PR_SET_PDEATHSIG``:
   SIGKILL), so a killed test run or demo leaves no broker behind;
4. waits until the broker answers a metadata request listing itself (it then takes
   ``CreateTopics``), not merely until the port is open.

The broker's log (log4j2, and whatever the JVM prints) goes to :attr:`LocalBroker.log`, never
to the terminal. The data directory is a temporary directory removed on stop, unless the
caller gives one. Startup is two JVM starts (the format, then the broker, which comes up
in about 2 s on an idle machine): 15-19 s measured on 2 cores at load 15-22;
:data:`READY_TIMEOUT_S` allows for a busier one.

``python -m cdc_lakehouse.tools.kafka.broker [--port 9092] [--data-dir DIR] [--log FILE]
[--ready-file FILE]`` runs one in the foreground until SIGINT / SIGTERM (``make
kafka-broker``; ``make demo-kafka`` waits for the ready file).

Errors: :class:`~cdc_lakehouse.runtime.settings.ConfigError`, one line: the jars missing (run make
install), no ``java`` on ``PATH``, the broker exiting on start (its exit code and the cause
from the end of its log, e.g. ``Socket server failed to bind to 127.0.0.1:9092: Address
already in use.``) or not answering within :data:`READY_TIMEOUT_S`.
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from cdc_lakehouse.runtime.jars import class_path
from cdc_lakehouse.runtime.settings import ConfigError

READY_TIMEOUT_S = 120.0
"""How long :meth:`LocalBroker.start` waits for the broker to answer metadata, seconds (15-19 s
were measured on a loaded 2-core machine)."""
STOP_TIMEOUT_S = 15.0
"""How long :meth:`LocalBroker.stop` waits after SIGTERM before SIGKILL, seconds."""
HEAP = "-Xmx512m"
NODE_ID = 1
_PR_SET_PDEATHSIG = 1

LOG4J2 = """\
# The local broker's logging (cdc_lakehouse.tools.kafka.broker): to standard output, which the
# broker's process writes to its log file.
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
logger.config.name = org.apache.kafka.common.config.AbstractConfig
logger.config.level = WARN
"""

_EXCEPTION_LINE = re.compile(
    r"^(?:Caused by: |Exception in thread \"[^\"]*\" )?"
    r"(?P<type>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:Exception|Error))(?:: (?P<msg>.*))?$"
)

_CLIENT_LOG = logging.getLogger("cdc_lakehouse.tools.kafka.broker.client")
_CLIENT_LOG.addHandler(logging.NullHandler())
_CLIENT_LOG.propagate = False  # connection refused while the broker starts: not for the console


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def java_command() -> str:
    """The ``java`` on ``PATH``.

    Raises:
        ConfigError: there is none.
    """
    java = shutil.which("java")
    if java is None:
        raise ConfigError(
            "java is not on PATH: install a JDK (17 or later; Debian: apt-get install "
            "openjdk-17-jdk-headless), which Spark needs too."
        )
    return java


def new_cluster_id() -> str:
    """A random KRaft cluster id: a UUID as 22 characters of unpadded URL-safe base64, as
    ``kafka-storage random-uuid`` prints (never starting with ``-``)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def server_properties(port: int, controller_port: int, log_dirs: Path) -> str:
    """``server.properties`` of a single KRaft node on loopback (broker and controller)."""
    settings = {
        "process.roles": "broker,controller",
        "node.id": str(NODE_ID),
        "controller.quorum.voters": f"{NODE_ID}@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(log_dirs),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "auto.create.topics.enable": "false",
        # keep every record: a dump's timestamps are often years old, and time retention
        # (7 days by default, active segment included) would delete them minutes after
        # they were produced
        "log.retention.ms": "-1",
        # records up to 16 MiB (the producer's message.max.bytes, cdc_lakehouse.tools.kafka.produce)
        "message.max.bytes": str(16 << 20),
        "replica.fetch.max.bytes": str(16 << 20),
    }
    return "".join(f"{key}={value}\n" for key, value in settings.items())


def failure_cause(log_text: str) -> str:
    """The cause of a failed start from the end of a broker's log: the innermost exception of
    the last exception chain whose message says more than its cause's (``Socket server failed
    to bind to 127.0.0.1:9092: Address already in use.`` rather than ``Address already in
    use``), else the last non-blank line, else ``no output``."""
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    chain: list[str] = []
    for line in reversed(lines):
        match = _EXCEPTION_LINE.match(line)
        if match:
            chain.append(match["msg"] or match["type"])
        elif chain and not line.startswith("at ") and not line.startswith("..."):
            break  # the log line before the last chain: the chain is complete
    if chain:
        chain.reverse()  # outermost first
        cause = chain[-1]
        for outer in reversed(chain[:-1]):
            if cause not in outer:
                break
            cause = outer
        return cause
    return lines[-1] if lines else "no output"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child before exec
    """``preexec_fn``: SIGKILL this process when the thread that started it dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before prctl
        os._exit(1)


@dataclass
class LocalBroker:
    """An Apache Kafka broker (KRaft, one node) on ``127.0.0.1:port``; a context manager.

    Attributes:
        port: the ``PLAINTEXT`` listener's port (0: a free one, chosen on start).
        log: the broker's log file (default: ``broker.log`` in the data directory).
        data_dir: where its configuration, data (``data/``) and default log go; ``None``: a
            new temporary directory, removed on stop.
        ready_timeout_s: see :data:`READY_TIMEOUT_S`.
        cluster_id: the KRaft cluster id of its storage (set by :meth:`start`).

    Start it from the main thread of a process that outlives it: the broker is killed when the
    thread that started it ends.
    """

    port: int = 0
    log: Path | None = None
    data_dir: Path | None = None
    ready_timeout_s: float = READY_TIMEOUT_S
    cluster_id: str | None = field(default=None, init=False)
    _proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _temp_dir: Path | None = field(default=None, repr=False)
    _log_path: Path | None = field(default=None, repr=False)

    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        """The broker JVM's process id while it runs (None before start and after stop)."""
        return self._proc.pid if self._proc is not None else None

    @property
    def log_path(self) -> Path | None:
        """The log file in use (None before start)."""
        return self._log_path

    @property
    def running(self) -> bool:
        """Has the broker been started and not exited?"""
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> LocalBroker:
        """Format the storage, start the broker and wait until it answers metadata.

        Raises:
            JarsMissingError: the broker's jars are not installed (run make install).
            ConfigError: no ``java``; the format or the broker failed (exit code and cause);
                no answer within :attr:`ready_timeout_s`.
        """
        jars = class_path("kafka")
        java = java_command()
        if self.data_dir is None:
            self._temp_dir = Path(tempfile.mkdtemp(prefix="cdc-kafka-"))
            home = self._temp_dir
        else:
            home = self.data_dir.expanduser().resolve()
            home.mkdir(parents=True, exist_ok=True)
        try:
            self._log_path = (self.log or home / "broker.log").expanduser().resolve()
            self._log_path.parent.mkdir(parents=True, exist_ok=True)
            self.port = self.port or free_port()
            controller_port = free_port()
            config = home / "server.properties"
            config.write_text(server_properties(self.port, controller_port, home / "data"))
            log4j = home / "log4j2.properties"
            log4j.write_text(LOG4J2)
            base = [java, HEAP, f"-Dlog4j2.configurationFile={log4j}"]
            base += ["-cp", str(jars[0].parent / "*")]
            self.cluster_id = self._format(base, config, home / "data")
            self._launch([*base, "kafka.Kafka", str(config)])
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _format(self, base: list[str], config: Path, data: Path) -> str:
        """Format the data directory (kept if already formatted); its cluster id."""
        assert self._log_path is not None
        command = [*base, "-XX:TieredStopAtLevel=1", "kafka.tools.StorageTool", "format"]
        command += ["-t", new_cluster_id(), "-c", str(config), "--ignore-formatted"]
        with self._log_path.open("ab") as out:
            done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
        if done.returncode != 0:
            raise ConfigError(
                f"formatting the Kafka broker's storage failed (exit {done.returncode}): "
                f"{self._cause()}{self._see_log()}"
            )
        meta = (data / "meta.properties").read_text(encoding="utf-8")
        match = re.search(r"^cluster\.id=(.+)$", meta, re.MULTILINE)
        if match is None:
            raise ConfigError(f"no cluster.id in {data / 'meta.properties'}")
        return match[1].strip()

    def _launch(self, command: list[str]) -> None:
        assert self._log_path is not None
        with self._log_path.open("ab") as out:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )

    def _wait_ready(self) -> None:
        """Poll until the broker answers a metadata request with its own cluster id (another
        broker on the same port does not count) and lists itself."""
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        assert self._proc is not None
        # confluent-kafka's stub types values as str | int | float; "logger" takes a Logger
        config: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap_servers,
            "socket.connection.setup.timeout.ms": 1000,
            "reconnect.backoff.max.ms": 200,
            "log.connection.close": False,
            "logger": _CLIENT_LOG,
        }
        admin = AdminClient(config)
        deadline = time.monotonic() + self.ready_timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise ConfigError(
                    f"the Kafka broker on {self.bootstrap_servers} exited with code "
                    f"{self._proc.returncode} on start: {self._cause()}{self._see_log()}"
                )
            try:
                metadata = admin.list_topics(timeout=1)
                if metadata.cluster_id == self.cluster_id and metadata.brokers:
                    return
            except KafkaException:
                pass
            time.sleep(0.2)
        raise ConfigError(
            f"the Kafka broker on {self.bootstrap_servers} did not answer within "
            f"{self.ready_timeout_s:.0f} s (last log line: {self._cause()}){self._see_log()}"
        )

    def _cause(self) -> str:
        try:
            text = self._log_path.read_text(errors="replace") if self._log_path else ""
        except OSError:
            text = ""
        return failure_cause(text[-200_000:])

    def _see_log(self) -> str:
        """`` (log: PATH)`` unless the log is in the temporary directory stop removes."""
        if self._log_path is None or (
            self._temp_dir is not None and self._log_path.is_relative_to(self._temp_dir)
        ):
            return ""
        return f" (log: {self._log_path})"

    def stop(self) -> None:
        """Stop the broker: SIGTERM to its process group, SIGKILL after
        :data:`STOP_TIMEOUT_S`; reap it; remove the temporary data directory."""
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                _signal_group(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=STOP_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    _signal_group(proc.pid, signal.SIGKILL)
                    proc.wait()
            _signal_group(proc.pid, signal.SIGKILL)  # anything the JVM left in its group
        if self._temp_dir is not None:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None

    def __enter__(self) -> LocalBroker:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _signal_group(pgid: int, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def kafka_version() -> str:
    """The broker's version from its jar's name (``kafka_2.13-4.2.0.jar`` -> ``4.2.0``), or
    ``unknown``."""
    for jar in class_path("kafka"):
        match = re.fullmatch(r"kafka_[\d.]+-(?P<version>.+)\.jar", jar.name)
        if match:
            return match["version"]
    return "unknown"


def main(argv: list[str] | None = None) -> int:
    """Run a local broker in the foreground until SIGINT / SIGTERM; exit code (0 stopped,
    1 the broker died, 2 it did not start: one ``error:`` line)."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.kafka.broker",
        description="Run an Apache Kafka broker (KRaft, one node, from the jars make install "
        "resolved) on 127.0.0.1 until SIGINT / SIGTERM.",
    )
    parser.add_argument("--port", type=int, default=9092, help="port (default 9092)")
    parser.add_argument(
        "--data-dir", type=Path, help="keep the data here (default: a temporary directory)"
    )
    parser.add_argument("--log", type=Path, help="log file (default: DATA_DIR/broker.log)")
    parser.add_argument("--ready-file", type=Path, help="create this file once the broker answers")
    args = parser.parse_args(argv)
    stopping: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        stopping.append(signum)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    broker = LocalBroker(port=args.port, log=args.log, data_dir=args.data_dir)
    try:
        try:
            broker.start()
        except ConfigError as exc:
            print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
            return 2
        where = args.data_dir or "a temporary directory"
        print(
            f"kafka: Apache Kafka {kafka_version()} (KRaft) listening on "
            f"{broker.bootstrap_servers}; data in {where}, log {broker.log_path}",
            flush=True,
        )
        if args.ready_file is not None:
            args.ready_file.write_text(broker.bootstrap_servers + "\n")
        while broker.running:
            time.sleep(0.2)
        if not stopping:
            print(f"error: the Kafka broker exited: see {broker.log_path}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        pass
    finally:
        broker.stop()
        if args.ready_file is not None:
            args.ready_file.unlink(missing_ok=True)
    print("kafka: stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
