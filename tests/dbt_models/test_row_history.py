"""gold.row_history (SCD type 2), gold.current_rows_with_deletes and silver.table_truncates.

Built once by the ``built_lake`` fixture from the sample dump and every ``*_cases.py`` dump.
Each rule of row_history is pinned with a few row identities of those cases (their full
version lists); truncates between changes come from ``history_cases.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from cdc_lakehouse.formats import NAMES
from tests.dbt_models import conformance, gold_rules_cases, history_cases

Values = dict[str, str | None]

DW_ORDERS = (
    "source_format = 'dataworks_json' and source_database = 'edge_db' and source_table = 'orders'"
)
CANAL_ITEMS = (
    "source_format = 'dts_canal_json' and source_database = 'canal_edge' and source_table = 'items'"
)
AVRO_ORDERS = (
    "source_format = 'dts_avro' and source_database = 'edge' and source_table = 'dts_orders'"
)
SP_ORDERS = (
    "source_format = 'dts_shareplex_json' and source_schema = 'EDGE' and source_table = 'ORDERS'"
)
QLIK_ORDERS = "source_database = 'edge_task' and source_schema = 'EDGE' and source_table = 'ORDERS'"
TUPLE_ACCOUNTS = "source_format = 'datahub_tuple' and source_table = 'accounts'"

FORMATS = set(NAMES)


def versions(spark, where: str) -> dict[str, list[tuple[str, bool, Values]]]:
    """row_key -> the row's versions in order, each (op, is_deleted, row_values)."""
    rows = spark.sql(
        "select row_key, op, is_deleted, row_values from gold.row_history "
        f"where {where} order by row_key, version_number"
    ).collect()
    out: dict[str, list[tuple[str, bool, Values]]] = {}
    for r in rows:
        out.setdefault(r["row_key"], []).append((r["op"], r["is_deleted"], dict(r["row_values"])))
    return out


def version_rows(spark, where: str, row_key: str) -> list[Any]:
    """Every column of one row identity's versions, in order (times as UTC text)."""
    return spark.sql(
        "select *, cast(valid_from as string) as valid_from_text, "
        "cast(valid_to as string) as valid_to_text from gold.row_history "
        f"where {where} and row_key = '{row_key}' order by version_number"
    ).collect()


def dw(id_: int, status: str) -> Values:
    return {"id": str(id_), "status": status}


def canal_item(id_: int, name: str, note: str | None = None) -> Values:
    return {"id": str(id_), "name": name, "note": note}


def sp(id_: str, status: str, amount: str = "1.00", note: str | None = "n") -> Values:
    return {"ID": id_, "STATUS": status, "AMOUNT": amount, "NOTE": note}


def avro_order(id_: int, status: str, amount: str = "1.00", note: str | None = "n") -> Values:
    return {"id": str(id_), "status": status, "amount": amount, "note": note}


def test_versions_follow_the_ordering_key_not_arrival(spark, built_lake):
    dw_rows = versions(spark, DW_ORDERS)
    # id 2: the update (seq 205) arrives before the insert (seq 201).
    assert dw_rows['{"id":"2"}'] == [
        ("insert", False, dw(2, "new")),
        ("update", False, dw(2, "shipped")),
    ]
    # id 3: insert 300, delete 302, the update 301 delivered last takes its place in between:
    # it cannot bring the row back. The deleted version keeps the delete's before image.
    assert dw_rows['{"id":"3"}'] == [
        ("insert", False, dw(3, "new")),
        ("update", False, dw(3, "late")),
        ("delete", True, dw(3, "new")),
    ]
    canal_rows = versions(spark, CANAL_ITEMS)
    assert canal_rows['{"id":"6"}'] == [
        ("insert", False, canal_item(6, "old")),
        ("update", False, canal_item(6, "new")),
    ]
    # id 8: insert and update in the same millisecond: the Kafka position breaks the tie.
    assert canal_rows['{"id":"8"}'] == [
        ("insert", False, canal_item(8, "first")),
        ("update", False, canal_item(8, "second")),
    ]
    # DTS Avro id 7: a full-load row with a later sourceTimestamp still comes first.
    assert versions(spark, AVRO_ORDERS)['{"id":"7"}'] == [
        ("snapshot", False, avro_order(7, "snap")),
        ("update", False, avro_order(7, "live")),
    ]


