"""Checks every format's edge cases pass the same way, on the session's first build: the
broken records of each format's cases file (``broken_records``,
tests/dbt_models/conformance.py) are quarantined, each as one row with its reason, a detail
and its raw bytes, and nothing else is quarantined where they are. The checks only one format
has stay in its formats/<folder>/test_pipeline.py."""

from __future__ import annotations

import pytest

from tests.dbt_models import conformance

pytestmark = pytest.mark.dbt


def _with_broken_records() -> list[str]:
    """The formats whose cases file has broken records (a format whose cases file lacks
    ``broken_records`` is listed: its test fails with the name it must give)."""
    out = []
    for format_ in conformance.formats_for("broken_records"):
        try:
            if conformance.provide(format_, "broken_records") is None:
                continue
        except conformance.MissingConformanceError:
            pass
        out.append(format_)
    return out


@pytest.mark.parametrize("format_", _with_broken_records())
def test_every_broken_record_is_quarantined_with_its_reason_and_raw_bytes(
    spark, built_lake, format_
):
    broken = conformance.provide(format_, "broken_records")
    rows = spark.sql(
        "select kafka_topic, kafka_partition, kafka_offset, reason, reason_detail, raw_value "
        f"from silver.quarantine where {broken.where} "
        "order by kafka_topic, kafka_partition, kafka_offset"
    ).collect()
    expected = sorted(
        ((line["topic"], line["partition"], line["offset"]), reason)
        for line, reason in broken.records
    )
    got = [((r["kafka_topic"], r["kafka_partition"], r["kafka_offset"]), r["reason"]) for r in rows]
    assert got == expected
    raw = {
        (line["topic"], line["partition"], line["offset"]): conformance.raw_value(line)
        for line, _reason in broken.records
    }
    for row in rows:
        assert row["reason_detail"]
        place = (row["kafka_topic"], row["kafka_partition"], row["kafka_offset"])
        assert (bytes(row["raw_value"]) if row["raw_value"] is not None else None) == raw[place]
