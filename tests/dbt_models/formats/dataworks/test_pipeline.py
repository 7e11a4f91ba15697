"""End to end: dump -> bronze -> dbt build -> silver and gold, for dataworks_json and
datahub_blob, against states written by hand from the seed documents (000, 002) and the
edge cases of this folder's cases.py."""

from __future__ import annotations

import itertools
import json

import pytest

from tests.dbt_models.formats.dataworks import cases
from tests.dbt_models.helpers import gold_rows

pytestmark = pytest.mark.dbt


def test_seed_examples_give_the_documented_current_state(spark, built_lake):
    # Seed 000 (DataWorks, topic dataworks.sample.mysql, partition 0): the template is a
    # one-message update of id 111 -> 222; pkset_test_no_pk is inserted, updated (split and
    # one-message) and deleted. Seed 002 (DataHub Blob): the template is an UPDATE of
    # id 111 -> 222; t_shiyu_pk (id 1, joe) is inserted, updated and deleted.
    rows = spark.sql(
        "select source_format, source_database, source_schema, source_table, row_key, "
        "row_values, last_op from gold.current_rows "
        "where source_database not in "
        "('edge_db', 'shop', 'typed_cases', 'hist_db', 'ddl_shop', 'xtopic', 'faults') "
        "and source_format in ('dataworks_json', 'datahub_blob')"
    ).collect()
    got = {
        (
            r["source_format"],
            r["source_database"],
            r["source_schema"],
            r["source_table"],
            r["row_key"],
        ): (dict(r["row_values"]), r["last_op"])
        for r in rows
    }
    donald = {"id": "222", "name": "donald", "binData": "ZG9uYWxkLWJ5dGVz", "ts": "1590315269000"}
    assert got == {
        ("dataworks_json", "myDatabase", "mySchema", "tableName", '{"id":"222"}'): (
            {**donald, "rowid": "AAIUMPAAFAACxExAAE"},
            "update",
        ),
        ("datahub_blob", "myDatabase", "mySchema", "tableName", '{"id":"222"}'): (donald, "update"),
    }


def test_sample_silver_counts(spark, built_lake):
    def count(table: str, where: str = "true") -> int:
        return spark.sql(
            f"select count(*) from {table} where kafka_partition = 0 and {where} "
            "and kafka_topic in ('dataworks.sample.mysql', 'datahub.sample.yunshi_db')"
        ).first()[0]

    # 7 + 7 sample records: 11 changes, 2 heartbeats, 1 DDL (ALTER), nothing quarantined.
    assert count("silver.change_events") == 11
    assert count("silver.control_events", "control_type = 'heartbeat'") == 2
    assert count("silver.schema_changes") == 1
    assert count("silver.quarantine") == 0
    ddl = spark.sql(
        "select ddl_op, ddl_text, source_table, change_kind, column_name, new_spark_type, "
        "spark_sql, translation_status from silver.schema_changes "
        "where kafka_topic in ('dataworks.sample.mysql', 'datahub.sample.yunshi_db')"
    ).first()
    assert (ddl["ddl_op"], ddl["source_table"]) == ("ALTER", "t_shiyu_nopk")
    assert ddl["ddl_text"] == "alter table t_shiyu_nopk add column holo text"
    # translated by sqlglot from MySQL (the topic's registry dialect)
    assert (ddl["change_kind"], ddl["column_name"], ddl["new_spark_type"]) == (
        "add_column",
        "holo",
        "string",
    )
    assert ddl["spark_sql"] == "ALTER TABLE t_shiyu_nopk ADD COLUMNS (holo STRING)"
    assert ddl["translation_status"] == "translated"


def test_split_update_pair_is_before_then_after(spark, built_lake):
    rows = spark.sql(
        "select source_op, before_image, after_image, ordering_key from silver.change_events "
        "where source_table = 't_shiyu_pk' order by ordering_key"
    ).collect()
    assert [r["source_op"] for r in rows] == ["INSERT", "UPDATE_BEFOR", "UPDATE_AFTER", "DELETE"]
    before, after = rows[1], rows[2]
    assert before["after_image"] is None and before["before_image"]["comment"] == "comment"
    assert after["before_image"] is None and after["after_image"]["comment"] == "com1"
    assert before["ordering_key"].split(".")[0] == after["ordering_key"].split(".")[0]


def test_edge_case_current_state(spark, built_lake):
    assert gold_rows(spark, f"source_database = '{cases.DB}' and source_table = 'orders'") == (
        cases.EXPECTED_ORDERS
    )
    assert gold_rows(spark, "source_table = 'nokey'") == cases.EXPECTED_NOKEY


def test_exact_numbers_and_null_survive_to_gold(spark, built_lake):
    row = gold_rows(spark, "source_table = 'orders'")['{"id":"1"}']
    assert row["amount"] == "12345678901234567890123.456789"
    assert row["price"] == "1.50"
    assert row["ratio"] == "1.100000"
    assert "note" in row and row["note"] is None


def test_images_keep_null_versus_not_provided(spark, built_lake):
    images = spark.sql(
        "select after_image from silver.change_events "
        "where source_table = 'orders' and row_key = '{\"id\":\"2\"}' and source_op = 'INSERT'"
    ).first()["after_image"]
    assert images == {"id": "2", "status": "new"}  # note / amount were not provided: absent
    with_null = spark.sql(
        "select after_image from silver.change_events "
        "where source_table = 'orders' and row_key = '{\"id\":\"1\"}' limit 1"
    ).first()["after_image"]
    assert "note" in with_null and with_null["note"] is None


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


