"""Cost of source tables (issue 20, target 5), one table count per worker process (a fresh
lake and JVM): the same number of changes spread over ``tables`` keyed source tables
(``SimulationConfig.tables``), the whole ``dbt build`` with a typed gold model per table.

dbt runs on a copy of the project in the worker's directory (:func:`copy_project`), because
the typed gold models are written into its ``models/marts/current_state/tables/``; the copy has
the example seeds (``sample_data/seeds``: the simulator's topics) but not the examples' typed models
(``sample_data/models``: the bundled samples' tables, absent from this lake), and its
``models/marts/current_state/tables`` is emptied, so typed gold is exactly the benchmark's tables.

Steps (timed ones marked *):

1. Build the workload (``changes`` over ``tables`` tables, a ``batch_changes`` new batch);
   copy the project; * start Spark; * ingest the history.
2. * ``dbt build`` (the full build of the history: every seed, model and test).
3. * Typed gold for every source table: ``python -m cdc_lakehouse.codegen gold-tables --out
   <copy>/models/marts/current_state/tables`` (in this process, on its SparkSession: the Derby
   metastore admits one process). It must write one model per table, else :class:`BenchError`.
   * ``dbt build`` (the first build with typed gold: it creates the typed views; once per
   codegen run in a deployment, reported apart).
4. * Ingest the new batch; * ``dbt build`` (the whole project, typed gold included: what each
   scheduled run pays with a typed model per table). Target 5 compares this build's seconds.
5. Gold (``gold.current_rows``) checked against the simulator's oracle.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

from cdc_lakehouse.codegen.cli import main as codegen
from cdc_lakehouse.runtime.spark_session import get_spark
from cdc_lakehouse.tools.bench import workload as workloads
from cdc_lakehouse.tools.bench.baselines import check
from cdc_lakehouse.tools.bench.measure import measured
from cdc_lakehouse.tools.bench.pipeline import BenchError, Pipeline

PROJECT_FILES = ("dbt_project.yml", "profiles.yml")
PROJECT_DIRS = (
    "models",
    "python_models",
    "macros",
    "seeds",
    "sample_data/seeds",
    "tests/dbt",
    "analyses",
    "snapshots",
)
"""What dbt reads of the project (``dbt_project.yml``'s paths but the examples' typed gold
models, ``sample_data/models``); copied when present."""
TYPED_GOLD = Path("models") / "marts" / "current_state" / "tables"
EXAMPLE_TYPED_GOLD = (
    Path("sample_data") / "models" / "marts" / "current_state" / "tables" / "examples"
)
"""The examples' typed gold models (the bundled samples' and the tests' tables): not copied."""
TYPED_GOLD_TAG = "typed_gold"


def copy_project(project_dir: Path, target: Path) -> Path:
    """Copy the dbt project's :data:`PROJECT_FILES` and :data:`PROJECT_DIRS` to ``target``
    (replaced if present), with an empty ``models/marts/current_state/tables``; returns ``target``.

    Raises:
        FileNotFoundError: ``project_dir`` has no ``dbt_project.yml``.
    """
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    for name in PROJECT_FILES:
        shutil.copy2(project_dir / name, target / name)
    for name in PROJECT_DIRS:
        if (project_dir / name).is_dir():
            shutil.copytree(project_dir / name, target / name)
    shutil.rmtree(target / TYPED_GOLD, ignore_errors=True)
    (target / TYPED_GOLD).mkdir(parents=True)
    return target


def generate_typed_gold(out: Path, log: Path) -> int:
    """Run ``python -m cdc_lakehouse.codegen gold-tables --out OUT`` in this process (its
    output to ``log``); returns the models (``.sql`` files) under ``out``.

    Raises:
        BenchError: the command exited non-zero.
    """
    with (
        log.open("w", encoding="utf-8") as stream,
        contextlib.redirect_stdout(stream),
        contextlib.redirect_stderr(stream),
    ):
        code = codegen(["gold-tables", "--out", str(out)])
    if code != 0:
        raise BenchError(f"codegen gold-tables exited {code}; see {log}")
    return len(list(out.rglob("*.sql")))


