"""remove_unreferenced (cdc_lakehouse.generations): which directories of a generation-written
table go, on a directory tree built by hand (no Spark)."""

from __future__ import annotations

import os
from pathlib import Path

from cdc_lakehouse.generations import remove_unreferenced

NOW = 1_000_000.0
GRACE = 300.0


def make(path: Path, age_s: float) -> Path:
    """``path`` with a data file, its modification time ``age_s`` seconds before NOW."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "part-00000.parquet").write_bytes(b"data")
    os.utime(path, (NOW - age_s, NOW - age_s))
    return path


def test_keeps_what_partitions_reference_and_recent_data_removes_the_rest(tmp_path: Path) -> None:
    table = tmp_path / "t"
    generations = table / "_generations"
    first_ctas = make(table / "b=0", age_s=1000)  # replaced long ago
    replaced_now = make(table / "b=1", age_s=10)  # replaced 10 s ago: a reader may need it
    live_default = make(table / "b=2", age_s=1000)  # never replaced
    old = make(generations / "g1" / "b=0", age_s=1000)
    os.utime(old.parent, (NOW - 1000, NOW - 1000))
    current = make(generations / "g2" / "b=0", age_s=1000)
    partly_replaced = make(generations / "g2" / "b=3", age_s=1000)
    pending = make(generations / "g2" / "_pending" / "b=1", age_s=1000)
    killed = make(generations / "g3" / "_temporary" / "0", age_s=1)
    referenced = [live_default, current, generations / "g4" / "b=1"]
    make(generations / "g4" / "b=1", age_s=1)

    removed = remove_unreferenced(table, referenced, GRACE, now=NOW)

    assert sorted(removed) == sorted(
        [first_ctas, old.parent, partly_replaced, pending, killed.parent.parent]
    )
    assert replaced_now.is_dir() and live_default.is_dir() and current.is_dir()
    assert not (generations / "g2" / "_pending").exists()
    assert (generations / "g4" / "b=1").is_dir()
    assert remove_unreferenced(table, referenced, GRACE, now=NOW) == []
    assert remove_unreferenced(table, referenced, GRACE, now=NOW + GRACE) == [replaced_now]


def test_leaves_a_table_never_written_by_generations_alone(tmp_path: Path) -> None:
    table = tmp_path / "t"
    unregistered = make(table / "b=0", age_s=10_000)
    assert remove_unreferenced(table, [], GRACE, now=NOW) == []
    assert unregistered.is_dir()


def test_a_table_switched_whole_keeps_its_location_and_recent_data(tmp_path: Path) -> None:
    """An unpartitioned table (switch_table) points at one generation: its first CREATE's files
    in the table directory and older generations go after the grace period counted from the
    switch away from them (the directories' modification times)."""
    table = tmp_path / "t"
    generations = table / "_generations"
    first = make(generations / "g1", age_s=1000)
    current = make(generations / "g3", age_s=1000)
    replaced_now = make(generations / "g2", age_s=10)
    (table / "part-00000.parquet").write_bytes(b"first create")
    os.utime(table, (NOW - 1000, NOW - 1000))

    removed = remove_unreferenced(table, [current], GRACE, now=NOW)

    assert sorted(removed) == sorted([first, table / "part-00000.parquet"])
    assert current.is_dir() and replaced_now.is_dir()
    assert remove_unreferenced(table, [current], GRACE, now=NOW + GRACE) == [replaced_now]


def test_the_first_create_of_a_table_switched_recently_is_kept(tmp_path: Path) -> None:
    table = tmp_path / "t"
    current = make(table / "_generations" / "g1", age_s=1000)
    (table / "part-00000.parquet").write_bytes(b"first create")
    os.utime(table, (NOW - 10, NOW - 10))  # switched away from 10 s ago
    assert remove_unreferenced(table, [current], GRACE, now=NOW) == []
    assert (table / "part-00000.parquet").is_file()
