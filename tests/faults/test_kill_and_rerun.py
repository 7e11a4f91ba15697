"""kill -9 and rerun (issue 19, reliability; issue 21, readers; issue 49, on Delta): `dbt`
killed while it creates gold.int_row_versions (gold's incremental model), the ingest job killed
while it writes a batch, and `dbt` killed while it merges into gold.int_row_versions while a
reader in its own process queries gold (every read must return a whole state: the one before
the kill or the one after the rerun; a process started after the kill must read gold's last
good state whole);
each rerun must converge - every Kafka record in bronze once, a `dbt build` whose models and
accounting data tests pass, the same silver and gold as a full refresh, and gold.current_rows
equal to the simulator's oracle.

Real processes, no mocks: `python -m ingest`, `dbt`, the reader (``python -m
cdc_lakehouse.tools.live read``) and a snapshot helper (``tests/faults/snapshot.py``) run as
subprocesses on a lake of their own (``CDC_LAKE_DIR`` in a temporary directory; the test
session's SparkSession is not involved) with a shared PostgreSQL metastore (the ``metastore``
fixture: a server of this module's own), each in its own process group, so that ``SIGKILL``
reaches the Spark JVM and its Python workers too. Each kill waits for the write to be under
way on disk: a data file under the table's directory that no commit of its ``_delta_log`` has
added yet (tests/faults/delta_log.py, which reads a table's committed state without Spark).

One lake, in order (each step's output is kept for the tests below):

1. ``python -m cdc_lakehouse.tools.simulate``: three formats, two delivery batches and the oracle;
   ingest batch 1. dbt builds two of them (var ``cdc_formats``); the third's records must
   land in silver.quarantine.
2. ``dbt build`` without data tests, killed while it creates gold.int_row_versions (``CREATE TABLE
   AS SELECT``: data files under its new directory, no commit yet); the same command again.
3. ingest batch 2 in micro-batches of 500 records, killed while micro-batch 2 is written (its
   files appear under the bronze table's ``ingest_batch_id=2``); the same command again.
4. the reader starts: it queries gold.current_rows and prints a fingerprint of its rows, again
   15 s after each read (:func:`cdc_lakehouse.tools.live.read_loop`); once it has read, ``dbt run``,
   killed while it merges into gold.int_row_versions (a data file of the merge written, not
   committed); the snapshot helper reads the tables (gold must be the state before the kill,
   read from the table's committed files before it); then ``dbt build`` of the seeds, the
   models and the data tests of what a kill could break (every bronze record accounted for,
   bronze's columns: :data:`RERUN_SELECTION`);
   the reader stops after its first read that starts once that build has ended.
5. the snapshot helper: the tables, ``dbt run --full-refresh``, the tables again.

The typed gold tables (``tag:typed_gold``) are left out: they are generated for the bundled
samples' source tables, which this lake does not have. Eleven processes, ten of them starting
Spark: about 7 minutes on 2 cores, 11 when other jobs share them (21 beside the session lake's
tests in `make test`'s other worker), 14-17 on a machine 2.5-3x slower (``-s`` prints each
step's time; bench/HISTORY.md "Test suite time" has them).

The embedded Derby metastore is not used here; a rerun that opens it after a SIGKILLed JVM is
tested in tests/ingest/test_ingest_job.py (the ingest job killed, then rerun).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.tools.simulate.gold_check import (
    current_rows_tables,
    differences,
    expected_document_tables,
)
from ingest.bronze import CRASH_ENV
from ingest.dump import load_dump
from tests.faults.delta_log import committed_files, has_commit, read_table, uncommitted_files
from tests.ingest.test_ingest_job import reap_group

pytestmark = pytest.mark.dbt

PROJECT_DIR = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# two formats the project decodes: Canal (several rows per message) and DataWorks (split
# updates paired across batches by an intermediate model); the formats' own rules and their
# incremental runs are tested on the session lake (tests/dbt_models), a kill is not about them
FORMATS = ("dts_canal_json", "dataworks_json")
# simulated too, but left out of the project by var cdc_formats: its records are quarantined
LEFT_OUT = "lindorm_debezium"
SIMULATION = ("--changes", "1000", "--seed", "19", "--duplicate-rate", "0.05")
SIMULATION += ("--malformed-rate", "0.003", "--batches", "2")
RECORDS_PER_BATCH = 500
ROW_VERSIONS = "START sql incremental model gold.int_row_versions"
IDENTITY = ("source_format", "source_database", "source_schema", "source_table", "row_key")
# the project builds only the simulated formats' models (var cdc_formats)
CHOSEN_FORMATS = "{cdc_formats: [" + ", ".join(FORMATS) + "]}"
DBT_SELECTION = ("--exclude", "tag:typed_gold", "--vars", CHOSEN_FORMATS)
# a build leaves out the unit tests (fixed rows, not the lake: tests/dbt_models/test_unit_tests.py)
EXCLUDE_UNIT_TESTS = ("--exclude-resource-type", "unit_test")
TIMEOUT = 900
# the pause after each read: with 1 s (a read every ~2 s) the reader took most of a core, and
# the killed `dbt run` beside it took 5 min where the build before it took 2; with 5 s the
# killed run still took 331 s beside it (`make test`, 2026-12-01). A read every ~17 s still
# reads before, during (the killed run writes for over a minute) and after every step it must see
READ_INTERVAL_S = 15.0
# the rerun after the killed merge: every model, and the data tests that check what a kill
# could break, that every bronze record is accounted for once and bronze's columns; the other
# data tests check each model's rules, on the session lake's builds (tests/dbt_models)
# (``empty``: not the models' own tests, which dbt's default would add)
RERUN_SELECTION = (
    "--select",
    "resource_type:seed resource_type:model"
    " assert_every_bronze_record_accounted_for column_checks_bronze_kafka_records",
    "--indirect-selection",
    "empty",
)


@dataclass
class Run:
    """One subprocess: its command, exit code (``-9`` when killed), output lines, seconds, and
    when it started and ended (epoch s; ended: its process group gone)."""

    args: list[str]
    returncode: int
    lines: list[str]
    seconds: float
    started_at: float
    ended_at: float

    @property
    def output(self) -> str:
        return "".join(self.lines)


class Lake:
    """A lake directory and the commands run on it, from the project directory."""

    def __init__(self, root: Path, metastore: dict[str, str]) -> None:
        self.root = root
        self.dir = root / "lake"
        self.warehouse = self.dir / "warehouse"
        self.checkpoint = self.dir / "checkpoints" / "bronze.kafka_records"
        self.runs: list[Run] = []
        self.env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
        self.env.update(
            CDC_LAKE_DIR=str(self.dir),
            CDC_SPARK_DRIVER_MEMORY=os.environ.get("CDC_SPARK_DRIVER_MEMORY", "2g"),
            CDC_SPARK_SHUFFLE_PARTITIONS="2",
            SPARK_LOCAL_IP="127.0.0.1",
            DBT_SEND_ANONYMOUS_USAGE_STATS="false",
            DBT_USE_COLORS="false",
            PYTHONUNBUFFERED="1",
            **metastore,
        )

    def dbt_args(self, *args: str) -> list[str]:
        return [
            *args,
            *(EXCLUDE_UNIT_TESTS if args[:1] == ("build",) else ()),
            *DBT_SELECTION,
            "--project-dir",
            str(PROJECT_DIR),
            "--profiles-dir",
            str(PROJECT_DIR),
            "--target-path",
            str(self.root / "target"),
            "--log-path",
            str(self.root / "logs"),
        ]

    def run(self, args: list[str], kill_when: Callable[[list[str]], bool] | None = None) -> Run:
        """Run ``args``; with ``kill_when``, SIGKILL the whole process group as soon as it
        returns true (asked every 10 ms with the output lines so far)."""
        started, started_at = time.monotonic(), time.time()
        proc = subprocess.Popen(
            args,
            cwd=PROJECT_DIR,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        pending: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                pending.put(line)
            pending.put(None)

        threading.Thread(target=pump, daemon=True).start()
        lines: list[str] = []
        ended = False
        try:
            while not ended and time.monotonic() - started < TIMEOUT:
                try:
                    line = pending.get(timeout=0.01)
                except queue.Empty:
                    line = ""
                if line is None:
                    ended = True
                elif line:
                    lines.append(line)
                if kill_when is not None and not ended and kill_when(lines):
                    os.killpg(proc.pid, signal.SIGKILL)
                    break
        finally:
            reap_group(proc.pid)  # the JVM too, so that the next command can open the metastore
            proc.wait(timeout=60)
        ended_at = time.time()
        while not ended and (line := pending.get(timeout=30)) is not None:
            lines.append(line)
        run = Run(args, proc.returncode, lines, time.monotonic() - started, started_at, ended_at)
        self.runs.append(run)
        (self.root / f"run-{len(self.runs)}.log").write_text(run.output)
        return run

    def ingest(self, dump: Path, *extra: str, **kill: Any) -> Run:
        return self.run([sys.executable, "-m", "ingest", "--dump", str(dump), *extra], **kill)

    def dbt(self, *args: str, **kill: Any) -> Run:
        return self.run([str(BIN / "dbt"), *self.dbt_args(*args)], **kill)


class Reader:
    """``python -m cdc_lakehouse.tools.live read`` on the lake: a process querying gold.current_rows
    again :data:`READ_INTERVAL_S` s after each read, its reads (JSON lines: ``started_at`` epoch
    s, ``ok``, ``gold_rows``, ``fingerprint``, ``error``) collected in :attr:`reads` as they
    come; its stderr goes to ``reader.log`` in the lake's root."""

    def __init__(self, lake: Lake) -> None:
        self.log = lake.root / "reader.log"
        self.reads: list[dict[str, Any]] = []
        interval = str(READ_INTERVAL_S)
        with self.log.open("w") as stderr:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "cdc_lakehouse.tools.live", "read", "--interval", interval],
                cwd=lake.root,
                env=lake.env,
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                start_new_session=True,
            )
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("{"):
                self.reads.append(json.loads(line))

    def wait_for(self, done: Callable[[list[dict[str, Any]]], bool], timeout_s: float) -> None:
        """Wait until ``done(reads)``; fail after ``timeout_s`` or when the reader exited."""
        deadline = time.monotonic() + timeout_s
        while not done(self.reads):
            assert self.proc.poll() is None, f"the reader exited: see {self.log}"
            assert time.monotonic() < deadline, f"no such read in {timeout_s} s: see {self.log}"
            time.sleep(0.2)

    def stop(self) -> None:
        """SIGTERM (it ends after its read), then whatever is left of its process group."""
        self.proc.terminate()
        try:
            self.proc.wait(60)
        finally:
            reap_group(self.proc.pid)


