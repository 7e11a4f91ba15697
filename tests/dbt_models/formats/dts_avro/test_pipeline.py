"""End to end: dump -> bronze -> dbt build -> silver and gold for dts_avro, against states
written by hand from docs/formats.md section 4a / seed 003 (the sample topic dts.sample.avro,
encoded from the documented schema; see cdc_lakehouse.formats.dts_avro.sample) and the edge
cases of this folder's cases.py (topic dts.cases.avro)."""

from __future__ import annotations

import base64
import json

import pytest

from cdc_lakehouse.formats.dts_avro import sample
from tests.dbt_models import helpers
from tests.dbt_models.formats.dts_avro import cases

pytestmark = pytest.mark.dbt


def gold_rows(spark, where: str) -> dict[str, dict[str, str | None]]:
    return helpers.gold_rows(
        spark,
        f"source_format = 'dts_avro' and {where}",
    )


ALL_TYPES_ROW_1 = {
    "id": "1",
    "name": "中文 name",
    "legacy": "café",
    "price": "12345678901234567890.123450",
    "ratio": "0.1",
    "created_at": "2023-10-11T00:43:20.123456Z",
    "updated_at": "2023-10-11 09:30:00.500000",
    "birthday": "1990-01-31",
    "opens_at": "08:30:00",
    "local_time": "2023-10-11 17:30:00 +08:00",
    "location": "AQEAAAAAAAAAAADwPwAAAAAAAABA",
    "area": "POLYGON((0 0,1 0,1 1,0 0))",
    "photo": "iVBORw0K",
    "attrs": '{"size": 1.50, "tags": ["a"]}',
    "note": None,
}
ALL_TYPES_ROW_2 = {**ALL_TYPES_ROW_1, "id": "2", "name": "snapshot row"}


def test_sample_changes_in_order_with_images_and_keys(spark, built_lake):
    rows = spark.sql(
        "select source_op, op, source_db_type, source_database, source_schema, source_table, "
        "key_source, key_columns, row_key, before_row_key, before_image, after_image, "
        "after_image_is_partial, ordering_key, cast(event_time as string) as event_time, "
        "cast(capture_time as string) as capture_time, source_sequence_id, source_position, "
        "transaction_id, source_schema_version, column_types, "
        "map_keys(column_types) as column_order "
        f"from silver.change_events where kafka_topic = '{sample.TOPIC}' order by ordering_key"
    ).collect()
    # INIT (full load) orders before every change, whatever its sourceTimestamp.
    assert [(r["source_op"], r["op"], r["source_table"], r["row_key"]) for r in rows] == [
        ("INIT", "snapshot", "all_types", '{"id":"2"}'),
        ("INSERT", "insert", "t1", '{"a":"123456789"}'),
        ("UPDATE", "update", "t1", '{"a":"123456789"}'),
        ("DELETE", "delete", "t1", '{"a":"123456789"}'),
        ("INSERT", "insert", "all_types", '{"id":"1"}'),
        ("UPDATE", "update", "all_types", '{"id":"1"}'),
    ]
    snapshot, insert, update, delete, all_types, partial = rows
    assert insert["before_image"] is None and insert["before_row_key"] is None
    assert insert["after_image"] == {"a": "123456789", "b": "test insert statement."}
    assert update["before_image"] == {"a": "123456789", "b": "test insert statement."}
    assert update["after_image"] == {"a": "123456789", "b": "test update statement."}
    assert update["before_row_key"] == '{"a":"123456789"}'
    assert delete["after_image"] is None
    assert delete["before_image"] == {"a": "123456789", "b": "test update statement."}
    assert (insert["source_db_type"], insert["source_database"], insert["source_schema"]) == (
        "MySQL",
        "mydb",
        None,
    )
    assert (insert["key_source"], insert["key_columns"]) == ("primary_key", ["a"])
    assert insert["ordering_key"] == (
        "1.00000000001696984408.00000000000001700382.0000000000.00000000000000000002."
        + sample.TOPIC
    )
    assert snapshot["ordering_key"].startswith("0.00000000001696985200.")
    assert insert["event_time"] == "2023-10-11 00:33:28"  # sourceTimestamp is in seconds
    assert insert["capture_time"] == "2023-10-11 00:33:28.05"  # readerThroughoutTime, ms
    assert insert["source_sequence_id"] == "1700382"
    assert insert["source_position"] == "72469@78"
    assert insert["transaction_id"] == "9001"
    assert insert["column_types"] == {"a": "LONGLONG", "b": "VAR_STRING"}
    assert all_types["column_order"] == [name for name, _code in sample.ALL_TYPES_COLUMNS]
    assert {k: all_types["column_types"][k] for k in ("id", "name", "legacy", "price")} == {
        "id": "LONG",
        "name": "VAR_STRING",
        "legacy": "STRING",
        "price": "NEWDECIMAL",
    }
    # every value type as exact text; note is SQL NULL (present with NULL)
    assert all_types["after_image"] == ALL_TYPES_ROW_1
    assert all_types["after_image_is_partial"] is False
    # the partial update: only id and ratio provided (NONE elsewhere -> absent)
    assert partial["after_image"] == {"id": "1", "ratio": "2.5"}
    assert partial["before_image"] == {"id": "1", "ratio": "0.1"}
    assert partial["after_image_is_partial"] is True
    assert snapshot["after_image"] == ALL_TYPES_ROW_2


