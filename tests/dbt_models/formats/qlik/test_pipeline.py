"""End to end: dump -> bronze -> dbt build -> silver and gold, for qlik_json and qlik_avro,
against states written by hand from seed 004 (the sample scenario of
cdc_lakehouse.formats.qlik.sample: the same messages as JSON and as Avro) and the edge cases
of cases.py."""

from __future__ import annotations

import pytest

from tests.dbt_models.formats.qlik import cases
from tests.dbt_models.formats.qlik import late_metadata_cases as late_cases
from tests.dbt_models.formats.qlik import real_stream_cases as real_cases

pytestmark = pytest.mark.dbt

SAMPLE_TOPICS = {"qlik_json": "qlik.sample.json", "qlik_avro": "qlik.sample.avro"}

ALICE = {
    "ID": "10",
    "NAME": "Alice Smith",
    "BALANCE": "1500.00",
    "STATUS": "vip",
    "PHOTO": "89504E47",
    "UPDATED_AT": "2024-01-10 09:00:00.000000",
}
BOB = {
    "ID": "2",
    "NAME": "Bob",
    "BALANCE": "75.25",
    "STATUS": "active",
    "PHOTO": "FFD8FF",  # not provided by the update (columnMask 2F): kept from the REFRESH
    "UPDATED_AT": "2024-01-11 09:00:00.000000",
}
DAN = {
    "ID": "4",
    "NAME": "Dan",
    "BALANCE": "12345678.90",
    "STATUS": "new",
    "PHOTO": "00FF",
    "UPDATED_AT": "2024-01-15 10:45:00.000000",
}


def gold_rows(spark, where: str) -> dict[str, tuple[dict[str, str | None], str]]:
    rows = spark.sql(
        f"select row_key, row_values, last_op from gold.current_rows where {where}"
    ).collect()
    return {r["row_key"]: (dict(r["row_values"]), r["last_op"]) for r in rows}


@pytest.mark.parametrize("source_format", sorted(SAMPLE_TOPICS))
def test_sample_current_state_without_partial_rows(spark, built_lake, source_format):
    # ID 1 became ID 10 (the seed's changeMask 0B: ID, NAME, STATUS changed), ID 3 was
    # deleted, ID 4 was inserted by a bare / self-describing message.
    got = gold_rows(
        spark,
        f"source_format = '{source_format}' and source_database = 'sales_to_kafka' "
        "and source_schema = 'SALES' and source_table = 'CUSTOMERS'",
    )
    assert set(got) == {'{"ID":"10"}', '{"ID":"2"}', '{"ID":"4"}'}
    assert got['{"ID":"10"}'] == (ALICE, "update")
    assert got['{"ID":"4"}'] == (DAN, "insert")
    assert got['{"ID":"2"}'][1] == "update"


@pytest.mark.parametrize("source_format", sorted(SAMPLE_TOPICS))
def test_sample_partial_update_keeps_not_provided_column(spark, built_lake, source_format):
    got = gold_rows(spark, f"source_format = '{source_format}' and source_table = 'CUSTOMERS'")
    assert got['{"ID":"2"}'] == (BOB, "update")


@pytest.mark.parametrize("source_format", sorted(SAMPLE_TOPICS))
def test_sample_silver_rows(spark, built_lake, source_format):
    topic = SAMPLE_TOPICS[source_format]
    rows = spark.sql(
        "select kafka_offset, op, source_op, row_key, before_row_key, after_image_is_partial, "
        "ordering_key, source_sequence_id, transaction_id, transaction_event_index, "
        "is_last_event_in_transaction, source_position, source_schema_version, key_columns, "
        "key_source, event_time, before_image, after_image "
        f"from silver.change_events where kafka_topic = '{topic}' order by ordering_key"
    ).collect()
    # REFRESH rows first (rank 1), then CDC rows by changeSequence.
    assert [(r["kafka_offset"], r["op"], r["source_op"]) for r in rows] == [
        (1, "snapshot", "REFRESH"),
        (2, "snapshot", "REFRESH"),
        (3, "insert", "INSERT"),
        (4, "update", "UPDATE"),
        (5, "update", "UPDATE"),
        (6, "delete", "DELETE"),
        (7, "insert", "INSERT"),
    ]
    by_offset = {r["kafka_offset"]: r for r in rows}
    refresh = by_offset[1]
    assert refresh["ordering_key"] == "1." + "0" * 35 + f".0000000000.00000000000000000001.{topic}"
    assert refresh["source_sequence_id"] is None and refresh["event_time"] is None
    key_update = by_offset[4]
    assert key_update["ordering_key"] == (
        f"2.20240115103500450000000000000000102.0000000000.00000000000000000004.{topic}"
    )
    assert (key_update["row_key"], key_update["before_row_key"]) == ('{"ID":"10"}', '{"ID":"1"}')
    assert key_update["before_image"]["NAME"] == "Alice"
    assert key_update["transaction_id"] == "00000000000000000000000000120002"
    assert (key_update["transaction_event_index"], key_update["is_last_event_in_transaction"]) == (
        1,
        False,
    )
    assert str(key_update["event_time"]) == "2024-01-15 10:35:00.450000"
    partial = by_offset[5]
    assert partial["after_image_is_partial"] is True
    assert "PHOTO" not in partial["after_image"] and "PHOTO" not in partial["before_image"]
    assert (partial["transaction_event_index"], partial["is_last_event_in_transaction"]) == (
        2,
        True,
    )
    delete = by_offset[6]
    assert delete["after_image"] is None and delete["row_key"] == '{"ID":"3"}'
    assert delete["before_image"]["NAME"] == "Carol" and delete["before_image"]["PHOTO"] is None
    assert all(r["key_columns"] == ["ID"] and r["key_source"] == "primary_key" for r in rows)
    assert all(r["source_schema_version"] == "1" for r in rows)
    assert by_offset[3]["source_position"] == "00000000.01ab5068.00000001.0000.02.0000:88.67945.16"