def succeeded(run: Run) -> Run:
    assert run.returncode == 0, f"{' '.join(run.args)} exited {run.returncode}:\n{run.output}"
    return run


def writing(directory: Path, before: set[Path] | None = None) -> Callable[[list[str]], bool]:
    """True once ``directory`` (a Delta table's) holds a data file that no commit has added and
    that is not in ``before`` (the uncommitted files an earlier killed write left): a write in
    progress. A file the writer removes while the glob walks means "not yet": asked again."""

    def check(_lines: list[str]) -> bool:
        try:
            return directory.is_dir() and bool(uncommitted_files(directory) - (before or set()))
        except FileNotFoundError:
            return False

    return check


def started(marker: str, then: Callable[[list[str]], bool]) -> Callable[[list[str]], bool]:
    """``then``, asked only after an output line containing ``marker``."""
    return lambda lines: any(marker in line for line in lines) and then(lines)


def bronze_records(warehouse: Path) -> Counter[tuple[str, int, int, bytes | None]]:
    """(topic, partition, offset, value) of every row of bronze's latest commit, read from its
    committed files (nothing half written)."""
    columns = ["topic", "partition", "offset", "value"]
    rows = read_table(warehouse / "bronze.db" / "kafka_records", columns)
    return Counter(tuple(row[c] for c in columns) for row in rows)  # type: ignore[misc]


