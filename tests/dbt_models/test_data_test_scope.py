"""Data tests of an incremental build read only the batches since the last successful build
(macros/cdc_test_scope.sql): what is recorded, and the SQL a test then runs (the recorded
batch as a literal, read once per dbt invocation)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.dbt_models.helpers import newest_bronze_batch


def recorded_batch(spark) -> int:
    """The newest bronze batch a recorded build tested (silver.cdc_tested_batches)."""
    return spark.sql(
        "select max(tested_through_batch_id) as batch from silver.cdc_tested_batches"
    ).collect()[0]["batch"]


def _compiled(run_dbt, test_name: str, *args: str) -> str:
    run_dbt("compile", "--select", test_name, *args)
    found = list(Path(run_dbt.target_path, "compiled").rglob(f"{test_name}.sql"))
    assert len(found) == 1, found
    return found[0].read_text(encoding="utf-8")


def test_a_successful_build_records_the_newest_bronze_batch(spark, built_lake) -> None:
    recorded = recorded_batch(spark)
    assert recorded == newest_bronze_batch(spark)
    assert recorded is not None and recorded > 0


def test_a_test_of_a_batch_partitioned_model_reads_the_new_batches_only(
    spark, run_dbt, built_lake
) -> None:
    scoped = _compiled(run_dbt, "column_checks_change_events")
    scope = f"coalesce(resolved_batch_id, ingest_batch_id) > {recorded_batch(spark)}"
    assert f"from (select * from silver.change_events where {scope}) dbt_subquery" in scoped
    assert "cdc_tested_batches" not in scoped
    everything = _compiled(
        run_dbt, "column_checks_change_events", "--vars", "{cdc_full_tests: true}"
    )
    assert "cdc_tested_batches" not in everything
    assert "from silver.change_events" in everything


def test_the_gold_views_tests_read_the_row_identities_the_build_rewrote(
    spark, run_dbt, built_lake
) -> None:
    # their rules hold per row identity; last_resolved_batch_id is the identity's newest batch
    for test_name, view in (
        ("column_checks_row_history", "gold.row_history"),
        ("column_checks_current_rows", "gold.current_rows"),
    ):
        scoped = _compiled(run_dbt, test_name)
        scope = f"last_resolved_batch_id > {recorded_batch(spark)}"
        assert f"from (select * from {view} where {scope}) dbt_subquery" in scoped


def test_a_model_without_a_batch_column_is_tested_whole(run_dbt, built_lake) -> None:
    # a typed gold view: its table's current rows, no batch column
    model = "dataworks__mydatabase__myschema__tablename"
    run_dbt("compile", "--select", f"{model},test_type:generic")
    target = Path(run_dbt.target_path)
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    tests = [
        node
        for node in manifest["nodes"].values()
        if node["resource_type"] == "test"
        and node.get("attached_node") == f"model.cdc_lakehouse.{model}"
    ]
    assert tests
    for node in tests:
        sql = (target / node["compiled_path"]).read_text(encoding="utf-8")
        assert f"from gold.{model}" in sql
        assert "cdc_tested_batches" not in sql


def test_the_accounting_check_reads_the_new_records_and_those_resolved_since(
    spark, run_dbt, built_lake
) -> None:
    through = recorded_batch(spark)
    scoped = _compiled(run_dbt, "assert_every_bronze_record_accounted_for")
    assert f"where ingest_batch_id > {through}" in scoped
    assert f"where resolved_batch_id > {through}" in scoped
    everything = _compiled(
        run_dbt, "assert_every_bronze_record_accounted_for", "--vars", "{cdc_full_tests: true}"
    )
    assert "cdc_tested_batches" not in everything
