"""Hostile source names through the typed gold generator and a real dbt (issue 48): the tables
of typed_gold_names_cases.py, generated into a copy of the project, parse and build with
nothing of their names run (no ``log()`` output, no table created), and the typed views return
the row's values under the generated column names."""

from __future__ import annotations

import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dbt_models import typed_gold_names_cases as cases
from tests.dbt_models.conftest import EXCLUDE_UNIT_TESTS

pytestmark = pytest.mark.dbt

JINJA_LOG_EVENTS = ("JinjaLogInfo", "JinjaLogDebug", "JinjaLogWarning")
"""The dbt events of Jinja's log() (info=true, info=false, and warnings): each message is the
text log() was given (dbt's own macros log too)."""


def _copy_project(project_dir: Path, to: Path) -> Path:
    """The dbt project (no lake, target, Python sources) copied to ``to``."""
    for name in ("dbt_project.yml", "profiles.yml"):
        shutil.copy2(project_dir / name, to / name)
    for name in ("models", "python_models", "macros", "seeds", "sample_data/seeds", "tests/dbt"):
        shutil.copytree(project_dir / name, to / name)
    return to


def _invoke(project: Path, work: Path, *args: str) -> tuple[Any, list[str]]:
    """Run dbt in-process on ``project``; return its result and what Jinja's log() printed."""
    from dbt.cli.main import dbtRunner

    logged: list[str] = []

    def on_event(event: Any) -> None:
        if event.info.name in JINJA_LOG_EVENTS:
            logged.append(event.info.msg)

    result = dbtRunner(callbacks=[on_event]).invoke(
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
    return result, logged


@pytest.fixture(scope="module")
def hostile_build(
    spark, built_lake, project_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """The generator run on the session lake for each hostile table (what it returned, or the
    OSError it raised) into a copy of the project, then `dbt parse` and `dbt build` of their
    models (tests included) there. The typed views are dropped afterwards."""
    from cdc_lakehouse.codegen.cli import refresh
    from cdc_lakehouse.codegen.gold_tables import plan_models
    from cdc_lakehouse.codegen.silver import read_mappings, read_tables

    tables, mappings = read_tables(spark), read_mappings(spark)
    models = {
        m.table.source_table: m
        for m in plan_models(tables, mappings)
        if m.table.source_database == cases.DB and m.table.source_table in cases.TABLES
    }
    project = _copy_project(project_dir, tmp_path_factory.mktemp("hostile-project"))
    out = project / "models" / "marts" / "current_state" / "tables"
    report = io.StringIO()
    codes: dict[str, int | OSError] = {}
    for table, model in models.items():
        try:
            codes[table] = refresh(tables, mappings, out, table_names=[model.name], stdout=report)
        except OSError as exc:
            codes[table] = exc
    names = [m.name for m in models.values()]
    work = tmp_path_factory.mktemp("hostile-dbt")
    parse, parse_logged = _invoke(project, work, "parse")
    build, build_logged = _invoke(project, work, "build", "--select", *names, *EXCLUDE_UNIT_TESTS)
    yield {
        "models": models,
        "codes": codes,
        "report": report.getvalue(),
        "parse": parse,
        "build": build,
        "logged": parse_logged + build_logged,
        "out": out,
    }
    for name in names:
        spark.sql(f"drop view if exists gold.{name}")


def test_silver_keeps_the_names_and_the_generator_writes_every_table(hostile_build):
    models = hostile_build["models"]
    assert sorted(models) == sorted(cases.TABLES)
    for table, model in models.items():
        columns, _key = cases.TABLES[table]
        assert [c.source_name for c in model.columns] == [name for name, _type in columns]
    assert hostile_build["codes"] == dict.fromkeys(cases.TABLES, 0), hostile_build["report"]
    for model in models.values():
        assert (hostile_build["out"] / model.path).is_file(), model.path
        assert len(f"column_checks_{model.name}.sql".encode()) <= 255


def test_nothing_of_the_names_runs_and_the_project_parses(spark, hostile_build):
    parse, build = hostile_build["parse"], hostile_build["build"]
    assert parse.success, parse.exception
    assert cases.LOG_MARKER not in hostile_build["logged"]
    assert not spark.catalog.tableExists(cases.PWNED_TABLE)
    statuses = {r.node.name: str(r.status) for r in build.result.results}
    names = [m.name for m in hostile_build["models"].values()]
    assert {n: s for n, s in statuses.items() if n in names} == dict.fromkeys(names, "success")
    assert build.success, statuses


def test_descriptions_show_the_names_and_run_nothing(hostile_build):
    from cdc_lakehouse.codegen.gold_tables import shown

    manifest = hostile_build["parse"].result
    for table, model in hostile_build["models"].items():
        node = manifest.nodes[f"model.cdc_lakehouse.{model.name}"]
        assert f"table {shown(table)}" in node.description
        for column in model.columns:
            described = node.columns[column.name].description
            assert described.startswith(f"Source column {shown(column.source_name)}: "), described


def test_the_typed_views_return_the_values_under_the_hostile_names(spark, hostile_build):
    for table, model in hostile_build["models"].items():
        rows = spark.table(f"gold.{model.name}").collect()
        assert len(rows) == 1, table
        row = rows[0].asDict()
        expected = cases.EXPECTED_VALUES[table]
        got = {c.source_name: row[c.name] for c in model.columns}
        assert got == expected
        types = dict(spark.table(f"gold.{model.name}").dtypes)
        assert {c.source_name: types[c.name] for c in model.columns if c.source_type} == {
            name: "bigint" if source_type == "LONG" else "string"
            for name, source_type in cases.TABLES[table][0]
        }
