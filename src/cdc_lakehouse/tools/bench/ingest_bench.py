"""Ingest throughput (issue 20, target 4), in a worker process of its own (a fresh lake and
JVM): records/s of the ingest job into ``bronze.kafka_records``, from a topic dump or from the
local Kafka broker, with the JVM and SparkSession start timed apart.

Steps (timed ones marked *):

1. The dump: ``records`` records of ``format`` (:func:`.workload.write_records_dump`: the
   simulator's history delivered as the formats part delivers it, 5 % producer-retry
   duplicates over 3 partitions), written into ``spec["dump"]`` by the first worker that
   needs it and reused by the next (a marker file next to it, ``<dump>.json``, names format,
   records and seed). Not timed.
2. Source ``kafka`` only: start the local broker (Apache Kafka, one KRaft node from the Maven
   jars, its data in a temporary directory: :class:`cdc_lakehouse.tools.kafka.broker.LocalBroker`,
   what ``python -m cdc_lakehouse.tools.kafka.broker`` runs) and produce the dump to it (``python -m
   cdc_lakehouse.tools.kafka.produce``, a process of its own; its seconds are reported, not part of
   the figure).
3. * Spark start (JVM and SparkSession): ``spark_startup_s``, apart from the figure.
4. * The ingest job, planning included: of the dump (``python -m ingest --dump``), or of the
   broker's topics (``python -m ingest --bootstrap-servers``): ``ingest_s``, and
   ``records_per_s`` = records / ``ingest_s``; Kafka is read by Spark's Kafka source. Peak
   RSS: the JVM and its Python workers (the broker's JVM left out).
5. The records written must be the dump's, else :class:`BenchError` (a wrong ingest is not
   timed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from cdc_lakehouse.runtime.spark_session import get_spark
from cdc_lakehouse.tools.bench import workload as workloads
from cdc_lakehouse.tools.bench.measure import measured
from cdc_lakehouse.tools.bench.pipeline import BenchError, Pipeline
from cdc_lakehouse.tools.kafka.broker import LocalBroker

SOURCES = ("dump", "kafka")
"""Where the ingest job reads: the topic dump, or the local broker the dump was produced to."""
PARTITIONS = workloads.PARTITIONS


def marker_path(dump: Path) -> Path:
    """The file next to a records dump that says what it holds (``<dump>.json``)."""
    return dump.with_name(dump.name + ".json")


def ensure_dump(format_: str, records: int, seed: int, dump: Path) -> dict[str, Any]:
    """The records dump at ``dump``: reused when its marker says it holds ``records`` records
    of ``format_`` and ``seed``, else written (see :func:`.workload.write_records_dump`).

    Returns:
        The marker: ``format``, ``records``, ``seed``, ``changes`` (row changes generated),
        ``bytes`` (of the dump files) and ``generation_s`` (seconds it took to write).
    """
    wanted = {"format": format_, "records": records, "seed": seed}
    marker = marker_path(dump)
    if marker.is_file():
        known = json.loads(marker.read_text(encoding="utf-8"))
        if {key: known.get(key) for key in wanted} == wanted and dump.is_dir():
            return known
    shutil.rmtree(dump, ignore_errors=True)
    started = time.perf_counter()
    changes = workloads.write_records_dump(format_, records, seed, dump)
    known = {
        **wanted,
        "changes": changes,
        "bytes": sum(path.stat().st_size for path in dump.glob("*.jsonl")),
        "generation_s": round(time.perf_counter() - started, 1),
    }
    marker.write_text(json.dumps(known), encoding="utf-8")
    return known


def dump_topics(dump: Path) -> list[str]:
    """The topics of a dump written by :func:`.workload.write_records_dump` (one
    ``<topic>.jsonl`` per topic)."""
    return sorted(path.stem for path in dump.glob("*.jsonl"))


def produce(bootstrap_servers: str, dump: Path, project_dir: Path, log: Path) -> None:
    """Produce ``dump`` to the broker with ``python -m cdc_lakehouse.tools.kafka.produce`` (creating
    the registry's topics with :data:`PARTITIONS` partitions); its output goes to ``log``.

    Raises:
        BenchError: the command failed (the end of its output in the message).
    """
    command = [
        sys.executable,
        "-m",
        "cdc_lakehouse.tools.kafka.produce",
        "--bootstrap-servers",
        bootstrap_servers,
        "--dump",
        str(dump),
        "--registry",
        str(project_dir / "seeds" / "cdc_topics.csv"),
        "--partitions",
        str(PARTITIONS),
    ]
    with log.open("w", encoding="utf-8") as out:
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        tail = log.read_text(encoding="utf-8", errors="replace").splitlines()[-5:]
        raise BenchError(
            f"producing {dump} to {bootstrap_servers} failed (exit {done.returncode}): "
            + " | ".join(tail)
        )


def run(spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict[str, Any]:
    """Measure one ingest. ``spec``: ``{"source": "dump" | "kafka", "format", "records",
    "seed", "dump"}`` (``dump``: the directory of the records dump, shared by the workers).

    Returns:
        ``source``, ``format``, ``records``, ``changes`` (row changes behind them),
        ``dump_bytes``, ``spark_startup_s``, ``ingest_s``, ``records_per_s`` (without the
        Spark start) and ``records_per_s_with_startup``, ``peak_rss_bytes`` (JVM and Python
        workers) and ``driver_peak_rss_bytes`` (this process), ``cores``; source ``kafka``
        also ``produce_s`` (producing the dump to the broker, not in the figure).

    Raises:
        BenchError: producing failed, or the ingest wrote another number of records.
        ValueError: an unknown source.
    """
    source = spec["source"]
    if source not in SOURCES:
        raise ValueError(f"unknown ingest source {source!r}; choose from {', '.join(SOURCES)}")
    dump = Path(spec["dump"])
    made = ensure_dump(spec["format"], spec["records"], spec["seed"], dump)
    result: dict[str, Any] = {
        "source": source,
        "format": spec["format"],
        "records": spec["records"],
        "changes": made["changes"],
        "dump_bytes": made["bytes"],
    }
    broker = None
    try:
        if source == "kafka":
            broker = LocalBroker(log=work_dir / "broker.log").start()
            started = time.perf_counter()
            produce(broker.bootstrap_servers, dump, project_dir, work_dir / "produce.log")
            result["produce_s"] = round(time.perf_counter() - started, 3)
        with measured() as startup:
            spark = get_spark()
        pipeline = Pipeline(spark, project_dir, work_dir)
        exclude = [broker.pid] if broker is not None and broker.pid is not None else []
        with measured(exclude=exclude) as ingest:
            if broker is not None:
                written = pipeline.ingest_kafka(broker.bootstrap_servers, dump_topics(dump))
            else:
                written = pipeline.ingest(dump)
    finally:
        if broker is not None:
            broker.stop()
    if written != spec["records"]:
        raise BenchError(
            f"ingest from {source} wrote {written:,} records; the dump holds {spec['records']:,}"
        )
    seconds = ingest.seconds
    return {
        **result,
        "spark_startup_s": round(startup.seconds, 3),
        "ingest_s": round(seconds, 3),
        "records_per_s": round(written / seconds, 1),
        "records_per_s_with_startup": round(written / (seconds + startup.seconds), 1),
        "peak_rss_bytes": ingest.peak_rss_bytes,
        "driver_peak_rss_bytes": ingest.driver_peak_rss_bytes,
        "cores": os.cpu_count() or 1,
    }
