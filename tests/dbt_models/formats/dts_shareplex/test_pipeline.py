"""End to end: dump -> bronze -> dbt build -> silver and gold for dts_shareplex_json, against
states written by hand from docs/formats.md section 4b and the three Shareplex examples of seed
003 (sample_data/dump/dts.sample.shareplex.jsonl) and the edge cases of
this folder's cases.py (topic dts.cases.shareplex).

What the sample changed in the seed examples to make them valid, complete JSON: the insert is
as documented; the update's "…." placeholder is replaced by the meta fields the insert shows
(scn 14589063125342, rowid, trans 7.0.411502, seq 1, size 1, idx 1/1, posttime); the
delete's trailing comma is removed and its elided meta fields are filled in the same way
(scn 14589063131077, table CL_BIZ1.MIO_LOG, ...). Values and keys are as documented.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dbt_models import helpers
from tests.dbt_models.conftest import SAMPLE_DUMP
from tests.dbt_models.formats.dts_shareplex import cases

pytestmark = pytest.mark.dbt

SAMPLE_TOPIC = "dts.sample.shareplex"
UPD_KEY = {
    "MIO_LOG_ID": "32537893",
    "PLNMIO_REC_ID": "31557806",
    "POL_CODE": None,
    "CNTR_TYPE": None,
    "CNTR_NO": "1171201606syui26",
}


def gold_rows(spark, where: str) -> dict[str, dict[str, str | None]]:
    return helpers.gold_rows(
        spark,
        f"source_format = 'dts_shareplex_json' and {where}",
    )


def test_sample_is_the_three_seed_examples():
    lines = (Path(SAMPLE_DUMP) / f"{SAMPLE_TOPIC}.jsonl").read_text("utf-8").splitlines()
    messages = [json.loads(json.loads(line)["value"]) for line in lines]
    assert [m["meta"]["op"] for m in messages] == ["ins", "upd", "del"]
    assert messages[0]["data"] == {"MIO_LOG_ID": "32539737"}
    assert messages[1]["data"] == {"CNTR_NO": "1171201606"}
    assert messages[1]["key"] == UPD_KEY
    assert messages[2]["data"] == {
        "MIO_LOG_ID": "32539739",
        "PLNMIO_REC_ID": "31557806",
        "POL_CODE": None,
        "CNTR_TYPE": None,
        "CG_NO": None,
    }


def test_seed_examples_in_silver(spark, built_lake):
    rows = spark.sql(
        "select source_op, op, source_schema, source_table, key_source, key_columns, row_key, "
        "before_row_key, before_image, after_image, after_image_is_partial, ordering_key, "
        "cast(event_time as string) as event_time, cast(capture_time as string) as capture, "
        "source_scn, source_position, transaction_id, transaction_event_index, "
        "transaction_event_count, is_last_event_in_transaction from silver.change_events "
        f"where kafka_topic = '{SAMPLE_TOPIC}' order by ordering_key"
    ).collect()
    assert [r["source_op"] for r in rows] == ["ins", "upd", "del"]
    ins, upd, dele = rows
    # ins: data is the whole row; no key anywhere in the message and the table's learned key
    # columns (from del) are not all in data -> all columns of data identify the row.
    assert (ins["op"], ins["source_schema"], ins["source_table"]) == (
        "insert",
        "CL_BIZ1",
        "MIO_LOG",
    )
    assert ins["after_image"] == {"MIO_LOG_ID": "32539737"}
    assert ins["before_image"] is None
    assert (ins["key_source"], ins["row_key"]) == ("all_columns", '{"MIO_LOG_ID":"32539737"}')
    assert ins["after_image_is_partial"] is False
    assert ins["ordering_key"] == (
        "000000000000000014589063118712.0000000001.1.0000000000.00000000000000000000."
        + SAMPLE_TOPIC
    )
    assert ins["event_time"] == "2017-06-16 14:24:34"  # UTC although the Z is missing
    assert ins["capture"] == "2017-06-16 14:33:52"  # posttime
    assert (ins["source_scn"], ins["source_position"], ins["transaction_id"]) == (
        "14589063118712",
        "AAATGpAAIAAItcIAAA",
        "7.0.411499",
    )
    assert (ins["transaction_event_index"], ins["transaction_event_count"]) == (1, 11)
    assert ins["is_last_event_in_transaction"] is False
    # upd: after = data (changed column only, partial); before = key (old identifying values)
    assert upd["op"] == "update"
    assert upd["after_image"] == {"CNTR_NO": "1171201606"}
    assert upd["after_image_is_partial"] is True
    assert upd["before_image"] == UPD_KEY
    assert upd["key_source"] == "unique_key"
    assert sorted(upd["key_columns"]) == sorted(UPD_KEY)
    assert upd["row_key"] == (
        '{"CNTR_NO":"1171201606","CNTR_TYPE":null,"MIO_LOG_ID":"32537893",'
        '"PLNMIO_REC_ID":"31557806","POL_CODE":null}'
    )
    assert upd["before_row_key"] == (
        '{"CNTR_NO":"1171201606syui26","CNTR_TYPE":null,"MIO_LOG_ID":"32537893",'
        '"PLNMIO_REC_ID":"31557806","POL_CODE":null}'
    )
    assert upd["is_last_event_in_transaction"] is True
    # del: data holds the identifying values -> before image, key columns
    assert dele["op"] == "delete" and dele["after_image"] is None
    assert dele["before_image"]["MIO_LOG_ID"] == "32539739"
    assert sorted(dele["key_columns"]) == [
        "CG_NO",
        "CNTR_TYPE",
        "MIO_LOG_ID",
        "PLNMIO_REC_ID",
        "POL_CODE",
    ]
    assert dele["row_key"] == dele["before_row_key"]


def test_seed_examples_gold(spark, built_lake):
    # The insert's row stays; the upd's row (known only from the upd) holds what the message
    # provided: the identifying values of `key` with the changed CNTR_NO of `data` over them
    # (gold reads a partial change's before image for the columns it did not change); the
    # deleted row was never inserted: nothing to remove.
    assert gold_rows(spark, "source_table = 'MIO_LOG'") == {
        '{"MIO_LOG_ID":"32539737"}': {"MIO_LOG_ID": "32539737"},
        (
            '{"CNTR_NO":"1171201606","CNTR_TYPE":null,"MIO_LOG_ID":"32537893",'
            '"PLNMIO_REC_ID":"31557806","POL_CODE":null}'
        ): {
            "MIO_LOG_ID": "32537893",
            "PLNMIO_REC_ID": "31557806",
            "POL_CODE": None,
            "CNTR_TYPE": None,
            "CNTR_NO": "1171201606",
        },
    }


def test_cases_gold_whole_rows(spark, built_lake):
    rows = gold_rows(spark, "source_schema = 'EDGE' and source_table = 'ORDERS'")
    assert set(rows) == set(cases.EXPECTED_ORDERS)
    for key in ('{"ID":"1"}', '{"ID":"80"}'):
        assert rows[key] == cases.EXPECTED_ORDERS[key], key


def test_cases_gold_partial_updates(spark, built_lake):
    rows = gold_rows(spark, "source_schema = 'EDGE' and source_table = 'ORDERS'")
    for key in ('{"ID":"2"}', '{"ID":"5"}', '{"ID":"7"}'):
        assert rows[key] == cases.EXPECTED_ORDERS[key], key
    # EDGE.NUMS is truncated at scn 1200, after its rows: gold is empty, and the row as the
    # truncate ended it has the upd of scn 1000 (scn compares as a number: 99 < 1000)
    assert gold_rows(spark, "source_table = 'NUMS'") == {}
    states = spark.sql(
        "select row_key, row_values from gold.current_rows_with_deletes "
        "where source_table = 'NUMS' and deleted_by = 'truncate'"
    ).collect()
    assert {r["row_key"]: dict(r["row_values"]) for r in states} == cases.EXPECTED_NUMS


def test_cases_gold_partial_update_that_changes_the_key(spark, built_lake):
    rows = gold_rows(spark, "source_schema = 'EDGE' and source_table = 'ORDERS'")
    assert rows['{"ID":"40"}'] == cases.EXPECTED_ORDERS['{"ID":"40"}']


def test_cases_silver_keys_ordering_and_transactions(spark, built_lake):
    def changes(where: str):
        return spark.sql(
            "select source_op, key_source, key_columns, row_key, before_row_key, "
            "after_image, ordering_key, transaction_event_index, is_last_event_in_transaction, "
            "cast(event_time as string) as event_time, cast(capture_time as string) as capture, "
            "source_position from silver.change_events "
            f"where kafka_topic = '{cases.TOPIC}' and {where} order by ordering_key"
        ).collect()

    # an ins without key learns the table's key (ID) from its upd / del messages
    ins = changes("source_op = 'ins' and row_key = '{\"ID\":\"3\"}'")
    assert (ins[0]["key_source"], ins[0]["key_columns"]) == ("unique_key", ["ID"])
    # key change: row_key from key overlaid by data, before_row_key from key
    (moved,) = changes('row_key = \'{"ID":"40"}\'')
    assert moved["before_row_key"] == '{"ID":"4"}'
    # a transaction delivered last-first is ordered by seq; seq = size marks its end
    tx = changes('row_key = \'{"ID":"5"}\'')
    assert [(r["source_op"], r["transaction_event_index"]) for r in tx] == [
        ("ins", 1),
        ("upd", 2),
        ("upd", 3),
    ]
    assert [r["is_last_event_in_transaction"] for r in tx] == [False, False, True]
    # split update: UPDATE BEFORE orders first; UPDATE AFTER learns its key from it
    split = changes("source_op like 'UPDATE %'")
    assert [(r["source_op"], r["row_key"], r["before_row_key"]) for r in split] == [
        ("UPDATE BEFORE", '{"ID":"8"}', '{"ID":"8"}'),
        ("UPDATE AFTER", '{"ID":"80"}', '{"ID":"8"}'),
    ]
    # scn is numeric: 99 orders before 1000
    nums = changes("source_table = 'NUMS'")
    assert [(r["source_op"], r["after_image"]) for r in nums] == [
        ("ins", {"K": "1", "V": "old"}),
        ("upd", {"V": "new"}),
    ]
    # time with Z and a fraction, posttime, seq from idx, rowid kept
    (timed,) = changes("source_table = 'TIMES'")
    assert timed["event_time"] == "2024-01-02 03:04:05.25"
    assert timed["capture"] == "2024-01-02 03:04:09"
    assert timed["transaction_event_index"] == 2
    assert timed["source_position"] == "AAAR1QAAEAAAACXAAA"


def test_cases_truncate_and_drop_column_are_schema_changes(spark, built_lake):
    rows = spark.sql(
        "select ddl_op, ddl_text, source_schema, source_table, change_kind, column_name, "
        "spark_sql from silver.schema_changes "
        f"where kafka_topic = '{cases.TOPIC}' order by ordering_key"
    ).collect()
    assert [(r["ddl_op"], r["source_schema"], r["source_table"]) for r in rows] == [
        ("TRUNCATE", "EDGE", "NUMS"),
        ("DROP COLUMN", "EDGE", "NUMS"),
    ]
    assert rows[0]["ddl_text"] == "TRUNCATE TABLE EDGE.NUMS"
    assert json.loads(rows[1]["ddl_text"])["data"] == {"V": None}
    # Shareplex DROP COLUMN names its column in data; TRUNCATE is parsed as Oracle
    assert [(r["change_kind"], r["column_name"], r["spark_sql"]) for r in rows] == [
        ("truncate", None, "TRUNCATE TABLE EDGE.NUMS"),
        ("drop_column", "V", "ALTER TABLE `EDGE`.`NUMS` DROP COLUMN `V`"),
    ]


# every broken record is quarantined with its reason and raw bytes: test_format_conformance.py


def test_every_record_of_both_topics_is_accounted_for(spark, built_lake):
    silver = ("change_events", "control_events", "schema_changes", "quarantine")
    topics = f"kafka_topic in ('{SAMPLE_TOPIC}', '{cases.TOPIC}')"
    counted = sum(
        spark.table(f"silver.{t}")
        .where(topics)
        .select("kafka_topic", "kafka_partition", "kafka_offset")
        .distinct()
        .count()
        for t in silver
    )
    assert counted == 3 + len(cases.CHANGES) + len(cases.BROKEN)