def test_sample_control_ddl_and_no_quarantine(spark, built_lake):
    control = spark.sql(
        "select source_op, control_type, transaction_id, cast(event_time as string) as t "
        f"from silver.control_events where kafka_topic = '{sample.TOPIC}' order by ordering_key"
    ).collect()
    assert [(r["source_op"], r["control_type"], r["transaction_id"]) for r in control] == [
        ("BEGIN", "transaction_begin", "9001"),
        ("COMMIT", "transaction_commit", "9001"),
        ("HEARTBEAT", "heartbeat", "0"),
        ("CHECKPOINT", "heartbeat", "0"),
    ]
    assert control[2]["t"] == "2023-10-11 00:35:30"
    ddl = spark.sql(
        "select ddl_op, ddl_text, source_database, source_table, source_dialect "
        f"from silver.schema_changes where kafka_topic = '{sample.TOPIC}' order by ordering_key"
    ).collect()
    # objectName is the database only: the table comes from the statement
    assert [(r["ddl_op"], r["source_database"], r["source_table"]) for r in ddl] == [
        ("DDL", "mydb", "t1"),
        ("DDL", "shop", "all_types"),
    ]
    assert ddl[0]["ddl_text"] == "create table t1(a bigint primary key, b varchar(100))"
    assert ddl[0]["source_dialect"] == "mysql"
    assert ddl[1]["ddl_text"].startswith("CREATE TABLE all_types (id int PRIMARY KEY")
    quarantined = spark.sql(
        f"select count(*) from silver.quarantine where kafka_topic = '{sample.TOPIC}'"
    ).first()[0]
    assert quarantined == 0


def test_sample_gold_whole_rows(spark, built_lake):
    # mydb.t1 was inserted, updated and deleted: gone. all_types id 2 is the full-load row.
    assert gold_rows(spark, "source_table = 't1'") == {}
    rows = gold_rows(spark, "source_table = 'all_types'")
    assert rows['{"id":"2"}'] == ALL_TYPES_ROW_2


def test_sample_gold_partial_update_keeps_not_provided_columns(spark, built_lake):
    rows = gold_rows(spark, "source_table = 'all_types'")
    assert rows['{"id":"1"}'] == {**ALL_TYPES_ROW_1, "ratio": "2.5"}


def test_cases_gold_whole_rows(spark, built_lake):
    rows = gold_rows(spark, "source_database = 'edge' and source_table = 'dts_orders'")
    assert set(rows) == set(cases.EXPECTED_ORDERS)
    for key, values in cases.EXPECTED_ORDERS.items():
        if key not in cases.PARTIAL_ROW_KEYS:
            assert rows[key] == values, key
    assert gold_rows(spark, "source_table = 'uk_table'") == cases.EXPECTED_UK
    assert gold_rows(spark, "source_table = 'nokey'") == cases.EXPECTED_NOKEY


def test_cases_gold_partial_updates(spark, built_lake):
    rows = gold_rows(spark, "source_database = 'edge' and source_table = 'dts_orders'")
    for key in cases.PARTIAL_ROW_KEYS:
        assert rows[key] == cases.EXPECTED_ORDERS[key], key


