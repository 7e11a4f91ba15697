"""Upgrading a Parquet lake (built before the lake moved to Delta Lake) in place: bronze is
converted with every record kept, the other non-Delta tables are dropped for the full refresh
to build again, Delta tables and views are left alone; the tables of renamed models get their
new names (cdc_lakehouse.tools.upgrade)."""

from __future__ import annotations

from typing import Any

from cdc_lakehouse.tools.upgrade import RENAMED_TABLES, rename_tables, table_format, upgrade
from ingest.bronze import BRONZE_COLUMNS

SCHEMAS = ("up_bronze", "up_silver")
BRONZE = "up_bronze.kafka_records"


def test_bronze_becomes_delta_with_its_records_and_the_rest_is_dropped(spark: Any) -> None:
    for schema in SCHEMAS:
        spark.sql(f"drop database if exists {schema} cascade")
        spark.sql(f"create database {schema}")
    columns = ", ".join(f"`{name}` {kind}" for name, kind in BRONZE_COLUMNS)
    spark.sql(f"create table {BRONZE} ({columns}) using parquet partitioned by (ingest_batch_id)")
    spark.sql(
        f"insert into {BRONZE} select cast(null as binary), cast(cast(o as string) as binary), "
        "'t', p, o, timestamp'2024-01-01 00:00:00', 0, "
        "cast(array() as array<struct<key:string,value:binary>>), current_timestamp(), b "
        "from values (0, 1, 0), (0, 2, 0), (1, 3, 1) as v(p, o, b)"
    )
    spark.sql("create table up_bronze.cdc_topics using parquet as select 't' as topic")
    spark.sql("create table up_silver.change_events using parquet as select 1 as x")
    spark.sql("create table up_silver.kept using delta as select 1 as x")
    spark.sql("create view up_silver.a_view as select 1 as x")

    done = upgrade(spark, SCHEMAS, BRONZE)

    assert done.converted == [BRONZE]
    assert sorted(done.dropped) == ["up_bronze.cdc_topics", "up_silver.change_events"]
    assert table_format(spark, BRONZE) == "delta"
    rows = spark.sql(f"select partition, offset, ingest_batch_id from {BRONZE}").collect()
    assert sorted(tuple(r) for r in rows) == [(0, 1, 0), (0, 2, 0), (1, 3, 1)]
    # the shared session's temporary views (dbt's __dbt_tmp ones) are listed too
    names = {t.name for t in spark.catalog.listTables("up_silver") if not t.isTemporary}
    assert names == {"kept", "a_view"}
    assert upgrade(spark, SCHEMAS, BRONZE).converted == []  # Delta already: nothing to do
    for schema in SCHEMAS:
        spark.sql(f"drop database {schema} cascade")


class _Catalog:
    def __init__(self, tables: set[str], databases: set[str]) -> None:
        self.tables = tables
        self.databases = databases

    def databaseExists(self, name: str) -> bool:
        return name in self.databases

    def tableExists(self, name: str) -> bool:
        return name in self.tables


class _Spark:
    """The part of a SparkSession :func:`rename_tables` uses: the catalog and ``sql``."""

    def __init__(self, tables: set[str], databases: set[str]) -> None:
        self.catalog = _Catalog(tables, databases)
        self.statements: list[str] = []

    def sql(self, statement: str) -> None:
        self.statements.append(statement)
        old, new = statement.removeprefix("alter table ").split(" rename to ")
        self.catalog.tables.remove(old)
        self.catalog.tables.add(new)


def test_the_decoding_models_old_tables_are_renamed_once_where_the_new_one_is_missing() -> None:
    assert all(new.endswith("__decoded") for _, new in RENAMED_TABLES)
    tables = {
        "silver.stg_qlik__messages",  # renamed
        "silver.stg_lindorm__envelopes",  # both: the new one is kept, the old one too
        "silver.stg_lindorm__decoded",
        "silver.change_events",
    }
    spark = _Spark(set(tables), {"bronze", "silver", "gold"})
    renamed = rename_tables(spark)  # type: ignore[arg-type]
    assert renamed == [("silver.stg_qlik__messages", "silver.stg_qlik__decoded")]
    assert spark.statements == [
        "alter table silver.stg_qlik__messages rename to silver.stg_qlik__decoded"
    ]
    assert spark.catalog.tables == {
        "silver.stg_qlik__decoded",
        "silver.stg_lindorm__envelopes",
        "silver.stg_lindorm__decoded",
        "silver.change_events",
    }
    assert rename_tables(spark) == []  # type: ignore[arg-type]  # done: nothing to do
    # a lake without schema silver, or schemas the call leaves out: nothing is looked up
    assert rename_tables(_Spark(set(tables), set())) == []  # type: ignore[arg-type]
    assert rename_tables(spark, schemas=("up_silver",)) == []  # type: ignore[arg-type]
