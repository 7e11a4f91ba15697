"""remove_write_leftovers on the session's lake: what a killed write leaves is removed, tables
and their data are not (the kill-and-rerun module shows it on real kills)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdc_lakehouse.interrupted_writes import remove_write_leftovers


def test_removes_orphaned_directories_and_task_leftovers_only(spark: Any) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS faults_t")
    spark.sql("DROP TABLE IF EXISTS faults_t.kept")
    spark.sql("CREATE TABLE faults_t.kept USING parquet AS SELECT 1 AS id")
    spark.sql("CREATE OR REPLACE VIEW faults_t.a_view AS SELECT 1 AS id")
    location = spark.sql("DESCRIBE DATABASE faults_t").collect()
    database = Path(next(row[1] for row in location if row[0] == "Location").removeprefix("file:"))
    kept = database / "kept"
    orphan = database / "created_when_killed"
    leftovers = [
        kept / "_temporary" / "0" / "task_1",
        kept / ".spark-staging-1234" / "id=1",
        orphan / "_temporary" / "0",
    ]
    for directory in leftovers:
        directory.mkdir(parents=True)
        (directory / "part-00000.parquet").write_bytes(b"half written")
    (database / "_not_a_table").mkdir()

    removed = [path for path in remove_write_leftovers(spark) if database in path.parents]

    assert sorted(removed) == sorted([kept / "_temporary", kept / ".spark-staging-1234", orphan])
    assert (database / "_not_a_table").is_dir()
    assert [row["id"] for row in spark.table("faults_t.kept").collect()] == [1]
    assert not [path for path in remove_write_leftovers(spark) if database in path.parents]
    spark.sql("DROP DATABASE faults_t CASCADE")
