"""A busy embedded metastore: ingest, dbt and the summary stop at once with one line, exit 2.

One holder process (its own ``CDC_LAKE_DIR``) opens the Derby metastore with ``get_spark()`` and
sleeps; ``python -m ingest``, ``dbt build`` and ``python -m cdc_lakehouse.tools.summary`` then run
against the same lake as real subprocesses. A fourth process loses the race (it skips the check
made before its JVM starts, as if the holder had booted Derby just after it) and must give the
same line; it starts as soon as the holder is ready and runs while the other cases do, since
its JVM start is most of the module's time. The lock probe itself is tested against a Python
process holding an fcntl lock.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.metastore_lock import (
    DERBY_LOCK_FILE,
    LockHolder,
    lock_holder,
    metastore_holder,
)
from cdc_lakehouse.runtime.spark_session import embedded_derby_dir

PROJECT_DIR = Path(__file__).resolve().parents[2]
# Measured on 2 shared cores: ingest and the summary stop in 0.2-0.6 s, dbt build in 4-14 s (its
# parse), the race loser in 12-30 s (its JVM start); the bounds leave room for a loaded machine.
STOP_WITHIN_S = 30.0
RACE_WITHIN_S = 90.0
PYTHON = Path(sys.executable).name
BUSY = "is in use by another process (pid {pid}: " + PYTHON + " holder.py)"

HOLDER = """
import time
from cdc_lakehouse.runtime.spark_session import get_spark

get_spark()  # opens the metastore
print("ready", flush=True)
time.sleep(600)
"""

RACE_LOSER = """
import sys
from cdc_lakehouse.runtime import spark_session

spark_session.check_metastore_free = lambda derby_dir: None  # the check found it still free
try:
    spark_session.get_spark()
except spark_session.MetastoreBusyError as exc:
    print(f"error: {exc}", file=sys.stderr)
    sys.exit(2)
"""

LOCKER = """
import fcntl, sys, time

with open(sys.argv[1], "w") as lock:
    fcntl.lockf(lock, fcntl.LOCK_EX)
    print("locked", flush=True)
    time.sleep(600)
"""


@dataclass(frozen=True)
class Holder:
    """The holder's lake, pid and environment, and the race loser started against it."""

    lake: Path
    pid: int
    env: dict[str, str]
    race: subprocess.Popen
    race_started: float


def _env(lake: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        CDC_LAKE_DIR=str(lake),
        CDC_SPARK_DRIVER_MEMORY="1g",
        SPARK_LOCAL_IP="127.0.0.1",
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        PYTHONUNBUFFERED="1",
    )
    return env


def _start(argv: list[str], cwd: Path, env: dict[str, str], ready: str) -> subprocess.Popen:
    """Start ``argv`` in its own process group (stderr to ``cwd/stderr.txt``); return once it
    prints the line ``ready`` (within 180 s)."""
    with open(cwd / "stderr.txt", "w") as stderr:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            start_new_session=True,
        )
    assert proc.stdout is not None
    deadline = time.monotonic() + 180
    while (left := deadline - time.monotonic()) > 0:
        if select.select([proc.stdout], [], [], left)[0]:
            line = proc.stdout.readline()
            if line.strip() == ready:
                return proc
            if not line:  # exited
                break
    _stop(proc)
    pytest.fail(f"{argv} did not print {ready!r}: {(cwd / 'stderr.txt').read_text()[-2000:]}")


