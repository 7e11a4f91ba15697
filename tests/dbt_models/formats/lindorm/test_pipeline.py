"""End to end: dump -> bronze -> dbt build -> silver and gold, for lindorm_debezium, against
states written by hand from seed 001 and the edge cases of this folder's cases.py.

Sample topics: lindorm.sample.customers holds the seed's SQL-table messages in document order
(the format definition example, then the insert, update, delete and column-delete examples),
lindorm.sample.hbase the HBase Put example. They are the seed's JSON unchanged (compacted).
The seed's DDL declares PRIMARY KEY(id); the messages do not carry it, so
seeds/cdc_declared_keys.csv declares it for lindorm.sample.customers. All five SQL messages
share source.ts_ms and payload.ts_ms, so Kafka offset (document order) decides.
"""

from __future__ import annotations

import pytest

from tests.dbt_models import helpers
from tests.dbt_models.formats.lindorm import cases

pytestmark = pytest.mark.dbt

SQL_SAMPLE = "lindorm.sample.customers"
HBASE_SAMPLE = "lindorm.sample.hbase"
ANNE = {"id": "1004", "first_name": "Anne", "last_name": "Kretchmar"}
MARIE = {"id": "1004", "first_name": "Anne Marie", "last_name": "Kretchmar"}


def as_dict(value):
    return dict(value) if value is not None else None


def gold_rows(spark, database: str, table: str) -> dict[str, dict[str, str | None]]:
    return helpers.gold_rows(
        spark,
        f"source_format = 'lindorm_debezium' and source_database = '{database}' "
        f"and source_table = '{table}'",
    )


def test_seed_sql_examples_give_the_documented_silver_rows(spark, built_lake):
    rows = spark.sql(
        "select source_op, op, before_image, after_image, after_image_is_partial, key_source, "
        "key_columns, row_key, before_row_key, ordering_key, column_types, source_db_type, "
        "source_database, source_schema, source_table, unix_millis(event_time) as event_ms, "
        "unix_millis(capture_time) as capture_ms "
        f"from silver.change_events where kafka_topic = '{SQL_SAMPLE}' order by ordering_key"
    ).collect()
    got = [
        (r["source_op"], r["op"], as_dict(r["before_image"]), as_dict(r["after_image"]))
        for r in rows
    ]
    assert got == [
        ("u", "update", {"id": "1004", "name": "Jane"}, {"id": "1004", "name": "Anne"}),
        ("c", "insert", None, ANNE),
        ("u", "update", MARIE, ANNE),
        ("d", "delete", MARIE, None),
        # column delete: last_name missing from after = removed, a NULL in the whole row
        ("u", "update", MARIE, {"id": "1004", "first_name": "Anne Marie", "last_name": None}),
    ]
    assert [r["ordering_key"] for r in rows] == [
        f"00000001465491411807.00000001465491411815.0000000000.{offset:020d}.{SQL_SAMPLE}"
        for offset in range(5)
    ]
    assert as_dict(rows[0]["column_types"]) == {"id": "int32", "name": "string"}
    assert all(r["column_types"] is None for r in rows[1:])
    for r in rows:
        assert (r["source_db_type"], r["source_database"], r["source_schema"]) == (
            "Lindorm",
            "ld-xxxx",
            "default",
        )
        assert r["source_table"] == "customers"
        assert (r["key_source"], r["key_columns"]) == ("declared", ["id"])
        assert r["row_key"] == '{"id":"1004"}'
        assert r["after_image_is_partial"] is False
        assert (r["event_ms"], r["capture_ms"]) == (1465491411807, 1465491411815)
    assert [r["before_row_key"] for r in rows] == [
        '{"id":"1004"}',
        None,
        '{"id":"1004"}',
        '{"id":"1004"}',
        '{"id":"1004"}',
    ]


