"""Cost growth, one history size per worker process (a fresh lake and JVM): the incremental
``dbt build`` of a fixed-size new batch against a full build of the history.

Steps: build the workload (``factor`` x the base history, the fixed new batch); start Spark;
ingest the history; * ``dbt build`` (the full build of that history: every seed, model and
test); ingest the new batch; * ``dbt build`` (incremental: what a scheduled run pays). The
full build is of the history alone; the batch is small next to it (1/16 of the 1x history by
default), so it stands for a full rebuild at that size.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from cdc_lakehouse.bench import workload as workloads
from cdc_lakehouse.bench.measure import measured
from cdc_lakehouse.bench.pipeline import Pipeline


def run(spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict[str, Any]:
    """Measure one history size. ``spec``: ``{"format", "changes", "factor",
    "batch_changes", "seed"}`` (``changes`` = the 1x history).

    Raises:
        BenchError: a pipeline step failed.
    """
    from cdc_lakehouse.spark_session import get_spark

    changes = spec["changes"] * spec["factor"]
    load = workloads.build(spec["format"], changes, spec["batch_changes"], spec["seed"])
    history_dump, batch_dump = workloads.write(load, work_dir / "dump")
    spark = get_spark()
    pipeline = Pipeline(spark, project_dir, work_dir)
    records = pipeline.ingest(history_dump)
    with measured() as full:
        pipeline.dbt("build")
    full_nodes = pipeline.node_times()
    history_events = pipeline.events(load.topics)
    with measured() as ingest:
        batch_records = pipeline.ingest(batch_dump)
    with measured() as incremental:
        pipeline.dbt("build")
    incremental_nodes = pipeline.node_times()
    batch_events = pipeline.events(load.topics) - history_events
    shutil.rmtree(work_dir / "dump", ignore_errors=True)
    return {
        "format": spec["format"],
        "factor": spec["factor"],
        "changes": changes,
        "batch_changes": spec["batch_changes"],
        "records": records,
        "batch_records": batch_records,
        "events": history_events,
        "batch_events": batch_events,
        "full_build_s": round(full.seconds, 3),
        "full_build_peak_rss_bytes": full.peak_rss_bytes,
        "batch_ingest_s": round(ingest.seconds, 3),
        "incremental_build_s": round(incremental.seconds, 3),
        "incremental_build_peak_rss_bytes": incremental.peak_rss_bytes,
        "full_build_nodes": full_nodes,
        "incremental_build_nodes": incremental_nodes,
    }
