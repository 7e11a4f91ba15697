"""The lake as a Delta Lake user meets it (issue 49): every table is a Delta table, gold is
applied by MERGE, the change data feed of gold.current_rows and gold.row_history says what each
incremental build changed (replayed on the state before, it gives the state after, both read
by time travel), and `make maintenance` compacts and vacuums without changing a row.

Reads the session lake after ``simulated_increments``: two incremental runs (one MERGE each
into every gold table), then `dbt run --full-refresh`. The file's name sorts it after
test_simulated_gold.py: the tests before that read the session lake as the first build left
it (part 1), which ``simulated_increments`` moves on."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_lakehouse.tools import maintenance
from tests.dbt_models.helpers import newest_bronze_batch, pin_state

pytestmark = pytest.mark.dbt

IDENTITY = ("source_format", "source_database", "source_schema", "source_table", "row_key")
CHANGE_FEED_TABLES = {
    "gold.current_rows": IDENTITY,
    "gold.row_history": (*IDENTITY, "version_number"),
}


def _history(spark: Any, table: str) -> list[tuple[int, str]]:
    """(version, operation) of every commit of ``table``, oldest first."""
    rows = spark.sql(f"describe history {table}").select("version", "operation").collect()
    return sorted((row["version"], row["operation"]) for row in rows)


def test_every_table_of_the_lake_is_a_delta_table(spark: Any, simulated_increments: Any) -> None:
    tables = [
        f"{schema}.{table.name}"
        for schema in ("bronze", "silver", "gold")
        for table in spark.catalog.listTables(schema)
        if table.tableType != "VIEW" and not table.isTemporary
    ]
    assert "bronze.kafka_records" in tables and "gold.current_rows" in tables
    assert len(tables) > 20
    formats = {table: spark.sql(f"describe detail {table}").first()["format"] for table in tables}
    assert {table for table, fmt in formats.items() if fmt != "delta"} == set()


@pytest.mark.parametrize("table", ["gold.int_row_versions", *CHANGE_FEED_TABLES])
def test_each_incremental_run_merged_into_gold(
    spark: Any, simulated_increments: Any, table: str
) -> None:
    operations = [operation for _version, operation in _history(spark, table)]
    # the two incremental runs of simulated_increments, between the first build and the full
    # refresh (each a CREATE OR REPLACE of the whole table)
    assert operations.count("MERGE") >= 2, operations
    assert operations[-1] == "CREATE OR REPLACE TABLE AS SELECT", operations


@pytest.mark.parametrize("table", sorted(CHANGE_FEED_TABLES))
def test_the_change_data_feed_replayed_on_the_state_before_gives_the_state_after(
    spark: Any, simulated_increments: Any, table: str, table_property: Any
) -> None:
    """From the version before the first MERGE to the last MERGE: the state before (time
    travel), with each key's last change of the feed applied (a delete removes it, an insert or
    an update's post-image sets it), equals the state after (time travel)."""
    assert table_property(table, "delta.enableChangeDataFeed") == "true"
    key = CHANGE_FEED_TABLES[table]
    merges = [version for version, operation in _history(spark, table) if operation == "MERGE"]
    first, last = merges[0], merges[-1]
    columns = [field.name for field in spark.table(table).schema.fields]
    listed = ", ".join(f"`{c}`" for c in columns)

    def state(version: int) -> dict[tuple[Any, ...], tuple[Any, ...]]:
        rows = spark.sql(f"select {listed} from {table} version as of {version}").collect()
        return {tuple(row[c] for c in key): _plain(row, columns) for row in rows}

    changes = spark.sql(
        f"select {listed}, _change_type, _commit_version from table_changes('{table}', "
        f"{first}, {last}) where _change_type != 'update_preimage'"
    ).collect()
    assert changes, f"no change in the feed of {table} between versions {first} and {last}"
    replayed = state(first - 1)
    for change in sorted(changes, key=lambda r: r["_commit_version"]):
        identity = tuple(change[c] for c in key)
        if change["_change_type"] == "delete":
            replayed.pop(identity, None)
        else:
            replayed[identity] = _plain(change, columns)
    assert replayed == state(last)


