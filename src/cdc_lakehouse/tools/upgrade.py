"""Upgrade a lake in place: tables of renamed models, and a lake built on Parquet (before the
lake moved to Delta Lake).

``python -m cdc_lakehouse.tools.upgrade`` (``make upgrade-lake``, which then runs ``dbt build
--full-refresh``) on the lake of ``CDC_LAKE_DIR``:

0. renames the tables of renamed models (:data:`RENAMED_TABLES`: the formats' decoding models,
   ``stg_<folder>__decoded`` since 2026-12) where the old table exists and the new one does
   not (``ALTER TABLE ... RENAME TO``), so the next build goes on from what they hold instead
   of decoding every record again beside a stale table;
1. converts ``bronze.kafka_records`` to Delta where it is a Parquet table (``CONVERT TO
   DELTA``: its files stay where they are and become the table's first commit), so every
   record ingested so far is kept - bronze may hold records Kafka no longer has;
2. drops every other table of the schemas ``bronze``, ``silver`` and ``gold`` that is not a
   Delta table: the seeds and the models, which the full refresh builds again from bronze and
   the seeds' CSV files, and the project's bookkeeping tables (``silver.cdc_bronze_pin``,
   ``silver.cdc_tested_batches``), which dbt creates again.

Views are left alone (a full refresh creates them again). On a lake that is Delta already and
has no table under an old name it changes nothing. The ingest checkpoint is not touched: its
batch ids go on.

Errors: :class:`~cdc_lakehouse.runtime.settings.ConfigError` (one line, exit 2) as every command.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.runtime.spark_session import get_spark

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BRONZE = "bronze.kafka_records"
SCHEMAS = ("bronze", "silver", "gold")
RENAMED_TABLES: tuple[tuple[str, str], ...] = (
    ("silver.stg_dataworks__envelopes", "silver.stg_dataworks__decoded"),
    ("silver.stg_datahub_tuple__records", "silver.stg_datahub_tuple__decoded"),
    ("silver.stg_dts_avro__records", "silver.stg_dts_avro__decoded"),
    ("silver.stg_dts_shareplex__messages", "silver.stg_dts_shareplex__decoded"),
    ("silver.stg_lindorm__envelopes", "silver.stg_lindorm__decoded"),
    ("silver.stg_qlik__messages", "silver.stg_qlik__decoded"),
)
"""(old, new) names of the tables whose model was renamed: the formats' decoding models took
one noun, ``stg_<folder>__decoded`` (2026-12)."""


@dataclass
class Upgrade:
    """What :func:`upgrade` did: the tables renamed (old, new), converted and dropped."""

    renamed: list[tuple[str, str]] = field(default_factory=list)
    converted: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)


def table_format(spark: SparkSession, table: str) -> str | None:
    """The provider of ``table`` (``delta``, ``parquet``, ...), or None for a view."""
    rows = spark.sql(f"describe table extended {table}").collect()
    info = {row[0]: row[1] for row in rows}
    if info.get("Type") == "VIEW":
        return None
    return (info.get("Provider") or "").lower() or None


def rename_tables(
    spark: SparkSession,
    renames: tuple[tuple[str, str], ...] = RENAMED_TABLES,
    schemas: tuple[str, ...] = SCHEMAS,
) -> list[tuple[str, str]]:
    """``ALTER TABLE <old> RENAME TO <new>`` for each (old, new) of ``renames`` in one of
    ``schemas`` whose old table exists and new one does not; the (old, new) pairs renamed. A
    lake that has both keeps both (the new one is what the models build on)."""
    renamed = []
    for old, new in renames:
        schema = old.split(".", 1)[0]
        if schema not in schemas or not spark.catalog.databaseExists(schema):
            continue
        if spark.catalog.tableExists(old) and not spark.catalog.tableExists(new):
            spark.sql(f"alter table {old} rename to {new}")
            renamed.append((old, new))
    return renamed


def upgrade(
    spark: SparkSession,
    schemas: tuple[str, ...] = SCHEMAS,
    bronze: str = BRONZE,
    renames: tuple[tuple[str, str], ...] = RENAMED_TABLES,
) -> Upgrade:
    """Rename the tables of renamed models, convert ``bronze`` to Delta and drop the other
    non-Delta tables of ``schemas`` (see the module doc)."""
    done = Upgrade(renamed=rename_tables(spark, renames, schemas))
    for schema in schemas:
        if not spark.catalog.databaseExists(schema):
            continue
        for entry in spark.catalog.listTables(schema):
            if entry.isTemporary:
                continue
            table = f"{schema}.{entry.name}"
            provider = table_format(spark, table)
            if provider in (None, "delta"):
                continue
            if table == bronze:
                spark.sql(f"convert to delta {bronze}")
                done.converted.append(table)
            else:
                spark.sql(f"drop table {table}")
                done.dropped.append(table)
    return done


def main() -> int:
    """``python -m cdc_lakehouse.tools.upgrade``: upgrade the lake of ``CDC_LAKE_DIR``; exit
    code."""
    try:
        done = upgrade(get_spark())
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    for old, new in done.renamed:
        print(f"renamed: {old} -> {new}")
    for table in done.converted:
        print(f"converted to Delta: {table} (its records kept)")
    for table in done.dropped:
        print(f"dropped: {table} (not Delta; the full refresh builds it again)")
    if done.converted or done.dropped:
        print("now run: dbt build --full-refresh (make upgrade-lake does)")
    elif done.renamed:
        print("now run: dbt build (it goes on from the renamed tables)")
    else:
        print("the lake is Delta already and has no table under an old name: nothing to do")
    return 0


if __name__ == "__main__":
    sys.exit(main())