def gold_from_files(row_versions_dir: Path) -> dict[str, set[tuple[Any, ...]]]:
    """gold.int_row_versions read from its committed files (no metastore, no Spark):
    ``{"int_row_versions": {(*identity, last_resolved_batch_id)}, "current_rows": {(*identity,
    last_ordering_key)}}``, current_rows as gold derives it (the identities whose last version
    is not deleted)."""
    rows = read_table(row_versions_dir, [*IDENTITY, "versions", "last_resolved_batch_id"])
    return {
        "int_row_versions": {
            (*(row[c] for c in IDENTITY), row["last_resolved_batch_id"]) for row in rows
        },
        "current_rows": {
            (*(row[c] for c in IDENTITY), row["versions"][-1]["ordering_key"])
            for row in rows
            if row["versions"] and not row["versions"][-1]["is_deleted"]
        },
    }


def gold_from_snapshot(tables: dict[str, list[str]]) -> dict[str, set[tuple[Any, ...]]]:
    """The same sets from a snapshot helper's tables (rows as JSON objects)."""
    versions = [json.loads(row) for row in tables["gold.int_row_versions"]]
    current = [json.loads(row) for row in tables["gold.current_rows"]]
    return {
        "int_row_versions": {
            (*(row.get(c) for c in IDENTITY), row["last_resolved_batch_id"]) for row in versions
        },
        "current_rows": {
            (*(row.get(c) for c in IDENTITY), row["last_ordering_key"]) for row in current
        },
    }