def test_a_broken_record_says_what_is_wrong_where(spark, built_lake):
    """The checks of the exact JSON decoding (stg_dataworks__decoded) name the field's path
    and the value at fault."""
    rows = spark.sql(
        "select kafka_offset, reason_detail from silver.quarantine "
        f"where kafka_partition = 3 and kafka_topic = '{cases.TOPIC}' and kafka_offset >= 12"
    ).collect()
    details = {r["kafka_offset"]: r["reason_detail"] for r in rows}
    assert set(details) == set(cases.BROKEN_DETAILS)
    for offset, expected in cases.BROKEN_DETAILS.items():
        assert details[offset].startswith(expected), (offset, details[offset])


def test_control_events_of_the_cases(spark, built_lake):
    rows = spark.sql(
        "select control_type, source_op from silver.control_events where kafka_partition = 1 "
        f"and kafka_topic = '{cases.TOPIC}' order by kafka_offset"
    ).collect()
    assert [(r["control_type"], r["source_op"]) for r in rows] == [
        ("transaction_begin", "TRANSACTION_BEGIN"),
        ("heartbeat", "MHEARTBEAT"),
    ]


def test_every_bronze_record_is_accounted_for(spark, built_lake):
    def records(table: str, prefix: str, where: str = "true") -> int:
        return (
            spark.table(table)
            .where(where)
            .select(f"{prefix}topic", f"{prefix}partition", f"{prefix}offset")
            .distinct()
            .count()
        )

    silver = ("change_events", "control_events", "schema_changes", "quarantine")
    assert records("bronze.kafka_records", "") == sum(
        records(f"silver.{t}", "kafka_") for t in silver
    )
    dataworks = "kafka_topic in ('dataworks.sample.mysql', 'datahub.sample.yunshi_db', '{}')"
    assert sum(
        records(f"silver.{t}", "kafka_", dataworks.format(cases.TOPIC)) for t in silver
    ) == 14 + len(cases.CHANGES) + len(cases.BROKEN)


def test_reingesting_the_same_dumps_adds_nothing(spark, built_lake, ingest_dump):
    from tests.dbt_models.conftest import SAMPLE_DUMP

    before = spark.table("bronze.kafka_records").count()
    result = ingest_dump(SAMPLE_DUMP)
    assert result.records == 0
    assert spark.table("bronze.kafka_records").count() == before


def test_docs_lineage_runs_from_bronze_through_the_decoding_model_to_gold(run_dbt, built_lake):
    run_dbt("docs", "generate")
    manifest = json.loads((run_dbt.target_path / "manifest.json").read_text())
    parents = manifest["parent_map"]
    envelopes = "model.cdc_lakehouse.stg_dataworks__decoded"
    assert manifest["nodes"][envelopes]["language"] == "sql"  # the exact JSON function
    chain = [
        "model.cdc_lakehouse.current_rows",
        "model.cdc_lakehouse.int_row_versions",
        "model.cdc_lakehouse.change_events",
        "model.cdc_lakehouse.int_dataworks__events_paired",
        "model.cdc_lakehouse.stg_dataworks__events",
        envelopes,
        "model.cdc_lakehouse.stg_bronze__kafka_records",
        "source.cdc_lakehouse.bronze.kafka_records",
    ]
    for child, parent in itertools.pairwise(chain):
        assert parent in parents[child], f"{parent} is not a parent of {child}"
    catalog = json.loads((run_dbt.target_path / "catalog.json").read_text())
    assert "model.cdc_lakehouse.current_rows" in catalog["nodes"]


def test_table_schemas_of_the_seed_examples(spark, built_lake):
    # Column names and key columns as the seed messages declare them (schema.dataColumn,
    # schema.primaryKey); the no-key table's key is the hidden row id column.
    rows = spark.sql(
        "select source_format, source_database, source_table, schema_version, column_names, "
        "column_types, key_columns, n_events from silver.table_schemas "
        "where source_format in ('dataworks_json', 'datahub_blob') "
        "and source_database not in "
        "('edge_db', 'shop', 'typed_cases', 'hist_db', 'ddl_shop', 'xtopic', 'faults')"
    ).collect()
    got = {
        (r["source_format"], r["source_database"], r["source_table"], r["schema_version"]): (
            r["column_names"],
            r["key_columns"],
            r["n_events"],
        )
        for r in rows
    }
    assert got == {
        ("datahub_blob", "myDatabase", "tableName", "1"): (
            ["id", "name", "binData", "ts"],
            ["id"],
            1,
        ),
        ("datahub_blob", "yunshi_db", "t_shiyu_pk", "1"): (
            ["id", "name", "comment"],
            ["id", "name"],
            4,
        ),
        ("dataworks_json", "myDatabase", "tableName", "1"): (
            ["id", "name", "binData", "ts", "rowid"],
            ["id"],
            1,
        ),
        ("dataworks_json", "pkset_test", "pkset_test_no_pk", "1"): (
            ["name", "job", "sex", "#alibaba_rds_row_id#"],
            ["#alibaba_rds_row_id#"],
            5,
        ),
    }
    types = {r["source_table"]: dict(r["column_types"]) for r in rows}
    assert types["tableName"]["binData"] == "BYTES"
