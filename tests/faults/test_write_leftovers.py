"""remove_write_leftovers on the session's lake: the directory a killed table creation leaves
is removed, tables and their data are not (the kill-and-rerun module shows it on real kills)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cdc_lakehouse.runtime.interrupted_writes import remove_write_leftovers


def test_removes_the_directories_of_killed_creations_only(spark: Any) -> None:
    spark.sql("CREATE DATABASE IF NOT EXISTS faults_t")
    spark.sql("DROP TABLE IF EXISTS faults_t.kept")
    spark.sql("CREATE TABLE faults_t.kept USING delta AS SELECT 1 AS id")
    spark.sql("CREATE OR REPLACE VIEW faults_t.a_view AS SELECT 1 AS id")
    location = spark.sql("DESCRIBE DATABASE faults_t").collect()
    database = Path(next(row[1] for row in location if row[0] == "Location").removeprefix("file:"))
    orphan = database / "created_when_killed"
    orphan.mkdir()
    (orphan / "part-00000.snappy.parquet").write_bytes(b"written before the commit")
    (database / "_not_a_table").mkdir()

    # a dev or CI target's hook names its own schemas: another database's leftover stays
    assert not [p for p in remove_write_leftovers(spark, schemas=["dev_x_silver"]) if p == orphan]
    assert orphan.is_dir()
    removed = [path for path in remove_write_leftovers(spark) if database in path.parents]

    assert removed == [orphan]
    assert (database / "_not_a_table").is_dir()
    assert [row["id"] for row in spark.table("faults_t.kept").collect()] == [1]
    # Delta then creates the table where the killed creation had written
    spark.sql("CREATE TABLE faults_t.created_when_killed USING delta AS SELECT 2 AS id")
    assert [row["id"] for row in spark.table("faults_t.created_when_killed").collect()] == [2]
    assert not [path for path in remove_write_leftovers(spark) if database in path.parents]
    spark.sql("DROP DATABASE faults_t CASCADE")
