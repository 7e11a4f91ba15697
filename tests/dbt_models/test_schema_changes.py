"""Captured DDL in silver.schema_changes, and gold in the middle of a stream with schema
changes (issue 6), on the session's first build: the schema-evolution streams of every format
that sends DDL (tests/dbt_models/schema_evolution_cases.py) up to their RENAME COLUMN, i.e.
an ADD COLUMN, rows that write the new column, a rename and rows written under the new name.
The rest of each stream arrives in a later batch (test_simulated_schema_evolution.py).
"""

from __future__ import annotations

import pytest

from tests.dbt_models import conformance
from tests.dbt_models import schema_evolution_cases as cases

STREAMS = sorted(cases.streams())
"""Every format that sends DDL; the column changes each one's first batch must give are in
its cases file (``schema_changes``, tests/dbt_models/conformance.py)."""


def test_every_stream_has_its_expected_changes():
    assert conformance.formats_for("schema_changes") == STREAMS


def changes_of(spark, stream: cases.EvolutionStream, where: str = "true") -> list[tuple]:
    topics = ", ".join(f"'{t}'" for t in stream.topics)
    rows = spark.sql(
        "select distinct ordering_key, change_index, change_kind, column_name, new_name, "
        "new_spark_type, spark_sql, translation_status, source_table "
        f"from silver.schema_changes where kafka_topic in ({topics}) and {where}"
    ).collect()
    # duplicates (producer retries) repeat a record at a later offset: keep the first
    seen, out = set(), []
    for row in sorted(rows, key=lambda r: (r["ordering_key"], r["change_index"])):
        change = tuple(row[c] for c in ("change_kind", "column_name", "new_name", "new_spark_type"))
        statement = (row["spark_sql"], row["change_index"])
        if statement in seen and row["change_kind"] != "create_table":
            continue
        seen.add(statement)
        out.append((change, row))
    return out


@pytest.mark.parametrize("format_", STREAMS)
def test_captured_ddl_is_translated_and_classified(spark, built_lake, format_):
    stream = cases.streams()[format_]
    changes = changes_of(spark, stream, "change_kind != 'other'")
    expected = conformance.provide(format_, "schema_changes").first_batch
    assert [change for change, _ in changes] == expected
    for _, row in changes:
        assert row["translation_status"] == "translated"
        assert row["source_table"].lower() == "products"
        spark._jsparkSession.sessionState().sqlParser().parsePlan(row["spark_sql"])


@pytest.mark.parametrize("format_", STREAMS)
def test_gold_in_the_middle_of_schema_changes_equals_the_oracle(spark, built_lake, format_):
    stream = cases.streams()[format_]
    expected = cases.expected_rows(stream, cases.prefix(stream.history))
    # rows written before the ADD lack stock, rows untouched since the RENAME keep name
    assert any("stock" not in row for row in expected.values())
    assert any("name" in row for row in expected.values())
    assert any("title" in row and row.get("stock") is not None for row in expected.values())
    assert cases.row_differences(expected, cases.gold_rows(spark, stream)) == []