@pytest.fixture(scope="module")
def killed_and_rerun(
    tmp_path_factory: pytest.TempPathFactory, metastore: dict[str, str]
) -> dict[str, Any]:
    """Steps 1 to 5 of the module docstring on one lake; what the tests check."""
    started_at = time.monotonic()
    lake = Lake(tmp_path_factory.mktemp("kill-and-rerun"), metastore)
    sim = lake.root / "sim"
    simulate = [
        sys.executable,
        "-m",
        "cdc_lakehouse.tools.simulate",
        "--out",
        str(sim),
        *SIMULATION,
    ]
    simulated = (*FORMATS, LEFT_OUT)
    succeeded(lake.run([*simulate, *(arg for fmt in simulated for arg in ("--format", fmt))]))
    succeeded(lake.ingest(sim / "batch-1"))

    # 2. the first build, killed while it creates gold.int_row_versions, then the same command again
    row_versions_dir = lake.warehouse / "gold.db" / "int_row_versions"
    first_build = ("build", "--exclude-resource-type", "test")
    killed_create = lake.dbt(
        *first_build, kill_when=started(ROW_VERSIONS, writing(row_versions_dir))
    )
    create_leftover = row_versions_dir.is_dir() and not has_commit(row_versions_dir)
    create_rerun = succeeded(lake.dbt(*first_build))

    # 3. ingest killed while micro-batch 2 is being written, then the same command again
    batch_2 = [str(sim / "batch-2"), "--max-records-per-batch", str(RECORDS_PER_BATCH)]
    bronze_dir = lake.warehouse / "bronze.db" / "kafka_records"
    # micro-batch 1 committed (its line printed), micro-batch 2 writing its files
    killed_ingest = lake.ingest(*batch_2, kill_when=started("batch 1:", writing(bronze_dir)))
    after_ingest_kill = {
        "offsets": sorted(p.name for p in (lake.checkpoint / "offsets").iterdir()),
        "commits": sorted(p.name for p in (lake.checkpoint / "commits").iterdir()),
        "partitions": sorted(
            {
                f"ingest_batch_id={p['ingest_batch_id']}"
                for p in committed_files(bronze_dir).values()
            }
        ),
    }
    ingest_rerun = succeeded(lake.ingest(*batch_2))
    bronze = bronze_records(lake.warehouse)

    # 4. a reader from here on; dbt killed while it merges into gold.int_row_versions, gold
    # read by a new process, then `dbt build` with the accounting data tests
    last_good = gold_from_files(row_versions_dir)  # created in step 2: its commits are here
    left_before = uncommitted_files(row_versions_dir)  # by the creation killed in step 2
    snapshot = [sys.executable, "-m", "tests.faults.snapshot"]
    reader = Reader(lake)
    try:
        reader.wait_for(bool, timeout_s=180)  # a read of the state before the killed run
        killed_dbt = lake.dbt(
            "run", kill_when=started(ROW_VERSIONS, writing(row_versions_dir, left_before))
        )
        row_versions_leftovers = sorted(uncommitted_files(row_versions_dir) - left_before)
        after_kill = lake.root / "after-kill"
        succeeded(lake.run([*snapshot, str(after_kill)]))
        dbt_rerun = lake.dbt("build", *RERUN_SELECTION)
        reader.wait_for(
            lambda reads: any(r["started_at"] > dbt_rerun.ended_at for r in reads), timeout_s=60
        )
    finally:
        reader.stop()
    reads = list(reader.reads)
    (lake.root / "reads.jsonl").write_text("".join(f"{json.dumps(r)}\n" for r in reads))

    # 5. the incremental tables, a full refresh, the tables again
    topics = {r.topic for r in load_dump(sim / "batch-1")}
    groups = {fmt: ",".join(sorted(t for t in topics if t.endswith(f".{fmt}"))) for fmt in FORMATS}
    snapshots = lake.root / "snapshots"
    topic_args = [arg for group in groups.values() for arg in ("--topics", group)]
    full_refresh = [*topic_args, "--full-refresh", *lake.dbt_args()]
    succeeded(lake.run([*snapshot, str(snapshots), *full_refresh]))
    timings = "\n".join(
        f"  {run.seconds:5.0f} s  exit {run.returncode:3}  {' '.join(run.args[1:4])}"
        for run in lake.runs
    )
    seen = len({r["fingerprint"] for r in reads})
    print(f"\nkill-and-rerun steps:\n{timings}\n  {time.monotonic() - started_at:5.0f} s  in all")
    print(f"  reader (step 4): {len(reads)} reads, {seen} states")
    return {
        "sim": sim,
        "row_versions_dir": row_versions_dir,
        "killed_create": killed_create,
        "create_leftover": create_leftover,
        "create_rerun": create_rerun,
        "killed_ingest": killed_ingest,
        "after_ingest_kill": after_ingest_kill,
        "ingest_rerun": ingest_rerun,
        "bronze": bronze,
        "killed_dbt": killed_dbt,
        "reads": reads,
        "row_versions_leftovers": row_versions_leftovers,
        "last_good": last_good,
        "after_kill": json.loads((after_kill / "incremental.json").read_text())["tables"],
        "dbt_rerun": dbt_rerun,
        "incremental": json.loads((snapshots / "incremental.json").read_text()),
        "full_refresh": json.loads((snapshots / "full_refresh.json").read_text()),
        "groups": groups,
    }


