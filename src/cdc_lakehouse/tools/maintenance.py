"""Table maintenance of the lake: Delta's ``OPTIMIZE`` and ``VACUUM`` on every table, one command.

``python -m cdc_lakehouse.tools.maintenance`` (``make maintenance``) runs, for every Delta table of
the schemas ``bronze``, ``silver`` and ``gold`` (views and non-Delta tables are skipped):

1. ``OPTIMIZE <table>``: compacts the small files that appends and merges leave (each ingest
   micro-batch and each incremental build adds files) into fewer large ones. Readers are not
   disturbed: it is one commit that replaces files by files holding the same rows.
2. ``VACUUM <table> RETAIN <hours> HOURS``: deletes the data files no table version newer than
   ``<hours>`` ago references (the ones OPTIMIZE, merges and overwrites replaced, and those a
   killed write left uncommitted). Time travel (``VERSION AS OF``) and the change data feed
   reach back that far and no further.

The retention keeps running readers safe: a query reads the files of the version it started
with, so deleting files that version still needs would fail it. The default,
:data:`DEFAULT_RETAIN_HOURS` (Delta's own default, ``delta.deletedFileRetentionDuration`` = 7
days), is far longer than any query or build of the lake; Delta refuses a shorter one unless
its safety check is turned off, which this command never does.

Errors: :class:`~cdc_lakehouse.runtime.settings.ConfigError` for a bad argument (one line, exit 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cdc_lakehouse.runtime.cli_types import OneLineParser
from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.runtime.spark_session import get_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

SCHEMAS = ("bronze", "silver", "gold")
DEFAULT_RETAIN_HOURS = 168
"""Hours of history ``VACUUM`` keeps: Delta's default retention (7 days)."""


@dataclass(frozen=True)
class TableMaintenance:
    """What maintenance did to one table.

    Attributes:
        table: ``schema.name``.
        files_before / files_after: data files of the current version before and after.
        optimize_s / vacuum_s: seconds each step took.
    """

    table: str
    files_before: int
    files_after: int
    optimize_s: float
    vacuum_s: float

    def line(self) -> str:
        """One progress line."""
        return (
            f"{self.table}: {self.files_before} -> {self.files_after} files "
            f"(optimize {self.optimize_s:.1f} s, vacuum {self.vacuum_s:.1f} s)"
        )


def delta_tables(spark: SparkSession, schemas: Sequence[str] = SCHEMAS) -> Iterator[str]:
    """The Delta tables (``schema.name``, sorted) of ``schemas`` that exist; views skipped."""
    for schema in schemas:
        if not spark.catalog.databaseExists(schema):
            continue
        for table in sorted(spark.catalog.listTables(schema), key=lambda t: t.name):
            if table.tableType == "VIEW" or table.isTemporary:
                continue
            name = f"{schema}.{table.name}"
            detail = spark.sql(f"describe detail {name}").first()
            if detail is not None and detail["format"] == "delta":
                yield name


def _files(spark: SparkSession, table: str) -> int:
    detail = spark.sql(f"describe detail {table}").first()
    return int(detail["numFiles"]) if detail is not None else 0


def maintain(
    spark: SparkSession, table: str, retain_hours: int = DEFAULT_RETAIN_HOURS
) -> TableMaintenance:
    """``OPTIMIZE`` then ``VACUUM ... RETAIN retain_hours HOURS`` of one Delta table.

    Raises:
        pyspark.errors.AnalysisException: Delta refused (e.g. a retention under its minimum).
    """
    before = _files(spark, table)
    started = time.monotonic()
    spark.sql(f"optimize {table}").collect()
    optimized = time.monotonic()
    spark.sql(f"vacuum {table} retain {retain_hours} hours").collect()
    return TableMaintenance(
        table=table,
        files_before=before,
        files_after=_files(spark, table),
        optimize_s=optimized - started,
        vacuum_s=time.monotonic() - optimized,
    )


def _retain_hours(text: str) -> int:
    try:
        hours = int(text)
    except ValueError:
        hours = -1
    if hours < DEFAULT_RETAIN_HOURS:
        raise argparse.ArgumentTypeError(
            f"--retain-hours {text!r}: give a whole number of hours, at least "
            f"{DEFAULT_RETAIN_HOURS} (7 days, Delta's minimum that keeps running readers safe)"
        )
    return hours


def main(argv: list[str] | None = None) -> int:
    """``python -m cdc_lakehouse.tools.maintenance [--retain-hours H] [--table T ...]``; exit
    code."""
    parser = OneLineParser(
        prog="python -m cdc_lakehouse.tools.maintenance",
        description="OPTIMIZE and VACUUM every Delta table of bronze, silver and gold.",
    )
    parser.add_argument(
        "--retain-hours",
        type=_retain_hours,
        default=DEFAULT_RETAIN_HOURS,
        help=f"history VACUUM keeps, hours (default and minimum {DEFAULT_RETAIN_HOURS})",
    )
    parser.add_argument(
        "--table", action="append", default=None, help="only this table (schema.name); repeat"
    )
    args = parser.parse_args(argv)
    try:
        spark = get_spark()
        tables = args.table or list(delta_tables(spark))
        for table in tables:
            print(maintain(spark, table, args.retain_hours).line(), flush=True)
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    print(f"done: {len(tables)} table(s), retention {args.retain_hours} h", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
