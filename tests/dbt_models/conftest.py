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
def built_lake(spark, ingest_dump, run_dbt, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The bundled sample dump and every format's edge cases (``*_cases.py``), ingested and
    built with one `dbt build` for the whole test session."""
    cases_dir = tmp_path_factory.mktemp("cases")
    for module in case_modules():
        module.write_dump(cases_dir / f"{module.__name__.rsplit('.', 1)[-1]}.jsonl")
    first = ingest_dump(SAMPLE_DUMP)
    second = ingest_dump(cases_dir)
    run_dbt("build")
    return {"sample_ingest": first, "cases_ingest": second}