def killed_in_row_versions(run: Run) -> None:
    """``run`` was SIGKILLed after gold.int_row_versions started and before it was done."""
    assert run.returncode == -signal.SIGKILL, run.output
    assert ROW_VERSIONS in run.output, run.output
    assert "OK created sql incremental model gold.int_row_versions" not in run.output, run.output
    assert "Done." not in run.output, run.output


def test_dbt_killed_creating_row_versions_then_rerun_creates_it(killed_and_rerun):
    """A table killed while it is created leaves its directory, without a commit (Delta would
    refuse to create the table there, DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION): the rerun
    removes it and creates the table."""
    result = killed_and_rerun
    killed_in_row_versions(result["killed_create"])
    assert result["create_leftover"], "int_row_versions was not being written when killed"
    rerun = result["create_rerun"].output
    removed = f"removed {result['row_versions_dir']}: left by a table creation that was interrupted"
    assert removed in rerun, rerun
    assert "OK created sql incremental model gold.int_row_versions" in rerun, rerun


def test_ingest_killed_mid_batch_then_rerun_writes_every_record_once(killed_and_rerun):
    result = killed_and_rerun
    killed, state = result["killed_ingest"], result["after_ingest_kill"]
    assert killed.returncode == -signal.SIGKILL, killed.output
    # killed while writing micro-batch 2: planned in the checkpoint, not committed there. Its
    # bronze append is one Delta commit: not made yet, or made just before the kill (the kill
    # can land between Delta's commit and the checkpoint's), which the rerun's replay of the
    # same micro-batch then skips (the append's txnAppId / txnVersion): exactly once below
    assert "batch 1:" in killed.output and "batch 2:" not in killed.output, killed.output
    assert "2" in state["offsets"] and "2" not in state["commits"] and "1" in state["commits"]
    assert state["partitions"], state  # the earlier batches are committed
    # the rerun replays micro-batch 2 (same offsets), then writes the rest
    rerun = result["ingest_rerun"].output
    assert "batch 1:" not in rerun and "batch 2:" in rerun, rerun
    assert rerun.rstrip().splitlines()[-1].startswith("done: "), rerun
    # every record of both dumps in bronze exactly once, nothing else
    sim = result["sim"]
    expected = Counter(
        (r.topic, r.partition, r.offset, r.value)
        for batch in ("batch-1", "batch-2")
        for r in load_dump(sim / batch)
    )
    bronze = result["bronze"]
    assert sum(bronze.values()) == sum(expected.values())
    assert bronze == expected, (
        f"{len(expected - bronze)} records missing, {len(bronze - expected)} extra or repeated"
    )


