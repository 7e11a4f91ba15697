"""The ingest job (Spark's Kafka source) against an Apache Kafka broker (session fixture
``kafka_broker``): in-process runs with the session ``spark`` fixture (tables ``bronze.k_*``,
tmp checkpoints), and ``python -m ingest`` subprocesses with their own ``CDC_LAKE_DIR``."""

from __future__ import annotations

import io
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException

from cdc_lakehouse.formats.registry import DEFAULT_REGISTRY, EXAMPLE_REGISTRY, load_registry
from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.tools.kafka.client import MissingOffsetsError
from cdc_lakehouse.tools.kafka.produce import create_topics as create_dump_topics
from cdc_lakehouse.tools.kafka.produce import produce_records
from ingest.bronze import CRASH_ENV
from ingest.cli import _kafka_error_in, main
from ingest.dump import load_dump
from ingest.job import IngestOptions, IngestResult, plan_ingest, run_ingest
from ingest.kafka_stream import KafkaOptions
from ingest.offsets import batch_ranges
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
    delete_records,
    delete_topic,
    produce,
    records,
    write_dump,
    write_registry,
)

CONTINUOUS = ("--mode", "continuous", "--trigger-interval", "1")


def options_for(
    bootstrap: str,
    registry: Path,
    table: str,
    checkpoint: Path,
    max_records: int | None = None,
    **kafka: Any,
) -> IngestOptions:
    return IngestOptions(
        None, registry, table, checkpoint, max_records, kafka=KafkaOptions(bootstrap, **kafka)
    )


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
    options = options_for(bootstrap, registry, table, checkpoint, max_records, **kafka)
    result = run_ingest(spark, plan_ingest(options), out=out)
    return result, out.getvalue()


PARTITION_LINE = re.compile(r"^  (\S+) \[(\d+)\]: (\d+) records, .*, lag (\d+)")


def batch_blocks(out: str) -> dict[int, list[tuple[str, int, int, int]]]:
    """Per batch id, its ``(topic, partition, records, lag)`` progress lines."""
    blocks: dict[int, list[tuple[str, int, int, int]]] = {}
    current = -1
    for line in out.splitlines():
        head = re.match(r"^batch (\d+): ", line)
        if head:
            current = int(head[1])
            blocks[current] = []
        elif (match := PARTITION_LINE.match(line)) and current >= 0:
            blocks[current].append((match[1], int(match[2]), int(match[3]), int(match[4])))
    return blocks


