"""Gold rules of issue 5 item 3 that the per-format pipeline tests do not already pin:
truncates, and the soft-delete view. Events: tests/dbt_models/gold_rules_cases.py."""

from __future__ import annotations

from tests.dbt_models import gold_rules_cases as cases
from tests.dbt_models.helpers import gold_rows


def test_truncate_removes_older_rows_and_keeps_newer_ones(spark, built_lake):
    rows = gold_rows(spark, f"source_database = '{cases.DB}' and source_table = 'items'")
    assert rows == cases.EXPECTED_ITEMS


def test_truncate_is_a_table_truncate_in_silver(spark, built_lake):
    truncates = spark.sql(
        f"select source_table, event_time from silver.table_truncates "
        f"where source_database = '{cases.DB}'"
    ).collect()
    assert [row["source_table"] for row in truncates] == ["items"]


def test_row_versions_keep_every_identity_of_truncated_tables(spark, built_lake):
    """int_row_versions keeps every identity of a truncated table with its events, so a late
    change older than the truncate still cannot bring a row back (it sorts before the
    truncate)."""
    states = spark.sql(
        "select row_key, size(row_events) > 0 as has_events from gold.int_row_versions "
        f"where source_database = '{cases.DB}'"
    ).collect()
    assert {row["row_key"] for row in states} == {
        '{"id":"1"}',
        '{"id":"2"}',
        '{"id":"3"}',
        '{"id":"4"}',
        '{"id":"5"}',
    }
    assert all(row["has_events"] for row in states)