def test_cases_keys_names_and_types(spark, built_lake):
    def one(where: str):
        return spark.sql(
            "select source_database, source_schema, source_table, key_source, key_columns, "
            "row_key, before_row_key, column_types, source_db_type, transaction_id "
            f"from silver.change_events where kafka_topic = '{cases.TOPIC}' and {where}"
        ).collect()

    (uk,) = one("source_table = 'uk_table'")
    assert (uk["key_source"], uk["key_columns"], uk["row_key"]) == (
        "unique_key",
        ["code"],
        '{"code":"A"}',
    )
    nokey = one("source_table = 'nokey'")
    assert {r["key_source"] for r in nokey} == {"all_columns"}
    assert {r["row_key"] for r in nokey} == {'{"a":"1","b":"x"}', '{"a":"2","b":"y"}'}
    (escaped,) = one("source_table = 'order.items'")
    assert escaped["source_database"] == "my.db"
    (pg,) = one("source_table = 'accounts'")
    assert (pg["source_database"], pg["source_schema"], pg["source_db_type"]) == (
        "pgdb",
        "public",
        "PostgreSQL",
    )
    assert pg["column_types"] == {"id": "20", "name": "1043"}
    assert pg["transaction_id"] == "778"
    (moved,) = one("source_table = 'dts_orders' and row_key = '{\"id\":\"40\"}'")
    assert moved["before_row_key"] == '{"id":"4"}'
    # an update whose after image does not provide the key column finds its row
    nine = one("source_table = 'dts_orders' and row_key = '{\"id\":\"9\"}'")
    assert len(nine) == 2


def test_cases_duplicates_and_ordering(spark, built_lake):
    dup = spark.sql(
        "select count(*) as n, count(distinct ordering_key) as k from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and source_table = 'dts_orders' "
        'and row_key = \'{"id":"1"}\''
    ).first()
    assert (dup["n"], dup["k"]) == (2, 2)  # both deliveries kept in silver, one gold row
    six = spark.sql(
        "select after_image['status'] as status from silver.change_events "
        f"where kafka_topic = '{cases.TOPIC}' and source_table = 'dts_orders' "
        'and row_key = \'{"id":"6"}\' '
        "order by ordering_key"
    ).collect()
    assert [r["status"] for r in six] == ["new", "a", "b"]


def test_cases_control_and_ddl(spark, built_lake):
    rows = spark.sql(
        "select source_op, control_type from silver.control_events "
        f"where kafka_topic = '{cases.TOPIC}' order by ordering_key"
    ).collect()
    assert [(r["source_op"], r["control_type"]) for r in rows] == cases.CONTROL
    (ddl,) = spark.sql(
        "select ddl_op, ddl_text, source_database, source_table, change_kind, column_name, "
        f"spark_sql from silver.schema_changes where kafka_topic = '{cases.TOPIC}'"
    ).collect()
    # a quoted table name holding a dot is one name, in the record's database
    assert (ddl["ddl_op"], ddl["source_database"], ddl["source_table"]) == (
        "DDL",
        "my.db",
        "order.items",
    )
    assert (ddl["change_kind"], ddl["column_name"]) == ("add_column", "qty")
    assert ddl["spark_sql"] == "ALTER TABLE `order.items` ADD COLUMNS (qty INT)"
    assert ddl["ddl_text"] == "ALTER TABLE `order.items` ADD COLUMN qty int"


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


def test_an_unknown_operation_is_quarantined_with_what_it_lacks(spark, built_lake):
    rows = spark.sql(
        "select kafka_offset, reason, reason_detail from silver.quarantine "
        f"where kafka_topic = '{cases.TOPIC}' order by kafka_offset"
    ).collect()
    unknown = [r["reason_detail"] for r in rows if r["reason"] == "unknown_op"]
    assert unknown[0] == (
        "operation COMMAND has no mapping in the normalized vocabulary (docs/formats.md)"
    )


def test_every_record_of_both_topics_is_accounted_for(spark, built_lake):
    silver = ("change_events", "control_events", "schema_changes", "quarantine")
    topics = f"kafka_topic in ('{sample.TOPIC}', '{cases.TOPIC}')"
    counted = sum(
        spark.table(f"silver.{t}")
        .where(topics)
        .select("kafka_topic", "kafka_partition", "kafka_offset")
        .distinct()
        .count()
        for t in silver
    )
    assert counted == len(sample.sample_records()) + len(cases.CHANGES) + len(cases.BROKEN)


def test_sample_dump_is_valid_dump_json(built_lake):
    for line in sample.dump_lines():
        record = json.loads(line)
        assert base64.b64decode(record["value_base64"])