def test_dbt_killed_in_a_merge_leaves_gold_readable_as_before(killed_and_rerun):
    """Killed while the merge into int_row_versions wrote its files: a process started after
    the kill reads gold.int_row_versions and gold.current_rows whole, as they were before."""
    result = killed_and_rerun
    killed_in_row_versions(result["killed_dbt"])
    assert result["row_versions_leftovers"], "int_row_versions was not being written when killed"
    last_good, after_kill = result["last_good"], gold_from_snapshot(result["after_kill"])
    assert last_good["current_rows"], "no current row before the kill"
    for table in ("int_row_versions", "current_rows"):
        assert after_kill[table] == last_good[table], (
            table,
            len(after_kill[table] - last_good[table]),
            len(last_good[table] - after_kill[table]),
        )


def first_read_after(reads: list[dict[str, Any]], at: float) -> dict[str, Any]:
    """The first read that started after ``at`` (epoch s)."""
    return next(r for r in reads if r["started_at"] > at)


def test_dbt_was_killed_while_the_reader_read(killed_and_rerun):
    """The reader read gold before the killed run started, and read during that run."""
    result = killed_and_rerun
    killed, reads = result["killed_dbt"], result["reads"]
    assert killed.returncode == -signal.SIGKILL, killed.output[-3000:]
    assert reads and reads[0]["started_at"] < killed.started_at, reads[:1]
    assert any(killed.started_at <= r["started_at"] <= killed.ended_at for r in reads)


def test_every_read_returns_the_whole_state_before_the_kill_or_after_the_rerun(killed_and_rerun):
    """No reader error; each read's fingerprint is that of the state before the killed run
    (gold as step 2 left it: its row count that of the Parquet files read before the kill) or
    of the state after the rerun, and the first read after the kill is the state before."""
    result = killed_and_rerun
    reads, killed = result["reads"], result["killed_dbt"]
    errors = [r["error"] for r in reads if not r["ok"]]
    assert not errors, errors[:3]
    before = reads[0]
    assert before["gold_rows"] == len(result["last_good"]["current_rows"]) > 0, before
    after = first_read_after(reads, result["dbt_rerun"].ended_at)
    assert before["fingerprint"] != after["fingerprint"]
    states = Counter(r["fingerprint"] for r in reads)
    assert set(states) <= {before["fingerprint"], after["fingerprint"]}, (states, before, after)
    # the killed run left the last good state
    assert first_read_after(reads, killed.ended_at)["fingerprint"] == before["fingerprint"]


