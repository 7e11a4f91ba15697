"""End to end: dump -> bronze -> dbt build -> silver and gold, for debezium_json, against the
edge cases of this folder's cases.py and the sample records
(sample_data/dump/dbz.sample.*.jsonl)."""

from __future__ import annotations

import pytest

from tests.dbt_models import helpers
from tests.dbt_models.formats.debezium import cases

pytestmark = pytest.mark.dbt

PG, MY = cases.PG_TOPIC, cases.MYSQL_TOPIC
SAMPLE_PG, SAMPLE_MYSQL = "dbz.sample.postgres", "dbz.sample.mysql"


def gold_rows(spark, where: str) -> dict[str, dict[str, str | None]]:
    return helpers.gold_rows(spark, f"source_format = 'debezium_json' and {where}")


def changes(spark, topic: str, where: str = "true") -> list:
    return spark.sql(
        "select kafka_partition, kafka_offset, op, source_op, before_image, after_image, "
        "row_key, before_row_key, key_source, key_columns, ordering_key, column_types, "
        "source_db_type, source_database, source_schema, source_table, source_position, "
        "unix_millis(event_time) as event_ms, unix_millis(capture_time) as capture_ms "
        f"from silver.change_events where kafka_topic = '{topic}' and {where} "
        "order by kafka_partition, kafka_offset"
    ).collect()


def test_postgres_changes_ops_and_ordering(spark, built_lake):
    rows = changes(spark, PG, "kafka_partition = 0")
    ops = [(r["kafka_offset"], r["op"], r["source_op"]) for r in rows]
    assert ops[:6] == [
        (0, "snapshot", "r"),
        (1, "snapshot", "r"),
        (2, "insert", "c"),
        (3, "update", "u"),
        (4, "update", "u"),
        (5, "delete", "d"),
    ]
    # the tombstone (6) and the truncate (8) are not changes
    assert cases.PG_TOMBSTONE_OFFSET not in {r["kafka_offset"] for r in rows}
    assert cases.PG_TRUNCATE_OFFSET not in {r["kafka_offset"] for r in rows}
    first = rows[0]
    assert first["ordering_key"] == (f"{1000:020d}.{'0' * 20}.{'0' * 10}.0000000000.{0:020d}.{PG}")
    assert (first["source_db_type"], first["source_database"], first["source_schema"]) == (
        "PostgreSQL",
        cases.PG_DB,
        cases.PG_SCHEMA,
    )
    assert first["source_table"] == "accounts"
    assert (first["key_source"], first["key_columns"]) == ("primary_key", ["id"])
    assert first["column_types"] == cases.ACCOUNT_TYPES
    assert first["source_position"] == "1000"
    assert (first["event_ms"], first["capture_ms"]) == (cases.T + 1000, cases.T + 1007)
    # decimals decoded with the schema's scale: 0, negative, beyond 64 bits
    assert rows[1]["after_image"]["balance"] == "0.00"
    assert rows[2]["after_image"]["balance"] == "-12.50"
    assert rows[3]["after_image"]["balance"] == cases.BIG_TEXT
    assert rows[3]["before_image"]["balance"] == "100.00"
    # an update without before image: no before image, no before row key
    assert rows[4]["before_image"] is None and rows[4]["before_row_key"] is None
    assert rows[4]["row_key"] == '{"id":"3"}'
    assert rows[5]["before_image"]["id"] == "2" and rows[5]["row_key"] == '{"id":"2"}'


def test_gold_current_state(spark, built_lake):
    accounts = gold_rows(spark, f"source_database = '{cases.PG_DB}' and source_table = 'accounts'")
    assert accounts == cases.EXPECTED_ACCOUNTS
    assert gold_rows(spark, f"source_database = '{cases.PG_DB}' and source_table = 'scratch'") == {}
    orders = gold_rows(spark, f"source_database = '{cases.MYSQL_DB}' and source_table = 'orders'")
    assert orders == cases.EXPECTED_ORDERS
    logs = gold_rows(spark, f"source_database = '{cases.MYSQL_DB}' and source_table = 'events_log'")
    assert logs == cases.EXPECTED_EVENTS_LOG


def test_out_of_order_and_duplicate_delivery(spark, built_lake):
    rows = spark.sql(
        "select row_key, last_op, last_ordering_key from gold.current_rows "
        "where source_format = 'debezium_json' and source_table = 'accounts' "
        f"and source_database = '{cases.PG_DB}'"
    ).collect()
    got = {r["row_key"]: (r["last_op"], r["last_ordering_key"]) for r in rows}
    # id 5: the update (lsn 9000) was delivered before its insert (lsn 8000) and stays
    assert got['{"id":"5"}'][0] == "update"
    assert got['{"id":"5"}'][1].startswith(f"{9000:020d}.")
    # id 6: delivered twice; the state keeps the first delivery (offset 12)
    assert got['{"id":"6"}'][1].endswith(f".{12:020d}.{PG}")
    duplicates = changes(spark, PG, """row_key = '{"id":"6"}'""")
    assert [r["kafka_offset"] for r in duplicates] == [12, 13]