@pytest.mark.parametrize("source_format", sorted(SAMPLE_TOPICS))
def test_sample_metadata_is_a_ddl_row_with_the_table_structure(spark, built_lake, source_format):
    topic = SAMPLE_TOPICS[source_format]
    ddl = spark.sql(
        f"select ddl_op, ddl_text, source_database, source_schema, source_table, ordering_key "
        f"from silver.schema_changes where kafka_topic = '{topic}'"
    ).collect()
    assert [
        (r["ddl_op"], r["ddl_text"], r["source_database"], r["source_schema"], r["source_table"])
        for r in ddl
    ] == [("METADATA", None, "sales_to_kafka", "SALES", "CUSTOMERS")]
    assert ddl[0]["ordering_key"].startswith("0." + "0" * 34 + "1.")
    types = spark.sql(
        "select map_keys(column_types) as names, map_values(column_types) as types, key_columns, "
        "source_schema_version from silver.stg_qlik__events "
        f"where kafka_topic = '{topic}' and record_kind = 'ddl'"
    ).first()
    # in ordinal order (compared in SQL: PySpark turns a map into an unordered dict)
    assert list(zip(types["names"], types["types"], strict=True)) == [
        ("ID", "INT4"),
        ("NAME", "STRING(50)"),
        ("BALANCE", "NUMERIC(10,2)"),
        ("STATUS", "STRING(10)"),
        ("PHOTO", "BYTES(16)"),
        ("UPDATED_AT", "DATETIME"),
    ]
    assert (types["key_columns"], types["source_schema_version"]) == (["ID"], "1")
    quarantined = spark.sql(f"select count(*) from silver.quarantine where kafka_topic = '{topic}'")
    assert quarantined.first()[0] == 0


def test_edge_case_current_state_without_partial_rows(spark, built_lake):
    got = gold_rows(spark, "source_format = 'qlik_json' and source_table = 'ORDERS'")
    expected = {k: v for k, v in cases.EXPECTED_ORDERS.items() if k != '{"ID":"1"}'}
    assert {k: v for k, (v, _op) in got.items() if k != '{"ID":"1"}'} == expected
    assert set(got) == set(cases.EXPECTED_ORDERS)
    nokey = gold_rows(spark, "source_format = 'qlik_json' and source_table = 'NOKEY'")
    assert {k: v for k, (v, _op) in nokey.items()} == cases.EXPECTED_NOKEY


def test_edge_case_partial_updates_keep_not_provided_columns(spark, built_lake):
    got = gold_rows(spark, "source_format = 'qlik_json' and source_table = 'ORDERS'")
    assert got['{"ID":"1"}'][0] == cases.EXPECTED_ORDERS['{"ID":"1"}']
    avro = gold_rows(spark, "source_format = 'qlik_avro' and source_table = 'ORDERS'")
    assert {k: v for k, (v, _op) in avro.items()} == cases.EXPECTED_AVRO_ORDERS