def test_ingest_rerun_and_new_records_exactly_once(
    spark: Any, kafka_broker: str, tmp_path: Path
) -> None:
    topics = ["k.main.orders", "k.main.users"]
    create_topics(kafka_broker, topics)
    registry = write_registry(tmp_path / "topics.csv", topics)
    table, checkpoint = "bronze.k_main", tmp_path / "checkpoint"
    spark.sql(f"DROP TABLE IF EXISTS {table}")

    first = produce(kafka_broker, records(topics, 60, big=True))
    result, out = ingest(spark, kafka_broker, registry, table, checkpoint, max_records=25)
    assert result.records == len(first) and result.batches >= 3, out
    assert bronze_rows(spark.table(table)) == first
    assert "reader: spark-kafka (Spark's Kafka source)" in out
    # the lag a user reads: what each partition still holds after the batch, down to 0
    blocks = batch_blocks(out)
    assert len(blocks[0]) == 6, out  # every partition moves in the first batch
    assert sum(n + lag for _t, _p, n, lag in blocks[0]) == len(first), out
    assert all(lag == 0 for _t, _p, _n, lag in blocks[max(blocks)]), out
    assert max(n for b in blocks.values() for _t, _p, n, _l in b) <= 25, out
    big = spark.table(table).where("length(value) = 1048576").collect()
    assert len(big) == 1 and bytes(big[0]["key"]) == b"big\x00key"

    result, out = ingest(spark, kafka_broker, registry, table, checkpoint)
    assert (result.records, result.batches) == (0, 0), out
    assert "nothing beyond the checkpoint" in out

    second = produce(kafka_broker, records(topics, 17, seed=1000))
    result, out = ingest(spark, kafka_broker, registry, table, checkpoint)
    assert (result.records, result.batches) == (len(second), 1), out
    assert bronze_rows(spark.table(table)) == sorted(first + second)

    # --topics narrows the registry, but a checkpoint keeps its topics: refused up front
    with pytest.raises(ConfigError, match=r"reads topic\(s\) k.main.users too"):
        ingest(spark, kafka_broker, registry, table, checkpoint, topics=(topics[0],))
    result, out = ingest(
        spark, kafka_broker, registry, "bronze.k_main_orders", tmp_path / "cp-orders",
        topics=(topics[0],),
    )  # fmt: skip
    orders = [row for row in first + second if row[0] == topics[0]]
    assert bronze_rows(spark.table("bronze.k_main_orders")) == sorted(orders), out
    spark.sql(f"DROP TABLE {table}")
    spark.sql("DROP TABLE bronze.k_main_orders")


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
    err = cli_error(
        ["--bootstrap-servers", kafka_broker, *base, "--kafka-property", "auto.offset.reset=x"],
        capsys,
    )
    assert "auto.offset.reset: Spark's Kafka source sets it itself: use --starting-offsets" in err


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

    # bounds for a loaded 2-core machine: a fresh JVM's first Delta batch took 70-90 s there
    code, out, err = run_cli(args, cli_env(lake, **{CRASH_ENV: "1"}), timeout=600)
    assert code == 137, err
    assert "batch 1:" in out and "batch 2:" not in out and "done:" not in out
    assert (checkpoint / "offsets" / "1").exists() and not (checkpoint / "commits" / "1").exists()
    ranges = batch_ranges(checkpoint, 1)
    assert ranges is not None
    planned = sum(ranges[1].values())  # the offsets batches 0 and 1 cover
    written = lake_rows(spark, lake)
    assert 7 < len(written) == len(set(written)) == planned <= 14

    delay = random.uniform(0.0, 3.0)
    out = run_until_killed(args, cli_env(lake), "batch 1:", delay, timeout=600)
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
    """Wait (up to 300 s: a first Delta batch of a fresh JVM took 89 s on a loaded 2-core
    machine) until the subprocess's bronze holds ``expected``."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        assert proc.poll() is None, "".join(lines)
        try:
            if lake_rows(spark, lake) == expected:
                return
        except Exception:  # files of a batch being written
            pass
        time.sleep(1.0)
    raise AssertionError("bronze did not catch up:\n" + "".join(lines))


def test_kafka_and_the_dump_of_the_same_records_give_the_same_bronze_rows(
    spark: Any, kafka_broker: str, project_dir: Path, tmp_path: Path
) -> None:
    """The sample dump (produced by the project's producer) and records with binary, null and
    empty keys and values, headers and a 1 MiB value (an independent producer), ingested from
    Kafka and from a dump of the same records: bronze equal in every column but
    ``ingested_at`` and ``ingest_batch_id``."""
    sample = project_dir / "sample_data" / "dump"
    topics = ["k.same.a", "k.same.b"]
    registry = tmp_path / "topics.csv"
    extra = [f"{t},dataworks_json,mysql,false,kafka test topic" for t in topics]
    # the project's registry and its example topics (the sample's), then the test's topics
    examples = EXAMPLE_REGISTRY.read_text().splitlines()[1:]
    lines = [*DEFAULT_REGISTRY.read_text().splitlines(), *examples, *extra]
    registry.write_text("\n".join(lines) + "\n")
    registry_topics = load_registry(registry)
    dump_records = load_dump(sample, registry_topics)
    sample_topics = sorted({r.topic for r in dump_records})
    create_dump_topics(kafka_broker, dict.fromkeys(sample_topics, 1))
    assert produce_records(kafka_broker, dump_records) == len(dump_records)
    create_topics(kafka_broker, topics)
    specs = records(topics, 40, seed=7000, big=True)
    produced = produce(kafka_broker, specs)
    dump = tmp_path / "dump"
    shutil.copytree(sample, dump)
    write_dump(dump / "k.same.jsonl", specs)

    spark.sql("DROP TABLE IF EXISTS bronze.k_same")
    spark.sql("DROP TABLE IF EXISTS bronze.k_same_dump")
    result, out = ingest(
        spark,
        kafka_broker,
        registry,
        "bronze.k_same",
        tmp_path / "cp-kafka",
        topics=(*sample_topics, *topics),
    )
    assert result.records == len(dump_records) + len(produced), out
    options = IngestOptions(dump, registry, "bronze.k_same_dump", tmp_path / "cp-dump", None)
    result, out = run_ingest(spark, plan_ingest(options), out=io.StringIO()), ""
    assert result.records == len(dump_records) + len(produced)

    kafka = spark.table("bronze.k_same").drop("ingested_at", "ingest_batch_id")
    from_dump = spark.table("bronze.k_same_dump").drop("ingested_at", "ingest_batch_id")
    assert kafka.schema == from_dump.schema
    assert kafka.exceptAll(from_dump).count() == 0
    assert from_dump.exceptAll(kafka).count() == 0
    assert bronze_rows(kafka) == bronze_rows(from_dump)
    assert set(produced) <= set(bronze_rows(kafka))
    spark.sql("DROP TABLE bronze.k_same")
    spark.sql("DROP TABLE bronze.k_same_dump")


def test_offsets_deleted_before_ingest_stop_the_job_or_are_skipped(
    spark: Any, kafka_broker: str, tmp_path: Path
) -> None:
    """Retention deletes offsets 10..14 of a partition before they are ingested (the broker's
    DeleteRecords): the job says so in one line, before Spark starts; Spark's source says so
    when it happens under a running plan; ``--on-missing-offsets skip`` goes on at 15."""
    topic = "k.retention"
    create_topics(kafka_broker, [topic], partitions=1)
    registry = write_registry(tmp_path / "topics.csv", [topic])
    table, checkpoint = "bronze.k_retention", tmp_path / "checkpoint"
    spark.sql(f"DROP TABLE IF EXISTS {table}")
    specs = [(topic, 0, f"k{i}".encode(), f"v{i}".encode(), []) for i in range(20)]
    first = produce(kafka_broker, specs[:10])
    ingest(spark, kafka_broker, registry, table, checkpoint)
    second = produce(kafka_broker, specs[10:])

    # planned while offsets 10.. exist; deleted before Spark reads them
    plan = plan_ingest(options_for(kafka_broker, registry, table, checkpoint))
    delete_records(kafka_broker, topic, 0, 15)
    with pytest.raises(StreamingQueryException) as failed:
        run_ingest(spark, plan, out=io.StringIO())
    message = _kafka_error_in(str(failed.value))
    assert message is not None, str(failed.value)[:3000]
    assert message.startswith("Spark's Kafka source stopped: ") and "10" in message
    assert "--on-missing-offsets skip" in message
    assert "no longer on the broker" in message and "\n" not in message
    assert bronze_rows(spark.table(table)) == first

    with pytest.raises(MissingOffsetsError, match=r"continues at offset 10 but the broker's "):
        plan_ingest(options_for(kafka_broker, registry, table, checkpoint))
    result, out = ingest(
        spark, kafka_broker, registry, table, checkpoint, on_missing_offsets="skip"
    )
    assert "k.retention [0]: skipping 5 offset(s) deleted by retention" in out, out
    assert "5 offsets skipped (no longer on the broker)" in out, out
    assert result.records == 5
    assert bronze_rows(spark.table(table)) == sorted(first + second[5:])
    spark.sql(f"DROP TABLE {table}")