@pytest.mark.parametrize("table", ["gold.int_row_versions", *CHANGE_FEED_TABLES])
def test_gold_merges_mark_replaced_rows_in_deletion_vectors(
    spark: Any, simulated_increments: Any, table: str, table_property: Any
) -> None:
    """An incremental MERGE into gold marks the rows it replaces in deletion vectors instead of
    rewriting the files that hold them (what an incremental run writes is what it touched)."""
    assert table_property(table, "delta.enableDeletionVectors") == "true"
    metrics = [
        row["operationMetrics"]
        for row in spark.sql(f"describe history {table}").collect()
        if row["operation"] == "MERGE"
    ]
    # Delta's MERGE metric: numTargetDeletionVectorsAdded (DELETE / UPDATE: numDeletionVectorsAdded)
    added = sum(
        int(value or 0)
        for m in metrics
        for name, value in m.items()
        if name.endswith("DeletionVectorsAdded")
    )
    assert added > 0, metrics


def _plain(row: Any, columns: list[str]) -> tuple[Any, ...]:
    """A row's values in ``columns`` order, maps as sorted item tuples (comparable)."""
    return tuple(
        tuple(sorted(value.items())) if isinstance(value, dict) else value
        for value in (row[c] for c in columns)
    )


def test_maintenance_compacts_and_keeps_every_row(spark: Any, simulated_increments: Any) -> None:
    table = "silver.change_events"
    before = spark.table(table).count()
    files = spark.sql(f"describe detail {table}").first()["numFiles"]
    done = maintenance.maintain(spark, table)
    assert done.files_before == files
    assert done.files_after <= files
    assert spark.table(table).count() == before
    assert "OPTIMIZE" in [operation for _version, operation in _history(spark, table)]


NO_OP_TABLES = {
    "change_events": "silver.change_events",
    "control_events": "silver.control_events",
    "quarantine": "silver.quarantine",
    "captured_ddl": "silver.captured_ddl",
    "schema_changes": "silver.schema_changes",
    "table_schemas": "silver.table_schemas",
    "table_truncates": "silver.table_truncates",
    "stg_dts_avro__decoded": "silver.stg_dts_avro__decoded",
    "stg_dts_canal__events": "silver.stg_dts_canal__events",
    "int_row_versions": "gold.int_row_versions",
    "current_rows": "gold.current_rows",
    "row_history": "gold.row_history",
}
"""Tables of every kind: decoded (Python), silver and gold incremental, rebuilt DDL tables."""

SAYS_WHEN_UP_TO_DATE = {"incremental": "nothing new", "table": "unchanged", "view": "unchanged"}


def test_a_build_with_no_new_record_writes_nothing_and_tests_nothing_again(
    spark: Any, simulated_increments: Any, run_dbt: Any
) -> None:
    """No record has come into bronze since the fixture's last build, a whole build that
    passed (recorded in silver.cdc_tested_batches with the project's state), and the full
    refresh after it rebuilt the same rows: a `dbt build` now is up to date
    (macros/cdc_test_scope.sql). Every model says so and adds no Delta commit to its table (no
    empty MERGE, no table rebuilt), and every data test passes with a query that reads no
    model, so a scheduled build with no new records costs no writes and no scans."""
    before = {table: _history(spark, table)[-1] for table in NO_OP_TABLES.values()}
    result = run_dbt("build")
    results = result.result.results
    models = {r.node.name: r for r in results if r.node.resource_type == "model"}
    assert set(NO_OP_TABLES) <= set(models)
    said = {name: r.message for name, r in models.items()}
    assert said == {
        name: SAYS_WHEN_UP_TO_DATE[r.node.config.materialized] for name, r in models.items()
    }, said
    assert {table: _history(spark, table)[-1] for table in NO_OP_TABLES.values()} == before
    tests = [r for r in results if r.node.resource_type == "test"]
    assert tests and all(str(r.status) == "pass" for r in tests)
    for r in tests:
        ran = run_dbt.target_path / "run" / r.node.package_name / r.node.original_file_path
        sql = (
            (ran / r.node.path).read_text(encoding="utf-8")
            if ran.is_dir()
            else ran.read_text(encoding="utf-8")
        )
        assert "select 0 as failures, false as should_warn, false as should_error" in sql, (
            r.node.name
        )


def test_the_pin_of_a_lake_pinned_in_a_table_is_a_view_after_the_next_build(
    spark: Any, simulated_increments: Any
) -> None:
    # test_bronze_pin.py left the pin a Delta table, as builds before the view did
    assert pin_state(spark) == ("VIEW", [newest_bronze_batch(spark)])
