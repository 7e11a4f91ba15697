"""A seed is loaded again only when its CSV or column types changed since its last load
(macros/cdc_seed_materialization.sql): the load records the seed's checksum as a table
property, and `dbt build` / `dbt seed` skip a seed whose table holds it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PROPERTY = "cdc_lakehouse.seed_checksum"


def _seed(run_dbt: Callable[..., Any], *args: str) -> dict[str, str]:
    result = run_dbt("seed", *args)
    return {r.node.name: r.message for r in result.result.results if r.node.resource_type == "seed"}


def test_an_unchanged_seed_is_not_loaded_again(run_dbt, table_property, built_lake) -> None:
    assert table_property("bronze.cdc_topics", PROPERTY)
    assert _seed(run_dbt) == {
        "cdc_topics": "unchanged",
        "cdc_declared_keys": "unchanged",
        "cdc_example_topics": "unchanged",
        "cdc_example_declared_keys": "unchanged",
        "cdc_type_mappings": "unchanged",
    }


def test_a_seed_whose_table_holds_another_checksum_is_loaded(
    spark, run_dbt, table_property, built_lake
) -> None:
    table = "bronze.cdc_type_mappings"
    checksum = table_property(table, PROPERTY)
    rows = spark.table(table).count()
    # as after an edit of the CSV file: the table holds what an older file held
    spark.sql(f"alter table {table} set tblproperties ('{PROPERTY}' = 'an older file')")
    assert _seed(run_dbt, "--select", "cdc_type_mappings") == {
        "cdc_type_mappings": f"INSERT {rows}"
    }
    assert table_property(table, PROPERTY) == checksum
    assert spark.table(table).count() == rows


def test_a_full_refresh_loads_every_seed(run_dbt, built_lake) -> None:
    loaded = _seed(run_dbt, "--full-refresh")
    assert sorted(loaded) == [
        "cdc_declared_keys",
        "cdc_example_declared_keys",
        "cdc_example_topics",
        "cdc_topics",
        "cdc_type_mappings",
    ]
    assert all(message.startswith("CREATE ") for message in loaded.values()), loaded
    assert _seed(run_dbt)["cdc_topics"] == "unchanged"