def test_duplicate_deliveries_give_no_extra_version(spark, built_lake):
    dw_row = versions(spark, DW_ORDERS)['{"id":"1"}']
    assert [(op, deleted) for op, deleted, _ in dw_row] == [("insert", False)]
    canal_rows = versions(spark, CANAL_ITEMS)
    assert canal_rows['{"id":"4"}'] == [("insert", False, canal_item(4, "d"))]
    assert canal_rows['{"id":"5"}'] == [("insert", False, canal_item(5, "e", "1.50"))]
    assert versions(spark, SP_ORDERS)['{"ID":"1"}'] == [
        ("insert", False, sp("1", "new", "12345678901234567890123.456789", None))
    ]
    qlik = versions(spark, f"source_format = 'qlik_json' and {QLIK_ORDERS}")['{"ID":"1"}']
    assert [op for op, _, _ in qlik] == ["insert", "update"]
    # The sample's DataWorks update of row id 15, sent both split and as one message (the
    # documented two forms of one change), is one version.
    pkset = versions(spark, "source_table = 'pkset_test_no_pk'")['{"#alibaba_rds_row_id#":"15"}']
    assert [(op, values["sex"]) for op, _, values in pkset] == [
        ("insert", "man"),
        ("update", "woman"),
        ("delete", "woman"),
    ]


def test_update_before_half_without_its_after_half_is_not_a_version(spark, built_lake):
    assert versions(spark, DW_ORDERS)['{"id":"5"}'] == [("insert", False, dw(5, "five"))]
    assert versions(spark, TUPLE_ACCOUNTS)['{"id":"5"}'] == [("insert", False, dw(5, "five"))]


def test_delete_then_reinsert(spark, built_lake):
    assert versions(spark, DW_ORDERS)['{"id":"6"}'] == [
        ("insert", False, dw(6, "first")),
        ("delete", True, dw(6, "first")),
        ("insert", False, dw(6, "again")),
    ]


@pytest.mark.parametrize(
    ("where", "old_key", "new_key", "old_values", "new_values"),
    [
        (DW_ORDERS, '{"id":"4"}', '{"id":"40"}', dw(4, "new"), dw(40, "moved")),
        (
            f"source_format = 'qlik_json' and {QLIK_ORDERS}",
            '{"ID":"5"}',
            '{"ID":"50"}',
            sp("5", "new"),
            sp("50", "moved"),
        ),
        (
            CANAL_ITEMS,
            '{"id":"11"}',
            '{"id":"110"}',
            canal_item(11, "k"),
            canal_item(110, "k"),
        ),
    ],
)
def test_key_move_ends_the_old_key_and_starts_the_new_one(
    spark, built_lake, where, old_key, new_key, old_values, new_values
):
    old = version_rows(spark, where, old_key)
    new = version_rows(spark, where, new_key)
    assert [(r["op"], r["change_kind"], r["is_deleted"], dict(r["row_values"])) for r in old] == [
        ("insert", "change", False, old_values),
        ("update", "key_move", True, old_values),
    ]
    assert old[-1]["moved_to_row_key"] == new_key
    assert [(r["op"], r["is_deleted"], dict(r["row_values"])) for r in new] == [
        ("update", False, new_values)
    ]
    # the old key ends exactly where the new key begins
    assert old[-1]["valid_from_ordering_key"] == new[0]["valid_from_ordering_key"]
    assert old[-1]["event_id"] == new[0]["event_id"]


