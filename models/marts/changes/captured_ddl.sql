{#
    Every captured schema-change record of every format, as sent: one row per DDL record of
    the staging models (record_kind 'ddl'), with the dialect its statement is written in and,
    for Qlik metadata messages, the table's previous declared structure. The input of
    silver.schema_changes (a dbt Python model that translates each record with sqlglot).

    - source_dialect: the topic's registry source_dialect (seeds/cdc_topics.csv), else the
      message's own db type (DataWorks dbType, DTS Avro source type), lowercase.
    - previous_column_types / previous_schema_version: for a Qlik metadata message, the
      structure and tableVersion of the same table's previous metadata message (ordered by
      tableVersion, then ordering key); NULL for the table's first one and for other formats.
#}

with

staging_events as (
    {{ staging_events('ddl') }}
),

cdc_topics as (
    select * from {{ ref('stg_bronze__topics') }}
),

records as (
    select
        concat_ws(
            ':',
            staging_events.kafka_topic,
            cast(staging_events.kafka_partition as string),
            cast(staging_events.kafka_offset as string)
        ) as event_id,
        staging_events.source_format,
        staging_events.source_db_type,
        staging_events.source_database,
        staging_events.source_schema,
        staging_events.source_table,
        staging_events.source_op as ddl_op,
        staging_events.ddl_text,
        staging_events.column_types,
        staging_events.key_columns,
        staging_events.source_schema_version,
        lower(coalesce(nullif(cdc_topics.source_dialect, ''), staging_events.source_db_type))
            as source_dialect,
        staging_events.ordering_key,
        staging_events.event_time,
        staging_events.source_position,
        staging_events.transaction_id,
        staging_events.kafka_topic,
        staging_events.kafka_partition,
        staging_events.kafka_offset,
        staging_events.kafka_timestamp,
        staging_events.ingest_batch_id
    from staging_events
    left join cdc_topics
        on staging_events.kafka_topic = cdc_topics.topic
),

qlik_metadata as (
    select *
    from records
    where source_format in ('qlik_json', 'qlik_avro')
        and ddl_op = 'METADATA'
),

qlik_versions as (
    select
        event_id,
        lag(column_types) over table_versions as previous_column_types,
        lag(source_schema_version) over table_versions as previous_schema_version
    from qlik_metadata
    window table_versions as (
        partition by source_format, source_database, source_schema, source_table
        order by try_cast(source_schema_version as bigint), ordering_key, event_id
    )
),

final as (
    select
        records.*,
        qlik_versions.previous_column_types,
        qlik_versions.previous_schema_version
    from records
    left join qlik_versions
        on records.event_id = qlik_versions.event_id
)

select * from final
