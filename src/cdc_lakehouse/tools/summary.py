"""``python -m cdc_lakehouse.tools.summary``: rows per layer and the gold rows, for ``make demo``.

Prints one line per table (bronze, silver, gold) with its row count, the silver.quarantine
reasons, the silver and gold row counts per source format, then every row of
``gold.current_rows`` (at most ``--limit``, default 50). Reads the lake of ``CDC_LAKE_DIR``;
run it after ``dbt build`` (the Derby metastore admits one process).
Exit code 2 with a one-line message when a table is missing (ingest or dbt build not run yet)
or when another process has the metastore open.
"""

from __future__ import annotations

import argparse
import sys

from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.runtime.spark_session import get_spark

LAYER_TABLES = (
    "bronze.kafka_records",
    "silver.change_events",
    "silver.control_events",
    "silver.schema_changes",
    "silver.quarantine",
    "silver.table_schemas",
    "gold.current_rows",
)
PER_FORMAT_TABLES = (
    ("changes", "silver.change_events"),
    ("control", "silver.control_events"),
    ("ddl", "silver.schema_changes"),
    ("quarantine", "silver.quarantine"),
    ("gold rows", "gold.current_rows"),
)


def main(argv: list[str] | None = None) -> int:
    """Print the summary; return the process exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.summary", description=__doc__
    )
    parser.add_argument("--limit", type=int, default=50, help="gold rows to print (default 50)")
    args = parser.parse_args(argv)
    try:
        spark = get_spark()
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    missing = [t for t in LAYER_TABLES if not spark.catalog.tableExists(t)]
    if missing:
        print(
            f"error: table(s) {', '.join(missing)} not found in the lake: run "
            "`python -m ingest --dump PATH` and `dbt build` first.",
            file=sys.stderr,
        )
        return 2
    print("Rows per layer")
    for table in LAYER_TABLES:
        print(f"  {table:<24} {spark.table(table).count():>10}")
    reasons = spark.sql(
        "select reason, count(*) as n from silver.quarantine group by reason order by reason"
    ).collect()
    for row in reasons:
        print(f"    quarantine reason {row['reason']:<22} {row['n']:>6}")
    counts = " union all ".join(
        f"select source_format, '{label}' as counted, count(*) as n from {table} "
        "group by source_format"
        for label, table in PER_FORMAT_TABLES
    )
    per_format: dict[str, dict[str, int]] = {}
    for row in spark.sql(counts).collect():
        per_format.setdefault(row["source_format"] or "(unregistered)", {})[row["counted"]] = row[
            "n"
        ]
    print("\nRows per source format")
    print("  " + f"{'format':<20}" + "".join(f"{label:>12}" for label, _ in PER_FORMAT_TABLES))
    for source_format in sorted(per_format):
        numbers = per_format[source_format]
        print(
            f"  {source_format:<20}"
            + "".join(f"{numbers.get(label, 0):>12}" for label, _ in PER_FORMAT_TABLES)
        )
    gold = spark.sql(
        "select source_format, source_database, source_schema, source_table, row_key, "
        "row_values, last_op, last_event_time from gold.current_rows "
        "order by source_format, source_database, source_schema, source_table, row_key"
    )
    rows = gold.limit(args.limit).collect()
    print(f"\ngold.current_rows (first {len(rows)} of {gold.count()})")
    for row in rows:
        table = ".".join(
            p for p in (row["source_database"], row["source_schema"], row["source_table"]) if p
        )
        values = ", ".join(f"{k}={v}" for k, v in (row["row_values"] or {}).items())
        print(
            f"  [{row['source_format']}] {table} {row['row_key']} -> {{{values}}}"
            f"  ({row['last_op']} at {row['last_event_time']} UTC)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
