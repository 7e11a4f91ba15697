"""The ingest job against a real Kafka-protocol broker (Tansu, session fixture
``kafka_broker``): in-process runs with the session ``spark`` fixture (tables ``bronze.k_*``,
tmp checkpoints), and ``python -m ingest`` subprocesses with their own ``CDC_LAKE_DIR``."""

from __future__ import annotations

import io
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.ingest.bronze import CRASH_ENV
from cdc_lakehouse.ingest.cli import main
from cdc_lakehouse.ingest.job import IngestOptions, IngestResult, plan_ingest, run_ingest
from cdc_lakehouse.ingest.kafka_stream import KafkaOptions
from tests.ingest.test_ingest_job import (
    PROJECT_DIR,
    bronze_rows,
    cli_env,
    lake_rows,
    reap_group,
    run_cli,
    run_until_killed,
)
from tests.kafka.helpers import (
    Row,
    create_topics,
    delete_topic,
    produce,
    records,
    watermark_lags,
    write_registry,
)

CONTINUOUS = ("--mode", "continuous", "--trigger-interval", "1")


def ingest(
    spark: Any,
    bootstrap: str,
    registry: Path,
    table: str,
    checkpoint: Path,
    max_records: int | None = None,
    **kafka: Any,
) -> tuple[IngestResult, str]:
    out = io.StringIO()
    options = IngestOptions(
        None, registry, table, checkpoint, max_records, kafka=KafkaOptions(bootstrap, **kafka)
    )
    result = run_ingest(spark, plan_ingest(options), out=out)
    return result, out.getvalue()


def test_ingest_rerun_and_new_records_exactly_once(
    spark: Any, kafka_broker: str, tmp_path: Path
) -> None:
    topics = ["k.main.orders", "k.main.users"]
    create_topics(kafka_broker, topics)
    registry = write_registry(tmp_path / "topics.csv", topics)
    table, checkpoint = "bronze.k_main", tmp_path / "checkpoint"
    spark.sql(f"DROP TABLE IF EXISTS {table}")

    first = produce(kafka_broker, records(topics, 60, big=True))
    assert watermark_lags(kafka_broker, first), "the broker should show its LATEST quirk here"
    result, out = ingest(spark, kafka_broker, registry, table, checkpoint, max_records=25)
    assert result.records == len(first) and result.batches >= 3, out
    assert bronze_rows(spark.table(table)) == first
    assert "reader: cdc_kafka" in out
    assert ", lag 0" in out and "bytes" in out
    big = spark.table(table).where("length(value) = 1048576").collect()
    assert len(big) == 1 and bytes(big[0]["key"]) == b"big\x00key"

    result, out = ingest(spark, kafka_broker, registry, table, checkpoint)
    assert (result.records, result.batches) == (0, 0), out
    assert "nothing beyond the checkpoint" in out

    second = produce(kafka_broker, records(topics, 17, seed=1000))
    result, out = ingest(spark, kafka_broker, registry, table, checkpoint)
    assert (result.records, result.batches) == (len(second), 1), out
    assert bronze_rows(spark.table(table)) == sorted(first + second)

    # --topics narrows the registry; a topic outside the registry is refused up front
    third = produce(kafka_broker, records(topics[:1], 4, seed=2000))
    result, out = ingest(spark, kafka_broker, registry, table, checkpoint, topics=(topics[0],))
    assert result.records == len(third), out
    assert bronze_rows(spark.table(table)) == sorted(first + second + third)
    spark.sql(f"DROP TABLE {table}")


def test_starting_offsets_latest_reads_only_new_records(
    spark: Any, kafka_broker: str, tmp_path: Path
) -> None:
    topics = ["k.latest"]
    create_topics(kafka_broker, topics)
    registry = write_registry(tmp_path / "topics.csv", topics)
    table, checkpoint = "bronze.k_latest", tmp_path / "checkpoint"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    produce(kafka_broker, records(topics, 9))
    result, _ = ingest(spark, kafka_broker, registry, table, checkpoint, starting_offsets="latest")
    assert result.records == 0
    later = produce(kafka_broker, records(topics, 5, seed=50))
    result, out = ingest(spark, kafka_broker, registry, table, checkpoint)
    assert bronze_rows(spark.table(table)) == later, out
    spark.sql(f"DROP TABLE {table}")


def cli_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert [line for line in err.splitlines() if line.startswith("error:")] == [
        err.splitlines()[-1]
    ], err
    return err


