"""The generic data test column_checks (tests/dbt/generic/column_checks.sql): one query finds
every broken column rule of a model - NULLs, values not accepted, duplicated keys - and passes
rows that break none. Run through dbt (`dbt show --inline` calling the test's macro) on a real
Spark table."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

PROBE = "column_checks_probe.changes"

CHECKS = (
    "not_null=['id', 'op'], accepted_values={'op': ['insert', 'update'], 'kind': [1, 2]}, "
    "unique=[['id'], ['id', 'op']]"
)


@pytest.fixture()
def probe_table(spark) -> Iterator[Callable[[str], None]]:
    """Create ``column_checks_probe.changes`` from a VALUES list; dropped afterwards."""

    def create(values: str) -> None:
        spark.sql(f"drop table if exists {PROBE}")
        spark.sql(
            f"create table {PROBE} using parquet as "
            f"select * from values {values} as t(id, op, kind)"
        )

    spark.sql("create database if not exists column_checks_probe")
    yield create
    spark.sql("drop database if exists column_checks_probe cascade")


def _broken_rules(run_dbt: Callable[..., Any]) -> list[tuple[str, str, int, str | None]]:
    result = run_dbt(
        "show",
        "--inline",
        f"{{{{ test_column_checks(model='{PROBE}', {CHECKS}) }}}}",
        "--limit",
        "50",
    )
    (node,) = result.result.results
    return sorted(
        (row["check_name"], row["column_name"], int(row["failing_rows"]), row["example"])
        for row in node.agate_table.rows
    )


def test_rows_that_break_no_rule_pass(run_dbt, probe_table) -> None:
    probe_table("(1, 'insert', 1), (2, 'update', 2), (3, 'update', null)")
    assert _broken_rules(run_dbt) == []


def test_each_broken_rule_is_one_row_with_its_count_and_an_example(run_dbt, probe_table) -> None:
    probe_table(
        "(1, 'insert', 1), (1, 'insert', 2), (2, 'delete', 1), (3, 'merge', 3),"
        " (null, 'update', 1), (4, null, 1)"
    )
    assert _broken_rules(run_dbt) == [
        ("accepted values", "kind", 1, "3"),
        # a NULL is not checked against the accepted values (as in dbt's accepted_values)
        ("accepted values", "op", 2, "delete"),
        ("not null", "id", 1, None),
        ("not null", "op", 1, None),
        ("unique", "id", 1, '{"id":1}'),
        ("unique", "id, op", 1, '{"id":1,"op":"insert"}'),
    ]


def test_without_a_rule_it_stops_at_compile_time(run_dbt, probe_table, capsys) -> None:
    probe_table("(1, 'insert', 1)")
    result = run_dbt(
        "show",
        "--inline",
        f"{{{{ test_column_checks(model='{PROBE}') }}}}",
        expect_success=False,
    )
    assert not result.success
    assert (
        f"column_checks on {PROBE}: give not_null, accepted_values or unique"
        in capsys.readouterr().out
    )
