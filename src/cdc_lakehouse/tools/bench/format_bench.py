"""One format's measurements, run in a worker process of its own (a fresh lake and JVM):
every pipeline stage, then the three baselines on the same bronze bytes, each checked against
the pipeline's gold.

Steps, in order (timed ones marked *):

1. start Spark; create the empty bronze table; ``dbt seed``; build the other formats' staging
   models (empty), which the silver models read. Not timed: the same for every size.
2. * dump -> bronze: the ingest job on the history dump.
3. * bronze -> silver: ``dbt run`` of the format's staging models and every silver model.
4. * silver -> gold: ``dbt run`` of gold (int_row_versions, current_rows, current_rows_with_deletes,
   row_history).
5. gold checked against the simulator's oracle (a wrong pipeline is reported, not timed).
6. * baselines, each on the history's bronze records and checked against gold: the
   hand-written PySpark script (parsing each message once; for the JSON formats also as first
   written, ``from_json`` copied into each filter: ``baselines["pyspark_as_written"]``),
   DuckDB, the orjson / fastavro floor.
6b. * the peer baseline, Spark's AutoCDC (:mod:`.baselines.autocdc`), on the same
   ``silver.change_events`` that silver -> gold read, beside that stage; its rows compared
   with gold, the differences by class (``result["autocdc"]``).
7. * incremental batch: ingest the new batch, then ``dbt run`` of step 3 and 4's models.

Events are rows of ``silver.change_events`` (row changes, producer-retry duplicates included)
of the format's topics; the same count divides every stage of one delivery.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from cdc_lakehouse.runtime.spark_session import get_spark
from cdc_lakehouse.tools.bench import workload as workloads
from cdc_lakehouse.tools.bench.baselines import (
    BaselineResult,
    autocdc,
    check,
    pyspark_script,
    python_floor,
)
from cdc_lakehouse.tools.bench.measure import Measurement, combined, measured
from cdc_lakehouse.tools.bench.pipeline import (
    BRONZE_TABLE,
    GOLD_EXCLUDE,
    GOLD_SELECTION,
    SILVER_SELECTION,
    Pipeline,
    staging_selection,
)


def _rates(seconds: float, events: int, cores: int, measurement: Measurement) -> dict[str, Any]:
    """One timed step's entry: seconds, events, events/s (per core too), cores, and the
    step's ``peak_rss_bytes`` (JVM and Python workers), its split by process kind
    (``rss_by_kind_at_peak_bytes``, ``processes_by_kind_at_peak``), each kind's own peak
    (``peak_rss_by_kind_bytes``) and ``driver_peak_rss_bytes`` (the bench worker process; see
    :mod:`.measure`)."""
    return {
        "seconds": round(seconds, 3),
        "events": events,
        "events_per_s": round(events / seconds, 1) if seconds else None,
        "events_per_s_per_core": round(events / seconds / cores, 1) if seconds else None,
        "peak_rss_bytes": measurement.peak_rss_bytes,
        "driver_peak_rss_bytes": measurement.driver_peak_rss_bytes,
        "rss_by_kind_at_peak_bytes": measurement.rss_by_kind_at_peak_bytes,
        "processes_by_kind_at_peak": measurement.processes_by_kind_at_peak,
        "peak_rss_by_kind_bytes": measurement.peak_rss_by_kind_bytes,
        "cores": cores,
    }


def _stage(measurement: Measurement, events: int, cores: int) -> dict[str, Any]:
    """A pipeline stage's entry: :func:`_rates` and its ``cpu_seconds`` (JVM, Python
    workers and the worker process, see :mod:`.measure`)."""
    return {
        **_rates(measurement.seconds, events, cores, measurement),
        "cpu_seconds": round(measurement.cpu_seconds, 3),
    }


def _baseline(
    result: BaselineResult, measurement: Measurement, gold: Any, columns: Any
) -> dict[str, Any]:
    problems = check.differences(gold, result.rows, columns)
    entry = {
        "engine": result.engine,
        **_rates(result.seconds, result.events, result.cores, measurement),
        "equals_gold": not problems,
    }
    if problems:
        entry["differences"] = problems[:5]
    return entry


def _autocdc(spark: Any, topics: list[str], gold: Any, work_dir: Path) -> dict[str, Any]:
    """The AutoCDC baseline's entry: engine, seconds, cpu_seconds, events, events/s, the
    memory of :func:`_rates` (the measured block: run, read back, count), target_rows,
    ``equals_gold`` (every row's whole row_values) and ``comparison``
    (:func:`.baselines.autocdc.classify`)."""
    with measured() as memory:
        result = autocdc.run(spark, topics, work_dir / "autocdc")
    autocdc.stop_server()
    rows = result.baseline.rows
    traits = autocdc.identity_traits(spark, topics)
    comparison = autocdc.classify(gold, rows, traits, result.target_rows - len(rows))
    return {
        "engine": result.baseline.engine,
        **_rates(result.baseline.seconds, result.baseline.events, result.baseline.cores, memory),
        "cpu_seconds": round(result.cpu_seconds, 3),
        "target_rows": result.target_rows,
        "equals_gold": comparison["differing"] == 0,
        "comparison": comparison,
    }


def run(spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict[str, Any]:
    """Measure one format. ``spec``: ``{"format", "changes", "batch_changes", "seed"}``.

    Returns the format's result document (see :mod:`cdc_lakehouse.tools.bench.report`).

    Raises:
        BenchError: a pipeline step failed.
    """
    # local: duckdb, loaded by the format worker only when it measures (not for the others)
    from cdc_lakehouse.tools.bench.baselines import duckdb_baseline

    format_ = spec["format"]
    cores = os.cpu_count() or 1
    load = workloads.build(format_, spec["changes"], spec["batch_changes"], spec["seed"])
    history_dump, batch_dump = workloads.write(load, work_dir / "dump")
    topics, encoder, history = load.topics, load.encoder, load.history
    del load  # the delivered records (a million values at 1,000,000 changes) are on disk now
    dump_bytes = sum(f.stat().st_size for f in history_dump.iterdir())

    with measured() as startup:
        spark = get_spark()
    pipeline = Pipeline(spark, project_dir, work_dir)
    pipeline.ensure_bronze()
    pipeline.dbt("seed")
    pipeline.dbt("run", "--select", *staging_selection(format_, other_formats=True))

    stages: dict[str, Any] = {}
    with measured() as ingest:
        records = pipeline.ingest(history_dump)
    with measured() as silver:
        pipeline.dbt("run", "--select", *staging_selection(format_), *SILVER_SELECTION)
    nodes = {"bronze_to_silver": pipeline.node_times()}
    with measured() as gold_stage:
        pipeline.dbt("run", "--select", *GOLD_SELECTION, "--exclude", *GOLD_EXCLUDE)
    nodes["silver_to_gold"] = pipeline.node_times()
    history_events = pipeline.events(topics)
    stages["dump_to_bronze"] = _stage(ingest, history_events, cores)
    stages["bronze_to_silver"] = _stage(silver, history_events, cores)
    stages["silver_to_gold"] = _stage(gold_stage, history_events, cores)
    stages["bronze_to_gold"] = _stage(combined(silver, gold_stage), history_events, cores)

    gold = pipeline.gold_rows(topics)
    columns = check.compared_columns(history)
    oracle_problems = check.differences(check.history_rows(encoder, history), gold, columns)
    del history

    baselines: dict[str, Any] = {}
    with measured() as memory:
        result = pyspark_script.run(
            spark, BRONZE_TABLE, topics, format_, "bench.pyspark_baseline_latest"
        )
    baselines["pyspark"] = _baseline(result, memory, gold, columns)
    if pyspark_script.decodes_in_sql(format_):  # the script as first written: from_json per filter
        with measured() as memory:
            result = pyspark_script.run(
                spark,
                BRONZE_TABLE,
                topics,
                format_,
                "bench.pyspark_baseline_latest",
                parse_once=False,
            )
        baselines["pyspark_as_written"] = _baseline(result, memory, gold, columns)
    files = pipeline.bronze_files()
    with measured(include_children=False) as memory:
        result = duckdb_baseline.run(files, topics, format_, threads=cores)
    baselines["duckdb"] = _baseline(result, memory, gold, columns)
    values = python_floor.load_values(files, topics)
    with measured(include_children=False) as memory:
        result = python_floor.run(values, format_)
    baselines["python_floor"] = _baseline(result, memory, gold, columns)
    del values
    autocdc_entry = _autocdc(spark, topics, gold, work_dir)

    with measured() as incremental:
        batch_records = pipeline.ingest(batch_dump)
        pipeline.dbt(
            "run",
            "--select",
            *staging_selection(format_),
            *SILVER_SELECTION,
            *GOLD_SELECTION,
            "--exclude",
            *GOLD_EXCLUDE,
        )
    nodes["incremental_batch"] = pipeline.node_times()
    batch_events = pipeline.events(topics) - history_events
    stages["incremental_batch"] = _stage(incremental, batch_events, cores)
    shutil.rmtree(work_dir / "dump", ignore_errors=True)
    return {
        "format": format_,
        "changes": spec["changes"],
        "batch_changes": spec["batch_changes"],
        "records": records,
        "batch_records": batch_records,
        "dump_bytes": dump_bytes,
        "events": history_events,
        "batch_events": batch_events,
        "spark_startup_s": round(startup.seconds, 3),
        "gold_equals_oracle": not oracle_problems,
        "gold_differences": oracle_problems[:5],
        "stages": stages,
        "dbt_nodes": nodes,
        "baselines": baselines,
        "autocdc": autocdc_entry,
    }
