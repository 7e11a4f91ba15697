"""Generation writes (cdc_lakehouse.generations) on scratch tables of the session's lake: a
reader in another session of the same Spark application, querying in a loop while partitions
are rewritten, added and emptied, or while an unpartitioned table is replaced whole, only ever
sees a whole state, never an error; the data the switches replaced goes once its grace period
is over. (The dbt models written this way:
tests/dbt_models/test_simulated_readers_during_build.py; a killed write:
tests/faults/test_kill_and_rerun.py.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from cdc_lakehouse.generations import (
    GENERATIONS_DIR,
    remove_dropped_table_dir,
    remove_unreferenced_generations,
    switch_table,
    write_generation,
)

WRITES = 6


def state(spark: Any) -> tuple[int, int]:
    return state_of(spark, "faults_g.t")


def state_of(spark: Any, table: str) -> tuple[int, int]:
    row = spark.sql(f"select count(*) as n, coalesce(sum(id), 0) as s from {table}").collect()[0]
    return (row["n"], row["s"])


def table_location(spark: Any, table: str) -> Path:
    return Path(
        spark.sql(f"describe table extended {table}")
        .where("col_name = 'Location'")
        .collect()[0]["data_type"]
        .removeprefix("file:")
    )


Observed = list[tuple[int, int] | BaseException]


@contextmanager
def reading_in_a_loop(read: Callable[[], tuple[int, int]]) -> Iterator[Observed]:
    """``read`` called over and over in a thread for the duration of the block; yields the list
    of what each call returned, or raised (what a reader would notice)."""
    observed: Observed = []
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                observed.append(read())
            except Exception as exc:
                observed.append(exc)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield observed
    finally:
        stop.set()
        thread.join(timeout=120)


def assert_whole_states(observed: Observed, states: list[tuple[int, int]]) -> None:
    """Every read succeeded and returned one of ``states`` (the state before each write and
    after it), every write changed the state, and the reads saw at least three of them."""
    errors = [o for o in observed if isinstance(o, BaseException)]
    assert not errors, errors[:3]
    assert len(set(states)) == WRITES + 1  # every write changed what a reader sees
    unexpected = [o for o in observed if o not in states]
    assert not unexpected, (unexpected[:3], states)
    assert len(set(observed)) >= 3, (len(observed), set(observed))  # it read during the writes


def test_a_reader_sees_one_whole_state_or_the_next_while_generations_are_switched(
    spark: Any,
) -> None:
    spark.sql("create database if not exists faults_g")
    spark.sql("drop table if exists faults_g.t")
    spark.sql(
        "create table faults_g.t using parquet partitioned by (b) as "
        "select id, cast(id % 8 as int) as b from range(40000)"
    )
    reader = spark.newSession()  # its own relation cache, like another client of the metastore
    states = [state(reader)]
    with reading_in_a_loop(lambda: state(reader)) as observed:
        for write in range(1, WRITES + 1):
            # every write rewrites 4 of the partitions, adds one and empties another
            spark.sql(
                f"select id * {write + 1} as id, cast(id % 4 + {write % 2} * 4 as int) as b "
                f"from range({20000 + write * 1000}) union all "
                f"select id, cast({7 + write} as int) as b from range({write * 10})"
            ).createOrReplaceTempView("faults_g_source")
            emptied = [{"b": "4" if write % 2 == 0 else "0"}]  # an existing, unwritten one
            switch = write_generation(
                spark, "faults_g_source", "faults_g", "t", emptied=emptied, grace_s=600
            )
            assert len(switch.written) == 5 and switch.added == 1, switch
            states.append(state(spark))
            time.sleep(0.2)
    assert_whole_states(observed, states)
    # the reader's session was never refreshed: a new query sees the last state
    assert state(reader) == states[-1]

    # the replaced data is kept during the grace period, removed after it
    table_dir = table_location(spark, "faults_g.t")
    assert len(list((table_dir / GENERATIONS_DIR).iterdir())) == WRITES
    assert (table_dir / "b=1").is_dir()  # where the first CREATE TABLE AS SELECT wrote
    spark.sql("select id + 1 as id, 1 as b from range(10)").createOrReplaceTempView(
        "faults_g_source"
    )
    switch = write_generation(spark, "faults_g_source", "faults_g", "t", grace_s=0)
    assert (table_dir / "b=1") in switch.removed
    remove_unreferenced_generations(spark, grace_s=0)  # what this last switch replaced
    partition_dirs = {p.parent for p in table_dir.glob("**/*.parquet")}
    locations = {
        Path(row["data_type"].removeprefix("file:"))
        for spec in spark.sql("show partitions faults_g.t").collect()
        for row in spark.sql(
            f"describe formatted faults_g.t partition ({spec[0].replace('=', ' = ')})"
        ).collect()
        if row["col_name"] == "Location"
    }
    assert partition_dirs <= locations  # only referenced data is left
    assert state(spark) == state(reader)
    spark.catalog.dropTempView("faults_g_source")
    spark.sql("drop database faults_g cascade")


def fresh_state(reader: Any) -> tuple[int, int]:
    """The reader's query as a session with a shared metastore makes it: the table's relation
    resolved anew from the metastore (``spark.sql.filesourceTableRelationCacheSize=0``, a
    static setting of the application, hence the explicit refresh in this test session)."""
    reader.catalog.refreshTable("faults_t.t")
    return state_of(reader, "faults_t.t")


def test_a_reader_sees_one_whole_state_or_the_next_while_a_table_is_switched_whole(
    spark: Any,
) -> None:
    """What dbt's table models (silver.schema_changes, ...) do with generation writes on."""
    spark.sql("create database if not exists faults_t")
    spark.sql("drop table if exists faults_t.t")
    spark.sql("create table faults_t.t using parquet as select id from range(30000)")
    table_dir = table_location(spark, "faults_t.t")
    reader = spark.newSession()
    states = [state_of(reader, "faults_t.t")]
    with reading_in_a_loop(lambda: fresh_state(reader)) as observed:
        for write in range(1, WRITES + 1):
            rows = f"select id * {write + 1} as id from range({30000 + write * 1000})"
            spark.sql(rows).createOrReplaceTempView("faults_t_source")
            switch = switch_table(spark, "faults_t_source", "faults_t", "t", grace_s=600)
            assert switch.switched and switch.generation is not None, switch
            assert table_location(spark, "faults_t.t") == switch.generation
            states.append(state_of(spark, "faults_t.t"))
            time.sleep(0.2)
    assert_whole_states(observed, states)
    assert fresh_state(reader) == states[-1]
    assert len(list((table_dir / GENERATIONS_DIR).iterdir())) == WRITES
    assert list(table_dir.glob("*.parquet"))  # the first CREATE's files, within their grace

    remove_unreferenced_generations(spark, grace_s=0)
    assert {p.parent for p in table_dir.glob("**/*.parquet")} == {switch.generation}
    assert state_of(spark, "faults_t.t") == states[-1]

    # dropped and created again (dbt-spark's table materialization with generation writes off,
    # e.g. the next build on the embedded metastore): dropping removed only the generation
    spark.sql("drop table faults_t.t")
    assert (table_dir / GENERATIONS_DIR).is_dir()
    assert remove_dropped_table_dir(spark, "faults_t", "t") == table_dir
    spark.sql("create table faults_t.t using parquet as select id from range(30000)")
    assert table_location(spark, "faults_t.t") == table_dir
    assert remove_dropped_table_dir(spark, "faults_t", "t") is None  # it exists: left alone
    spark.sql("select id from range(3)").createOrReplaceTempView("faults_t_source")
    assert switch_table(spark, "faults_t_source", "faults_t", "t", grace_s=600).switched

    # new columns: the table is dropped (its directory too) for the caller to create again
    spark.sql("select id, 'x' as tag from range(5)").createOrReplaceTempView("faults_t_source")
    switch = switch_table(spark, "faults_t_source", "faults_t", "t", grace_s=600)
    assert not switch.switched
    assert not spark.catalog.tableExists("faults_t.t") and not table_dir.exists()
    spark.catalog.dropTempView("faults_t_source")
    spark.sql("drop database faults_t cascade")