def test_errors_exit_2_before_spark_starts(
    kafka_broker: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process ``main``: every check runs before the JVM (the session's Spark is untouched)."""
    topics = ["k.err.present", "k.err.missing", "k.err.deleted"]
    create_topics(kafka_broker, [topics[0], topics[2]])
    delete_topic(kafka_broker, topics[2])
    registry = str(write_registry(tmp_path / "topics.csv", topics))
    base = ["--registry", registry, "--checkpoint", str(tmp_path / "cp")]

    started = time.monotonic()
    err = cli_error(["--bootstrap-servers", "127.0.0.1:9", *base], capsys)
    assert "no Kafka broker answered at 127.0.0.1:9 within 10 s" in err
    assert time.monotonic() - started < 20

    for topic in topics[1:]:
        err = cli_error(["--bootstrap-servers", kafka_broker, *base, "--topics", topic], capsys)
        assert f"topic '{topic}' does not exist on the broker at {kafka_broker}" in err
    err = cli_error(["--bootstrap-servers", kafka_broker, *base, "--topics", "nope"], capsys)
    assert "--topics: 'nope' not in" in err
    err = cli_error(["--bootstrap-servers", kafka_broker, "--dump", "x"], capsys)
    assert "not allowed with argument" in err
    err = cli_error(["--dump", "x", "--mode", "continuous"], capsys)
    assert "need --bootstrap-servers" in err
    err = cli_error(["--bootstrap-servers", kafka_broker, "--kafka-property", "novalue"], capsys)
    assert "use key=value" in err


def test_kill_rerun_and_continuous_mode_stop_exactly_once(
    spark: Any, kafka_broker: str, tmp_path: Path
) -> None:
    """One lake, three ``python -m ingest`` runs (each JVM start is expensive):

    1. batch mode; the crash hook exits right after writing batch 1, before its commit;
    2. batch mode again: replays batch 1, SIGKILLed at a random moment after that;
    3. continuous mode (1 s trigger, 30 records per batch): catches up, ingests records
       produced while it runs, then stops on SIGTERM with exit 0 and every batch committed.
    Bronze then holds every produced record exactly once.
    """
    topics = ["k.crash.a", "k.crash.b"]
    create_topics(kafka_broker, topics)
    registry = write_registry(tmp_path / "topics.csv", topics)
    lake = tmp_path / "lake"
    checkpoint = lake / "checkpoints" / "bronze.kafka_records"
    produced = produce(kafka_broker, records(topics, 48))
    args = [
        "--bootstrap-servers",
        kafka_broker,
        "--registry",
        str(registry),
        "--max-records-per-batch",
        "7",
    ]

    code, out, err = run_cli(args, cli_env(lake, **{CRASH_ENV: "1"}))
    assert code == 137, err
    assert "batch 1:" in out and "batch 2:" not in out and "done:" not in out
    assert (checkpoint / "offsets" / "1").exists() and not (checkpoint / "commits" / "1").exists()
    written = lake_rows(spark, lake)
    assert len(written) == 14 and len(set(written)) == 14

    delay = random.uniform(0.0, 3.0)
    out = run_until_killed(args, cli_env(lake), "batch 1:", delay)
    assert "batch 0:" not in out  # batch 1 was replayed, not batch 0

    proc = subprocess.Popen(
        [sys.executable, "-m", "ingest", *args[:-1], "30", *CONTINUOUS],
        cwd=PROJECT_DIR,
        env=cli_env(lake),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(proc.stdout or ()), daemon=True).start()
    try:
        wait_for_rows(spark, lake, produced, proc, lines)
        produced = sorted(produced + produce(kafka_broker, records(topics, 12, seed=500)))
        wait_for_rows(spark, lake, produced, proc, lines)
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=60)
        err = proc.stderr.read() if proc.stderr else ""
    finally:
        reap_group(proc.pid)
    assert code == 0, err
    assert "SIGTERM: stopping after the batch in progress" in err
    assert "Traceback" not in err
    time.sleep(0.2)
    assert "".join(lines).rstrip().splitlines()[-1].startswith("done: ")
    offsets = sorted(p.name for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    commits = sorted(p.name for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    assert offsets == commits, "the last batch must be committed"
    assert lake_rows(spark, lake) == produced, f"killed {delay:.2f} s after batch 1"


def wait_for_rows(
    spark: Any, lake: Path, expected: list[Row], proc: subprocess.Popen[str], lines: list[str]
) -> None:
    """Wait (up to 120 s) until the subprocess's bronze holds ``expected``."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, "".join(lines)
        try:
            if lake_rows(spark, lake) == expected:
                return
        except Exception:  # files of a batch being written
            pass
        time.sleep(1.0)
    raise AssertionError("bronze did not catch up:\n" + "".join(lines))
