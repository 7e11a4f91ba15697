"""End to end: dump -> bronze -> dbt build -> silver and gold, for dts_canal_json, against
states written by hand from seed 003 (sample_data/dump/dts.sample.canal*.jsonl) and the edge
cases of this folder's cases.py."""

from __future__ import annotations

import json

import pytest

from tests.dbt_models import helpers
from tests.dbt_models.formats.dts_canal import cases

pytestmark = pytest.mark.dbt

SAMPLE = "dts.sample.canal"
SAMPLE_LEGACY = "dts.sample.canal_legacy"


def gold_rows(spark, where: str) -> dict[str, dict[str, str | None]]:
    return helpers.gold_rows(
        spark,
        f"source_format = 'dts_canal_json' and {where}",
    )


def sample_value(topic: str, offset: int) -> bytes:
    from tests.dbt_models.conftest import SAMPLE_DUMP

    lines = (SAMPLE_DUMP / f"{topic}.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(lines[offset])["value"].encode()


def test_seed_003_delete_is_one_change_event(spark, built_lake):
    # New-meaning DELETE of id 500000287 (shipping_type NULL) in dbname.tablename.
    rows = spark.sql(
        "select *, unix_millis(event_time) as es, unix_millis(capture_time) as ts "
        f"from silver.change_events where kafka_topic = '{SAMPLE}'"
    ).collect()
    assert len(rows) == 1
    row = rows[0]
    assert row["event_id"] == f"{SAMPLE}:0:0:0"
    assert (row["op"], row["source_op"]) == ("delete", "DELETE")
    assert (row["source_database"], row["source_schema"], row["source_table"]) == (
        "dbname",
        None,
        "tablename",
    )
    assert row["before_image"] == {"id": "500000287", "shipping_type": None}
    assert row["after_image"] is None
    assert row["after_image_is_partial"] is False
    assert (row["key_source"], row["key_columns"]) == ("primary_key", ["id"])
    assert row["row_key"] == row["before_row_key"] == '{"id":"500000287"}'
    assert row["column_types"] == {"id": "bigint", "shipping_type": "varchar"}
    assert row["ordering_key"] == (
        f"00000001600161894000.1.0000000000.00000000000000000000.0000000000.{SAMPLE}"
    )
    assert (row["es"], row["ts"]) == (1600161894000, 1600161894771)
    assert row["source_sequence_id"] == "58"
    assert row["source_position"] is None and row["transaction_id"] is None
    # a delete of a row never seen leaves nothing in gold
    assert gold_rows(spark, "source_database = 'dbname'") == {}


def test_seed_003_ddl_is_a_schema_change(spark, built_lake):
    rows = spark.sql(
        "select event_id, ddl_op, ddl_text, source_database, source_table, source_dialect, "
        "ordering_key, translation_status from silver.schema_changes "
        f"where kafka_topic = '{SAMPLE}'"
    ).collect()
    assert [r.asDict() for r in rows] == [
        {
            "event_id": f"{SAMPLE}:0:1",
            "ddl_op": "DDL",
            "ddl_text": "eg:createxxx",
            "source_database": "dbname",
            "source_table": "tablename",
            "source_dialect": "mysql",
            "ordering_key": (
                f"00000001600161894000.1.0000000000.00000000000000000001.0000000000.{SAMPLE}"
            ),
            # the seed's placeholder statement is kept, marked as not parseable
            "translation_status": "unparseable",
        }
    ]


def test_seed_003_legacy_delete_without_key_is_quarantined(spark, built_lake):
    # The legacy example's old holds only shipping_type: the deleted row cannot be identified.
    rows = spark.sql(
        "select event_id, reason, reason_detail, raw_value from silver.quarantine "
        f"where kafka_topic = '{SAMPLE_LEGACY}'"
    ).collect()
    assert len(rows) == 1
    assert rows[0]["event_id"] == f"{SAMPLE_LEGACY}:0:0"
    assert rows[0]["reason"] == "missing_key_column"
    assert rows[0]["reason_detail"] == "key column(s) missing from the image: id"
    assert bytes(rows[0]["raw_value"]) == sample_value(SAMPLE_LEGACY, 0)


def test_edge_case_current_state(spark, built_lake):
    assert gold_rows(spark, f"source_database = '{cases.DB}' and source_table = 'items'") == (
        cases.EXPECTED_ITEMS
    )
    assert gold_rows(spark, f"source_database = '{cases.DB}' and source_table = 'logs'") == (
        cases.EXPECTED_LOGS
    )
    assert gold_rows(spark, f"source_database = '{cases.LEGACY_DB}'") == (
        cases.EXPECTED_LEGACY_ITEMS
    )


def test_gold_last_op_and_ordering(spark, built_lake):
    rows = spark.sql(
        "select row_key, last_op, last_ordering_key from gold.current_rows "
        f"where source_database = '{cases.DB}' and source_table = 'items'"
    ).collect()
    got = {r["row_key"]: (r["last_op"], r["last_ordering_key"]) for r in rows}
    assert got['{"id":"14"}'][0] == "snapshot"
    assert got['{"id":"15"}'] == (
        "update",
        f"00000001700000011000.1.0000000001.00000000000000000016.0000000000.{cases.TOPIC}",
    )
    # id 5's insert was delivered twice (offsets 3 and 4): a redelivery is not a new change,
    # so the state keeps the first delivery's ordering key
    assert got['{"id":"5"}'][1].endswith(
        f".0000000001.00000000000000000003.0000000001.{cases.TOPIC}"
    )


def test_multi_row_message_gives_one_change_per_element(spark, built_lake):
    rows = spark.sql(
        "select event_id, kafka_row_index, op, after_image, ordering_key "
        f"from silver.change_events where kafka_topic = '{cases.TOPIC}' "
        "and kafka_partition = 1 and kafka_offset = 0 order by kafka_row_index"
    ).collect()
    assert [r["event_id"] for r in rows] == [f"{cases.TOPIC}:1:0:{i}" for i in range(3)]
    assert [r["after_image"]["id"] for r in rows] == ["1", "2", "3"]
    assert {r["op"] for r in rows} == {"insert"}
    # the row index is the part before the topic that ends the key
    tails = [r["ordering_key"].removesuffix(f".{cases.TOPIC}")[-10:] for r in rows]
    assert tails == ["0000000000", "0000000001", "0000000002"]


def test_multi_row_update_images(spark, built_lake):
    rows = spark.sql(
        "select before_image, after_image from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and kafka_partition = 1 and kafka_offset = 1 "
        "order by kafka_row_index"
    ).collect()
    assert [(r["before_image"], r["after_image"]) for r in rows] == [
        ({"id": "1", "name": "a", "note": None}, {"id": "1", "name": "a2", "note": None}),
        ({"id": "2", "name": "b", "note": None}, {"id": "2", "name": "b2", "note": None}),
    ]


def test_duplicate_delivery_is_two_events_one_row(spark, built_lake):
    rows = spark.sql(
        "select kafka_offset, after_image from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and row_key = '{{\"id\":\"5\"}}' order by 1"
    ).collect()
    assert [r["kafka_offset"] for r in rows] == [3, 4]
    assert (
        rows[0]["after_image"]
        == rows[1]["after_image"]
        == {
            "id": "5",
            "name": "e",
            "note": "1.50",
        }
    )


def test_null_in_old_is_a_null_before_value(spark, built_lake):
    row = spark.sql(
        "select before_image, after_image from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and source_op = 'UPDATE' "
        'and row_key = \'{"id":"12"}\''
    ).first()
    assert row["before_image"] == {"id": "12", "name": "n", "note": None}
    assert row["after_image"] == {"id": "12", "name": "n", "note": "filled"}


def test_primary_key_update_moves_the_row(spark, built_lake):
    row = spark.sql(
        "select row_key, before_row_key, before_image from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and row_key = '{{\"id\":\"110\"}}'"
    ).first()
    assert (row["row_key"], row["before_row_key"]) == ('{"id":"110"}', '{"id":"11"}')
    assert row["before_image"] == {"id": "11", "name": "k", "note": None}


def test_init_rows_are_snapshots_ordered_before_a_change_of_the_same_ms(spark, built_lake):
    rows = spark.sql(
        "select op, source_op, ordering_key from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and row_key = '{{\"id\":\"15\"}}' "
        "order by ordering_key"
    ).collect()
    assert [(r["op"], r["source_op"]) for r in rows] == [
        ("snapshot", "INIT"),
        ("update", "UPDATE"),
    ]
    # the INIT row is on partition 2, the update on partition 1: rank 0 sorts first
    assert rows[0]["ordering_key"].startswith("00000001700000011000.0.0000000002.")


def test_ddl_cases_are_schema_changes(spark, built_lake):
    rows = spark.sql(
        "select ddl_op, ddl_text, source_table, change_kind, spark_sql from silver.schema_changes "
        f"where kafka_topic = '{cases.TOPIC}' order by kafka_offset"
    ).collect()
    # a DDL type without isDdl is a DDL; an empty table is no table (QUERY)
    assert [tuple(r)[:3] for r in rows[2:]] == [
        ("CREATE", "CREATE TABLE t2 (a int)", "items"),
        ("QUERY", "CREATE DATABASE x", None),
    ]
    assert [tuple(r) for r in rows[:2]] == [
        (
            "ALTER",
            "ALTER TABLE items ADD COLUMN note2 text",
            "items",
            "add_column",
            "ALTER TABLE items ADD COLUMNS (note2 STRING)",
        ),
        ("TRUNCATE", "TRUNCATE TABLE scratch", "scratch", "truncate", "TRUNCATE TABLE scratch"),
    ]


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


@pytest.mark.parametrize("topic", [cases.TOPIC, cases.LEGACY_TOPIC])
def test_every_broken_message_is_one_quarantine_row(spark, built_lake, topic):
    rows = spark.sql(
        "select event_id from silver.quarantine "
        f"where kafka_topic = '{topic}' and kafka_partition = 3 order by kafka_offset"
    ).collect()
    assert len({r["event_id"] for r in rows}) == len(rows)
    # nothing of a quarantined message reaches change_events
    assert (
        spark.sql(
            f"select count(*) from silver.change_events where kafka_topic = '{topic}' "
            "and kafka_partition = 3"
        ).first()[0]
        == 0
    )


def test_values_keep_their_text_and_old_columns_stay_in_the_before_image(spark, built_lake):
    rows = spark.sql(
        "select source_op, before_image, after_image, source_sequence_id, source_position, "
        "unix_millis(event_time) as es from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and row_key in "
        """('{"id":"30"}', '{"id":"31"}', '{"id":"32"}') order by kafka_offset"""
    ).collect()
    got = [(r["source_op"], r["before_image"], r["after_image"]) for r in rows]
    big = "12345678901234567890123.456789012345678901"
    assert got == [
        ("INSERT", None, {"id": "30", "name": "same", "note": None}),
        # an UPDATE without old changed nothing
        (
            "UPDATE",
            {"id": "30", "name": "same", "note": None},
            {"id": "30", "name": "same", "note": None},
        ),
        ("INSERT", None, {"id": "31", "name": "1e3", "note": "-0.0"}),
        # data overlaid with old; a column only in old is kept in the before image
        (
            "UPDATE",
            {"id": "31", "name": "1e3", "note": "true", "gone": "x"},
            {"id": "31", "name": big, "note": "true"},
        ),
        ("INSERT", None, {"id": "32", "name": "g", "note": None}),
    ]
    # es as a string of digits, id "0", the gtid as the transaction's position
    assert (rows[-1]["es"], rows[-1]["source_sequence_id"], rows[-1]["source_position"]) == (
        cases.T + 17000,
        "0",
        "3E11FA47-71CA-11E1:23",
    )


def test_quarantine_details(spark, built_lake):
    details = {
        r["kafka_offset"]: r["reason_detail"]
        for r in spark.sql(
            "select kafka_offset, reason_detail from silver.quarantine "
            f"where kafka_topic = '{cases.TOPIC}' and kafka_partition = 3"
        ).collect()
    }
    assert details[6].startswith("row 0 of 2: type UPSERT is not a Canal DML type")
    assert details[8] == (
        "row 1 of 3: key column(s) missing from the image: id (the whole message is quarantined)"
    )
    assert "set canal_legacy_swap" in details[9]
    assert details[5].startswith("old is misaligned with data")
    # the fields of the wrong JSON type or value (offsets of cases.BROKEN)
    assert details[16] == "es must be a non-negative integer"
    assert details[19] == "es = 1000000000000000000 is not a time in the years 1-9999 (epoch ms)"
    assert details[20] == "ts must be a non-negative integer"
    assert details[21] == "id must be a non-negative integer"
    assert details[26] == "old[0] must be a row object, not null"


def test_every_canal_record_is_accounted_for_once_per_row(spark, built_lake):
    def count(table: str, topics: tuple[str, ...]) -> int:
        listed = ", ".join(f"'{t}'" for t in topics)
        return spark.sql(f"select count(*) from {table} where kafka_topic in ({listed})").first()[0]

    topics = (SAMPLE, SAMPLE_LEGACY, cases.TOPIC, cases.LEGACY_TOPIC)
    bronze = spark.sql(
        "select count(*) from bronze.kafka_records where topic in "
        f"({', '.join(repr(t) for t in topics)})"
    ).first()[0]
    assert bronze == 3 + len(cases.CHANGES) + len(cases.LEGACY_CHANGES) + len(cases.BROKEN) + len(
        cases.LEGACY_BROKEN
    )
    # rows: every element of every change message, one row per other record
    messages = [json.loads(v) for _p, v in cases.CHANGES + cases.LEGACY_CHANGES]
    ddl = [m for m in messages if m.get("isDdl", m["type"] in ("ALTER", "CREATE", "TRUNCATE"))]
    elements = sum(len(m["data"] or m["old"] or [None]) for m in messages if m not in ddl)
    assert count("silver.change_events", topics) == 1 + elements
    assert count("silver.schema_changes", topics) == 1 + len(ddl) == 1 + 4
    assert count("silver.control_events", topics) == 0
    assert count("silver.quarantine", topics) == 1 + len(cases.BROKEN) + len(cases.LEGACY_BROKEN)
