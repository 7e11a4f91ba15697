"""Completion by a later record (issue 19): Qlik data messages whose metadata message arrives
in a later ingest batch (qlik_late_metadata_cases.py) are decoded in the incremental run of
that batch, exactly as a full refresh decodes them.

Batch A is in the session's first build (test_qlik_pipeline.py checks that the waiting data
messages are in quarantine then); the metadata messages arrive in the two incremental batches
of the ``simulated_increments`` fixture. That every staging, silver and gold table then equals
the full refresh is checked for the whole lake by test_simulated_gold.py.
"""

from __future__ import annotations

import pytest

from tests.dbt_models import qlik_late_metadata_cases as late

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
