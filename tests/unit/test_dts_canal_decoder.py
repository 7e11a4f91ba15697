"""Unit tests of cdc_lakehouse.decode.dts_canal (no Spark): the fields of a Canal JSON message,
multi-row messages, the before / after images in both data / old meanings, the traps of
docs/formats.md section 4c and every structural error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from cdc_lakehouse.decode.dts_canal import (
    CANAL_FIELDS,
    LEGACY_SWAP_COLUMN,
    decode_batches,
    decode_message,
    output_schema_ddl,
)
from tests.dbt_models import fault_matrix_cases

DUMP = Path(__file__).resolve().parents[2] / "sample_data" / "dump"


def dump_values(topic: str) -> list[bytes]:
    lines = (DUMP / f"{topic}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["value"].encode() for line in lines]


def one(raw: bytes | str, *, legacy_swap: bool = False) -> dict[str, Any]:
    rows = decode_message(raw.encode() if isinstance(raw, str) else raw, legacy_swap=legacy_swap)
    assert len(rows) == 1
    return rows[0]


def canal(type_: str, data: Any = None, old: Any = None, **extra: Any) -> bytes:
    message = {
        "data": data,
        "database": "shop",
        "es": 1700000000000,
        "id": 7,
        "isDdl": False,
        "mysqlType": {"id": "bigint", "name": "varchar(32)", "note": "text"},
        "old": old,
        "pkNames": ["id"],
        "sql": "",
        "sqlType": {"id": -5, "name": 12, "note": 2005},
        "table": "items",
        "ts": 1700000000123,
        "type": type_,
        **extra,
    }
    return json.dumps(message).encode()


# --- the examples of seed 003, as bundled in sample_data/dump --------------------------------
# Changed to make them valid JSON: the DDL example's per-field comments (Chinese notes after
# each value) are removed; every value is kept as printed, "sql": "eg:createxxx" included.


def test_seed_003_delete_new_meaning():
    value = dump_values("dts.sample.canal")[0]
    row = one(value)
    assert row["decode_error"] is None
    assert (row["type_code"], row["is_ddl"]) == ("DELETE", False)
    assert (row["source_database"], row["source_table"]) == ("dbname", "tablename")
    assert row["pk_names"] == ["id"]
    assert row["column_types"] == [("id", "bigint"), ("shipping_type", "varchar")]
    assert "sql_types" not in row  # sqlType is checked, not kept
    assert (row["has_data_row"], row["has_old_row"]) == (True, False)
    assert (row["es_ms"], row["ts_ms"], row["canal_id"]) == (1600161894000, 1600161894771, "58")
    assert row["sql_text"] == ""
    # shipping_type is SQL NULL (key present), not "not provided"
    assert row["before_image"] == [("id", "500000287"), ("shipping_type", None)]
    assert row["after_image"] is None
    assert (row["row_index"], row["row_count"]) == (0, 1)


def test_seed_003_ddl():
    row = one(dump_values("dts.sample.canal")[1])
    assert row["decode_error"] is None
    assert (row["type_code"], row["is_ddl"], row["sql_text"]) == ("DDL", True, "eg:createxxx")
    assert row["before_image"] is None and row["after_image"] is None
    assert row["pk_names"] is None and row["column_types"] is None


def test_seed_003_legacy_delete_row_is_in_old():
    # Legacy instance: the DELETE carries its row in old, data is absent. The example's old
    # lacks the key column id: the decoder keeps it as the before image; SQL quarantines it
    # (missing_key_column) because the deleted row cannot be identified.
    value = dump_values("dts.sample.canal_legacy")[0]
    row = one(value, legacy_swap=True)
    assert row["decode_error"] is None
    assert (row["has_data_row"], row["has_old_row"]) == (False, True)
    assert row["before_image"] == [("shipping_type", "aaa")]
    assert row["after_image"] is None
    # the same bytes on a topic with the open-source meaning: a DELETE without data
    row = one(value, legacy_swap=False)
    assert row["decode_error"] is None
    assert row["before_image"] is None and row["after_image"] is None


# --- real messages published elsewhere -------------------------------------------------------

# apache/flink, docs/content/docs/connectors/table/formats/canal.md ("How to use Canal
# format"): an UPDATE of inventory.products changing weight of id 111 (old weight 5.15).
FLINK_DOCS_UPDATE = """{
  "data": [{"id": "111", "name": "scooter", "description": "Big 2-wheel scooter",
            "weight": "5.18"}],
  "database": "inventory", "es": 1589373560000, "id": 9, "isDdl": false,
  "mysqlType": {"id": "INTEGER", "name": "VARCHAR(255)", "description": "VARCHAR(512)",
                "weight": "FLOAT"},
  "old": [{"weight": "5.15"}],
  "pkNames": ["id"], "sql": "",
  "sqlType": {"id": 4, "name": 12, "description": 12, "weight": 7},
  "table": "products", "ts": 1589373560798, "type": "UPDATE"
}"""

# alibaba/canal issue #1352 (canal 1.1.2, Kafka, flatMessage): an INSERT as received from
# Kafka, before canal 1.1.3 added pkNames.
CANAL_ISSUE_1352_INSERT = (
    '{"data":[{"mm":"11","mm2":"guo"}],"database":"test_canal","es":1545908671000,"id":1,'
    '"isDdl":false,"mysqlType":{"mm":"bigint(255)","mm2":"varchar(255)"},"old":null,"sql":"",'
    '"sqlType":{"mm":-5,"mm2":12},"table":"table222","ts":1545908671246,"type":"INSERT"}'
)


def test_real_flink_docs_update():
    row = one(FLINK_DOCS_UPDATE)
    assert row["decode_error"] is None
    full = [
        ("id", "111"),
        ("name", "scooter"),
        ("description", "Big 2-wheel scooter"),
        ("weight", "5.18"),
    ]
    assert row["after_image"] == full
    assert row["before_image"] == [*full[:3], ("weight", "5.15")]
    assert row["column_types"][0] == ("id", "INTEGER")
    assert (row["es_ms"], row["ts_ms"], row["canal_id"]) == (1589373560000, 1589373560798, "9")


def test_real_canal_issue_insert_without_pk_names():
    row = one(CANAL_ISSUE_1352_INSERT)
    assert row["decode_error"] is None
    assert row["pk_names"] is None  # SQL then keys the row by all its columns
    assert row["after_image"] == [("mm", "11"), ("mm2", "guo")]
    assert row["before_image"] is None
    assert row["column_types"] == [("mm", "bigint(255)"), ("mm2", "varchar(255)")]


# --- multi-row messages ----------------------------------------------------------------------


def test_multi_row_insert_gives_one_row_per_element():
    rows = decode_message(canal("INSERT", [{"id": "1"}, {"id": "2"}, {"id": "3"}]))
    assert [r["row_index"] for r in rows] == [0, 1, 2]
    assert {r["row_count"] for r in rows} == {3}
    assert [r["after_image"] for r in rows] == [[("id", "1")], [("id", "2")], [("id", "3")]]
    assert {r["es_ms"] for r in rows} == {1700000000000}


def test_multi_row_update_aligns_old_by_position():
    rows = decode_message(
        canal(
            "UPDATE",
            [{"id": "1", "name": "a2"}, {"id": "2", "name": "b2"}],
            [{"name": "a1"}, {"name": "b1"}],
        )
    )
    assert [r["before_image"] for r in rows] == [
        [("id", "1"), ("name", "a1")],
        [("id", "2"), ("name", "b1")],
    ]
    assert [r["after_image"] for r in rows] == [
        [("id", "1"), ("name", "a2")],
        [("id", "2"), ("name", "b2")],
    ]


def test_multi_row_delete():
    rows = decode_message(canal("DELETE", [{"id": "1"}, {"id": "2"}]))
    assert [r["before_image"] for r in rows] == [[("id", "1")], [("id", "2")]]
    assert [r["after_image"] for r in rows] == [None, None]


def test_any_bad_element_quarantines_the_whole_message():
    rows = decode_message(canal("INSERT", [{"id": "1"}, "oops", {"id": "3"}]))
    assert len(rows) == 1
    assert rows[0]["decode_error"] == "invalid_field_type"
    assert rows[0]["decode_error_detail"] == "data[1] must be a row object, not a string"
    assert (rows[0]["row_index"], rows[0]["row_count"]) == (0, 1)


@pytest.mark.parametrize("data", [None, []])
def test_message_without_rows_is_one_row_without_images(data):
    row = one(canal("INSERT", data))
    assert row["decode_error"] is None
    assert row["before_image"] is None and row["after_image"] is None


# --- images: the traps of docs/formats.md 4c --------------------------------------------------


def test_null_in_old_means_changed_from_null():
    # note was NULL before, "hello" after; name did not change (absent from old).
    row = one(canal("UPDATE", [{"id": "1", "name": "n", "note": "hello"}], [{"note": None}]))
    assert row["before_image"] == [("id", "1"), ("name", "n"), ("note", None)]
    assert row["after_image"] == [("id", "1"), ("name", "n"), ("note", "hello")]


def test_null_in_data_is_sql_null_and_absent_column_is_not_provided():
    row = one(canal("INSERT", [{"id": "1", "note": None}]))
    assert row["after_image"] == [("id", "1"), ("note", None)]
    assert "name" not in dict(row["after_image"])


def test_primary_key_update_before_image_has_the_old_key():
    row = one(canal("UPDATE", [{"id": "20", "name": "x"}], [{"id": "2"}]))
    assert dict(row["before_image"])["id"] == "2"
    assert dict(row["after_image"])["id"] == "20"


def test_update_without_old_changed_nothing():
    # open-source canal leaves old out when no row had an updated column
    row = one(canal("UPDATE", [{"id": "1", "name": "same"}]))
    assert row["before_image"] == row["after_image"] == [("id", "1"), ("name", "same")]


def test_old_column_not_in_data_is_kept_in_before_image():
    row = one(canal("UPDATE", [{"id": "1"}], [{"gone": "x"}]))
    assert row["before_image"] == [("id", "1"), ("gone", "x")]


def test_old_is_ignored_for_insert_and_delete_with_the_new_meaning():
    row = one(canal("DELETE", [{"id": "1", "name": "a"}], [{"name": "zzz"}]))
    assert row["before_image"] == [("id", "1"), ("name", "a")]


def test_init_rows_are_full_load_rows():
    rows = decode_message(canal("INIT", [{"id": "1"}, {"id": "2"}]))
    assert [(r["type_code"], r["after_image"]) for r in rows] == [
        ("INIT", [("id", "1")]),
        ("INIT", [("id", "2")]),
    ]


@pytest.mark.parametrize(
    ("number", "text"),
    [
        ("1.50", "1.50"),
        ("12345678901234567890123.456789", "12345678901234567890123.456789"),
        ("1e3", "1e3"),
        ("42", "42"),
        ("true", "true"),
    ],
)
def test_non_string_values_keep_their_exact_text(number, text):
    raw = canal("INSERT", [{"id": "1", "price": "PLACEHOLDER"}]).replace(
        b'"PLACEHOLDER"', number.encode()
    )
    assert dict(one(raw)["after_image"])["price"] == text


# --- legacy (pre-2022-03-20) meaning ---------------------------------------------------------


def test_legacy_update_old_is_the_new_row():
    row = one(
        canal("UPDATE", [{"id": "1", "name": "before", "note": "n"}], [{"name": "after"}]),
        legacy_swap=True,
    )
    assert row["before_image"] == [("id", "1"), ("name", "before"), ("note", "n")]
    assert row["after_image"] == [("id", "1"), ("name", "after"), ("note", "n")]


def test_legacy_update_without_old_has_no_after_image():
    row = one(canal("UPDATE", [{"id": "1"}]), legacy_swap=True)
    assert row["before_image"] == [("id", "1")] and row["after_image"] is None


def test_legacy_delete_with_rows_in_old():
    rows = decode_message(canal("DELETE", None, [{"id": "1"}, {"id": "2"}]), legacy_swap=True)
    assert [r["before_image"] for r in rows] == [[("id", "1")], [("id", "2")]]
    assert [r["row_index"] for r in rows] == [0, 1]


def test_legacy_insert_row_in_old_or_data():
    assert one(canal("INSERT", None, [{"id": "1"}]), legacy_swap=True)["after_image"] == [
        ("id", "1")
    ]
    assert one(canal("INSERT", [{"id": "2"}]), legacy_swap=True)["after_image"] == [("id", "2")]


# --- fields ----------------------------------------------------------------------------------


def test_gtid_and_digit_strings():
    row = one(
        canal(
            "INSERT",
            [{"id": "1"}],
            gtid="3E11FA47-71CA-11E1-9E33-C80AA9429562:23",
            es="1700000000000",
            id="0",
        )
    )
    assert row["gtid"] == "3E11FA47-71CA-11E1-9E33-C80AA9429562:23"
    assert (row["es_ms"], row["canal_id"]) == (1700000000000, "0")


def test_empty_database_and_table_are_null():
    row = one(canal("QUERY", None, isDdl=True, table="", sql="CREATE DATABASE x"))
    assert row["source_table"] is None and row["is_ddl"] is True


@pytest.mark.parametrize(
    ("type_", "is_ddl"),
    [("ALTER", True), ("TRUNCATE", True), ("DDL", True), ("INSERT", False), ("BOGUS", False)],
)
def test_is_ddl_falls_back_to_the_type_when_absent(type_, is_ddl):
    message = json.loads(canal(type_, [{"id": "1"}]))
    del message["isDdl"]
    assert one(json.dumps(message))["is_ddl"] is is_ddl


def test_unknown_type_is_decoded_for_sql_to_quarantine():
    rows = decode_message(canal("UPSERT", [{"id": "1"}, {"id": "2"}]))
    assert [(r["decode_error"], r["type_code"], r["after_image"]) for r in rows] == [
        (None, "UPSERT", None),
        (None, "UPSERT", None),
    ]


# --- structural errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "reason", "detail_part"),
    [
        (None, "empty_value", "no value"),
        (b"", "empty_value", "no value"),
        (b"\xff\xfe{}", "invalid_utf8", "not UTF-8"),
        (b'{"data":[{"id":"1"}],"type":"INSERT"', "invalid_json", "not valid JSON"),
        (b"not json", "invalid_json", "not valid JSON"),
        (b'{"es": NaN, "type": "INSERT"}', "invalid_json", "not valid JSON"),
        (b"[1, 2]", "not_an_object", "array"),
        (canal(None, [{"id": "1"}]), "missing_required_field", "type is missing"),
        (canal(5, [{"id": "1"}]), "invalid_field_type", "type must be a string"),
        (canal("INSERT", {"id": "1"}), "invalid_field_type", "data must be an array"),
        (canal("INSERT", "[]"), "invalid_field_type", "data must be an array"),
        (canal("UPDATE", [{"id": "1"}], {"id": "0"}), "invalid_field_type", "old must be"),
        (canal("INSERT", [["1"]]), "invalid_field_type", "data[0] must be a row object"),
        (canal("UPDATE", [{"id": "1"}], [None]), "invalid_field_type", "old[0] must be"),
        (
            canal("UPDATE", [{"id": "1"}, {"id": "2"}], [{"id": "0"}]),
            "invalid_field_type",
            "old is misaligned with data: 1 old element(s) for 2 data element(s)",
        ),
        (canal("INSERT", [{"id": "1"}], es=-5), "invalid_field_type", "es must be"),
        (canal("INSERT", [{"id": "1"}], es=1.5e12), "invalid_field_type", "es must be"),
        (canal("INSERT", [{"id": "1"}], es="soon"), "invalid_field_type", "es must be"),
        (canal("INSERT", [{"id": "1"}], ts=True), "invalid_field_type", "ts must be"),
        (canal("INSERT", [{"id": "1"}], id="x1"), "invalid_field_type", "id must be"),
        (canal("INSERT", [{"id": "1"}], isDdl="false"), "invalid_field_type", "isDdl"),
        (canal("INSERT", [{"id": "1"}], pkNames="id"), "invalid_field_type", "pkNames"),
        (canal("INSERT", [{"id": "1"}], mysqlType=["id"]), "invalid_field_type", "mysqlType"),
        (canal("INSERT", [{"id": "1"}], table=3), "invalid_field_type", "table must be"),
    ],
)
def test_structural_errors(raw, reason, detail_part):
    row = one(raw) if raw is not None else decode_message(None)[0]
    assert row["decode_error"] == reason
    assert detail_part in row["decode_error_detail"]
    assert (row["row_index"], row["row_count"]) == (0, 1)
    assert row["type_code"] is None and row["after_image"] is None


# --- the Arrow loop --------------------------------------------------------------------------


def test_decode_batches_repeats_input_columns_per_row():
    values = [canal("INSERT", [{"id": "1"}, {"id": "2"}]), b"junk", canal("DELETE", [{"id": "3"}])]
    batch = pa.record_batch(
        [pa.array([10, 11, 12], pa.int64()), pa.array(values, pa.binary())],
        names=["offset", "value"],
    )
    out = pa.Table.from_batches(list(decode_batches(iter([batch]), keep_value=True)))
    assert out.column_names == ["offset", "value", *(f.name for f in CANAL_FIELDS)]
    assert out.column("offset").to_pylist() == [10, 10, 11, 12]
    assert out.column("value").to_pylist() == [values[0], values[0], values[1], values[2]]
    assert out.column("row_index").to_pylist() == [0, 1, 0, 0]
    assert out.column("decode_error").to_pylist() == [None, None, "invalid_json", None]


def test_a_message_whose_bytes_times_its_rows_pass_2_gib_decodes_every_row():
    """Issue 48: a valid 10,000-row INSERT of about 400 KB failed the batch (and every later
    build) with 'ArrowInvalid: Take operation overflowed binary array capacity': its input
    value was repeated once per row (4 GB). The decoded value is not passed through, so every
    row comes out, beside a record of the same batch."""
    wide = fault_matrix_cases.wide_canal_message()
    assert len(wide) * fault_matrix_cases.WIDE_ROWS > 2**31
    values = [canal("INSERT", [{"id": "1"}]), wide]
    batch = pa.record_batch(
        [pa.array(["t", "t"]), pa.array([10, 11], pa.int64()), pa.array(values, pa.binary())],
        names=["topic", "offset", "value"],
    )
    out = pa.Table.from_batches(list(decode_batches(iter([batch]))))
    assert out.column_names == ["topic", "offset", *(f.name for f in CANAL_FIELDS)]
    assert out.num_rows == 1 + fault_matrix_cases.WIDE_ROWS
    assert set(out.column("decode_error").to_pylist()) == {None}
    assert out.column("offset").to_pylist() == [10] + [11] * fault_matrix_cases.WIDE_ROWS
    images = [dict(image) for image in out.column("after_image").to_pylist()[1:]]
    expected = [
        {"id": str(id_), "note": "w", "amount": str(id_ % 7)}
        for id_ in fault_matrix_cases.wide_rows()
    ]
    assert images == expected


def test_decode_batches_applies_the_swap_of_each_record():
    """One batch, each record with its topic's canal_legacy_swap (NULL = false): a legacy
    DELETE carries its row in old, an open-source one in data."""
    legacy_delete = canal("DELETE", None, [{"id": "9"}])
    batch = pa.record_batch(
        [
            pa.array([legacy_delete, legacy_delete, legacy_delete], pa.binary()),
            pa.array([True, False, None], pa.bool_()),
            pa.array([1, 2, 3], pa.int64()),
        ],
        names=["value", LEGACY_SWAP_COLUMN, "offset"],
    )
    out = pa.Table.from_batches(list(decode_batches(iter([batch]))))
    offsets = out.column("offset").to_pylist()
    images = dict(zip(offsets, out.column("before_image").to_pylist(), strict=True))
    assert images == {1: [("id", "9")], 2: None, 3: None}
    assert out.column(LEGACY_SWAP_COLUMN).to_pylist() == [False, None, True]
    # without the column, every record with the meaning asked for
    plain = batch.select(["value", "offset"])
    legacy = pa.Table.from_batches(list(decode_batches(iter([plain]), legacy_swap=True)))
    assert legacy.column("before_image").to_pylist() == [[("id", "9")]] * 3


def test_output_schema_ddl():
    ddl = output_schema_ddl("offset bigint, value binary")
    assert ddl.startswith("offset bigint, decode_error string, decode_error_detail string, ")
    assert output_schema_ddl("value binary", keep_value=True).startswith("value binary, decode")
    assert "row_index int" in ddl and "before_image map<string,string>" in ddl


def test_type_maps_equal_as_python_values_keep_their_own_text():
    """Type maps are cached by their items: "1", 1 and 1.0 are different items, and true is
    refused even after a map holding 1."""
    values = [
        canal("INSERT", [{"id": "1"}], mysqlType={"id": sql_type})
        for sql_type in (1, "1", 1.0, True, 1)
    ]
    batch = pa.RecordBatch.from_pydict({"value": values})
    (out,) = list(decode_batches(iter([batch])))
    assert out.column("decode_error").to_pylist() == [None, None, None, "invalid_field_type", None]
    assert out.column("column_types").to_pylist() == [
        [("id", "1")],
        [("id", "1")],
        [("id", "1.0")],
        None,
        [("id", "1")],
    ]
