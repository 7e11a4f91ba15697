"""A Spark standalone cluster on this machine: one master and N workers from the pyspark wheel.

``python -m cdc_lakehouse.runtime.cluster start|stop|status [--dir DIR] [options]`` (``make
spark-cluster`` / ``make spark-cluster-stop``). ``start`` launches
``$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master`` and, per worker,
``... org.apache.spark.deploy.worker.Worker``, with ``SPARK_HOME`` the installed ``pyspark``
package directory, all on 127.0.0.1, each worker offering a bounded number of cores and memory
to executors. It returns once the master's web UI (``http://127.0.0.1:<webui port>/json/``)
lists every worker ``ALIVE`` and prints the master URL to export as ``CDC_SPARK_MASTER``.

Everything the cluster writes is under its directory (default ``$CDC_LAKE_DIR/cluster``):
``cluster.json`` (URLs and process ids), ``logs/`` (one log per daemon), ``work/<worker>/``
(executors' stdout / stderr per application), ``local/<worker>/`` (executors' shuffle and
spill files), ``tmp/`` (the daemons' ``java.io.tmpdir``). The daemons run in their own
process groups and keep running after this command exits; ``stop`` ends them (SIGTERM, then
SIGKILL after a grace period), workers first.

Errors (exit code 2, one ``error:`` line): a cluster already running in the directory, a port
in use, a daemon that exits or does not come up in time (its log named), no Java.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from cdc_lakehouse.runtime.settings import ConfigError, lake_dir_setting

HOST = "127.0.0.1"
STATE_FILE = "cluster.json"
DEFAULT_WORKERS = 2
DEFAULT_WORKER_CORES = 1
DEFAULT_WORKER_MEMORY = "2g"
DEFAULT_DAEMON_MEMORY = "512m"
DEFAULT_PORT = 7077
DEFAULT_WEBUI_PORT = 8080
START_TIMEOUT_S = 120.0
STOP_GRACE_S = 15.0
DAEMON_CLASSES = ("org.apache.spark.deploy.master.Master", "org.apache.spark.deploy.worker.Worker")


class ClusterError(ConfigError):
    """The cluster cannot be started, found or stopped; the message says why and what to do."""


@dataclass(frozen=True)
class Daemon:
    """One started daemon: its name (``master``, ``worker-1`` ...), process id and log."""

    name: str
    pid: int
    log: str


@dataclass(frozen=True)
class ClusterInfo:
    """A running cluster, as saved in ``<dir>/cluster.json``.

    Attributes:
        master_url: ``spark://127.0.0.1:PORT``, the value for ``CDC_SPARK_MASTER``.
        webui_url: the master's web UI, ``http://127.0.0.1:PORT`` (``/json/`` for its state).
        daemons: the master first, then the workers.
        directory: the cluster directory (absolute).
        started_in_s: seconds from launching the master to every worker ALIVE.
    """

    master_url: str
    webui_url: str
    daemons: tuple[Daemon, ...]
    directory: str
    started_in_s: float = 0.0

    def master_state(self, timeout_s: float = 5.0) -> dict:
        """The master's state from its web UI's ``/json/`` (workers, active and completed
        applications with their cores and memory).

        Raises:
            OSError: the web UI does not answer within ``timeout_s`` seconds.
        """
        return master_state(self.webui_url, timeout_s)


def spark_home() -> Path:
    """The installed pyspark package directory, which is a Spark distribution
    (``bin/spark-class``, ``jars/``).

    Raises:
        ClusterError: pyspark is not installed or has no ``bin/spark-class``.
    """
    try:
        import pyspark
    except ImportError as exc:
        raise ClusterError("pyspark is not installed: run `make install`.") from exc
    home = Path(pyspark.__file__).resolve().parent
    if not (home / "bin" / "spark-class").is_file():
        raise ClusterError(f"{home} has no bin/spark-class: reinstall pyspark (`make install`).")
    return home


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nobody listens on now (the OS's choice)."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _check_port_free(port: int, what: str) -> None:
    with socket.socket() as sock:
        try:
            sock.bind((HOST, port))
        except OSError as exc:
            raise ClusterError(
                f"{what} port {HOST}:{port} is in use ({exc.strerror or exc}): stop what "
                "listens there, or pass another port (0: any free port)."
            ) from exc


def master_state(webui_url: str, timeout_s: float = 5.0) -> dict:
    """The JSON of ``<webui_url>/json/`` (the master's workers and applications).

    Raises:
        OSError: no answer within ``timeout_s`` seconds (``urllib.error.URLError`` included).
    """
    with urllib.request.urlopen(f"{webui_url}/json/", timeout=timeout_s) as response:
        return json.load(response)


def default_dir() -> Path:
    """``$CDC_LAKE_DIR/cluster`` (default ``./lake/cluster``)."""
    return lake_dir_setting() / "cluster"


def read_info(directory: Path) -> ClusterInfo | None:
    """The cluster saved in ``directory``, or ``None`` when none was started there."""
    path = directory / STATE_FILE
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    daemons = tuple(Daemon(**d) for d in data.pop("daemons"))
    return ClusterInfo(daemons=daemons, **data)


def _is_daemon(pid: int) -> bool:
    """Whether ``pid`` is alive and is a Spark master or worker JVM (not a reused pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc (macOS): trust the pid file
    return any(name in cmdline for name in DAEMON_CLASSES)


def running(info: ClusterInfo) -> list[Daemon]:
    """The daemons of ``info`` that are still running."""
    return [d for d in info.daemons if _is_daemon(d.pid)]


def _tail(log: Path, lines: int = 5) -> str:
    try:
        text = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:] if line.strip())


