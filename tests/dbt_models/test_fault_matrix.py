"""No single record can fail a build (issue 19): the bad-input matrix of
fault_matrix_cases.py, ingested with everything else of the session's first `dbt build`.

Every bad input of every format (each format's from its cases file, ``fault_matrix``:
tests/dbt_models/conformance.py) must be one silver.quarantine row with its reason, a
precise detail and its raw bytes; the good records between them must reach gold with their
values exactly as sent; and the build itself must succeed (fixture ``built_lake`` fails the
test session otherwise).
"""

from __future__ import annotations

from collections import Counter

import pytest

from cdc_lakehouse.formats import NAMES
from tests.dbt_models import conformance
from tests.dbt_models import fault_matrix_cases as cases
from tests.dbt_models.helpers import gold_rows

pytestmark = pytest.mark.dbt

FAULTS = cases.faults()
FORMATS = cases.formats_in_matrix()


@pytest.fixture(scope="module")
def quarantined(spark, built_lake) -> dict[tuple[str, int], dict]:
    """silver.quarantine rows of the matrix topics by (topic, offset)."""
    rows = spark.sql(
        "select kafka_topic, kafka_partition, kafka_offset, source_format, reason, "
        "reason_detail, raw_value from silver.quarantine "
        f"where kafka_topic like '{cases.PREFIX}.%' and kafka_topic != '{cases.UNREGISTERED_TOPIC}'"
    ).collect()
    return {(r["kafka_topic"], r["kafka_offset"]): r.asDict() for r in rows}


def test_the_matrix_covers_every_format_and_kind():
    per_format = Counter(topic for topic, _offset, _fault in FAULTS)
    assert len(FAULTS) >= 60
    assert set(per_format) == {cases.topic(f) for f in FORMATS}
    # every format is in the matrix, or its cases file opts out (conformance.py)
    assert sorted(NAMES) == sorted(FORMATS + conformance.opted_out("fault_matrix"))
    reasons = {fault.reason for _t, _o, fault in FAULTS}
    assert {
        "empty_value",
        "invalid_utf8",
        "invalid_json",
        "duplicate_key",
        "not_an_object",
        "unknown_op",
        "missing_key_column",
        "invalid_field_type",
        "invalid_field_value",
        "avro_schema_mismatch",
        "invalid_avro",
        "missing_table_metadata",
    } <= reasons


@pytest.mark.parametrize(
    ("topic", "offset", "fault"),
    [pytest.param(*case, id=f"{case[0].split('.', 1)[1]}: {case[2].name}") for case in FAULTS],
)
def test_bad_input_is_quarantined_with_its_reason_and_bytes(quarantined, topic, offset, fault):
    row = quarantined.get((topic, offset))
    assert row is not None, f"{fault.name}: not in silver.quarantine"
    assert (row["reason"], row["kafka_partition"]) == (fault.reason, 0), row["reason_detail"]
    if fault.detail is not None:
        assert fault.detail in (row["reason_detail"] or ""), row["reason_detail"]
    assert row["raw_value"] == (None if fault.value is None else bytearray(fault.value))


def test_nothing_else_of_the_matrix_is_quarantined(quarantined):
    assert set(quarantined) == {(topic, offset) for topic, offset, _fault in FAULTS}


@pytest.mark.parametrize("format_", conformance.formats_for("fault_matrix"))
def test_good_records_beside_bad_ones_reach_gold_exactly(spark, built_lake, format_):
    got = gold_rows(spark, f"source_format = '{format_}' and lower(source_table) = '{format_}'")
    expected = cases.expected_gold(format_)
    assert set(got) == set(expected)
    for row_key, values in expected.items():
        assert got[row_key] == values, row_key


def test_a_topic_missing_from_the_registry_is_quarantined(spark, built_lake):
    rows = spark.sql(
        "select source_format, reason, reason_detail from silver.quarantine "
        f"where kafka_topic = '{cases.UNREGISTERED_TOPIC}'"
    ).collect()
    assert [(r["source_format"], r["reason"]) for r in rows] == [(None, "unregistered_topic")]
    assert cases.UNREGISTERED_TOPIC in rows[0]["reason_detail"]