def test_partial_changes_merge_with_the_previous_version(spark, built_lake):
    sp_rows = versions(spark, SP_ORDERS)
    # upd sends only STATUS (and arrives before the insert): the other columns carry over.
    assert sp_rows['{"ID":"2"}'] == [
        ("insert", False, sp("2", "new", "2.00", "n2")),
        ("update", False, sp("2", "shipped", "2.00", "n2")),
    ]
    # three changes of one transaction, ordered by seq: each partial builds on the previous.
    assert sp_rows['{"ID":"5"}'] == [
        ("insert", False, sp("5", "a")),
        ("update", False, sp("5", "b")),
        ("update", False, sp("5", "c")),
    ]
    # a provided NULL sets NULL.
    assert sp_rows['{"ID":"7"}'] == [
        ("insert", False, sp("7", "new")),
        ("update", False, sp("7", "new", note=None)),
    ]
    # a partial delete (key only) keeps the merged row as it was when deleted.
    assert sp_rows['{"ID":"3"}'] == [
        ("insert", False, sp("3", "new")),
        ("update", False, sp("3", "late")),
        ("delete", True, sp("3", "late")),
    ]
    avro_rows = versions(spark, AVRO_ORDERS)
    # EmptyObject NONE: amount and note not provided.
    assert avro_rows['{"id":"5"}'] == [
        ("insert", False, avro_order(5, "new", "5.00", "n5")),
        ("update", False, avro_order(5, "paid", "5.00", "n5")),
    ]
    # the key column is NONE in the after image: the before image states it.
    assert avro_rows['{"id":"9"}'] == [
        ("insert", False, avro_order(9, "new", "9.00", "n9")),
        ("update", False, avro_order(9, "nine", "9.00", "n9")),
    ]
    # Qlik Avro columnMask 0B: AMOUNT not provided -> kept from the insert.
    qlik = versions(spark, f"source_format = 'qlik_avro' and {QLIK_ORDERS}")['{"ID":"1"}']
    assert qlik == [
        ("insert", False, {"ID": "1", "STATUS": "new", "AMOUNT": "10.00", "NOTE": "a"}),
        ("update", False, {"ID": "1", "STATUS": "paid", "AMOUNT": "10.00", "NOTE": "b"}),
    ]


def test_partial_key_move_carries_the_old_key_values(spark, built_lake):
    sp_rows = versions(spark, SP_ORDERS)
    # upd with data {"ID": "40"} and key {"ID": "4"}: the new key starts from row 4.
    assert sp_rows['{"ID":"4"}'] == [
        ("insert", False, sp("4", "new")),
        ("update", True, sp("4", "new")),
    ]
    assert sp_rows['{"ID":"40"}'] == [("update", False, sp("40", "new"))]
    # split UPDATE BEFORE / UPDATE AFTER: the before half is no version of its own.
    assert sp_rows['{"ID":"8"}'] == [
        ("insert", False, sp("8", "new")),
        ("update", True, sp("8", "new")),
    ]
    assert sp_rows['{"ID":"80"}'] == [("update", False, sp("80", "moved"))]


def test_table_truncates_finds_every_format_truncate(spark, built_lake):
    """The truncates of every format's cases file (``truncates``, tests/dbt_models/
    conformance.py) and of the shared truncate cases, each placed (an ordering key)."""
    rows = spark.sql(
        "select source_format, source_database, source_schema, source_table, ddl_op, "
        "ordering_key is not null as placed from silver.table_truncates "
        "where kafka_topic not like 'sim.%'"
    ).collect()
    given = [
        (format_name, truncate)
        for format_name, truncates in conformance.provided("truncates").items()
        for truncate in truncates
    ]
    given += history_cases.TRUNCATES + gold_rules_cases.TRUNCATES
    expected = [(f, t.database, t.schema, t.table, t.ddl_op, True) for f, t in given]
    assert sorted((tuple(r) for r in rows), key=repr) == sorted(expected, key=repr)


