"""The ingest job end to end: in-process with the session ``spark`` fixture (own tables under
``bronze.t_*`` and own checkpoints), and ``python -m ingest`` subprocesses with their own
``CDC_LAKE_DIR`` (crash recovery, error messages)."""

from __future__ import annotations

import base64
import io
import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

from cdc_lakehouse.runtime.settings import ConfigError
from ingest.bronze import CRASH_ENV
from ingest.cli import _dump_error_in, main
from ingest.dump import load_dump
from ingest.job import IngestOptions, IngestResult, plan_ingest, run_ingest

PROJECT_DIR = Path(__file__).resolve().parents[2]
TOPICS = ("shop.orders", "shop.users")
Row = tuple[str, int, int, bytes | None, bytes | None, int, int, tuple]


# --------------------------------------------------------------------------- helpers


def write_registry(path: Path) -> Path:
    lines = ["topic,format,source_dialect,canal_legacy_swap,description"]
    lines += [f"{t},dataworks_json,mysql,false,test topic" for t in TOPICS]
    path.write_text("\n".join(lines) + "\n")
    return path


def order(offset: int, **extra: Any) -> dict[str, Any]:
    """A text record of shop.orders partition 0 with an explicit offset."""
    return {
        "topic": "shop.orders",
        "partition": 0,
        "offset": offset,
        "timestamp": 1_700_000_000_000 + offset,
        "key": json.dumps({"id": offset}),
        "value": json.dumps({"op": "INSERT", "id": offset}),
        **extra,
    }


def user(i: int) -> dict[str, Any]:
    """A binary record of shop.users partition 1 without offset or timestamp (line order)."""
    return {
        "topic": "shop.users",
        "partition": 1,
        "key_base64": "AAE=",
        "value_base64": base64.b64encode(bytes([255, i])).decode(),
        "headers": [{"key": "seq", "value": str(i)}, {"key": "bin", "value_base64": "AP8="}],
    }


