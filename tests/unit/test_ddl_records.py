"""The schema changes of captured DDL records per format (cdc_lakehouse.ddl.records): Qlik
structure differences, Shareplex DROP COLUMN, the table a statement-only record applies to,
and the Arrow batch loop the Python model silver.schema_changes runs."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from cdc_lakehouse.codegen.type_mapping import parse_seed_rows
from cdc_lakehouse.ddl.batches import INPUT_COLUMNS, OUTPUT_SCHEMA, translate_batches
from cdc_lakehouse.ddl.records import DdlRecord, record_changes

MAPPINGS = parse_seed_rows(
    [
        {"type_family": "qlik", "source_type": "int4", "spark_type": "int"},
        {"type_family": "qlik", "source_type": "int8", "spark_type": "bigint"},
        {"type_family": "qlik", "source_type": "string", "spark_type": "string"},
        {
            "type_family": "qlik",
            "source_type": "numeric",
            "spark_type": "decimal({precision},{scale})",
        },
    ]
)
V1 = {"ID": "INT4", "NAME": "STRING", "PRICE": "NUMERIC(10,2)", "NOTE": "STRING"}


def qlik(current, previous=None, version="2", previous_version="1") -> DdlRecord:
    return DdlRecord(
        source_format="qlik_json",
        ddl_op="METADATA",
        ddl_text=None,
        source_dialect=None,
        source_database="task",
        source_schema="SALES",
        source_table="ITEMS",
        column_types=current,
        source_schema_version=version,
        previous_column_types=previous,
        previous_schema_version=previous_version if previous is not None else None,
    )


def summary(record: DdlRecord) -> list[tuple]:
    return [
        (r.change.kind, r.change.column, r.change.new_name, r.change.new_spark_type)
        for r in record_changes(record, MAPPINGS)
    ]


def test_first_qlik_structure_is_a_create_table_with_spark_types():
    (row,) = record_changes(qlik(V1, version="1"), MAPPINGS)
    assert row.change.kind == "create_table"
    assert row.change.columns == (
        ("ID", "int"),
        ("NAME", "string"),
        ("PRICE", "decimal(10,2)"),
        ("NOTE", "string"),
    )
    assert row.change.spark_sql == (
        "CREATE TABLE IF NOT EXISTS `SALES`.`ITEMS` "
        "(`ID` INT, `NAME` STRING, `PRICE` DECIMAL(10,2), `NOTE` STRING)"
    )


def test_qlik_structure_difference_gives_each_column_change():
    v2 = {"ID": "INT8", "TITLE": "STRING", "PRICE": "NUMERIC(10,2)", "STOCK": "INT4"}
    assert summary(qlik(v2, V1)) == [
        ("rename_column", "NAME", "TITLE", None),
        ("drop_column", "NOTE", None, None),
        ("add_column", "STOCK", None, "int"),
        ("change_column_type", "ID", None, "bigint"),
    ]
    sql = [r.change.spark_sql for r in record_changes(qlik(v2, V1), MAPPINGS)]
    assert sql[2] == "ALTER TABLE `SALES`.`ITEMS` ADD COLUMNS (`STOCK` INT AFTER `PRICE`)"


def test_a_renamed_column_with_another_type_is_a_drop_and_an_add():
    v2 = {"ID": "INT4", "TITLE": "INT4", "PRICE": "NUMERIC(10,2)", "NOTE": "STRING"}
    assert [k for k, *_ in summary(qlik(v2, V1))] == ["drop_column", "add_column"]


def test_a_repeated_qlik_version_is_kept_as_other():
    (row,) = record_changes(qlik(V1, V1, version="1", previous_version="1"), MAPPINGS)
    assert (row.change.kind, row.change.status) == ("other", "no_spark_equivalent")
    assert "repeats tableVersion 1" in (row.change.reason or "")


def shareplex(message: str) -> DdlRecord:
    return DdlRecord(
        source_format="dts_shareplex_json",
        ddl_op="DROP COLUMN",
        ddl_text=message,
        source_dialect="oracle",
        source_schema="EDGE",
        source_table="NUMS",
    )


def test_shareplex_drop_column_names_its_columns_in_data():
    message = json.dumps({"meta": {"op": "DROP COLUMN"}, "data": {"V": None, "W": None}})
    rows = record_changes(shareplex(message), MAPPINGS)
    assert [(r.change.kind, r.change.column, r.change.spark_sql) for r in rows] == [
        ("drop_column", "V", "ALTER TABLE `EDGE`.`NUMS` DROP COLUMN `V`"),
        ("drop_column", "W", "ALTER TABLE `EDGE`.`NUMS` DROP COLUMN `W`"),
    ]


@pytest.mark.parametrize("message", ["not json", json.dumps({"meta": {}, "data": {}})])
def test_shareplex_drop_column_without_a_column_is_kept_unparseable(message):
    (row,) = record_changes(shareplex(message), MAPPINGS)
    assert (row.change.kind, row.change.status) == ("drop_column", "unparseable")
    assert row.change.reason


@pytest.mark.parametrize(
    ("dialect", "identity"),
    [("mysql", ("shop", None, "orders")), ("postgresql", ("db", "shop", "orders"))],
)
def test_a_record_without_table_takes_the_statement_table(dialect, identity):
    record = DdlRecord(
        source_format="dts_avro",
        ddl_op="DDL",
        ddl_text="TRUNCATE TABLE shop.orders",
        source_dialect=dialect,
        source_database="db",
    )
    (row,) = record_changes(record, MAPPINGS)
    assert row.change.kind == "truncate"
    assert (row.source_database, row.source_schema, row.source_table) == identity


def test_translate_batches_gives_every_record_at_least_one_row():
    rows = [
        {
            "event_id": "t:0:1",
            "source_format": "dataworks_json",
            "ddl_op": "ALTER",
            "ddl_text": "ALTER TABLE t ADD COLUMN a INT, DROP COLUMN b",
            "source_dialect": "mysql",
            "source_table": "t",
        },
        {"event_id": "t:0:2", "source_format": "dataworks_json", "ddl_op": "QUERY"},
    ]
    batch = pa.RecordBatch.from_pylist(
        [{c: r.get(c) for c in INPUT_COLUMNS} for r in rows],
        schema=pa.schema(
            [
                pa.field(c, pa.map_(pa.string(), pa.string()))
                if c.endswith("column_types")
                else pa.field(c, pa.string())
                for c in INPUT_COLUMNS
            ]
        ),
    )
    (out,) = list(translate_batches(iter([batch]), MAPPINGS))
    assert out.schema == OUTPUT_SCHEMA
    got = [
        (r["event_id"], r["change_index"], r["change_kind"], r["translation_status"])
        for r in out.to_pylist()
    ]
    assert got == [
        ("t:0:1", 0, "add_column", "translated"),
        ("t:0:1", 1, "drop_column", "translated"),
        ("t:0:2", 0, "other", "unparseable"),
    ]


def test_a_quoted_table_name_with_a_dot_stays_one_name():
    record = DdlRecord(
        source_format="dts_avro",
        ddl_op="DDL",
        ddl_text="ALTER TABLE `order.items` ADD COLUMN qty int",
        source_dialect="mysql",
        source_database="my.db",
    )
    (row,) = record_changes(record, MAPPINGS)
    assert (row.source_database, row.source_schema, row.source_table) == (
        "my.db",
        None,
        "order.items",
    )