def test_truncate_ends_rows_live_before_it(spark, built_lake):
    hist = versions(
        spark,
        "source_format = 'dataworks_json' and source_database = 'hist_db'"
        " and source_table = 'hist_orders'",
    )
    assert hist == {
        '{"id":"1"}': [
            ("insert", False, dw(1, "new")),
            ("update", False, dw(1, "paid")),
            ("truncate", True, dw(1, "paid")),
            ("insert", False, dw(1, "again")),
        ],
        # deleted before the truncate: no truncate version
        '{"id":"2"}': [("insert", False, dw(2, "new")), ("delete", True, dw(2, "new"))],
        # inserted after the truncate (delivered before it): untouched
        '{"id":"3"}': [("insert", False, dw(3, "after"))],
        # its update (older than the truncate) is delivered after the truncate
        '{"id":"4"}': [
            ("insert", False, dw(4, "new")),
            ("update", False, dw(4, "late")),
            ("truncate", True, dw(4, "late")),
        ],
    }
    other = versions(spark, "source_database = 'hist_db' and source_table = 'hist_other'")
    assert other == {
        '{"id":"1"}': [("insert", False, dw(1, "x")), ("truncate", True, dw(1, "x"))],
        '{"id":"2"}': [("insert", False, dw(2, "y"))],
    }
    items = versions(spark, "source_format = 'dts_avro' and source_table = 'hist_items'")

    def item(id_: int, status: str, amount: str = "1.00") -> Values:
        return {"id": str(id_), "status": status, "amount": amount}

    assert items == {
        '{"id":"1"}': [
            ("insert", False, item(1, "new")),
            ("truncate", True, item(1, "new")),
            ("insert", False, item(1, "again")),
        ],
        # the truncate version keeps the row merged from a partial update
        '{"id":"2"}': [
            ("insert", False, item(2, "new", "2.00")),
            ("update", False, item(2, "paid", "2.00")),
            ("truncate", True, item(2, "paid", "2.00")),
        ],
        # a full-load row orders before every change (DTS load rank), so before the truncate
        '{"id":"3"}': [
            ("snapshot", False, item(3, "loaded")),
            ("truncate", True, item(3, "loaded")),
        ],
    }
    rows = versions(spark, "source_database = 'hist_canal' and source_table = 'hist_rows'")
    assert rows == {
        '{"id":"1"}': [
            ("insert", False, {"id": "1", "name": "a"}),
            ("update", False, {"id": "1", "name": "a2"}),
            ("truncate", True, {"id": "1", "name": "a2"}),
            ("insert", False, {"id": "1", "name": "again"}),
        ],
        '{"id":"2"}': [
            ("insert", False, {"id": "2", "name": "b"}),
            ("delete", True, {"id": "2", "name": "b"}),
        ],
    }
    # Shareplex TRUNCATE (scn 1200) after K 1's insert (scn 99) and upd (scn 1000).
    nums = versions(spark, "source_format = 'dts_shareplex_json' and source_table = 'NUMS'")
    assert nums == {
        '{"K":"1"}': [
            ("insert", False, {"K": "1", "V": "old"}),
            ("update", False, {"K": "1", "V": "new"}),
            ("truncate", True, {"K": "1", "V": "new"}),
        ]
    }


def test_valid_to_is_the_next_version(spark, built_lake):
    rows = version_rows(
        spark,
        f"source_table = 'hist_orders' and source_database = '{history_cases.DATAWORKS_DB}'",
        '{"id":"1"}',
    )
    # eventTime = 2024-03-09 16:00:00 UTC + seq seconds
    assert [(r["valid_from_text"], r["valid_to_text"]) for r in rows] == [
        ("2024-03-09 16:01:40", "2024-03-09 16:01:50"),
        ("2024-03-09 16:01:50", "2024-03-09 16:02:00"),
        ("2024-03-09 16:02:00", "2024-03-09 16:02:10"),
        ("2024-03-09 16:02:10", None),
    ]
    assert [r["valid_to_ordering_key"] for r in rows[:-1]] == [
        r["valid_from_ordering_key"] for r in rows[1:]
    ]
    assert [r["is_current"] for r in rows] == [False, False, False, True]
    assert [r["version_number"] for r in rows] == [1, 2, 3, 4]


