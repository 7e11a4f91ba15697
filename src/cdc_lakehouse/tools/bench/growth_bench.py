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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_lakehouse.runtime.spark_session import get_spark
from cdc_lakehouse.tools.bench import workload as workloads
from cdc_lakehouse.tools.bench.measure import Measurement, measured
from cdc_lakehouse.tools.bench.pipeline import Pipeline


@dataclass
class HistoryThenBatch:
    """What :func:`build_history_then_batch` measured, and the lake it left."""

    load: workloads.Workload
    pipeline: Pipeline
    records: int
    batch_records: int
    history_events: int
    batch_events: int
    full: Measurement
    ingest: Measurement
    incremental: Measurement
    full_nodes: dict[str, Any]
    incremental_nodes: dict[str, Any]


def build_history_then_batch(
    format_: str,
    changes: int,
    batch_changes: int,
    seed: int,
    work_dir: Path,
    project_dir: Path,
    cdc_formats: tuple[str, ...] = (),
) -> HistoryThenBatch:
    """Ingest a ``changes`` history, * ``dbt build``; ingest a ``batch_changes`` batch,
    * ``dbt build`` (incremental). Each build and the batch ingest are measured. Both builds
    are of the project deployed for ``cdc_formats`` (var ``cdc_formats``; empty: every format).

    Raises:
        BenchError: a pipeline step failed.
    """
    load = workloads.build(format_, changes, batch_changes, seed)
    history_dump, batch_dump = workloads.write(load, work_dir / "dump")
    spark = get_spark()
    pipeline = Pipeline(spark, project_dir, work_dir, cdc_formats)
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
    return HistoryThenBatch(
        load,
        pipeline,
        records,
        batch_records,
        history_events,
        batch_events,
        full,
        ingest,
        incremental,
        full_nodes,
        incremental_nodes,
    )


def run(spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict[str, Any]:
    """Measure one history size. ``spec``: ``{"format", "changes", "factor",
    "batch_changes", "seed"}`` (``changes`` = the 1x history) and optionally ``"cdc_formats"``
    (the deployment's formats, :func:`build_history_then_batch`).

    Raises:
        BenchError: a pipeline step failed.
    """
    changes = spec["changes"] * spec["factor"]
    cdc_formats = tuple(spec.get("cdc_formats") or ())
    m = build_history_then_batch(
        spec["format"],
        changes,
        spec["batch_changes"],
        spec["seed"],
        work_dir,
        project_dir,
        cdc_formats,
    )
    return {
        "format": spec["format"],
        "cdc_formats": list(cdc_formats),
        "factor": spec["factor"],
        "changes": changes,
        "batch_changes": spec["batch_changes"],
        "records": m.records,
        "batch_records": m.batch_records,
        "events": m.history_events,
        "batch_events": m.batch_events,
        "full_build_s": round(m.full.seconds, 3),
        "full_build_peak_rss_bytes": m.full.peak_rss_bytes,
        "batch_ingest_s": round(m.ingest.seconds, 3),
        "incremental_build_s": round(m.incremental.seconds, 3),
        "incremental_build_peak_rss_bytes": m.incremental.peak_rss_bytes,
        "full_build_nodes": m.full_nodes,
        "incremental_build_nodes": m.incremental_nodes,
    }
