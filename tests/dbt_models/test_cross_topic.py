"""Ties across topics (issue 19): one source table delivered through two topics whose
changes share the format ordering fields, the Kafka partition and the offset. Ordering keys
end in the topic, so the changes never tie and the topic that sorts last by name wins.
Events: tests/dbt_models/cross_topic_cases.py, each format's from its cases file
(``cross_topic_case``, tests/dbt_models/conformance.py)."""

from __future__ import annotations

import pytest

from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as cases
from tests.dbt_models.helpers import gold_rows

pytestmark = pytest.mark.dbt

FORMATS = conformance.formats_for("cross_topic_case")


def case_of(source_format: str) -> cases.Case:
    return conformance.provide(source_format, "cross_topic_case")


def where(source_format: str) -> str:
    table = case_of(source_format).source_table
    return f"source_format = '{source_format}' and source_table = '{table}'"


@pytest.mark.parametrize("source_format", FORMATS)
def test_every_change_has_its_own_ordering_key(spark, built_lake, source_format):
    case = case_of(source_format)
    rows = spark.sql(
        "select kafka_topic, kafka_partition, kafka_offset, kafka_row_index, ordering_key "
        f"from silver.change_events where {where(source_format)} order by ordering_key"
    ).collect()
    assert len(rows) == 2 * case.changes
    keys = [r["ordering_key"] for r in rows]
    assert len(set(keys)) == len(keys), keys
    # the same offset of both topics: topic a first, then b (the topic ends the key)
    assert [r["kafka_topic"].rsplit(".", 1)[-1] for r in rows] == ["a", "b"] * case.changes
    for a, b in zip(rows[::2], rows[1::2], strict=True):
        assert (a["kafka_partition"], a["kafka_offset"]) == (
            b["kafka_partition"],
            b["kafka_offset"],
        )
    for r in rows:
        tail = f".{r['kafka_partition']:010d}.{r['kafka_offset']:020d}"
        if case.row_index_in_key:
            tail += f".{r['kafka_row_index']:010d}"
        assert r["ordering_key"].endswith(f"{tail}.{r['kafka_topic']}")


@pytest.mark.parametrize("source_format", FORMATS)
def test_row_history_has_one_version_per_change(spark, built_lake, source_format):
    case = case_of(source_format)
    rows = spark.sql(
        "select row_key, version_number, row_values, valid_from_ordering_key, is_current, "
        f"is_deleted from gold.row_history where {where(source_format)} "
        "order by version_number"
    ).collect()
    assert {r["row_key"] for r in rows} == {f'{{"{case.key}":"1"}}'}
    assert [r["row_values"][case.name] for r in rows] == cases.EXPECTED_VERSIONS
    assert [r["version_number"] for r in rows] == list(range(1, len(rows) + 1))
    from_keys = [r["valid_from_ordering_key"] for r in rows]
    assert from_keys == sorted(set(from_keys))
    assert [r["is_current"] for r in rows] == [False] * (len(rows) - 1) + [True]
    assert not any(r["is_deleted"] for r in rows)


@pytest.mark.parametrize("source_format", FORMATS)
def test_current_row_comes_from_the_topic_last_by_name(spark, built_lake, source_format):
    case = case_of(source_format)
    assert gold_rows(spark, where(source_format)) == {
        f'{{"{case.key}":"1"}}': {case.key: "1", case.name: cases.EXPECTED_CURRENT}
    }
    last = spark.sql(
        f"select last_ordering_key from gold.current_rows where {where(source_format)}"
    ).first()
    assert last["last_ordering_key"].endswith("." + cases.topic(source_format, "b"))
