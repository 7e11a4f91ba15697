"""Gold through a whole stream of schema changes equals the oracle (issue 6), after the
second batch (widen, DROP COLUMN, truncate and the rows after them) was applied by an
incremental run (fixture ``simulated_increments``, which ends with a full refresh that must
agree), and typed gold follows the changes: an added column is there, a renamed column is
there under both names, a dropped one is kept, a widened type is widened.
"""

from __future__ import annotations

import pytest

from cdc_lakehouse.codegen.gold_tables import plan_model
from cdc_lakehouse.codegen.silver import read_mappings, read_tables
from tests.dbt_models import conformance
from tests.dbt_models import schema_evolution_cases as cases
from tests.dbt_models.test_schema_changes import changes_of

STREAMS = sorted(cases.streams())
TRUNCATE = cases.TRUNCATE


def expected_changes(format_: str) -> cases.SchemaChanges:
    """The format's changes, from its cases file (``schema_changes``, conformance.py)."""
    return conformance.provide(format_, "schema_changes")


def typed_formats() -> list[str]:
    """Formats whose messages declare column types: typed gold has every column typed."""
    return [f for f in conformance.formats_for("schema_changes") if expected_changes(f).typed]


@pytest.mark.parametrize("format_", STREAMS)
def test_gold_through_schema_changes_equals_the_oracle(spark, simulated_increments, format_):
    stream = cases.streams()[format_]
    expected = cases.expected_rows(stream, stream.history)
    assert cases.row_differences(expected, cases.gold_rows(spark, stream)) == []


@pytest.mark.parametrize("format_", STREAMS)
def test_later_schema_changes_are_captured(spark, simulated_increments, format_):
    stream = cases.streams()[format_]
    changes = [
        change
        for change, _ in changes_of(spark, stream, "change_kind != 'other'")
        if change[:2] not in (("add_column", "stock"), ("create_table", None))
        and change[0] != "rename_column"
        and change[1] != "title"
    ]
    assert changes == expected_changes(format_).second_batch
    if TRUNCATE in changes:
        topics = ", ".join(f"'{t}'" for t in stream.topics)
        truncates = spark.sql(
            f"select source_table from silver.table_truncates where kafka_topic in ({topics})"
        ).collect()
        assert {row["source_table"].lower() for row in truncates} == {"products"}


@pytest.mark.parametrize("format_", typed_formats())
def test_typed_gold_follows_the_schema_changes(spark, simulated_increments, format_):
    stream = cases.streams()[format_]
    topics = ", ".join(f"'{t}'" for t in stream.topics)
    identity = spark.sql(
        "select distinct source_format, source_database, source_schema, source_table "
        f"from silver.change_events where kafka_topic in ({topics})"
    ).collect()
    assert len(identity) == 1
    wanted = tuple(identity[0])
    table = next(
        t
        for t in read_tables(spark)
        if (t.source_format, t.source_database, t.source_schema, t.source_table) == wanted
    )
    model = plan_model(table, read_mappings(spark), "products")
    types = {column.name: column.resolved.spark_type for column in model.columns}
    # latest version first (id, title, price, stock, created_at), then the older names kept
    assert list(types)[:5] == ["id", "title", "price", "stock", "created_at"]
    assert set(types) == {"id", "title", "price", "stock", "created_at", "name", "note"}
    # widened int -> bigint: the newest declared type, the one of the bigint key column (the
    # Spark type a format's bigint gets: bigint, or decimal(20,0) for DTS Avro binlog codes)
    assert types["stock"] == types["id"] != "int"
    assert types["name"] == types["title"] == types["note"] == "string"
    versions = spark.sql(
        "select schema_version, schema_change_ids from silver.table_schemas "
        f"where source_format = '{wanted[0]}' and source_table = '{wanted[3]}' "
        f"and source_database <=> {sql_text(wanted[1])} "
        f"and source_schema <=> {sql_text(wanted[2])}"
    ).collect()
    # add, rename and drop each declare a new version (the widen too where the format's
    # types tell int from bigint; DataWorks declares both LONG), each following its DDL
    assert len(versions) >= 4
    assert sum(1 for v in versions if v["schema_change_ids"]) >= 3


def sql_text(value: str | None) -> str:
    return "null" if value is None else "'" + value.replace("'", "\\'") + "'"
