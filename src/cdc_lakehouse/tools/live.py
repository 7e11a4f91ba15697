"""``python -m cdc_lakehouse.tools.live``: the live demo (``make demo-live``).

Runs the project the way teams run it: a Kafka stream that does not stop, the ingest job
running continuously beside scheduled ``dbt build`` runs, and a reader querying gold all the
while, each in its own process on one shared PostgreSQL metastore
(:mod:`cdc_lakehouse.runtime.metastore_server`):

1. a fresh lake (``--lake``, default ``lake-live``; emptied first), its metastore server (its
   cluster initialized afresh, see :func:`cdc_lakehouse.runtime.metastore_server.server_for`) and a
   local Apache Kafka broker (one KRaft node from the Maven jars,
   :class:`cdc_lakehouse.tools.kafka.broker.LocalBroker`; its log in ``<lake>/logs/broker.log``);
2. ``python -m ingest --mode continuous`` (Spark's Kafka source, a micro-batch every
   ``--trigger-interval`` s) on the stream's topic, which the demo creates; the producer
   starts once ingest reads it, so a slow first start (JVM, metastore schema) does not eat
   the stream's time;
3. the producer: ``python -m cdc_lakehouse.tools.simulate --rate`` (a seeded history of
   ``--format`` with 1 % duplicate deliveries, produced live at ``--rate`` row changes per
   second for ``--duration`` seconds; its oracle goes to ``<lake>/oracle``);
4. the scheduler: ``dbt build`` every ``--build-interval`` seconds (start to start; a build
   that runs longer is followed by the next at once), each run by one long-lived process
   (:mod:`cdc_lakehouse.tools.dbt_loop`), so builds after the first find the JVM warm;
5. the reader (``python -m cdc_lakehouse.tools.live read``), from the first finished build on:
   ``--read-interval`` s after each read ends it counts ``gold.current_rows`` again and reads
   its newest event time.

Per build it prints the records the build took (bronze up to its pinned batch), its time, the
freshness of gold (when the reader next reads: now minus the newest event time in gold; the
stream's event times follow the wall clock, so this is the end-to-end delay) and the reader's
errors so far. When the producer is done, ingest catches up (every produced record in
bronze), stops, and one last build runs; then gold is checked against the oracle (every table's
live rows equal, so nothing lost and no row twice) and bronze for records written twice.

Exit codes: 0 gold equals the oracle and the reader saw no error; 1 otherwise (the lines say
what); 2 bad arguments or a setting to fix (one ``error:`` line). A Python-level scheduler
loop, not a library: one loop with one job, whose timing and output the demo controls.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from cdc_lakehouse.runtime.metastore_server import (
    MetastoreServer,
    export_lines,
    export_values,
    server_for,
)
from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.runtime.spark_session import check_spark_settings, get_spark
from cdc_lakehouse.tools.bench.pipeline import topic_current_rows
from cdc_lakehouse.tools.dbt_loop import parse_result
from cdc_lakehouse.tools.kafka.broker import LocalBroker, free_port
from cdc_lakehouse.tools.kafka.produce import create_topics
from cdc_lakehouse.tools.simulate.gold_check import (
    current_rows_tables,
    differences,
    expected_document_tables,
)

PROJECT_DIR = Path(__file__).resolve().parents[3]
"""The dbt project (the repository root: ``dbt_project.yml``, ``profiles.yml``)."""
SIM_PREFIX = "sim"
"""Topic prefix of the simulated stream (the registry's ``sim.<format>`` topics)."""
PARTITIONS = 3
"""Partitions of the simulated topic (created by the demo before ingest starts)."""
INGEST_START_TIMEOUT_S = 300.0
"""How long the ingest job may take to start reading (JVM, metastore schema, bronze table), s."""
CATCH_UP_TIMEOUT_S = 300.0
INGEST_STOP_TIMEOUT_S = 180.0
"""How long the ingest job may take from SIGTERM to its exit (the batch in progress, then
stopping its JVM), s: on a loaded 2-core machine (load 20, a dbt build and a reader's JVM
starting beside it) it printed its ``done:`` line at once but had not exited 60 s later."""
SHOW_QUERY = "select count(*) as gold_rows from {{ ref('current_rows') }}"
"""What the demo's ``dbt show`` asks of gold while a build runs."""
"""How long ingest may take to land every produced record once the producer is done, s."""


@dataclass(frozen=True)
class LiveOptions:
    """The demo's knobs (see :func:`build_parser` for the command line).

    Attributes:
        lake: lake directory of the demo (emptied at the start).
        format: registry format of the simulated stream.
        rate: row changes per second produced.
        duration_s: how long the producer produces, seconds.
        build_interval_s: seconds from one ``dbt build`` start to the next.
        trigger_interval_s: the ingest job's micro-batch interval, seconds.
        read_interval_s: seconds from the end of one reader's query to the start of the next.
        threads: ``dbt build --threads`` (models and tests run side by side in one session).
    """

    lake: Path
    format: str = "dts_canal_json"
    rate: float = 500.0
    duration_s: float = 240.0
    build_interval_s: float = 60.0
    trigger_interval_s: float = 5.0
    read_interval_s: float = 3.0
    threads: int = 4


@dataclass
class ReaderLog:
    """What the reader process printed: one JSON object per read (see :func:`read_loop`)."""

    reads: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def errors(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.reads if not r["ok"]]

    def last_before(self, at: float) -> dict[str, Any] | None:
        """The last successful read that started before ``at`` (epoch s)."""
        with self.lock:
            done = [r for r in self.reads if r["ok"] and r["started_at"] < at]
        return done[-1] if done else None

    def first_after(self, at: float, timeout_s: float = 60.0) -> dict[str, Any] | None:
        """The first successful read that started after ``at`` (epoch s), waiting for it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self.lock:
                for read in self.reads:
                    if read["ok"] and read["started_at"] > at:
                        return read
            time.sleep(0.2)
        return None

    def follow(self, stream: IO[str]) -> None:
        for line in stream:
            if line.startswith("{"):
                with self.lock:
                    self.reads.append(json.loads(line))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.live",
        description="Live demo: a Kafka stream, continuous ingest, a dbt build every N "
        "seconds and a reader of gold, checked against the oracle at the end.",
    )
    parser.add_argument("--lake", type=Path, default=Path("lake-live"), help="(emptied first)")
    parser.add_argument("--format", default=LiveOptions.format)
    parser.add_argument("--rate", type=float, default=LiveOptions.rate, help="changes/s")
    parser.add_argument("--duration", type=float, default=LiveOptions.duration_s, help="s")
    parser.add_argument(
        "--build-interval", type=float, default=LiveOptions.build_interval_s, help="s"
    )
    parser.add_argument(
        "--trigger-interval", type=float, default=LiveOptions.trigger_interval_s, help="s"
    )
    parser.add_argument(
        "--read-interval", type=float, default=LiveOptions.read_interval_s, help="s"
    )
    parser.add_argument("--threads", type=int, default=LiveOptions.threads, help="dbt threads")
    return parser


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


@contextmanager
def process(
    args: list[str], env: dict[str, str], name: str, logs: Path, **kwargs: Any
) -> Iterator[subprocess.Popen[str]]:
    """A child process in its own process group, its output in ``logs/<name>.log`` unless
    ``stdout`` (and ``stderr``) is given; SIGTERM then SIGKILL to the group on exit."""
    out = kwargs.pop("stdout", None) or (logs / f"{name}.log").open("w")
    child = subprocess.Popen(
        args,
        env=env,
        cwd=PROJECT_DIR,
        stdout=out,
        stderr=kwargs.pop("stderr", subprocess.STDOUT if out is not subprocess.PIPE else None),
        text=True,
        start_new_session=True,
        **kwargs,
    )
    try:
        yield child
    finally:
        stop_group(child)


def stop_group(child: subprocess.Popen[str], timeout_s: float = 60.0) -> int | None:
    """SIGTERM ``child``, wait up to ``timeout_s``, then SIGKILL its process group (what is
    left of it, e.g. the JVM of a Python child). SIGTERM goes to the child alone: the ingest
    job then stops after the batch in progress and stops its JVM itself, which a SIGTERM to
    the JVM too would cut short."""
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
    with suppress(ProcessLookupError):  # the JVM of a Python child may outlive it
        os.killpg(child.pid, signal.SIGKILL)
    return child.returncode


def fresh_lake(lake: Path) -> MetastoreServer:
    """Empty ``lake`` and return its metastore server (:func:`server_for`: the cluster outside
    the lake as root, so that a lake in a home directory works), after stopping and removing
    the server and cluster a previous run left."""
    server_for(lake_dir=lake).remove()
    if lake.exists():
        shutil.rmtree(lake)
    lake.mkdir(parents=True)
    return server_for(lake_dir=lake)


def run(options: LiveOptions) -> int:
    """The demo; returns the exit code (0 gold equal to the oracle and no reader error)."""
    lake = options.lake.resolve()
    server = fresh_lake(lake)
    logs = lake / "logs"
    logs.mkdir()
    port = server.start()
    try:
        return demo(options, lake, export_lines(server, port), port)
    finally:
        server.stop()  # also when the demo fails or is interrupted (Ctrl-C)


def demo(options: LiveOptions, lake: Path, metastore_exports: str, port: int) -> int:
    """The demo's processes on the prepared ``lake`` (see :func:`run`)."""
    logs = lake / "logs"
    # the environment of the demo's child processes (ingest, dbt, the reader), built here: each
    # reads its CDC_* settings from it through cdc_lakehouse.runtime.settings
    env = dict(os.environ, CDC_LAKE_DIR=str(lake), PYTHONUNBUFFERED="1")
    env.update(export_values(metastore_exports))
    env.setdefault("CDC_SPARK_DRIVER_MEMORY", "2g")
    python = sys.executable
    dbt_bin = str(Path(python).parent / "dbt")
    dbt_dirs = ["--project-dir", ".", "--profiles-dir", "."]
    # a scheduled production build: the unit tests (fixed rows, not the lake) are for
    # development and CI, as dbt's docs recommend; every build in one long-lived process, so
    # the JVM stays warm from one build to the next (cdc_lakehouse.tools.dbt_loop)
    dbt = [python, "-m", "cdc_lakehouse.tools.dbt_loop", "build", *dbt_dirs]
    dbt += ["--threads", str(options.threads)]
    dbt += ["--exclude-resource-type", "unit_test"]
    dbt += ["--target-path", str(lake / "target"), "--log-path", str(logs)]
    show = [dbt_bin, "show", *dbt_dirs, "--inline", SHOW_QUERY, "--output", "json"]
    show += ["--target-path", str(lake / "target-show"), "--log-path", str(logs / "show")]
    changes = max(1, round(options.rate * options.duration_s))
    topic = f"{SIM_PREFIX}.{options.format}"
    log(f"metastore: PostgreSQL on 127.0.0.1:{port}; lake {lake}")
    reader_log = ReaderLog()
    with LocalBroker(port=free_port(), log=logs / "broker.log") as broker:
        bootstrap = broker.bootstrap_servers
        log(
            f"broker: {bootstrap}; producing {changes:,} changes of {options.format} at "
            f"{options.rate:g}/s to {topic} for {options.duration_s:g} s"
        )
        producer_args = [
            python, "-m", "cdc_lakehouse.tools.simulate", "--format", options.format,
            "--changes", str(changes), "--prefix", SIM_PREFIX, "--duplicate-rate", "0.01",
            "--rate", str(options.rate), "--partitions", str(PARTITIONS),
            "--bootstrap-servers", bootstrap, "--out", str(lake / "oracle"),
        ]  # fmt: skip
        create_topics(bootstrap, {topic: PARTITIONS})
        ingest_args = [
            python, "-m", "ingest", "--bootstrap-servers", bootstrap, "--topics", topic,
            "--mode", "continuous", "--trigger-interval", str(options.trigger_interval_s),
        ]  # fmt: skip
        ingest_env = dict(env, CDC_SPARK_DRIVER_MEMORY="1g")
        with process(ingest_args, ingest_env, "ingest", logs) as ingest:
            ingest_started(ingest, logs)
            log("ingest: reading the topic; the producer starts")
            pipes = {
                "stdin": subprocess.PIPE,
                "stdout": subprocess.PIPE,
                "stderr": subprocess.STDOUT,
            }
            with (
                process(dbt, env, "builds", logs, **pipes) as builder,
                process(producer_args, env, "producer", logs) as producer,
            ):
                reader_args = [python, "-m", "cdc_lakehouse.tools.live", "read",
                               "--interval", str(options.read_interval_s)]  # fmt: skip
                reader_env = dict(env, CDC_SPARK_DRIVER_MEMORY="1g")
                reader: subprocess.Popen[str] | None = None
                builds: list[dict[str, Any]] = []
                shows: list[bool] = []
                beside: subprocess.Popen[str] | None = None  # dbt show beside the next build
                try:
                    first_batch(ingest, logs)
                    while producer.poll() is None:
                        check_alive(ingest, "ingest", logs)
                        started = time.monotonic()
                        builds.append(build(builder, logs, len(builds) + 1))
                        if beside is not None:
                            shows.append(show_result(beside, logs, builds[-1]["number"]))
                            beside = None
                        if reader is None and builds[-1]["ok"]:
                            reader = subprocess.Popen(
                                reader_args, env=reader_env, cwd=PROJECT_DIR,
                                stdout=subprocess.PIPE, stderr=(logs / "reader.log").open("w"),
                                text=True, start_new_session=True,
                            )  # fmt: skip
                            assert reader.stdout is not None
                            threading.Thread(
                                target=reader_log.follow, args=(reader.stdout,), daemon=True
                            ).start()
                            reader_log.first_after(0, timeout_s=120)
                            beside = show_beside(show, env, logs)
                        report(builds[-1], reader_log)
                        rest = options.build_interval_s - (time.monotonic() - started)
                        wait_until(producer, rest)
                    if producer.returncode != 0:
                        raise ConfigError(f"the producer failed: see {logs / 'producer.log'}")
                    produced = produced_records(logs / "producer.log")
                    log(f"producer done: {produced:,} records; waiting for ingest to catch up")
                    catch_up(env, produced, ingest, logs)
                    code = stop_group(ingest, INGEST_STOP_TIMEOUT_S)
                    log(f"ingest stopped (exit {code}); last build")
                    builds.append(build(builder, logs, len(builds) + 1))
                    if beside is not None:
                        shows.append(show_result(beside, logs, builds[-1]["number"]))
                    report(builds[-1], reader_log)
                finally:
                    for child in (reader, beside):
                        if child is not None:
                            stop_group(child)
        check = subprocess.run(
            [python, "-m", "cdc_lakehouse.tools.live", "check", "--oracle", str(lake / "oracle"),
             "--topic", topic, "--records", str(produced)],
            env=env, cwd=PROJECT_DIR, capture_output=True, text=True,
        )  # fmt: skip
    result = json.loads(check.stdout.strip().splitlines()[-1]) if check.returncode == 0 else {}
    errors = reader_log.errors()
    all_built = all(b["ok"] for b in builds) and all(shows)
    log(
        f"done: {len(builds)} builds ({sum(b['ok'] for b in builds)} passed), "
        f"{len(reader_log.reads)} reads, {len(errors)} reader errors"
    )
    for error in errors[:5]:
        log(f"  reader error: {error['error']}")
    if not result:
        log(f"gold check failed to run: {check.stderr.strip()[-2000:]}")
        return 1
    log(
        f"bronze: {result['bronze_records']:,} records of {produced:,} produced, "
        f"{result['bronze_duplicates']} written twice; gold: {result['gold_rows']:,} rows, "
        f"oracle: {result['oracle_rows']:,} rows; "
        + ("gold equals the oracle" if not result["differences"] else "gold DIFFERS")
    )
    for line in result["differences"][:5]:
        log(f"  {line}")
    ok = (
        all_built
        and not errors
        and not result["differences"]
        and result["bronze_records"] == produced
        and result["bronze_duplicates"] == 0
    )
    return 0 if ok else 1


def ingest_started(
    ingest: subprocess.Popen[str], logs: Path, timeout_s: float = INGEST_START_TIMEOUT_S
) -> None:
    """Wait until the ingest job reads the topic (its ``reader:`` line: the JVM is up, the
    metastore schema and the bronze table exist), so the stream's time is all ingest time."""
    deadline = time.monotonic() + timeout_s
    log_file = logs / "ingest.log"
    while "reader: " not in log_file.read_text(errors="replace"):
        check_alive(ingest, "ingest", logs)
        if time.monotonic() > deadline:
            raise ConfigError(f"ingest did not start within {timeout_s:.0f} s: see {log_file}")
        time.sleep(0.5)


def first_batch(ingest: subprocess.Popen[str], logs: Path, timeout_s: float = 180.0) -> None:
    """Wait until the ingest job has written its first records (the first build then has
    something to build)."""
    deadline = time.monotonic() + timeout_s
    while ingested_records(logs / "ingest.log") == 0:
        check_alive(ingest, "ingest", logs)
        if time.monotonic() > deadline:
            raise ConfigError(f"ingest wrote nothing within {timeout_s:.0f} s: see its log")
        time.sleep(0.5)


def check_alive(child: subprocess.Popen[str], name: str, logs: Path) -> None:
    if child.poll() is not None:
        raise ConfigError(f"{name} exited with {child.returncode}: see {logs / f'{name}.log'}")


def wait_until(producer: subprocess.Popen[str], seconds: float) -> None:
    """Sleep up to ``seconds``, returning early when the producer ends."""
    with suppress(subprocess.TimeoutExpired):
        producer.wait(max(0.0, seconds))


def show_beside(show: list[str], env: dict[str, str], logs: Path) -> subprocess.Popen[str]:
    """Start ``dbt show`` (a second dbt process reading gold, beside ingest and the next
    build)."""
    (logs / "show").mkdir(exist_ok=True)
    return subprocess.Popen(
        show, env=env, cwd=PROJECT_DIR, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, start_new_session=True,
    )  # fmt: skip


def show_result(child: subprocess.Popen[str], logs: Path, number: int) -> bool:
    """Wait for the ``dbt show`` started beside build ``number``; print its answer."""
    output, _ = child.communicate()
    (logs / "show" / "show.log").write_text(output)
    rows = re.search(r'"gold_rows": (\d+)', output)
    if child.returncode == 0 and rows:
        log(f"dbt show beside build {number}: ok, gold.current_rows has {rows[1]} rows")
    else:
        log(f"dbt show beside build {number}: FAILED (see {logs / 'show' / 'show.log'})")
    return child.returncode == 0 and rows is not None


def build(builder: subprocess.Popen[str], logs: Path, number: int) -> dict[str, Any]:
    """One ``dbt build`` by ``builder`` (a :mod:`cdc_lakehouse.tools.dbt_loop` process, its input
    and output piped), its output in ``logs/build-<number>.log``; returns its number, time (s),
    success (false also when the loop process ended), start and end (epoch s)."""
    assert builder.stdin is not None and builder.stdout is not None
    started = time.monotonic()
    started_at = time.time()
    result = None
    with (logs / f"build-{number}.log").open("w") as out:
        try:
            builder.stdin.write(f"build {number}\n")
            builder.stdin.flush()
        except BrokenPipeError:
            out.write(f"the dbt loop process had ended (exit {builder.poll()})\n")
        else:
            for line in builder.stdout:
                result = parse_result(line)
                if result is not None:
                    break
                out.write(line)
    return {
        "number": number,
        "seconds": time.monotonic() - started,
        "ok": result is not None and result["ok"] is True,
        "started_at": started_at,
        "ended_at": time.time(),
        "log": str(logs / f"build-{number}.log"),
    }


def report(result: dict[str, Any], reader_log: ReaderLog) -> None:
    """Print one build's line: time, records in bronze when it started (the reader's last
    read before; the build pins them), freshness and the reader's errors so far."""
    read = reader_log.first_after(result["ended_at"]) if reader_log.reads else None
    before = reader_log.last_before(result["started_at"])
    took = f"{before['bronze_records']:,} records" if before else "n/a (reader not started)"
    if read is None:
        fresh = "n/a (reader not started)"
    else:
        newest = read["newest_event_time"]
        fresh = f"{read['started_at'] - newest:.1f} s" if newest is not None else "n/a (empty)"
    status = "ok" if result["ok"] else f"FAILED (see {result['log']})"
    log(
        f"build {result['number']}: {status} in {result['seconds']:.1f} s; bronze when it "
        f"started {took}; "
        f"freshness {fresh}; reader errors {len(reader_log.errors())} "
        f"in {len(reader_log.reads)} reads"
    )


def produced_records(producer_log: Path) -> int:
    """The records the producer delivered (its summary line ``records=N``)."""
    for line in producer_log.read_text().splitlines():
        if " records=" in line:
            return int(line.split(" records=")[1].split()[0])
    raise ConfigError(f"no summary line in {producer_log}")


def catch_up(env: dict[str, str], produced: int, ingest: subprocess.Popen[str], logs: Path) -> None:
    """Wait until bronze holds ``produced`` records (the ingest job's own log says so)."""
    deadline = time.monotonic() + CATCH_UP_TIMEOUT_S
    log_file = logs / "ingest.log"
    while time.monotonic() < deadline:
        check_alive(ingest, "ingest", logs)
        if ingested_records(log_file) >= produced:
            return
        time.sleep(1)
    raise ConfigError(f"ingest did not catch up within {CATCH_UP_TIMEOUT_S:.0f} s: see {log_file}")


def ingested_records(ingest_log: Path) -> int:
    """Records the continuous ingest job reports written so far (its ``batch ...: N records``
    lines)."""
    total = 0
    for line in ingest_log.read_text(errors="replace").splitlines():
        if line.startswith("batch ") and " records" in line:
            total += int(line.split(": ", 1)[1].split()[0].replace(",", ""))
    return total


def read_loop(interval_s: float, once: bool = False) -> int:
    """The reader process: query gold, print one JSON line, wait ``interval_s`` seconds, again::

        {"started_at": epoch s, "ok": bool, "seconds": float, "gold_rows": int,
         "newest_event_time": epoch s | null, "bronze_records": int,
         "fingerprint": int | null, "error": str | null}

    ``fingerprint``: a sum of hashes of gold's rows (identity, key, values): equal states give
    equal fingerprints, so a read can be matched to the state before or after a build.

    The wait follows each read whatever the read took (a fixed delay, not a period), so a
    reader whose reads slow down under a build's load still leaves the cores to the build
    between them instead of reading back to back.

    Until SIGTERM, or one read with ``once``.
    """
    spark = get_spark()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    while not stop.is_set():
        started = time.time()
        line: dict[str, Any] = {"started_at": started, "ok": True, "error": None}
        try:
            gold = spark.sql(
                "select count(*) as n, unix_millis(max(last_event_time)) as newest, "
                "sum(xxhash64(source_format, source_database, source_schema, source_table, "
                "row_key, to_json(row_values))) as fingerprint from gold.current_rows"
            ).first()
            bronze = spark.sql("select count(*) from bronze.kafka_records").first()
            assert gold is not None and bronze is not None  # aggregates: one row each
            line.update(
                gold_rows=gold["n"],
                newest_event_time=gold["newest"] / 1000 if gold["newest"] is not None else None,
                bronze_records=bronze[0],
                fingerprint=gold["fingerprint"],
            )
        except Exception as exc:  # a reader error is what the demo counts
            line.update(ok=False, error=str(exc).splitlines()[0][:500])
        line["seconds"] = time.time() - started
        print(json.dumps(line), flush=True)
        if once:
            break
        stop.wait(interval_s)
    return 0


def check_gold(oracle_dir: Path, topic: str, records: int) -> dict[str, Any]:
    """Gold against the oracle, and bronze's records: ``{"differences": [str], "gold_rows",
    "oracle_rows", "bronze_records", "bronze_duplicates"}``."""
    spark = get_spark()
    expected: dict[str, Any] = {}
    for document in sorted(oracle_dir.glob("expected/*.json")):
        expected.update(expected_document_tables(json.loads(document.read_text("utf-8"))))
    actual = current_rows_tables(topic_current_rows(spark, [topic]))
    bronze = spark.sql(
        "select count(*) as n, count(*) - count(distinct topic, partition, offset) as twice "
        f"from bronze.kafka_records where topic = '{topic}'"
    ).first()
    assert bronze is not None  # an aggregate: one row
    return {
        "differences": differences(expected, actual),
        "gold_rows": sum(sum(t.values()) for t in actual.values()),
        "oracle_rows": sum(sum(t.values()) for t in expected.values()),
        "bronze_records": bronze["n"],
        "bronze_duplicates": bronze["twice"],
        "produced_records": records,
    }


def main(argv: list[str] | None = None) -> int:
    """Entry point: the demo, or its ``read`` / ``check`` child processes."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        if argv[:1] == ["read"]:
            sub = argparse.ArgumentParser(prog="python -m cdc_lakehouse.tools.live read")
            sub.add_argument("--interval", type=float, default=3.0)
            sub.add_argument("--once", action="store_true", help="one read, then exit")
            read_args = sub.parse_args(argv[1:])
            return read_loop(read_args.interval, read_args.once)
        if argv[:1] == ["check"]:
            sub = argparse.ArgumentParser(prog="python -m cdc_lakehouse.tools.live check")
            sub.add_argument("--oracle", type=Path, required=True)
            sub.add_argument("--topic", required=True)
            sub.add_argument("--records", type=int, required=True)
            args = sub.parse_args(argv[1:])
            print(json.dumps(check_gold(args.oracle, args.topic, args.records)))
            return 0
        args = build_parser().parse_args(argv)
        names = (
            "rate",
            "duration",
            "build_interval",
            "trigger_interval",
            "read_interval",
            "threads",
        )
        for name in names:
            if not getattr(args, name) > 0:
                print(f"error: --{name.replace('_', '-')} must be > 0", file=sys.stderr)
                return 2
        check_spark_settings()  # the processes' settings, before the metastore starts
        return run(
            LiveOptions(
                lake=args.lake,
                format=args.format,
                rate=args.rate,
                duration_s=args.duration,
                build_interval_s=args.build_interval,
                trigger_interval_s=args.trigger_interval,
                read_interval_s=args.read_interval,
                threads=args.threads,
            )
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