def typed_gold_node_times(target: Path) -> dict[str, Any]:
    """What the last dbt command spent on typed gold (``target``'s ``manifest.json`` and
    ``run_results.json``): ``models`` and ``tests`` run (models tagged ``typed_gold`` and the
    tests on them) and their summed node ``seconds`` (dbt runs two nodes at a time, so this
    can exceed their share of the wall time)."""
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    results = json.loads((target / "run_results.json").read_text(encoding="utf-8"))
    nodes = manifest["nodes"]
    typed = {
        uid
        for uid, node in nodes.items()
        if node["resource_type"] == "model" and TYPED_GOLD_TAG in node.get("tags", [])
    }
    tests = {
        uid
        for uid, node in nodes.items()
        if node["resource_type"] == "test"
        and typed & set(node.get("depends_on", {}).get("nodes", []))
    }
    run = [r for r in results["results"] if r["unique_id"] in typed | tests]
    return {
        "models": sum(r["unique_id"] in typed for r in run),
        "tests": sum(r["unique_id"] in tests for r in run),
        "seconds": round(sum(r["execution_time"] for r in run), 1),
    }


def run(spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict[str, Any]:
    """Measure one table count. ``spec``: ``{"format", "tables", "changes", "batch_changes",
    "seed"}``.

    Returns:
        ``format``, ``tables``, ``changes``, ``batch_changes``, ``records`` /
        ``batch_records`` (ingested), ``events`` / ``batch_events`` (rows of
        ``silver.change_events``), seconds of ``spark_startup_s``, ``ingest_s``,
        ``full_build_s``, ``codegen_s``, ``typed_gold_build_s`` (the first build after
        codegen, no new batch: it creates the typed views), ``batch_ingest_s`` and
        ``incremental_build_s`` (the whole build with typed gold after the batch), the full
        and the incremental build's peak RSS (bytes),
        ``typed_gold_models``, ``typed_gold_nodes`` (:func:`typed_gold_node_times` of the
        second build), ``gold_equals_oracle`` and the first ``gold_differences``,
        ``full_build_nodes`` and ``incremental_build_nodes`` (``Pipeline.node_times``).

    Raises:
        BenchError: a pipeline step failed, or typed gold is not one model per table.
    """
    tables = spec["tables"]
    load = workloads.build(
        spec["format"], spec["changes"], spec["batch_changes"], spec["seed"], tables=tables
    )
    history_dump, batch_dump = workloads.write(load, work_dir / "dump")
    project = copy_project(project_dir, work_dir / "project")
    topics = load.topics

    with measured() as startup:
        spark = get_spark()
    pipeline = Pipeline(spark, project, work_dir)
    with measured() as ingest:
        records = pipeline.ingest(history_dump)
    with measured() as full:
        pipeline.dbt("build")
    full_nodes = pipeline.node_times()
    history_events = pipeline.events(topics)
    with measured() as codegen:
        models = generate_typed_gold(project / TYPED_GOLD, work_dir / "codegen.log")
    if models != tables:
        raise BenchError(
            f"codegen gold-tables wrote {models} typed gold models for {tables} source tables "
            f"(see {work_dir / 'codegen.log'})"
        )
    with measured() as typed_build:
        pipeline.dbt("build")
    with measured() as batch_ingest:
        batch_records = pipeline.ingest(batch_dump)
    with measured() as build:
        pipeline.dbt("build")
    build_nodes = pipeline.node_times()
    typed_nodes = typed_gold_node_times(work_dir / "target")
    batch_events = pipeline.events(topics) - history_events

    gold = pipeline.gold_rows(topics)
    columns = check.compared_columns(load.whole)
    problems = check.differences(check.history_rows(load.encoder, load.whole), gold, columns)
    shutil.rmtree(work_dir / "dump", ignore_errors=True)
    return {
        "format": spec["format"],
        "tables": tables,
        "changes": spec["changes"],
        "batch_changes": spec["batch_changes"],
        "records": records,
        "batch_records": batch_records,
        "events": history_events,
        "batch_events": batch_events,
        "spark_startup_s": round(startup.seconds, 3),
        "ingest_s": round(ingest.seconds, 3),
        "full_build_s": round(full.seconds, 3),
        "full_build_peak_rss_bytes": full.peak_rss_bytes,
        "codegen_s": round(codegen.seconds, 3),
        "typed_gold_models": models,
        "typed_gold_build_s": round(typed_build.seconds, 3),
        "batch_ingest_s": round(batch_ingest.seconds, 3),
        "incremental_build_s": round(build.seconds, 3),
        "incremental_build_peak_rss_bytes": build.peak_rss_bytes,
        "typed_gold_nodes": typed_nodes,
        "gold_equals_oracle": not problems,
        "gold_differences": problems[:5],
        "full_build_nodes": full_nodes,
        "incremental_build_nodes": build_nodes,
    }