def test_current_versions_equal_current_rows_for_tables_without_truncates(spark, built_lake):
    # Both read gold.int_row_versions: this holds for the simulated histories (database shop)
    # too, whose partial updates move keys in chains.
    not_truncated = (
        "not exists (select 1 from silver.table_truncates t "
        "where t.source_format = g.source_format and t.source_database <=> g.source_database "
        "and t.source_schema <=> g.source_schema and t.source_table = g.source_table)"
    )
    identity = "source_format, source_database, source_schema, source_table, row_key"
    history = spark.sql(
        f"select {identity}, row_values from gold.row_history g "
        f"where is_current and not is_deleted and {not_truncated}"
    ).collect()
    current = spark.sql(
        f"select {identity}, row_values from gold.current_rows g where {not_truncated}"
    ).collect()

    def by_identity(rows: list[Any]) -> dict[tuple, Values]:
        return {tuple(r)[:5]: dict(r["row_values"]) for r in rows}

    assert by_identity(history) == by_identity(current)
    assert {r["source_format"] for r in current} == FORMATS


def test_soft_delete_view_keeps_deleted_rows(spark, built_lake):
    rows = spark.sql(
        "select row_key, row_values, is_deleted, cast(deleted_at as string) as deleted_at, "
        "deleted_ordering_key, last_ordering_key, deleted_by, moved_to_row_key "
        f"from gold.current_rows_with_deletes where {DW_ORDERS}"
    ).collect()
    by_key = {r["row_key"]: r for r in rows}
    assert set(by_key) == {'{"id":"1"}', '{"id":"2"}', '{"id":"3"}', '{"id":"4"}',
                           '{"id":"40"}', '{"id":"5"}', '{"id":"6"}'}  # fmt: skip
    deleted = {k: r for k, r in by_key.items() if r["is_deleted"]}
    assert {k: (r["deleted_by"], r["moved_to_row_key"]) for k, r in deleted.items()} == {
        '{"id":"3"}': ("delete", None),
        '{"id":"4"}': ("key_move", '{"id":"40"}'),
    }
    # eventTime 1700000000000 ms
    assert {r["deleted_at"] for r in deleted.values()} == {"2023-11-14 22:13:20"}
    assert dict(deleted['{"id":"3"}']["row_values"]) == dw(3, "new")
    for r in rows:
        if r["is_deleted"]:
            assert r["deleted_ordering_key"] == r["last_ordering_key"]
        else:
            assert (r["deleted_at"], r["deleted_ordering_key"], r["deleted_by"]) == (None,) * 3
    # a truncated row: deleted_at is the truncate's event time
    truncated = spark.sql(
        "select is_deleted, deleted_by, cast(deleted_at as string) as deleted_at "
        "from gold.current_rows_with_deletes "
        "where source_table = 'hist_orders' and row_key = '{\"id\":\"4\"}'"
    ).collect()
    assert [tuple(r) for r in truncated] == [(True, "truncate", "2024-03-09 16:02:00")]
    # one row per identity of row_history; its live rows are row_history's current live ones
    counts = spark.sql(
        "select (select count(*) from gold.current_rows_with_deletes) as view_rows, "
        "(select count(*) from (select distinct source_format, source_database, source_schema, "
        "source_table, row_key from gold.row_history)) as identities, "
        "(select count(*) from gold.current_rows_with_deletes where not is_deleted) as live, "
        "(select count(*) from gold.row_history where is_current and not is_deleted) as current"
    ).collect()[0]
    assert counts["view_rows"] == counts["identities"]
    assert counts["live"] == counts["current"]
