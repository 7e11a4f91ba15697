"""Completion by a later record (issue 19): Qlik data messages whose metadata message arrives
in a later ingest batch (formats/qlik/late_metadata_cases.py) are decoded in the incremental run of
that batch, exactly as a full refresh decodes them. The same for the shape of a real Qlik
Replicate JSON stream (issue 48, formats/qlik/real_stream_cases.py): data messages whose envelope id
no metadata message carries, with their metadata in the same, an earlier or a later batch.

Batch A is in the session's first build (formats/qlik/test_pipeline.py checks that the waiting data
messages are in quarantine then); the metadata messages arrive in the two incremental batches
of the ``simulated_increments`` fixture. That every staging, silver and gold table then equals
the full refresh is checked for the whole lake by test_simulated_gold.py.
"""

from __future__ import annotations

import pytest

from tests.dbt_models.formats.qlik import late_metadata_cases as late
from tests.dbt_models.formats.qlik import real_stream_cases as real

pytestmark = pytest.mark.dbt


@pytest.mark.parametrize("build", ["late_metadata", "late_metadata_full_refresh"])
def test_waiting_data_messages_reach_gold_when_their_metadata_arrives(simulated_increments, build):
    state = simulated_increments[build]
    assert state["gold"] == late.EXPECTED


@pytest.mark.parametrize("build", ["late_metadata", "late_metadata_full_refresh"])
def test_only_the_data_message_whose_metadata_never_came_stays_in_quarantine(
    simulated_increments, build
):
    state = simulated_increments[build]
    assert state["quarantined"] == dict.fromkeys(late.WAITING_AT_THE_END, "missing_table_metadata")


@pytest.mark.parametrize("build", ["late_metadata", "late_metadata_full_refresh"])
def test_a_data_message_of_a_new_table_version_is_decoded_with_that_version(
    simulated_increments, build
):
    """The VERSIONS v2 DT arrived when only v1's metadata was known; it names v2's schema id,
    so it waited for v2 (five columns: CHANNEL is ordinal 3 of its masks)."""
    versions = simulated_increments[build]["versions"]
    assert versions[("VERSIONS", '{"ID":"1"}')] == "1"
    assert versions[("VERSIONS", '{"ID":"2"}')] == "2"


@pytest.mark.parametrize("build", ["real_stream", "real_stream_full_refresh"])
def test_a_real_qlik_stream_reaches_gold_whichever_batch_brings_its_metadata(
    simulated_increments, build
):
    """Issue 48: REFRESH data messages whose envelope messageSchemaId no metadata message
    carries (externalSchemaId null) land in gold, matched by their topic's table: metadata in
    the same batch (SAME), an earlier one (EARLIER) or two batches later (LATER); Avro ones
    that embed their writer schema too. Only the Avro data message read by reference, whose
    writer schema is the metadata its envelope id names, stays in quarantine."""
    state = simulated_increments[build]
    assert state["gold"] == real.EXPECTED
    assert state["quarantined"] == dict.fromkeys(real.WAITING_AT_THE_END, "missing_table_metadata")
    changes = state["changes"]
    assert set(changes) == {(table, key) for table, rows in real.EXPECTED.items() for key in rows}
    assert {op for op, _match, _later in changes.values()} == {"REFRESH"}
    assert {match for _op, match, _later in changes.values()} == {"topic"}
    assert {key for key, (_op, _match, later) in changes.items() if later} == real.RESOLVED_LATER


def test_a_real_qlik_stream_builds_incrementally_as_a_full_refresh_does(simulated_increments):
    assert simulated_increments["real_stream"] == simulated_increments["real_stream_full_refresh"]
