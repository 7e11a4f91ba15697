"""The dbt unit tests of the project (the ``unit_tests:`` of ``models/**/_*__models.yml``).

dbt runs a unit test by putting fixed rows in place of a model's inputs and comparing what the
model's SQL makes of them with the expected rows; it needs the model's direct parents to exist
in the warehouse (for their column types), so these tests use the session lake
(``built_lake``). The builds of the test session leave the unit tests out
(``EXCLUDE_UNIT_TESTS`` in conftest.py); they run here, once:

- every unit test the YAML declares runs and passes (a YAML that no longer parses, or a
  deleted or renamed unit test, changes the count or the names);
- a copy of the project with one rule broken fails its unit test, and dbt's message shows
  the rows that differ (a unit test that cannot fail would prove nothing).

Whole-stage code generation is turned off for these commands: Spark compiles each query's
stages to Java before running them, a fixed cost that dominates a query of a few rows (the 18
unit tests took 54 s instead of 66 s on a warm session, gold.int_row_versions' about half);
the SQL's results do not depend on it.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

UNIT_TEST_SELECTION = ("--select", "test_type:unit")

BROKEN_TEST = "stg_dataworks__events_maps_ops_and_orders_by_sequence_id"
"""The unit test that the broken copy of the project must fail."""

BROKEN_MODEL = Path("models/staging/dataworks/stg_dataworks__events.sql")
RANK_RULE = "case when op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE') then 0 else 1 end as image_rank"
"""The rule broken in the copy: an update-before half orders before its after half."""

ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
"""dbt colours its messages on a terminal (and in pytest) unless told not to."""

PROJECT_FILES = (
    "dbt_project.yml",
    "profiles.yml",
    "models",
    "python_models",
    "macros",
    "seeds",
    "sample_data/seeds",
    "sample_data/models",
    "tests/dbt",
)
"""What a copy of the dbt project needs (the adapter and the package come from the venv)."""


def declared_unit_tests(project_dir: Path) -> dict[str, dict[str, Any]]:
    """Every unit test of the models' YAML files, by name."""
    declared: dict[str, dict[str, Any]] = {}
    for path in sorted((project_dir / "models").rglob("*.yml")):
        for unit_test in (yaml.safe_load(path.read_text()) or {}).get("unit_tests") or []:
            assert unit_test["name"] not in declared, f"{unit_test['name']} declared twice"
            declared[unit_test["name"]] = unit_test
    return declared


@contextmanager
def without_whole_stage_codegen(spark: Any) -> Iterator[None]:
    """Turn Spark's whole-stage code generation off for the block (see the module doc)."""
    key = "spark.sql.codegen.wholeStage"
    previous = spark.conf.get(key)
    spark.conf.set(key, "false")
    try:
        yield
    finally:
        spark.conf.set(key, previous)


def test_every_declared_unit_test_passes(
    built_lake: Any, run_dbt: Callable, spark: Any, project_dir: Path
) -> None:
    declared = declared_unit_tests(project_dir)
    assert len(declared) >= 15, sorted(declared)
    for name, unit_test in declared.items():
        assert "docs/formats.md" in unit_test.get("description", ""), (
            f"{name}: the description names no docs/formats.md section"
        )

    with without_whole_stage_codegen(spark):
        result = run_dbt("test", *UNIT_TEST_SELECTION, unit_tests=True, expect_success=False)

    outcomes = {
        node_result.node.name: (str(node_result.status), node_result.message)
        for node_result in result.result.results
        if node_result.node.resource_type == "unit_test"
    }
    assert sorted(outcomes) == sorted(declared)
    failed = {name: outcome for name, outcome in outcomes.items() if outcome[0] != "pass"}
    assert failed == {}
    assert result.success


def test_a_broken_rule_fails_its_unit_test_with_the_differing_rows(
    built_lake: Any, spark: Any, project_dir: Path, tmp_path: Path
) -> None:
    from dbt.cli.main import dbtRunner

    copy = tmp_path / "project"
    for name in PROJECT_FILES:
        if (project_dir / name).is_dir():
            shutil.copytree(project_dir / name, copy / name)
        else:
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(project_dir / name, copy / name)
    model = copy / BROKEN_MODEL
    assert RANK_RULE in model.read_text()
    model.write_text(model.read_text().replace(RANK_RULE, "1 as image_rank"))

    with without_whole_stage_codegen(spark):
        result = dbtRunner().invoke(
            [
                "test",
                "--select",
                BROKEN_TEST,
                "--project-dir",
                str(copy),
                "--profiles-dir",
                str(copy),
                "--target-path",
                str(tmp_path / "target"),
                "--log-path",
                str(tmp_path / "logs"),
            ]
        )

    assert not result.success
    [outcome] = [r for r in result.result.results if r.node.resource_type == "unit_test"]
    assert (outcome.node.name, str(outcome.status)) == (BROKEN_TEST, "fail")
    message = ANSI_ESCAPE.sub("", outcome.message)
    assert "actual differs from expected" in message
    # the UPDATE_BEFOR half (offset 2), as dbt shows a changed cell: expected→actual
    assert (
        "000000000000000000000000000100.0.0000000000.00000000000000000002.dw"
        "→000000000000000000000000000100.1.0000000000.00000000000000000002.dw"
    ) in message