def test_mysql_binlog_ordering(spark, built_lake):
    rows = changes(spark, MY, "kafka_partition = 0")
    keys = {(r["kafka_offset"]): r["ordering_key"] for r in rows}
    # file number, pos, row
    assert keys[0].startswith(f"{10:020d}.{100:020d}.{0:010d}.")
    assert keys[1].startswith(f"{9:020d}.{900:020d}.{0:010d}.")
    assert keys[1] < keys[0]  # file 9 at pos 900 before file 10 at pos 100
    assert keys[2].startswith(f"{10:020d}.{500:020d}.{1:010d}.")
    assert keys[3] < keys[2]  # row 0 before row 1 of one binlog event
    first = rows[0]
    assert first["source_schema"] is None and first["source_db_type"] == "MySQL"
    assert first["column_types"] is None  # schemaless
    assert first["source_position"] == "mysql-bin.000010:100"
    # schemaless values as sent (decimal.handling.mode=string)
    assert first["after_image"] == {
        "id": "10",
        "name": "o",
        "amount": "29.90",
        "created": "2024-01-02T03:04:05Z",
    }
    # a table without primary key: NULL Kafka key, every column of the image
    logs = changes(spark, MY, "kafka_partition = 1")
    assert [(r["key_source"], r["key_columns"]) for r in logs] == [("all_columns", ["a", "b"])] * 3
    assert logs[2]["op"] == "delete" and logs[2]["row_key"] == '{"a":"1","b":"x"}'


def test_tombstones_are_control_events(spark, built_lake):
    rows = spark.sql(
        "select event_id, control_type, source_op, source_table, event_time, ordering_key "
        "from silver.control_events where source_format = 'debezium_json' "
        f"and kafka_topic in ('{PG}', '{MY}') order by event_id"
    ).collect()
    assert [tuple(r) for r in rows] == [
        (f"{MY}:0:6", "tombstone", None, None, None, None),
        (f"{PG}:0:{cases.PG_TOMBSTONE_OFFSET}", "tombstone", None, None, None, None),
    ]
    quarantined = spark.sql(
        "select count(*) from silver.quarantine where source_format = 'debezium_json' "
        f"and kafka_partition = 0 and kafka_topic in ('{PG}', '{MY}')"
    ).first()[0]
    assert quarantined == 0


def test_truncate_reaches_table_truncates(spark, built_lake):
    rows = spark.sql(
        "select event_id, source_database, source_schema, source_table, ddl_op, ddl_text, "
        "ordering_key from silver.table_truncates where source_format = 'debezium_json' "
        f"and kafka_topic = '{PG}'"
    ).collect()
    assert [r.asDict() for r in rows] == [
        {
            "event_id": f"{PG}:0:{cases.PG_TRUNCATE_OFFSET}",
            "source_database": cases.PG_DB,
            "source_schema": cases.PG_SCHEMA,
            "source_table": "scratch",
            "ddl_op": "t",
            "ddl_text": "TRUNCATE TABLE public.scratch",
            "ordering_key": (
                f"{7500:020d}.{'0' * 20}.{'0' * 10}.0000000000.{cases.PG_TRUNCATE_OFFSET:020d}.{PG}"
            ),
        }
    ]


def test_every_broken_record_is_one_quarantine_row(spark, built_lake):
    rows = spark.sql(
        "select kafka_offset, reason, reason_detail, raw_value from silver.quarantine "
        f"where kafka_topic = '{PG}' and kafka_partition = {cases.BROKEN_PARTITION} "
        "order by kafka_offset"
    ).collect()
    got = [(r["kafka_offset"], r["reason"]) for r in rows]
    assert got == [(i, reason) for i, (_k, _v, reason, _d) in enumerate(cases.BROKEN)]
    for row, (_key, value, _reason, detail) in zip(rows, cases.BROKEN, strict=True):
        assert row["reason_detail"], row
        if detail is not None:
            assert row["reason_detail"] == detail
        assert bytes(row["raw_value"]) == value.encode()
    assert (
        spark.sql(
            f"select count(*) from silver.change_events where kafka_topic = '{PG}' "
            f"and kafka_partition = {cases.BROKEN_PARTITION}"
        ).first()[0]
        == 0
    )


def test_every_record_is_accounted_for_once(spark, built_lake):
    topics = (PG, MY)
    listed = ", ".join(f"'{t}'" for t in topics)

    def count(table: str) -> int:
        return spark.sql(f"select count(*) from {table} where kafka_topic in ({listed})").first()[0]

    tombstones = sum(v is None for _p, _k, v in cases.PG_CHANGES + cases.MYSQL_CHANGES)
    truncates = 1
    records = len(cases.PG_CHANGES) + len(cases.MYSQL_CHANGES) + len(cases.BROKEN)
    bronze = spark.sql(f"select count(*) from bronze.kafka_records where topic in ({listed})")
    assert bronze.first()[0] == records
    assert count("silver.control_events") == tombstones
    assert count("silver.schema_changes") == truncates
    assert count("silver.quarantine") == len(cases.BROKEN)
    assert count("silver.change_events") == records - tombstones - truncates - len(cases.BROKEN)


def test_sample_records(spark, built_lake):
    pg_rows = changes(spark, SAMPLE_PG)
    my_rows = changes(spark, SAMPLE_MYSQL)
    assert [r["op"] for r in pg_rows] == ["insert", "update"]
    assert pg_rows[1]["after_image"]["price"] == "-3.75"
    assert [r["op"] for r in my_rows] == ["insert", "delete"]
    tombstones = spark.sql(
        "select count(*) from silver.control_events "
        f"where kafka_topic = '{SAMPLE_MYSQL}' and control_type = 'tombstone'"
    ).first()[0]
    assert tombstones == 1
