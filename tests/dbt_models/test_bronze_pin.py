"""One bronze snapshot per build (macros/cdc_bronze_pin.sql): `dbt run` and `dbt build` pin
the newest ingest batch when they start, in the view silver.cdc_bronze_pin, and the bronze
view every decoder reads keeps the batches up to it. A lake pinned before the pin became a
view (a Delta table of one row) gets the view at its next build: the test that checks it is
in test_simulated_lake_on_delta.py, after every test of the built lake (its build is the
simulated increments' first run)."""

from __future__ import annotations

from typing import Any

from tests.dbt_models.helpers import PIN, newest_bronze_batch, pin_state


def test_a_build_pins_the_newest_bronze_batch_and_decoders_read_up_to_it(
    spark: Any, built_lake: Any
) -> None:
    newest = newest_bronze_batch(spark)
    assert pin_state(spark) == ("VIEW", [newest])
    read = spark.sql("select max(ingest_batch_id) from silver.stg_bronze__kafka_records").first()
    assert read[0] == newest
    # the lake as a build before the pin became a view left it: a Delta table of one row
    # (the next build replaces it by the view)
    spark.sql(f"drop view {PIN}")
    spark.sql(
        f"create table {PIN} using delta as select cast({newest} as bigint) as bronze_batch_id,"
        " current_timestamp() as pinned_at, 'before-the-view' as invocation_id"
    )
    assert pin_state(spark) == ("MANAGED", [newest])