def write_lines(path: Path, records: list[dict[str, Any]], mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open(mode, encoding="utf-8") as handle:
        for rec in records:
            handle.write(json.dumps(rec) + "\n")
    return path


def expected_rows(dump: Path) -> list[Row]:
    """What bronze must hold for ``dump``: every distinct record once."""
    return sorted(
        (
            r.topic,
            r.partition,
            r.offset,
            r.key,
            r.value,
            r.timestamp_ms,
            r.timestamp_type,
            tuple(r.headers),
        )
        for r in load_dump(dump, TOPICS)
    )


def bronze_rows(df: Any) -> list[Row]:
    """Rows of a bronze DataFrame in the shape of :func:`expected_rows` (duplicates kept)."""
    rows = df.selectExpr(
        "topic",
        "partition",
        "offset",
        "key",
        "value",
        "unix_millis(timestamp) AS ts",
        "timestampType",
        "headers",
    ).collect()

    def b(value: Any) -> bytes | None:
        return None if value is None else bytes(value)

    return sorted(
        (
            r["topic"],
            r["partition"],
            r["offset"],
            b(r["key"]),
            b(r["value"]),
            r["ts"],
            r["timestampType"],
            tuple((h["key"], b(h["value"])) for h in r["headers"]),
        )
        for r in rows
    )


def uncommit(checkpoint: Path, batch_id: int) -> None:
    """Make the checkpoint look like the process died after writing ``batch_id``, before
    committing it (the commit log entry and its checksum file are gone)."""
    (checkpoint / "commits" / str(batch_id)).unlink()
    (checkpoint / "commits" / f".{batch_id}.crc").unlink(missing_ok=True)


def ingest(
    spark: Any, dump: Path, registry: Path, table: str, checkpoint: Path, max_records: int | None
) -> tuple[IngestResult, str]:
    out = io.StringIO()
    options = IngestOptions(dump, registry, table, checkpoint, max_records)
    result = run_ingest(spark, plan_ingest(options), out=out)
    return result, out.getvalue()


# --------------------------------------------------------------------------- in-process


def test_rerun_append_and_overlapping_dump_add_only_new_offsets(spark: Any, tmp_path: Path) -> None:
    registry = write_registry(tmp_path / "topics.csv")
    dump = tmp_path / "dump"
    first = write_lines(
        dump / "a.jsonl", [order(i) for i in range(5)] + [user(i) for i in range(3)]
    )
    table, checkpoint = "bronze.t_rerun", tmp_path / "checkpoint"
    spark.sql(f"DROP TABLE IF EXISTS {table}")

    result, out = ingest(spark, dump, registry, table, checkpoint, None)
    assert (result.records, result.batches) == (8, 1)
    assert bronze_rows(spark.table(table)) == expected_rows(dump)
    assert "shop.orders [0]: 5 records, offsets 0 -> 4" in out
    assert "shop.users [1]: 3 records, offsets 0 -> 2" in out
    assert out.rstrip().splitlines()[-1].startswith("done: 8 records written to bronze.t_rerun")
    row = spark.table(table).where("topic = 'shop.users' AND offset = 2").first()
    assert bytes(row["value"]) == b"\xff\x02"
    assert [(h["key"], bytes(h["value"])) for h in row["headers"]] == [
        ("seq", b"2"),
        ("bin", b"\x00\xff"),
    ]
    assert row["ingest_batch_id"] == 0 and row["ingested_at"] is not None

    result, out = ingest(spark, dump, registry, table, checkpoint, None)  # same dump again
    assert (result.records, result.batches) == (0, 0)
    assert "nothing beyond the checkpoint" in out
    assert spark.table(table).count() == 8

    write_lines(first, [order(5), order(6)], mode="a")  # the dump grows
    result, _ = ingest(spark, dump, registry, table, checkpoint, None)
    assert (result.records, result.batches) == (2, 1)

    # a second, overlapping dump file: offsets 4..6 again (identical), 7..8 new
    write_lines(dump / "b.jsonl", [order(i) for i in range(4, 9)])
    result, out = ingest(spark, dump, registry, table, checkpoint, None)
    assert (result.records, result.batches) == (2, 1)
    assert "shop.orders [0]: 2 records, offsets 7 -> 8" in out
    assert bronze_rows(spark.table(table)) == expected_rows(dump)
    batch_ids = [r[0] for r in spark.sql(f"SELECT DISTINCT ingest_batch_id FROM {table}").collect()]
    assert sorted(batch_ids) == [0, 1, 2]

    # guards: rows without their checkpoint, and a checkpoint without its rows
    with pytest.raises(ConfigError, match=r"holds rows but its checkpoint .* is missing"):
        ingest(spark, dump, registry, table, tmp_path / "other-checkpoint", None)
    with pytest.raises(ConfigError, match=r"has 3 committed batch\(es\) but table .* not exist"):
        ingest(spark, dump, registry, "bronze.t_rerun_missing", checkpoint, None)
    spark.sql(f"DROP TABLE {table}")


def test_max_records_per_batch_gives_several_batches_and_the_same_rows(
    spark: Any, tmp_path: Path
) -> None:
    registry = write_registry(tmp_path / "topics.csv")
    dump = write_lines(
        tmp_path / "dump.jsonl", [order(i) for i in range(7)] + [user(i) for i in range(4)]
    )
    table = "bronze.t_capped"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    result, out = ingest(spark, dump, registry, table, tmp_path / "checkpoint", 3)
    assert (result.records, result.batches) == (11, 4)
    assert bronze_rows(spark.table(table)) == expected_rows(dump)
    per_batch = spark.sql(
        f"SELECT ingest_batch_id, count(*) FROM {table} GROUP BY 1 ORDER BY 1"
    ).collect()
    assert [tuple(r) for r in per_batch] == [(0, 3), (1, 3), (2, 3), (3, 2)]
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("batch")] == [
        f"batch {i}" for i in range(4)
    ]

    # a crash after the write of batch 3, before its commit: the rerun replays it in place
    checkpoint = tmp_path / "checkpoint"
    uncommit(checkpoint, 3)
    result, out = ingest(spark, dump, registry, table, checkpoint, 3)
    assert (result.records, result.batches) == (2, 1)
    assert "batch 3: 2 records" in out
    assert bronze_rows(spark.table(table)) == expected_rows(dump)

    # ... but not with a dump that lacks the pending batch's records
    uncommit(checkpoint, 3)
    before = bronze_rows(spark.table(table))
    lines = dump.read_text().splitlines(keepends=True)
    dump.write_text("".join(lines[:-1]))
    with pytest.raises(StreamingQueryException, match="rerun with the dump the interrupted run"):
        ingest(spark, dump, registry, table, checkpoint, 3)
    assert bronze_rows(spark.table(table)) == before
    spark.sql(f"DROP TABLE {table}")