def test_seed_hbase_example_is_decoded(spark, built_lake):
    row = spark.sql(
        "select op, after_image, key_source, key_columns, row_key, column_types, "
        "source_db_type, ordering_key from silver.change_events "
        f"where kafka_topic = '{HBASE_SAMPLE}'"
    ).first()
    assert row["op"] == "insert"
    assert dict(row["after_image"]) == {"ROW": "user1", "f_name": "lucky"}
    assert (row["key_source"], row["key_columns"]) == ("primary_key", ["ROW"])
    assert row["row_key"] == '{"ROW":"user1"}'
    assert dict(row["column_types"]) == {"ROW": "bytes", "f_name": "bytes"}
    assert row["source_db_type"] == "HBase"
    assert row["ordering_key"] == (
        "00000001725258833727.00000001725258859839.0000000000.00000000000000000000." + HBASE_SAMPLE
    )
    raw = spark.sql(
        "select raw_after_image from silver.stg_lindorm__events "
        f"where kafka_topic = '{HBASE_SAMPLE}'"
    ).first()["raw_after_image"]
    assert dict(raw) == {"ROW": "dXNlcjE=", "f_name": "bHVja3k="}


def test_seed_examples_current_state(spark, built_lake):
    # SQL customers: the last message (column delete) leaves Anne Marie with last_name NULL;
    # the HBase example's row user1 shares the seed's cluster / namespace / table names.
    assert gold_rows(spark, "ld-xxxx", "customers") == {
        '{"id":"1004"}': {"id": "1004", "first_name": "Anne Marie", "last_name": None},
        '{"ROW":"user1"}': {"ROW": "user1", "f_name": "lucky"},
    }


def test_edge_case_current_state(spark, built_lake):
    assert gold_rows(spark, cases.DB, "accounts") == cases.EXPECTED_ACCOUNTS
    assert gold_rows(spark, cases.DB, "unkeyed") == cases.EXPECTED_NOKEY
    assert gold_rows(spark, cases.DB, "profiles") == cases.EXPECTED_PROFILES


def test_snapshot_rows_are_ordinary_rows(spark, built_lake):
    last_ops = {
        r["row_key"]: r["last_op"]
        for r in spark.sql(
            "select row_key, last_op from gold.current_rows "
            f"where source_database = '{cases.DB}' and source_table = 'accounts'"
        ).collect()
    }
    assert last_ops['{"id":"7","tenant":"t1"}'] == "snapshot"
    assert last_ops['{"id":"6","tenant":"t1"}'] == "update"


def test_keys_by_table_kind(spark, built_lake):
    rows = spark.sql(
        "select source_table, key_source, key_columns from silver.change_events "
        f"where source_database = '{cases.DB}'"
    ).collect()
    assert {(r["source_table"], r["key_source"], tuple(r["key_columns"])) for r in rows} == {
        ("accounts", "declared", ("tenant", "id")),
        ("unkeyed", "all_columns", ("a", "b")),
        ("unkeyed", "all_columns", ("a", "b", "c")),
        ("profiles", "primary_key", ("ROW",)),
    }


def test_hbase_binary_values_and_removed_columns_are_listed(spark, built_lake):
    rows = spark.sql(
        "select after_image['ROW'] as row, removed_columns, binary_columns "
        f"from silver.stg_lindorm__events where kafka_topic = '{cases.HBASE_TOPIC}' "
        "and record_kind = 'change' and op != 'delete' order by ordering_key"
    ).collect()
    by_row: dict[str, list] = {}
    for r in rows:
        by_row.setdefault(r["row"], []).append((r["removed_columns"], r["binary_columns"]))
    assert by_row["user1"] == [([], []), (["f_age"], [])]
    assert by_row["user2"] == [([], ["f_count"])]
    assert by_row["AAE="] == [([], ["ROW"])]


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


def test_every_record_of_the_format_is_accounted_for(spark, built_lake):
    topics = (SQL_SAMPLE, HBASE_SAMPLE, cases.SQL_TOPIC, cases.HBASE_TOPIC)
    where = "kafka_topic in ({})".format(", ".join(f"'{t}'" for t in topics))
    counts = {
        table: spark.sql(f"select count(*) from silver.{table} where {where}").first()[0]
        for table in ("change_events", "control_events", "schema_changes", "quarantine")
    }
    assert counts == {
        "change_events": 6 + len(cases.CHANGES),
        "control_events": 0,
        "schema_changes": 0,
        "quarantine": len(cases.BROKEN),
    }
