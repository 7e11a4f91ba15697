"""A view is created again only when its definition changed since it was last created
(macros/cdc_view_materialization.sql): the creation records the view's checksum as a view
property, and `dbt build` / `dbt run` leave a view that holds it as it is ("unchanged")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PROPERTY = "cdc_lakehouse.view_checksum"
VIEWS = ("current_rows_with_deletes", "stg_bronze__kafka_records")


def _run(run_dbt: Callable[..., Any], *args: str) -> dict[str, str]:
    result = run_dbt("run", *args)
    return {
        r.node.name: r.message for r in result.result.results if r.node.resource_type == "model"
    }


def test_an_unchanged_view_is_not_created_again(run_dbt, table_property, built_lake) -> None:
    assert table_property("gold.current_rows_with_deletes", PROPERTY)
    assert _run(run_dbt, "--select", *VIEWS) == dict.fromkeys(VIEWS, "unchanged")


def test_a_view_with_another_definition_is_created_again(
    spark, run_dbt, table_property, built_lake
) -> None:
    view = "gold.current_rows_with_deletes"
    checksum = table_property(view, PROPERTY)
    columns = spark.table(view).columns
    rows = spark.table(view).count()
    # as after an edit of the model: the view holds an older definition and its checksum
    spark.sql(f"create or replace view {view} as select 1 as older_column")
    spark.sql(f"alter view {view} set tblproperties ('{PROPERTY}' = 'an older definition')")
    assert (
        _run(run_dbt, "--select", "current_rows_with_deletes")["current_rows_with_deletes"]
        != "unchanged"
    )
    assert table_property(view, PROPERTY) == checksum
    assert spark.table(view).columns == columns
    assert spark.table(view).count() == rows


def test_a_full_refresh_creates_every_view_again(run_dbt, built_lake) -> None:
    created = _run(run_dbt, "--select", *VIEWS, "--full-refresh")
    assert sorted(created) == sorted(VIEWS)
    assert "unchanged" not in created.values(), created
    assert (
        _run(run_dbt, "--select", "current_rows_with_deletes")["current_rows_with_deletes"]
        == "unchanged"
    )
