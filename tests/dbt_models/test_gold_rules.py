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


def test_row_states_keep_tombstones_of_truncated_tables_apart(spark, built_lake):
    """row_states keeps what it knew before the truncate (the truncate applies on read), so
    a late change older than the truncate still cannot bring a row back."""
    states = spark.sql(
        f"select row_key, is_deleted from gold.row_states where source_database = '{cases.DB}'"
    ).collect()
    assert {row["row_key"] for row in states} == {
        '{"id":"1"}',
        '{"id":"2"}',
        '{"id":"3"}',
        '{"id":"4"}',
        '{"id":"5"}',
    }
    assert not any(row["is_deleted"] for row in states)
