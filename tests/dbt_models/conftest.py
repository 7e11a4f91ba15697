"""Fixtures for tests that run the whole pipeline: ingest a dump, then dbt in-process.

dbt runs with dbtRunner in this process, on the session's SparkSession (the sparksession
adapter reuses it), with its target and log directories in a temporary directory.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.dbt_models
from tests.dbt_models.helpers import gold_rows
from tests.dbt_models.simulation import (
    INCREMENTAL_TABLES,
    Simulation,
    comparable,
    gold_tables,
    simulate_all,
    table_differences,
    write_records,
)

SAMPLE_DUMP = Path(__file__).resolve().parents[2] / "sample_data" / "dump"


@pytest.fixture(scope="session")
def run_dbt(spark, project_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable:
    """Run a dbt command in-process; fail the test with dbt's output if it fails."""
    from dbt.cli.main import dbtRunner

    work = tmp_path_factory.mktemp("dbt")

    def run(*args: str, expect_success: bool = True) -> Any:
        argv = [
            *args,
            "--project-dir",
            str(project_dir),
            "--profiles-dir",
            str(project_dir),
            "--target-path",
            str(work / "target"),
            "--log-path",
            str(work / "logs"),
        ]
        result = dbtRunner().invoke(argv)
        if expect_success and not result.success:
            failures = []
            for node_result in getattr(result.result, "results", None) or []:
                if str(node_result.status) not in ("success", "pass"):
                    failures.append(f"{node_result.node.unique_id}: {node_result.message}")
            pytest.fail(f"dbt {' '.join(args)} failed: {result.exception or failures}")
        return result

    run.target_path = work / "target"  # type: ignore[attr-defined]
    return run


@pytest.fixture(scope="session")
def ingest_dump(spark, project_dir: Path, lake_dir: Path) -> Callable[[Path], Any]:
    """Ingest a dump file or directory into bronze.kafka_records (the real ingest job)."""
    from cdc_lakehouse.ingest.job import IngestOptions, plan_ingest, run_ingest

    def ingest(dump: Path) -> Any:
        options = IngestOptions(
            dump=dump,
            registry=project_dir / "seeds" / "cdc_topics.csv",
            table="bronze.kafka_records",
            checkpoint=lake_dir / "checkpoints" / "bronze.kafka_records",
        )
        return run_ingest(spark, plan_ingest(options))

    return ingest


def case_modules() -> list[Any]:
    """Every ``tests/dbt_models/*_cases.py`` module: each has ``write_dump(path) -> Path``
    that writes its edge-case records (one format's topics) as a topic dump."""
    names = sorted(
        info.name
        for info in pkgutil.iter_modules(tests.dbt_models.__path__)
        if info.name.endswith("_cases")
    )
    return [importlib.import_module(f"tests.dbt_models.{name}") for name in names]


@pytest.fixture(scope="session")
def simulations() -> dict[str, Simulation]:
    """The simulated topics of every format with an encoder (tests/dbt_models/simulation.py)."""
    return simulate_all()


@pytest.fixture(scope="session")
def built_lake(
    spark, ingest_dump, run_dbt, simulations, tmp_path_factory: pytest.TempPathFactory
) -> Any:
    """The bundled sample dump, every format's edge cases (``*_cases.py``) and part 1 of every
    simulated history, ingested and built with one `dbt build` for the whole test session."""
    cases_dir = tmp_path_factory.mktemp("cases")
    for module in case_modules():
        module.write_dump(cases_dir / f"{module.__name__.rsplit('.', 1)[-1]}.jsonl")
    # one topic dump directory for every format's part 1 (their topics differ): one ingest
    sim_dir = tmp_path_factory.mktemp("simulated")
    for simulation in simulations.values():
        write_records(sim_dir, simulation.first_delivery.records)
    first = ingest_dump(SAMPLE_DUMP)
    second = ingest_dump(cases_dir)
    ingest_dump(sim_dir)
    run_dbt("build")
    return {"sample_ingest": first, "cases_ingest": second}


@pytest.fixture(scope="session")
def simulated_increments(
    spark, built_lake, ingest_dump, run_dbt, simulations, tmp_path_factory
) -> dict[str, Any]:
    """Part 2 of every simulated history, ingested in two batches, each followed by an
    incremental `dbt run` (the last one a `dbt build`, with every data test); then the gold
    of the incremental runs and of `dbt run --full-refresh`, per format, for comparison.

    Runs after every test that only needs ``built_lake`` has had its chance to read part 1
    (pytest orders the files; test_simulated_gold.py reads part 1 first)."""
    directory = tmp_path_factory.mktemp("simulated-increments")
    batches = max(len(s.second_delivery.batches) for s in simulations.values())
    for index in range(batches):
        batch_dir = directory / f"batch-{index + 1}"
        for simulation in simulations.values():
            if index < len(simulation.second_delivery.batches):
                write_records(batch_dir, simulation.second_delivery.batches[index])
        if index == 0:  # the edge cases that need a later batch (``write_increment_dump``)
            for module in case_modules():
                if hasattr(module, "write_increment_dump"):
                    name = module.__name__.rsplit(".", 1)[-1]
                    module.write_increment_dump(batch_dir / f"{name}-increment.jsonl")
        ingest_dump(batch_dir)  # one ingest batch for every format's records of the batch
        run_dbt("build" if index == batches - 1 else "run")
    incremental = {name: gold_tables(spark, s) for name, s in simulations.items()}
    incremental_states = row_states(spark)
    late_keyed = gold_rows(spark, "source_schema = 'EDGE' and source_table = 'LATE_KEYED'")
    # materialized in Spark's block manager: they outlive the full refresh's overwrite
    incremental_tables = {
        table: comparable(spark.table(table)).localCheckpoint() for table in INCREMENTAL_TABLES
    }
    run_dbt("run", "--full-refresh")
    full_refresh = {name: gold_tables(spark, s) for name, s in simulations.items()}
    return {
        "incremental": incremental,
        "full_refresh": full_refresh,
        "incremental_states": incremental_states,
        "full_refresh_states": row_states(spark),
        "late_keyed": late_keyed,
        "table_differences": {
            table: table_differences(frame, comparable(spark.table(table)))
            for table, frame in incremental_tables.items()
        },
    }


def row_states(spark) -> list[tuple]:
    """Every row of gold.row_states as sorted plain tuples (for exact comparison)."""
    rows = spark.sql(
        "select source_format, source_database, source_schema, source_table, row_key, "
        "to_json(last_change) as last_change, whole_row_ordering_key, "
        "to_json(column_entries) as column_entries, is_deleted from gold.row_states"
    ).collect()
    return sorted(tuple(row) for row in rows)
