"""A typed gold model that no longer matches its table's newest schema version is reported by
the build: the singular data test assert_typed_gold_matches_the_newest_schema (severity warn)
returns the model, and a dbt warning names it and the command that regenerates it.

A DataWorks table of its own (topic ``typed.cases.dataworks`` of typed_gold_cases.py,
partition :data:`PARTITION`, database :data:`DB`): one insert declaring two columns, the typed
model generated from it into a copy of the project, then an insert declaring a third column
(schema version 2 in silver.table_schemas)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.dbt_models.test_typed_gold_names import _copy_project, _invoke
from tests.dbt_models.typed_gold_cases import DATAWORKS_TOPIC, EVENT_MS

pytestmark = pytest.mark.dbt

PARTITION = 9
DB = "stale_cases"
TABLE = "items"
TEST = "assert_typed_gold_matches_the_newest_schema"
VERSION_1 = [("id", "LONG"), ("name", "STRING")]
VERSION_2 = [*VERSION_1, ("price", "DOUBLE")]


def _record(offset: int, columns: list[tuple[str, str]]) -> dict[str, Any]:
    values = {"id": offset + 1, "name": f"item {offset}", "price": 1.5}
    value = {
        "schema": {
            "dataColumn": [{"name": n, "type": t} for n, t in columns],
            "primaryKey": ["id"],
            "source": {"dbType": "MySQL", "dbName": DB, "tableName": TABLE},
        },
        "payload": {
            "before": None,
            "after": {"dataColumn": {n: values[n] for n, _t in columns}},
            "sequenceId": str(EVENT_MS * 1000000 + offset),
            "op": "INSERT",
            "timestamp": {"eventTime": EVENT_MS + offset},
            "ddl": None,
        },
        "version": "1.0.0",
    }
    return {
        "topic": DATAWORKS_TOPIC,
        "partition": PARTITION,
        "offset": offset,
        "key": None,
        "value": json.dumps(value),
        "timestamp": EVENT_MS + offset,
    }


def _warnings(project: Path, work: Path, *args: str) -> tuple[Any, list[str]]:
    """Run dbt on ``project``; return its result and the messages of its warnings."""
    from dbt.cli.main import dbtRunner

    warned: list[str] = []

    def on_event(event: Any) -> None:
        if event.info.name == "JinjaLogWarning":
            warned.append(event.info.msg)

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
    return result, warned


def _statuses(result: Any) -> dict[str, tuple[str, Any]]:
    return {r.node.name: (str(r.status), r.failures) for r in result.result.results}


@pytest.fixture(scope="module")
def stale_build(
    spark, built_lake, ingest_dump, tmp_path_factory: pytest.TempPathFactory, project_dir: Path
) -> Iterator[dict[str, Any]]:
    from cdc_lakehouse.codegen.cli import refresh
    from cdc_lakehouse.codegen.gold_tables import plan_models
    from cdc_lakehouse.codegen.silver import read_mappings, read_tables

    dumps = tmp_path_factory.mktemp("stale-dumps")
    project = _copy_project(project_dir, tmp_path_factory.mktemp("stale-project"))
    work = tmp_path_factory.mktemp("stale-dbt")
    silver = ("run", "--select", "+table_schemas")

    first = dumps / "version_1.jsonl"
    first.write_text(json.dumps(_record(0, VERSION_1)) + "\n", encoding="utf-8")
    ingest_dump(first)
    ran, _ = _invoke(project, work, *silver)
    assert ran.success, ran.exception
    tables, mappings = read_tables(spark), read_mappings(spark)
    (model,) = [m for m in plan_models(tables, mappings) if m.table.source_database == DB]
    out = project / "models" / "marts" / "current_state" / "tables"
    assert refresh(tables, mappings, out, table_names=[model.name]) == 0
    build = ("build", "--select", model.name, TEST, "--exclude-resource-type", "unit_test")
    current, current_warnings = _warnings(project, work, *build)

    second = dumps / "version_2.jsonl"
    second.write_text(json.dumps(_record(1, VERSION_2)) + "\n", encoding="utf-8")
    ingest_dump(second)
    ran, _ = _invoke(project, work, *silver)
    assert ran.success, ran.exception
    stale, stale_warnings = _warnings(project, work, *build)
    yield {
        "model": model,
        "current": current,
        "current_warnings": current_warnings,
        "stale": stale,
        "stale_warnings": stale_warnings,
        "versions": spark.sql(
            "select schema_version from silver.table_schemas "
            f"where source_database = '{DB}' and source_table = '{TABLE}'"
        ).collect(),
    }
    spark.sql(f"drop view if exists gold.{model.name}")


def test_a_model_of_the_newest_schema_version_builds_without_a_warning(stale_build):
    model = stale_build["model"]
    assert model.schema_version == "1"
    assert stale_build["current"].success, stale_build["current"].exception
    statuses = _statuses(stale_build["current"])
    assert statuses[model.name][0] == "success"
    assert statuses[TEST] == ("pass", 0)
    assert not [w for w in stale_build["current_warnings"] if model.name in w]


def test_a_newer_schema_version_makes_the_build_warn_with_the_command(stale_build):
    model = stale_build["model"]
    assert sorted(r.schema_version for r in stale_build["versions"]) == ["1", "2"]
    # a warning, not an error: the build succeeds and the model keeps its columns
    assert stale_build["stale"].success, stale_build["stale"].exception
    statuses = _statuses(stale_build["stale"])
    assert statuses[model.name][0] == "success"
    assert statuses[TEST] == ("warn", 1)
    command = f"python -m cdc_lakehouse.codegen gold-tables --table {model.name}"
    assert stale_build["stale_warnings"] == [
        f"typed gold model {model.name} was generated from schema version 1 of dataworks_json "
        f"table {DB}.{TABLE}; silver.table_schemas has a newer one (2): regenerate it with "
        f"`{command}`"
    ]