def _launch(
    name: str, args: list[str], directory: Path, env: dict[str, str]
) -> tuple[Daemon, subprocess.Popen]:
    log = directory / "logs" / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(  # spark-class execs java: the pid is the JVM's
            [str(spark_home() / "bin" / "spark-class"), *args],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=directory,
            start_new_session=True,
        )
    return Daemon(name, proc.pid, str(log)), proc


def start(
    directory: Path,
    *,
    workers: int = DEFAULT_WORKERS,
    worker_cores: int = DEFAULT_WORKER_CORES,
    worker_memory: str = DEFAULT_WORKER_MEMORY,
    port: int = DEFAULT_PORT,
    webui_port: int = DEFAULT_WEBUI_PORT,
    daemon_memory: str = DEFAULT_DAEMON_MEMORY,
    timeout_s: float = START_TIMEOUT_S,
) -> ClusterInfo:
    """Start a master and ``workers`` workers on 127.0.0.1; return once all are ALIVE.

    Args:
        directory: the cluster directory (created; logs, work and pid state go there).
        workers: number of workers.
        worker_cores: cores each worker offers to executors.
        worker_memory: memory each worker offers to executors (Spark size: ``2g``, ``512m``);
            ``CDC_SPARK_EXECUTOR_MEMORY`` (default 2g) must fit in it.
        port: the master's port (0: a free one).
        webui_port: the master's web UI port (0: a free one); workers' UIs get free ports.
        daemon_memory: heap of each master / worker JVM (``SPARK_DAEMON_MEMORY``).
        timeout_s: seconds to wait for every worker to register (on 2 busy cores the three
            JVMs take 5-15 s).

    Raises:
        ClusterError: fewer than one worker or core, a cluster of this directory is running,
            a port is in use, a daemon exited or did not register within ``timeout_s`` (what
            was started is stopped).
    """
    if workers < 1 or worker_cores < 1:
        raise ClusterError(
            f"--workers and --worker-cores must be >= 1 (got {workers}, {worker_cores})."
        )
    directory = directory.expanduser().resolve()
    previous = read_info(directory)
    if previous is not None and running(previous):
        raise ClusterError(
            f"a cluster is already running from {directory} ({previous.master_url}): use it, "
            "or stop it first (make spark-cluster-stop)."
        )
    port = port or free_port()
    webui_port = webui_port or free_port()
    _check_port_free(port, "the master")
    _check_port_free(webui_port, "the master web UI")
    for sub in ("logs", "work", "local", "tmp"):
        (directory / sub).mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "SPARK_HOME": str(spark_home()),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_DAEMON_MEMORY": daemon_memory,
        "SPARK_DAEMON_JAVA_OPTS": f"-Djava.io.tmpdir={directory / 'tmp'}",
    }
    started = time.monotonic()
    master_url = f"spark://{HOST}:{port}"
    webui_url = f"http://{HOST}:{webui_port}"
    master_args = [DAEMON_CLASSES[0], "--host", HOST, "--port", str(port)]
    master_args += ["--webui-port", str(webui_port)]
    launched = [_launch("master", master_args, directory, env)]
    for n in range(1, workers + 1):
        name = f"worker-{n}"
        worker_env = {**env, "SPARK_LOCAL_DIRS": str(directory / "local" / name)}
        (directory / "local" / name).mkdir(exist_ok=True)
        worker_args = [DAEMON_CLASSES[1], "--host", HOST, "--webui-port", str(free_port())]
        worker_args += ["--cores", str(worker_cores), "--memory", worker_memory]
        worker_args += ["--work-dir", str(directory / "work" / name), master_url]
        launched.append(_launch(name, worker_args, directory, worker_env))
    info = ClusterInfo(master_url, webui_url, tuple(d for d, _ in launched), str(directory))
    _save(info)
    try:
        _wait_alive(info, [p for _, p in launched], workers, timeout_s)
    except ClusterError:
        stop(directory)
        raise
    info = replace(info, started_in_s=round(time.monotonic() - started, 1))
    _save(info)
    return info


def _save(info: ClusterInfo) -> None:
    (Path(info.directory) / STATE_FILE).write_text(
        json.dumps({**asdict(info), "daemons": [asdict(d) for d in info.daemons]}, indent=2),
        encoding="utf-8",
    )


