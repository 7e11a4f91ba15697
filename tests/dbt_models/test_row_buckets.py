"""gold.int_row_versions' buckets of the source table (macros row_bucket and
assert_row_bucket_layout): a typed gold view reads its table's bucket alone, and an incremental
run on a state bucketed otherwise stops before it writes, saying to run a full refresh."""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.dbt

LAYOUT_PROPERTY = "cdc_lakehouse.row_buckets"


def bucket_dirs(spark: Any, relation: str) -> set[str]:
    """The row_bucket=N directories of the files a query of ``relation`` reads."""
    return {
        m.group(0)
        for f in spark.table(relation).inputFiles()
        if (m := re.search(r"row_bucket=\d+", f))
    }


def test_a_typed_gold_view_reads_its_tables_bucket_alone(spark: Any, built_lake: Any):
    typed = "gold.dataworks__mydatabase__myschema__tablename"
    all_buckets = bucket_dirs(spark, "gold.int_row_versions")
    read = bucket_dirs(spark, typed)
    assert len(read) == 1, read
    assert len(all_buckets) > 1, "the lake holds more than one bucket"
    # the bucket it names is the one its rows are in: the view has every live row of its table
    live_rows = spark.sql(
        "select count(*) from gold.current_rows where source_format = 'dataworks_json'"
        " and source_database = 'myDatabase' and source_schema = 'mySchema'"
        " and source_table = 'tableName'"
    ).first()[0]
    assert live_rows > 0
    assert spark.table(typed).count() == live_rows


def test_the_layout_is_recorded_on_the_table(table_property: Any, built_lake: Any):
    assert table_property("gold.int_row_versions", LAYOUT_PROPERTY) == "source_table/16"


def _failure_message(result: Any) -> str:
    messages = [
        str(r.message)
        for r in getattr(result.result, "results", None) or []
        if str(r.status) == "error"
    ]
    return " ".join(messages) or str(result.exception)


def test_an_incremental_run_with_other_buckets_stops_before_it_writes(
    spark: Any, run_dbt: Any, built_lake: Any
):
    before = spark.table("gold.int_row_versions").inputFiles()
    result = run_dbt(
        "run",
        "--select",
        "int_row_versions",
        "--vars",
        "{cdc_row_buckets: 8}",
        expect_success=False,
    )
    assert not result.success
    message = _failure_message(result)
    assert "holds its rows in buckets of 'source_table/16'" in message, message
    assert "this project writes 'source_table/8'" in message
    assert "run `dbt build --full-refresh` once" in message
    assert sorted(spark.table("gold.int_row_versions").inputFiles()) == sorted(before)


def _run_on_a_lake_bucketed_by_row_identity(spark: Any, run_dbt: Any) -> Any:
    """``dbt run`` of gold.int_row_versions with its layout property removed, as on a lake built
    before the state was bucketed by source table. The property is restored after."""
    spark.sql(f"alter table gold.int_row_versions unset tblproperties ('{LAYOUT_PROPERTY}')")
    try:
        return run_dbt("run", "--select", "int_row_versions", expect_success=False)
    finally:
        spark.sql(
            f"alter table gold.int_row_versions set tblproperties"
            f" ('{LAYOUT_PROPERTY}' = 'source_table/16')"
        )


def test_a_run_on_a_lake_bucketed_by_row_identity_stops(spark: Any, run_dbt: Any, built_lake: Any):
    """A lake built before the state was bucketed by source table has no layout property: the
    run stops before it writes."""
    before = spark.table("gold.int_row_versions").inputFiles()
    result = _run_on_a_lake_bucketed_by_row_identity(spark, run_dbt)
    assert not result.success
    message = _failure_message(result)
    assert "buckets of the row identity (a lake built before 2026-11-29)" in message, message
    assert sorted(spark.table("gold.int_row_versions").inputFiles()) == sorted(before)


def test_a_full_refresh_records_the_layout(
    spark: Any, run_dbt: Any, table_property: Any, built_lake: Any
):
    """The way out the stop names: after `--full-refresh` the table holds this project's layout
    again, and the next incremental run goes through."""
    rows_before = spark.table("gold.int_row_versions").count()
    spark.sql(f"alter table gold.int_row_versions unset tblproperties ('{LAYOUT_PROPERTY}')")
    run_dbt("run", "--select", "int_row_versions", "--full-refresh")
    assert table_property("gold.int_row_versions", LAYOUT_PROPERTY) == "source_table/16"
    assert spark.table("gold.int_row_versions").count() == rows_before
    run_dbt("run", "--select", "int_row_versions")
