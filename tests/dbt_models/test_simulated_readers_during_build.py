"""What a reader of the public tables sees while `dbt run` writes them (issue 21): the
``simulated_increments`` fixture queries gold.current_rows (merged into by every incremental
run), silver.change_events and silver.quarantine in a loop, in a Spark session of its own,
while its first incremental run writes them. Every query must succeed and return the table's
state before the run or after it (Delta's snapshot isolation: each query reads one commit),
never an error, a missing file or a partial table."""

from __future__ import annotations

CURRENT_ROWS = "model.cdc_lakehouse.current_rows"
CHANGED = ("gold.current_rows", "silver.change_events")  # by every simulated batch


def test_every_read_during_the_run_is_the_state_before_or_after_it(simulated_increments):
    observed = simulated_increments["readers_during_run"]
    readers = observed["readers"]
    errors = [(read.table, read.error) for read in readers.reads if read.error]
    assert not errors, errors[:5]
    for table in CHANGED:
        assert readers.before[table] != readers.after[table], f"the run did not change {table}"
    for table, before in readers.before.items():
        after = readers.after[table]
        states = [read.state for read in readers.reads if read.table == table]
        partial = [state for state in states if state not in (before, after)]
        assert not partial, (table, before, after, partial[:5])
        assert states, table


def test_the_reader_read_gold_while_its_table_was_being_merged(simulated_increments):
    observed = simulated_increments["readers_during_run"]
    start, end = observed["windows"][CURRENT_ROWS]
    during = [
        read
        for read in observed["readers"].reads
        if read.table == "gold.current_rows" and read.started < end and read.ended > start
    ]
    assert during, f"no read of gold.current_rows overlapped its merge ({end - start:.1f} s)"