def test_cli_argument_errors(capsys: pytest.CaptureFixture[str]) -> None:
    spark_text = (
        "[STREAM_FAILED] Query ...\n  File x.py\ncdc_lakehouse.dump.DumpError: a.jsonl:2: bad\n"
    )
    assert _dump_error_in(spark_text) == "a.jsonl:2: bad"
    assert _dump_error_in("[STREAM_FAILED] something else") is None
    for argv, message in [
        ([], "the following arguments are required: --dump"),
        (["--dump", "x", "--max-records-per-batch", "0"], "must be >= 1"),
        (["--dump", "x", "--table", "bad name"], "--table 'bad name': use schema.name"),
    ]:
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2, argv
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, err


def test_cli_unexpected_error_exits_2_with_one_line_and_a_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def fail(_options: IngestOptions) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setenv("CDC_LAKE_DIR", str(tmp_path / "lake"))
    monkeypatch.setattr("ingest.job.plan_ingest", fail)
    assert main(["--dump", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    logs = list((tmp_path / "lake" / "logs").glob("ingest-error-*.log"))
    assert len(logs) == 1
    assert err == f"error: unexpected RuntimeError: boom (details in {logs[0]})\n"
    log = logs[0].read_text()
    assert "Traceback (most recent call last)" in log and "in fail" in log


# --------------------------------------------------------------------------- subprocesses


def cli_env(lake: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    env.update(
        CDC_LAKE_DIR=str(lake),
        CDC_SPARK_DRIVER_MEMORY="1g",
        CDC_SPARK_SHUFFLE_PARTITIONS="2",
        SPARK_LOCAL_IP="127.0.0.1",
        PYTHONUNBUFFERED="1",
        **extra,
    )
    return env


def live_members(pgid: int) -> list[int]:
    """Pids of the process group that are not zombies (orphaned JVMs may stay zombies here)."""
    pids = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            pids.append(int(stat.parent.name))
    return pids


def reap_group(pgid: int, timeout: float = 30.0) -> None:
    """SIGKILL what is left of a process group (the JVM, Python workers); wait until gone, so
    that the next run can open the same Derby metastore."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while live_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)


def run_cli(args: list[str], env: dict[str, str], timeout: float = 240) -> tuple[int, str, str]:
    """``python -m ingest ARGS`` from the project root in its own process group."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ingest", *args],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        reap_group(proc.pid)
    return proc.returncode, out, err


def lake_rows(spark: Any, lake: Path) -> list[Row]:
    """The bronze rows a subprocess wrote: the Delta table's current snapshot, read by path
    (the files of a write killed before its commit, or of a skipped replay, are not in it)."""
    path = lake / "warehouse" / "bronze.db" / "kafka_records"
    return bronze_rows(spark.read.format("delta").load(str(path)))


def run_until_killed(
    args: list[str], env: dict[str, str], marker: str, delay: float, timeout: float = 180
) -> str:
    """Start ``python -m ingest ARGS``, wait (up to ``timeout`` s) for a stdout line starting
    with ``marker``, wait ``delay`` seconds more, then SIGKILL the whole process group (Python,
    JVM, workers)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "ingest", *args],
        cwd=PROJECT_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    seen: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        while not any(s.startswith(marker) for s in seen):
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, f"ended before {marker!r}: {seen}"
            seen.append(line)
        time.sleep(delay)
    finally:
        reap_group(proc.pid)
        proc.wait(timeout=30)
    return "".join(seen)


def test_crash_after_write_then_sigkill_then_rerun_is_exactly_once(
    spark: Any, tmp_path: Path
) -> None:
    """One lake, three runs (each JVM start is expensive):

    1. the crash hook exits right after writing batch 1, before its checkpoint commit;
    2. the rerun replays batch 1 and is SIGKILLed at a random moment after that;
    3. the last run finishes: every record is in bronze exactly once, and it prints no stack
       trace for the bronze database that exists (before: Hive's ~95-line
       ``AlreadyExistsException: Database bronze already exists`` at ERROR and Spark's "was
       created concurrently" warning, on every run after the first).
    """
    registry = write_registry(tmp_path / "topics.csv")
    dump = write_lines(
        tmp_path / "dump.jsonl", [order(i) for i in range(16)] + [user(i) for i in range(8)]
    )
    lake = tmp_path / "lake"
    checkpoint = lake / "checkpoints" / "bronze.kafka_records"
    args = ["--dump", str(dump), "--registry", str(registry), "--max-records-per-batch", "3"]

    code, out, err = run_cli(args, cli_env(lake, **{CRASH_ENV: "1"}))
    assert code == 137, err
    assert "batch 1:" in out and "batch 2:" not in out and "done:" not in out
    assert (checkpoint / "offsets" / "1").exists() and not (checkpoint / "commits" / "1").exists()
    written = lake_rows(spark, lake)
    assert len(written) == 6 and len(set(written)) == 6

    delay = random.uniform(0.0, 4.0)
    out = run_until_killed(args, cli_env(lake), "batch 1:", delay)
    assert "batch 0:" not in out  # batch 1 was replayed, not batch 0

    code, out, err = run_cli(args, cli_env(lake))
    assert code == 0, err
    assert out.rstrip().splitlines()[-1].startswith("done: ")
    assert lake_rows(spark, lake) == expected_rows(dump), f"killed {delay:.2f} s after batch 1"
    assert "AlreadyExistsException" not in err and "created concurrently" not in err, err
    assert "\tat " not in err, err  # no Java stack trace at all


def test_cli_errors_exit_2_with_one_line(tmp_path: Path) -> None:
    registry = write_registry(tmp_path / "topics.csv")
    good = write_lines(tmp_path / "good.jsonl", [order(0)])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(order(0)) + "\n{oops\n")
    unknown = write_lines(tmp_path / "unknown.jsonl", [order(0), {"topic": "shop.nope"}])
    huge = write_lines(tmp_path / "huge.jsonl", [order(0), order(99999999999999999999999)])
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    lake = tmp_path / "lake"
    cases = [
        (["--dump", str(bad)], lake, f"error: {bad}:2: not valid JSON"),
        (
            ["--dump", str(unknown)],
            lake,
            f"error: {unknown}:2: topic 'shop.nope' is not in {registry}: add a row to "
            "seeds/cdc_topics.csv or remove the records.",
        ),
        (["--dump", str(tmp_path / "missing")], lake, "no such file or directory"),
        (
            ["--dump", str(huge)],
            lake,
            f"error: {huge}:2: 'offset' must be at most 9223372036854775807 (a Kafka offset is "
            "a 64-bit signed integer), got 99999999999999999999999.",
        ),
        (["--dump", str(good)], a_file / "lake", f"error: The lake directory {a_file / 'lake'}"),
    ]
    for args, lake_dir, message in cases:
        code, _out, err = run_cli([*args, "--registry", str(registry)], cli_env(lake_dir), 120)
        assert code == 2, (args, err)
        assert message in err, err
        assert "Traceback" not in err
        assert [line for line in err.splitlines() if line.startswith("error:")] == [
            err.splitlines()[-1]
        ]
