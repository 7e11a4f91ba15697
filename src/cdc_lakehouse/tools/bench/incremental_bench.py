"""Incremental cost against recomputing (issue 20, target 3), in a worker process of its own
(a fresh lake and JVM): what a scheduled ``dbt build`` pays for a small new batch on a large
history, next to what the hand-written PySpark script pays to recompute the whole history.

Steps (timed ones marked *), the cost-growth run's first
(:func:`.growth_bench.build_history_then_batch`): build the workload (``changes`` of history,
``batch_changes`` new); start Spark; ingest the history; ``dbt build`` (the full build, timed
for the report only); ingest the new batch; * ``dbt build`` (incremental); then: gold
checked against the simulator's oracle; * the PySpark script over all of bronze (history and
batch), checked against gold. Target: incremental build seconds <= 2 x the script's seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdc_lakehouse.tools.bench.baselines import check, pyspark_script
from cdc_lakehouse.tools.bench.growth_bench import build_history_then_batch
from cdc_lakehouse.tools.bench.pipeline import BRONZE_TABLE


def run(spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict[str, Any]:
    """Measure one incremental build against a recompute. ``spec``: ``{"format", "changes",
    "batch_changes", "seed"}`` (``changes`` = the history) and optionally ``"cdc_formats"``
    (the formats the project is deployed for: var ``cdc_formats``; empty or absent: every
    format).

    Returns:
        ``format``, ``cdc_formats``, ``changes``, ``batch_changes``, ``events`` (history)
        and ``batch_events`` (rows of ``silver.change_events``), ``full_build_s``,
        ``incremental_build_s`` and its ``incremental_build_peak_rss_bytes``, ``script_s``
        (the PySpark script on all of bronze) and ``script_equals_gold``,
        ``gold_equals_oracle`` and the first ``gold_differences``, ``incremental_build_nodes``
        (see ``Pipeline.node_times``).

    Raises:
        BenchError: a pipeline step failed.
    """
    cdc_formats = tuple(spec.get("cdc_formats") or ())
    m = build_history_then_batch(
        spec["format"],
        spec["changes"],
        spec["batch_changes"],
        spec["seed"],
        work_dir,
        project_dir,
        cdc_formats,
    )
    topics = m.load.topics
    gold = m.pipeline.gold_rows(topics)
    columns = check.compared_columns(m.load.whole)
    oracle_problems = check.differences(
        check.history_rows(m.load.encoder, m.load.whole), gold, columns
    )
    script = pyspark_script.run(
        m.pipeline.spark, BRONZE_TABLE, topics, spec["format"], "bench.pyspark_baseline_latest"
    )
    script_problems = check.differences(gold, script.rows, columns)
    return {
        "format": spec["format"],
        "cdc_formats": list(cdc_formats),
        "changes": spec["changes"],
        "batch_changes": spec["batch_changes"],
        "events": m.history_events,
        "batch_events": m.batch_events,
        "full_build_s": round(m.full.seconds, 3),
        "incremental_build_s": round(m.incremental.seconds, 3),
        "incremental_build_peak_rss_bytes": m.incremental.peak_rss_bytes,
        "script_s": round(script.seconds, 3),
        "script_equals_gold": not script_problems,
        "gold_equals_oracle": not oracle_problems,
        "gold_differences": oracle_problems[:5],
        "incremental_build_nodes": m.incremental_nodes,
    }