def _wait_alive(
    info: ClusterInfo, procs: list[subprocess.Popen], workers: int, timeout_s: float
) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        for daemon, proc in zip(info.daemons, procs, strict=True):
            if proc.poll() is not None:
                raise ClusterError(
                    f"the Spark {daemon.name} exited with code {proc.returncode}: "
                    f"{_tail(Path(daemon.log), 3)} (log: {daemon.log})"
                )
        with contextlib.suppress(OSError, ValueError):
            state = master_state(info.webui_url, timeout_s=2.0)
            alive = [w for w in state.get("workers", []) if w.get("state") == "ALIVE"]
            if len(alive) >= workers:
                return
        if time.monotonic() > deadline:
            raise ClusterError(
                f"the Spark cluster did not have {workers} workers ALIVE within {timeout_s:g} s "
                f"(logs in {Path(info.directory) / 'logs'})."
            )
        time.sleep(0.5)


def stop(directory: Path, grace_s: float = STOP_GRACE_S) -> list[Daemon]:
    """Stop the daemons of the cluster saved in ``directory`` (workers first, then the master;
    SIGTERM, then SIGKILL after ``grace_s`` seconds); return those that were running.

    A directory without a cluster, or whose daemons have all ended, stops nothing. Only
    processes whose command line is a Spark master or worker are signalled (the pid file
    may be stale). Raises nothing.
    """
    info = read_info(directory.expanduser().resolve())
    if info is None:
        return []
    stopped = []
    for daemon in reversed(info.daemons):  # workers first: the master then sees them leave
        if not _is_daemon(daemon.pid):
            continue
        stopped.append(daemon)
        with contextlib.suppress(ProcessLookupError):
            os.kill(daemon.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while _is_daemon(daemon.pid) and time.monotonic() < deadline:
            _reap(daemon.pid)
            time.sleep(0.1)
        if _is_daemon(daemon.pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(daemon.pid, signal.SIGKILL)  # its own group: the JVM and executors
        _reap(daemon.pid)
    return stopped


def _reap(pid: int) -> None:
    """Collect ``pid``'s exit status if it is a child of this process (so that it does not
    linger as a zombie, which /proc still lists)."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def status(directory: Path) -> str:
    """One line per daemon (running or not) and the master's worker / application counts."""
    info = read_info(directory.expanduser().resolve())
    if info is None:
        return f"no cluster was started from {directory}"
    up = {d.pid for d in running(info)}
    lines = [f"master {info.master_url} (web UI {info.webui_url})"]
    lines += [
        f"  {d.name:<9} pid {d.pid:<8} {'running' if d.pid in up else 'stopped'}  {d.log}"
        for d in info.daemons
    ]
    try:
        state = info.master_state()
    except OSError:
        lines.append("  the master's web UI does not answer")
    else:
        alive = sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")
        lines.append(
            f"  workers ALIVE: {alive}, cores {state.get('cores')}, applications running: "
            f"{len(state.get('activeapps', []))}, completed: {len(state.get('completedapps', []))}"
        )
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    """The command line (``start``, ``stop``, ``status``)."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.runtime.cluster",
        description="A Spark standalone master and workers on 127.0.0.1 (pyspark's own jars).",
    )
    parser.add_argument("command", choices=("start", "stop", "status"))
    parser.add_argument(
        "--dir", type=Path, help="cluster directory (default $CDC_LAKE_DIR/cluster)"
    )
    parser.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    parser.add_argument(
        "--worker-cores", type=int, default=DEFAULT_WORKER_CORES, help="cores per worker"
    )
    parser.add_argument(
        "--worker-memory", default=DEFAULT_WORKER_MEMORY, help="executor memory per worker"
    )
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="master port (0: a free one)"
    )
    parser.add_argument(
        "--webui-port", type=int, default=DEFAULT_WEBUI_PORT, help="web UI port (0: free)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit code (0, or 2 with one ``error:`` line)."""
    args = build_parser().parse_args(argv)
    try:
        directory = (args.dir or default_dir()).expanduser().resolve()
        if args.command == "start":
            info = start(
                directory,
                workers=args.workers,
                worker_cores=args.worker_cores,
                worker_memory=args.worker_memory,
                port=args.port,
                webui_port=args.webui_port,
            )
            print(
                f"Spark master {info.master_url} with {args.workers} workers "
                f"({args.worker_cores} core, {args.worker_memory} each) up in "
                f"{info.started_in_s:.1f} s; web UI {info.webui_url}, logs in "
                f"{directory / 'logs'}\n"
                f"Run ingest, dbt and the summary on it:\n"
                f"  export CDC_SPARK_MASTER={info.master_url}\n"
                f"Stop it: make spark-cluster-stop (python -m cdc_lakehouse.runtime.cluster stop)"
            )
        elif args.command == "stop":
            stopped = stop(directory)
            print(f"stopped {', '.join(d.name for d in stopped) or 'nothing'} ({directory})")
        else:
            print(status(directory))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