def _stop(proc: subprocess.Popen) -> None:
    """SIGKILL the process group (Python, its JVM) and wait for the Python process."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


@pytest.fixture(scope="module")
def holder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Holder]:
    """A Python process with the metastore of its own lake open, for the module's tests, and
    the race loser, started at once against it."""
    work = tmp_path_factory.mktemp("busy")
    (work / "holder.py").write_text(HOLDER)
    env = _env(work / "lake")
    proc = _start([sys.executable, "holder.py"], work, env, "ready")
    race_started = time.monotonic()
    race = subprocess.Popen(
        [sys.executable, "-c", RACE_LOSER],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        yield Holder(work / "lake", proc.pid, env, race, race_started)
    finally:
        _stop(race)
        _stop(proc)


def _run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str, float]:
    """Run ``argv`` from the project directory; exit code, stdout, stderr, seconds taken."""
    start = time.monotonic()
    done = subprocess.run(
        argv, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=timeout
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def _assert_nothing_written(lake: Path) -> None:
    assert not (lake / "warehouse" / "bronze.db").exists()
    assert not (lake / "checkpoints" / "bronze.kafka_records").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["-m", "ingest", "--dump", "sample_data/dump"],
        ["-m", "cdc_lakehouse.tools.summary"],
    ],
    ids=["ingest", "summary"],
)
def test_ingest_and_summary_stop_with_one_line(holder: Holder, argv: list[str]) -> None:
    code, out, err, seconds = _run([sys.executable, *argv], holder.env, 120)
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: The metastore {holder.lake / 'metastore_db'} "), err
    assert BUSY.format(pid=holder.pid) in err
    assert "run ingest, dbt and the summary one at a time" in err
    assert seconds < STOP_WITHIN_S
    _assert_nothing_written(holder.lake)


def test_dbt_build_stops_before_any_node(holder: Holder, tmp_path: Path) -> None:
    dbt = Path(sys.executable).with_name("dbt")
    argv = [str(dbt), "build", "--project-dir", ".", "--profiles-dir", "."]
    argv += ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    code, out, err, seconds = _run(argv, holder.env, 180)
    assert code == 2, out + err
    assert err == ""
    assert out.count(BUSY.format(pid=holder.pid)) == 1, out
    assert "Traceback" not in out
    assert " of " not in out  # no "1 of 315 START ..." node line
    assert len(out.splitlines()) < 15, out
    assert seconds < STOP_WITHIN_S
    _assert_nothing_written(holder.lake)


def test_the_race_loser_stops_with_the_same_line(holder: Holder) -> None:
    _out, err = holder.race.communicate(timeout=RACE_WITHIN_S)
    seconds = time.monotonic() - holder.race_started
    assert holder.race.returncode == 2, err
    lines = [line for line in err.splitlines() if "incubator" not in line]  # the JVM's notice
    assert len(lines) == 1, err
    assert lines[0].startswith(f"error: The metastore {holder.lake / 'metastore_db'} ")
    assert BUSY.format(pid=holder.pid) in lines[0]
    assert seconds < RACE_WITHIN_S


def test_lock_probe_names_the_holder_and_takes_no_lock(tmp_path: Path) -> None:
    lock = tmp_path / DERBY_LOCK_FILE
    assert lock_holder(lock) is None  # no file
    lock.write_text("")
    assert lock_holder(lock) is None  # a file nobody locks
    (tmp_path / "locker.py").write_text(LOCKER)
    proc = _start([sys.executable, "locker.py", str(lock)], tmp_path, {}, "locked")
    try:
        assert lock_holder(lock) == LockHolder(proc.pid, None)
        assert lock_holder(lock) == LockHolder(proc.pid, None)  # asking took no lock
        holder = metastore_holder(tmp_path)
        assert holder is not None and holder.pid == proc.pid
        assert (holder.command or "").startswith(f"{PYTHON} locker.py ")
    finally:
        _stop(proc)
    assert lock_holder(lock) is None


def test_only_an_embedded_derby_metastore_is_checked(tmp_path: Path) -> None:
    url = "spark.hadoop.javax.jdo.option.ConnectionURL"
    derby = f"jdbc:derby:;databaseName={tmp_path / 'metastore_db'};create=true"
    assert embedded_derby_dir({url: derby}) == tmp_path / "metastore_db"
    assert embedded_derby_dir({url: "jdbc:postgresql://db:5432/metastore"}) is None
    assert embedded_derby_dir({}) is None


ORPHANED_JVM = """
import fcntl, os, sys, time

# the stand-in of a Spark JVM (its argv names SparkSubmit) whose launching process has ended:
# the launcher forks it and exits at once; it holds the lock for a moment, as a shutting-down
# JVM does, then exits
if os.fork():
    os._exit(0)
with open(sys.argv[1], "w") as lock:
    fcntl.lockf(lock, fcntl.LOCK_EX)
    open(sys.argv[1] + ".held", "w").close()
    time.sleep(float(sys.argv[2]))
"""


@pytest.mark.parametrize(("holds_for", "busy"), [(2.0, False), (60.0, True)])
def test_the_shutting_down_jvm_of_a_command_that_ended_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, holds_for: float, busy: bool
) -> None:
    """`make demo` runs ingest, dbt and the summary back to back: the summary found the JVM of
    the dbt command that had just ended still holding the lock (exit 2). A JVM whose launcher
    has exited is waited for (EXITING_JVM_WAIT_S); one that does not let go is reported."""
    from cdc_lakehouse.runtime import spark_session

    lock = tmp_path / DERBY_LOCK_FILE
    (tmp_path / "jvm.py").write_text(ORPHANED_JVM)
    argv = [
        sys.executable,
        "jvm.py",
        str(lock),
        str(holds_for),
        "org.apache.spark.deploy.SparkSubmit",
    ]
    subprocess.run(argv, cwd=tmp_path, check=True)
    deadline = time.monotonic() + 30
    while not Path(f"{lock}.held").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    holder = metastore_holder(tmp_path)
    assert holder is not None and holder.exiting
    monkeypatch.setattr(spark_session, "EXITING_JVM_WAIT_S", 5.0)
    started = time.monotonic()
    if busy:
        with pytest.raises(spark_session.MetastoreBusyError, match="is in use by another process"):
            spark_session.check_metastore_free(tmp_path)
        assert holder.pid is not None
        os.kill(holder.pid, signal.SIGKILL)
    else:
        spark_session.check_metastore_free(tmp_path)
        assert lock_holder(lock) is None
    assert time.monotonic() - started < 10