def test_the_reader_sees_the_rerun_gold_that_equals_the_full_refresh_and_the_oracle(
    killed_and_rerun,
):
    """The state the reader reads after the rerun is the gold the tests below compare (with a
    full refresh and with the oracle): as many rows as that snapshot of gold.current_rows."""
    result = killed_and_rerun
    after = first_read_after(result["reads"], result["dbt_rerun"].ended_at)
    compared = result["incremental"]["tables"]["gold.current_rows"]
    assert after["gold_rows"] == len(compared) > 0, (after, len(compared))


def test_dbt_killed_in_row_versions_then_rerun_build_passes(killed_and_rerun):
    result = killed_and_rerun
    killed_in_row_versions(result["killed_dbt"])
    rerun = succeeded(result["dbt_rerun"])
    assert "Completed successfully" in rerun.output
    # the killed merge's files never became part of the table (VACUUM removes them)
    committed = set(committed_files(result["row_versions_dir"]))
    assert not committed & set(result["row_versions_leftovers"])
    for node in (
        "OK created sql incremental model gold.int_row_versions",
        "PASS assert_every_bronze_record_accounted_for",
        "PASS column_checks_bronze_kafka_records",
    ):
        assert node in rerun.output, node


def test_rerun_gives_the_tables_of_a_full_refresh(killed_and_rerun):
    incremental = killed_and_rerun["incremental"]["tables"]
    full_refresh = killed_and_rerun["full_refresh"]["tables"]
    assert set(incremental) == set(full_refresh)
    problems = {
        table: {
            "rows": len(full_refresh[table]),
            "only_incremental": len(Counter(rows) - Counter(full_refresh[table])),
            "only_full_refresh": len(Counter(full_refresh[table]) - Counter(rows)),
        }
        for table, rows in incremental.items()
        if Counter(rows) != Counter(full_refresh[table])
    }
    assert not problems, problems
    assert all(incremental[table] for table in incremental), "a compared table is empty"


def test_records_of_a_format_left_out_by_cdc_formats_are_quarantined(killed_and_rerun):
    """var cdc_formats lists three of the four simulated formats: every record of the fourth
    is in silver.quarantine (unsupported_format, the var named), none is a change event, and
    the build's accounting test passed (test_dbt_killed_in_row_versions_then_rerun_build_passes)."""
    result = killed_and_rerun
    records = [
        r
        for batch in ("batch-1", "batch-2")
        for r in load_dump(result["sim"] / batch)
        if r.topic.endswith(f".{LEFT_OUT}")
    ]
    assert records
    tables = result["incremental"]["tables"]
    quarantined = [
        row
        for row in map(json.loads, tables["silver.quarantine"])
        if row["source_format"] == LEFT_OUT
    ]
    assert sorted((r["kafka_topic"], r["kafka_offset"]) for r in quarantined) == sorted(
        (r.topic, r.offset) for r in records
    )
    assert {(r["reason"], r["reason_detail"]) for r in quarantined} == {
        ("unsupported_format", f"format {LEFT_OUT} is not in var cdc_formats")
    }
    assert not [r for r in tables["silver.change_events"] if f'"{LEFT_OUT}"' in r]


def test_current_rows_equal_the_oracle(killed_and_rerun):
    result = killed_and_rerun
    for fmt, group in result["groups"].items():
        assert group, f"no topic of {fmt}"
        document = json.loads((result["sim"] / "expected" / f"{fmt}.json").read_text())
        expected = expected_document_tables(document)
        for snapshot in ("incremental", "full_refresh"):
            actual = current_rows_tables(result[snapshot]["current_rows"][group])
            assert not differences(expected, actual), (fmt, snapshot, differences(expected, actual))
