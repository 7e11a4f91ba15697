"""Gold equals the oracle for simulated histories of every format (issue 5, item 7).

Each format with a simulator encoder gets its own history of CDC_SIM_CHANGES row changes
(default 5,000) over three tables (composite key, single key, no key), delivered on three
partitions with duplicate redeliveries and malformed records. Part 1 is in the session's
first `dbt build`; part 2 arrives in two more ingest batches cut out of order across
partitions, each followed by an incremental run; then a full refresh. Gold must equal the
oracle (cdc_lakehouse.tools.simulate.oracle, plain Python) value for value after part 1, after the
incremental runs, and after the full refresh, and the incremental state must equal the full
refresh's exactly.
"""

from __future__ import annotations

import pytest

from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.gold_check import differences
from tests.dbt_models.formats.dts_shareplex import cases as shareplex_cases
from tests.dbt_models.helpers import gold_rows
from tests.dbt_models.simulation import (
    INCREMENTAL_TABLES,
    expected_tables,
    gold_tables,
    staging_tables_resolving_later,
)

FORMATS = sorted(ENCODERS)
LATE_KEYED = "source_schema = 'EDGE' and source_table = 'LATE_KEYED'"


@pytest.mark.parametrize("format_", FORMATS)
def test_part_one_gold_equals_the_oracle(spark, built_lake, simulations, format_):
    simulation = simulations[format_]
    expected = expected_tables(simulation, simulation.first)
    assert sum(len(rows) for rows in expected.values()) > 100
    assert differences(expected, gold_tables(spark, simulation)) == []


@pytest.mark.parametrize("format_", FORMATS)
def test_malformed_records_are_quarantined_and_nothing_else(
    spark, built_lake, simulations, format_
):
    simulation = simulations[format_]
    topics = ", ".join(f"'{topic}'" for topic in simulation.topics)
    quarantined = spark.sql(
        f"select kafka_topic, kafka_partition, kafka_offset from silver.quarantine "
        f"where kafka_topic in ({topics})"
    ).collect()
    expected = {
        (record.topic, record.partition, record.offset)
        for record in simulation.first_delivery.malformed
    }
    assert expected
    assert {tuple(row) for row in quarantined} == expected


@pytest.mark.parametrize("format_", FORMATS)
def test_incremental_gold_equals_the_oracle(simulations, simulated_increments, format_):
    simulation = simulations[format_]
    expected = expected_tables(simulation, simulation.whole)
    assert differences(expected, simulated_increments["incremental"][format_]) == []


@pytest.mark.parametrize("format_", FORMATS)
def test_full_refresh_gold_equals_the_oracle(simulations, simulated_increments, format_):
    simulation = simulations[format_]
    expected = expected_tables(simulation, simulation.whole)
    assert differences(expected, simulated_increments["full_refresh"][format_]) == []


def test_only_tables_marked_resolves_later_hold_rows_resolved_in_a_later_batch(
    spark, simulated_increments
):
    """The incremental queries read a table without resolves_later (its format plug-in)
    only from its batches after their watermark; a row of it resolved in a later batch than
    its own would be missed. After the simulated increments (split updates paired across
    batches, Shareplex keys learned, Qlik metadata delivered late), such rows are only in the
    marked tables, and some are."""
    later = {}
    for table, resolves_later in staging_tables_resolving_later().items():
        later[table] = spark.sql(
            f"select count(*) from silver.{table} where resolved_batch_id != ingest_batch_id"
        ).collect()[0][0]
        if not resolves_later:
            assert later[table] == 0, (table, later[table])
    assert any(later[t] for t, marked in staging_tables_resolving_later().items() if marked)


def test_a_model_with_nothing_new_writes_nothing(simulated_increments):
    """The last incremental build has no record of the formats whose part 2 came in one batch
    (ONE_BATCH_PART_2): their decoding (Python), events and intermediate models write nothing
    (report_nothing_new / no_new_rows, the materialization's "nothing new"), and still equal
    the full refresh (the test below); a format with new records writes its batch."""
    messages = simulated_increments["last_build_messages"]
    for model in (
        "stg_dts_avro__decoded",
        "stg_lindorm__decoded",
        "stg_datahub_tuple__decoded",
        "stg_dts_shareplex__decoded",
        "stg_dts_avro__events",
        "stg_lindorm__events",
        "int_datahub_tuple__events_paired",
        "int_dts_shareplex__events_keyed",
    ):
        assert messages[model] == "nothing new", (model, messages[model])
    assert messages["stg_dts_canal__events"] != "nothing new", messages["stg_dts_canal__events"]


@pytest.mark.parametrize("table", INCREMENTAL_TABLES)
def test_incremental_silver_equals_the_full_refresh(simulated_increments, table):
    """The staging, silver and gold tables written batch by batch hold exactly the rows a full
    refresh computes (split updates completed by a later batch, learned Shareplex keys; in
    gold.int_row_versions tombstones, merge entries and last changes of every row identity):
    the incremental state read at its last commit before the full refresh (VERSION AS OF)."""
    found = simulated_increments["table_differences"][table]
    assert found["rows"] > 0
    assert found == {"rows": found["rows"], "only_incremental": 0, "only_full_refresh": 0}


def test_inserts_keyed_by_a_key_learned_in_a_later_batch(spark, simulated_increments):
    """Shareplex inserts carry no key: a table whose first batch holds only inserts is keyed
    by all columns until its upd / del of a later batch teach the key. The incremental run
    re-keys those inserts without leaving their all-columns rows behind (int_row_versions equal
    the full refresh's: test_incremental_silver_equals_the_full_refresh); gold holds the
    one live row."""
    assert simulated_increments["late_keyed"] == shareplex_cases.EXPECTED_LATE_KEYED
    assert gold_rows(spark, LATE_KEYED) == shareplex_cases.EXPECTED_LATE_KEYED
