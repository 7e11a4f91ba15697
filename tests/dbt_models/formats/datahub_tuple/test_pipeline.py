"""End to end: dump -> bronze -> dbt build -> silver and gold, for datahub_tuple, against states
written by hand from seed 002 and the edge cases of this folder's cases.py.

The sample topic datahub.sample.tuple_orders holds the seed's Insert / Update / Delete table
(four records). The seed prints only the meta columns; the sample adds what a real record of
a Tuple topic also carries: ``_source_table_`` ("orders") and the table's data columns (id,
status, amount), the update changing status from new to paid.
"""

from __future__ import annotations

import pytest

from tests.dbt_models import helpers
from tests.dbt_models.formats.datahub_tuple import cases

pytestmark = pytest.mark.dbt

SAMPLE_TOPIC = "datahub.sample.tuple_orders"
NEW = {"id": "1", "status": "new", "amount": "12.50"}
PAID = {"id": "1", "status": "paid", "amount": "12.50"}
NEW_KEY = '{"amount":"12.50","id":"1","status":"new"}'
PAID_KEY = '{"amount":"12.50","id":"1","status":"paid"}'


def gold_rows(spark, table: str) -> dict[str, dict[str, str | None]]:
    return helpers.gold_rows(
        spark,
        f"source_format = 'datahub_tuple' and source_table = '{table}'",
    )


def test_seed_example_gives_the_documented_silver_rows(spark, built_lake):
    rows = spark.sql(
        "select source_op, op, before_image, after_image, after_image_is_partial, key_source, "
        "key_columns, row_key, before_row_key, ordering_key, unix_millis(event_time) as t, "
        "source_sequence_id, source_database, source_schema, source_table "
        f"from silver.change_events where kafka_topic = '{SAMPLE_TOPIC}' order by ordering_key"
    ).collect()
    got = [
        (
            r["source_op"],
            r["op"],
            dict(r["before_image"]) if r["before_image"] is not None else None,
            dict(r["after_image"]) if r["after_image"] is not None else None,
            r["row_key"],
            r["before_row_key"],
            r["source_sequence_id"],
            r["t"],
        )
        for r in rows
    ]
    assert got == [
        ("I", "insert", None, NEW, NEW_KEY, None, "1649991610688000000", 1649991726000),
        ("U", "update", NEW, None, NEW_KEY, NEW_KEY, "1649991610688000001", 1649991756000),
        ("U", "update", None, PAID, PAID_KEY, NEW_KEY, "1649991610688000001", 1649991756000),
        ("D", "delete", PAID, None, PAID_KEY, PAID_KEY, "1649991610688000002", 1649991774000),
    ]
    assert [r["ordering_key"] for r in rows] == [
        f"000000000001649991610688000000.1.0000000000.00000000000000000000.{SAMPLE_TOPIC}",
        f"000000000001649991610688000001.0.0000000000.00000000000000000001.{SAMPLE_TOPIC}",
        f"000000000001649991610688000001.1.0000000000.00000000000000000002.{SAMPLE_TOPIC}",
        f"000000000001649991610688000002.0.0000000000.00000000000000000003.{SAMPLE_TOPIC}",
    ]
    for r in rows:
        assert (r["source_database"], r["source_schema"], r["source_table"]) == (
            None,
            None,
            "orders",
        )
        assert r["key_source"] == "all_columns"
        assert r["key_columns"] == ["amount", "id", "status"]
        assert r["after_image_is_partial"] is False


def test_seed_example_row_is_deleted_in_gold(spark, built_lake):
    # insert, update, delete of one row: nothing is left. Tuple records carry no database or
    # schema, so the simulator's Tuple table orders (tests/dbt_models/simulation.py) shares
    # this identity; its rows are keyed by order_id and line_no (declared keys).
    rows = gold_rows(spark, "orders")
    assert {key: values for key, values in rows.items() if '"order_id"' not in key} == {}


def test_edge_case_current_state(spark, built_lake):
    assert gold_rows(spark, "accounts") == cases.EXPECTED_ACCOUNTS
    assert gold_rows(spark, "tuple") == cases.EXPECTED_UNKEYED


def test_keys_are_declared_or_all_columns_and_tables_fall_back_to_the_topic(spark, built_lake):
    rows = spark.sql(
        "select kafka_topic, source_table, source_table_from_topic, key_source, key_columns "
        "from silver.int_datahub_tuple__events_paired where record_kind = 'change' "
        "and kafka_topic like 'datahub.edge.%'"
    ).collect()
    summary = {
        (r["kafka_topic"], r["source_table"], r["source_table_from_topic"], r["key_source"])
        for r in rows
    }
    assert summary == {
        (cases.KEYED, "accounts", False, "declared"),
        (cases.UNKEYED, "tuple", True, "all_columns"),
    }
    assert {tuple(r["key_columns"]) for r in rows if r["key_source"] == "declared"} == {("id",)}


def test_exact_numbers_and_null_survive_to_gold(spark, built_lake):
    row = gold_rows(spark, "accounts")['{"id":"1"}']
    assert row["amount"] == "12345678901234567890123.456789"
    assert row["price"] == "1.50"
    assert "note" in row and row["note"] is None


def test_key_update_ends_the_old_key(spark, built_lake):
    after_half = spark.sql(
        "select row_key, before_row_key from silver.change_events "
        f"where kafka_topic = '{cases.KEYED}' and after_image['id'] = '40'"
    ).first()
    assert (after_half["row_key"], after_half["before_row_key"]) == ('{"id":"40"}', '{"id":"4"}')


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


def test_every_record_of_the_format_is_accounted_for(spark, built_lake):
    topics = (SAMPLE_TOPIC, cases.KEYED, cases.UNKEYED)
    where = "kafka_topic in ({})".format(", ".join(f"'{t}'" for t in topics))
    counts = {
        table: spark.sql(f"select count(*) from silver.{table} where {where}").first()[0]
        for table in ("change_events", "control_events", "schema_changes", "quarantine")
    }
    assert counts == {
        "change_events": 4 + len(cases.CHANGES),
        "control_events": 0,
        "schema_changes": 0,
        "quarantine": len(cases.BROKEN),
    }