def test_edge_case_masks_and_versions_in_silver(spark, built_lake):
    rows = spark.sql(
        "select row_key, source_op, after_image, after_image_is_partial, source_schema_version, "
        "map_keys(column_types) as column_names, metadata_match, changed_columns, "
        "not_provided_columns "
        "from silver.stg_qlik__events where kafka_topic = 'qlik.cases.json' "
        "and record_kind = 'change' order by ordering_key"
    ).collect()
    partial = [r for r in rows if r["row_key"] == '{"ID":"1"}' and r["source_op"] == "UPDATE"]
    assert len(partial) == 1
    assert partial[0]["after_image"] == {"ID": "1", "STATUS": "paid", "AMOUNT": "12345678901.50"}
    assert partial[0]["after_image_is_partial"] is True
    assert (partial[0]["changed_columns"], partial[0]["not_provided_columns"]) == (
        ["STATUS"],
        ["NOTE"],
    )
    v2 = next(r for r in rows if r["row_key"] == '{"ID":"7"}')
    assert v2["source_schema_version"] == "2" and v2["metadata_match"] == "schema_id"
    assert v2["column_names"] == ["ID", "STATUS", "AMOUNT", "NOTE", "CHANNEL"]
    first = [r for r in rows if r["row_key"] == '{"ID":"1"}' and r["source_op"] == "INSERT"]
    assert len(first) == 2  # the duplicate delivery, both decoded with version 1
    assert all(r["source_schema_version"] == "1" for r in first)
    nokey = [r for r in rows if r["row_key"].startswith('{"A"')]
    assert {r["metadata_match"] for r in nokey} == {"table_name"}
    ddl = spark.sql(
        "select source_schema_version, source_table from silver.stg_qlik__events "
        "where kafka_topic = 'qlik.cases.json' and record_kind = 'ddl' "
        "order by source_table, source_schema_version"
    ).collect()
    assert [(r["source_table"], r["source_schema_version"]) for r in ddl] == [
        ("NOKEY", "1"),
        ("ORDERS", "1"),
        ("ORDERS", "2"),
    ]


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


def test_every_qlik_record_is_accounted_for_once(spark, built_lake):
    topics = "('qlik.sample.json', 'qlik.sample.avro', 'qlik.cases.json', 'qlik.cases.avro')"
    bronze = spark.sql(f"select count(*) from bronze.kafka_records where topic in {topics}")
    silver = spark.sql(
        " union all ".join(
            f"select kafka_topic, kafka_partition, kafka_offset from silver.{t} "
            f"where kafka_topic in {topics}"
            for t in ("change_events", "control_events", "schema_changes", "quarantine")
        )
    )
    assert silver.count() == silver.distinct().count() == bronze.first()[0]


def test_data_messages_wait_in_quarantine_for_their_metadata(spark, built_lake):
    """late_metadata_cases.py, batch A: a DT whose MD has not arrived waits in
    quarantine - also a DT of a new tableVersion whose older version's MD is known (its schema
    id names the new one); a DT whose MD came in the same batch is decoded at once."""
    late = late_cases
    quarantined = spark.sql(
        "select kafka_topic, kafka_offset, reason from silver.quarantine "
        f"where kafka_topic in ('{late.JSON_TOPIC}', '{late.AVRO_TOPIC}')"
    ).collect()
    assert {(r["kafka_topic"], r["kafka_offset"]) for r in quarantined} == (
        late.WAITING_AFTER_BATCH_A
    )
    assert {r["reason"] for r in quarantined} == {"missing_table_metadata"}
    for table in ("EARLY", "WAITS", "VERSIONS"):
        got = gold_rows(spark, f"source_database = '{late.TASK}' and source_table = '{table}'")
        expected = {k: v for k, v in late.EXPECTED[table].items() if "waits" not in v["NOTE"]}
        expected = {k: v for k, v in expected.items() if v["NOTE"] != "v2"}
        assert {k: values for k, (values, _op) in got.items()} == expected


def test_a_real_qlik_stream_reaches_gold_with_its_metadata_in_the_same_batch(spark, built_lake):
    """real_stream_cases.py, batch A (issue 48): REFRESH data messages whose envelope
    messageSchemaId no metadata message carries, externalSchemaId null, take their topic's
    table; those whose topic has no metadata yet wait in quarantine."""
    real = real_cases
    for table in real.EXPECTED:
        got = gold_rows(spark, f"source_database = '{real.TASK}' and source_table = '{table}'")
        expected = real.EXPECTED_AFTER_BATCH_A.get(table, {})
        assert got == {key: (values, "snapshot") for key, values in expected.items()}
    topics = ", ".join(f"'{t}'" for t in real.TOPICS)
    quarantined = spark.sql(
        "select kafka_topic, kafka_offset, reason from silver.quarantine "
        f"where kafka_topic in ({topics})"
    ).collect()
    assert {
        (r["kafka_topic"], r["kafka_offset"]): r["reason"] for r in quarantined
    } == dict.fromkeys(real.WAITING_AFTER_BATCH_A, "missing_table_metadata")
    matched = spark.sql(
        "select distinct metadata_match, schema_id, source_schema_version "
        f"from silver.stg_qlik__events where kafka_topic = '{real.SAME_TOPIC}' "
        "and record_kind = 'change'"
    ).collect()
    assert [tuple(r) for r in matched] == [("topic", "SAME-X", "1")]
