"""``python -m tests.faults.snapshot OUT [--topics A,B ...] [--full-refresh ...]``: the tables
the kill-and-rerun tests compare, read with a SparkSession on the lake of ``CDC_LAKE_DIR`` and
written as ``OUT/incremental.json``; with ``--full-refresh``, then ``dbt run --full-refresh``
in the same process (one JVM start for both) and ``OUT/full_refresh.json``.

A snapshot is ``{"tables": {table: [row, ...]}, "current_rows": {topics: [row, ...]}}``: every
row of :data:`TABLES` as a JSON object (maps as their sorted entries,
:func:`tests.dbt_models.simulation.comparable`), sorted; and for each ``--topics`` group the
``gold.current_rows`` rows of the source tables those topics carry
(:func:`cdc_lakehouse.tools.bench.pipeline.topic_current_rows`), as ``{"source_table", "row_key",
"row_values"}``. Run from the project directory; a helper of tests/faults, not part of the
package.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cdc_lakehouse.tools.bench.pipeline import topic_current_rows
from tests.dbt_models.simulation import comparable

TABLES = (
    "silver.change_events",
    "silver.quarantine",
    "silver.control_events",
    "gold.int_row_versions",
    "gold.current_rows",
    "gold.row_history",
)


def snapshot(spark: Any, topic_groups: list[str]) -> dict[str, Any]:
    """Every row of :data:`TABLES`, and the current rows of each group of topics."""
    from pyspark.sql import functions as F

    tables = {
        table: sorted(
            row[0]
            for row in comparable(spark.table(table)).select(F.to_json(F.struct("*"))).collect()
        )
        for table in TABLES
    }
    current_rows = {
        group: [
            {
                "source_table": row["source_table"],
                "row_key": row["row_key"],
                "row_values": dict(row["row_values"]),
            }
            for row in topic_current_rows(spark, group.split(","))
        ]
        for group in topic_groups
    }
    return {"tables": tables, "current_rows": current_rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.faults.snapshot")
    parser.add_argument("out", type=Path)
    parser.add_argument("--topics", action="append", default=[], help="a comma-separated group")
    parser.add_argument(
        "--full-refresh",
        nargs=argparse.REMAINDER,
        metavar="DBT_ARGS",
        help="then run `dbt run --full-refresh DBT_ARGS...` and snapshot again",
    )
    args = parser.parse_args(argv)

    from cdc_lakehouse.runtime.spark_session import get_spark

    spark = get_spark()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "incremental.json").write_text(json.dumps(snapshot(spark, args.topics)))
    if args.full_refresh is not None:
        from dbt.cli.main import dbtRunner

        dbt_args = ["run", "--full-refresh", *args.full_refresh]
        result = dbtRunner().invoke(dbt_args)
        if not result.success:
            print(f"dbt {' '.join(dbt_args)} failed: {result.exception}", file=sys.stderr)
            return 1
        (args.out / "full_refresh.json").write_text(json.dumps(snapshot(spark, args.topics)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
