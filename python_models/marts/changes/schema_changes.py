"""dbt Python model: every captured schema change, translated to Spark SQL and classified.

Reads silver.captured_ddl (one row per DDL record of any format, as sent) and applies
cdc_lakehouse.ddl.batches with mapInArrow (Arrow batches; sqlglot parses each statement in its
source dialect). Output: one row per schema change (a multi-clause ALTER gives one row per
clause; every record gives at least one row, an untranslatable one with its status and reason),
joined back to its record's identity, ordering key and Kafka position. Spark types of Qlik
structures come from the seed cdc_type_mappings (family qlik), as in typed gold.
"""

from cdc_lakehouse.codegen.type_mapping import parse_seed_rows
from cdc_lakehouse.ddl.batches import output_schema_ddl, translator


def model(dbt, session):
    dbt.config(materialized="table")
    records = dbt.ref("captured_ddl")
    seed = dbt.ref("cdc_type_mappings")
    mappings = parse_seed_rows(row.asDict() for row in seed.collect())
    changes = records.mapInArrow(translator(mappings), output_schema_ddl())
    joined = records.alias("records").join(changes.alias("changes"), "event_id")
    return joined.selectExpr(
        "concat(event_id, ':', cast(change_index as string)) as schema_change_id",
        "event_id",
        "change_index",
        "records.source_format",
        "records.source_db_type",
        "coalesce(change_source_database, records.source_database) as source_database",
        "coalesce(change_source_schema, records.source_schema) as source_schema",
        "coalesce(change_source_table, records.source_table) as source_table",
        "ddl_op",
        "ddl_text",
        "source_dialect",
        "change_kind",
        "change_table",
        "column_name",
        "new_name",
        "new_spark_type",
        "created_columns",
        "spark_sql",
        "translation_status",
        "translation_reason",
        "column_types",
        "key_columns",
        "source_schema_version",
        "ordering_key",
        "event_time",
        "source_position",
        "transaction_id",
        "kafka_topic",
        "kafka_partition",
        "kafka_offset",
        "kafka_timestamp",
        "ingest_batch_id",
    )
