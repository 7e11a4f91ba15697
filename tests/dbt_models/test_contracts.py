"""Model contracts of the public models (docs/how-to/contracts.md "How to change a public
model: contracts and access"): a change that drops or retypes a public column fails the build
with dbt's contract error and writes nothing; the unchanged project builds (every test of the
session builds it, and the last test here)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.dbt

CONTRACT_ERROR = "This model has an enforced contract that failed."

# model -> (the last line of its SQL, what replaces it): each breaks one public column
BROKEN_MODELS = {
    # a view: drop a column
    "current_rows": "select * except (last_event_time) from final",
    # a view: retype a column (int -> bigint)
    "row_history": (
        "select * except (version_number), cast(version_number as bigint) as version_number "
        "from final"
    ),
    # an incremental model on its existing table (the pre-hook check, macros/cdc_contracts.sql):
    # retype a column (bigint -> string)
    "quarantine": (
        "select * except (kafka_offset), cast(kafka_offset as string) as kafka_offset from final"
    ),
}
# what dbt's error table says of each (column_name | definition_type | contract_type | reason)
EXPECTED_MISMATCHES = {
    "current_rows": ("last_event_time", "timestamp", "missing in definition"),
    "row_history": ("version_number", "bigint", "int", "data type mismatch"),
    "quarantine": ("kafka_offset", "string", "bigint", "data type mismatch"),
}


def _copy_project(project_dir: Path, to: Path) -> Path:
    """The dbt project (no lake, target, sources of Python) copied to ``to``."""
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy2(project_dir / name, to / name)
    for name in ("models", "python_models", "macros", "seeds", "sample_data/seeds", "tests/dbt"):
        shutil.copytree(project_dir / name, to / name)
    return to


def _break(project: Path, model: str, last_line: str) -> None:
    """Replace the final ``select * from final`` of ``model``'s SQL with ``last_line``."""
    path = next(project.joinpath("models").rglob(f"{model}.sql"))
    text = path.read_text(encoding="utf-8").rstrip()
    assert text.endswith("select * from final"), path
    path.write_text(text.removesuffix("select * from final") + last_line + "\n", encoding="utf-8")


def _retype_declared(project: Path, yml: str, column: str, old: str, new: str) -> None:
    path = project / yml
    text = path.read_text(encoding="utf-8")
    entry = f"      - name: {column}\n        data_type: {old}\n"
    assert text.count(entry) == 1, (path, entry)
    path.write_text(text.replace(entry, f"      - name: {column}\n        data_type: {new}\n"))


def _invoke(project: Path, work: Path, *args: str) -> Any:
    from dbt.cli.main import dbtRunner

    return dbtRunner().invoke(
        [
            *args,
            "--project-dir",
            str(project),
            "--profiles-dir",
            str(project),
            "--target-path",
            str(work / "target"),
            "--log-path",
            str(work / "logs"),
        ]
    )


def _columns(spark, table: str) -> dict[str, str]:
    spark.catalog.refreshTable(table)
    return dict(spark.table(table).dtypes)


@pytest.fixture(scope="module")
def broken_build(
    spark, built_lake, project_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """A copy of the project with BROKEN_MODELS broken and silver.schema_changes' change_index
    declared bigint (it is int), on the session lake: `dbt run` of the three models (an
    incremental run), then `dbt test` of schema_changes'
    declared_data_types (two commands: in one `dbt build` the failing test would skip the
    models downstream of schema_changes). The public tables' columns before and after."""
    tables = ["gold.current_rows", "gold.row_history", "silver.quarantine"]
    before = {table: _columns(spark, table) for table in tables}
    project = _copy_project(project_dir, tmp_path_factory.mktemp("contract-project"))
    for model, last_line in BROKEN_MODELS.items():
        _break(project, model, last_line)
    _retype_declared(
        project, "models/marts/changes/_changes__models.yml", "change_index", "int", "bigint"
    )
    work = tmp_path_factory.mktemp("contract-dbt")
    run = _invoke(project, work, "run", "--select", *BROKEN_MODELS)
    test = _invoke(project, work, "test", "--select", "test_name:declared_data_types")
    after = {table: _columns(spark, table) for table in tables}
    return {"run": run, "test": test, "before": before, "after": after}


def _node_results(result: Any) -> dict[str, Any]:
    """The results of a dbt invocation's models and tests (not its hooks), by node name."""
    return {
        r.node.name: r for r in result.result.results if r.node.resource_type in ("model", "test")
    }


@pytest.mark.parametrize("model", sorted(BROKEN_MODELS))
def test_a_dropped_or_retyped_public_column_fails_with_the_contract_error(broken_build, model):
    result = broken_build["run"]
    assert not result.success
    node = _node_results(result)[model]
    assert str(node.status) == "error", node.message
    assert CONTRACT_ERROR in node.message
    line = next(
        (row for row in node.message.splitlines() if f"| {EXPECTED_MISMATCHES[model][0]} " in row),
        "",
    )
    assert [cell.strip() for cell in line.strip(" |").split("|") if cell.strip()] == list(
        EXPECTED_MISMATCHES[model]
    ), node.message


def test_a_failed_contract_writes_nothing(broken_build):
    """The views keep their columns, and the incremental table its types and data."""
    assert broken_build["after"] == broken_build["before"]
    assert "last_event_time" in broken_build["after"]["gold.current_rows"]


def test_the_python_model_s_declared_types_are_checked_by_a_data_test(broken_build):
    """dbt refuses contracts on Python models; declared_data_types fails on silver.schema_changes
    when its YAML declares a type the table does not have."""
    (test,) = _node_results(broken_build["test"]).values()
    assert test.node.attached_node == "model.cdc_lakehouse.schema_changes"
    assert str(test.status) == "fail", test.message
    assert test.failures == 1  # one row: change_index, declared bigint, actual int


def test_the_unchanged_project_builds_its_public_views(run_dbt: Callable, broken_build):
    result = run_dbt("run", "--select", "current_rows", "row_history")
    assert {name: str(r.status) for name, r in _node_results(result).items()} == {
        "current_rows": "success",
        "row_history": "success",
    }
