{#
    Captured DDL of every format, as sent. Translation to Spark SQL (sqlglot) and the change
    classification come later (issue 6); until then translation_status is 'not_translated'.
#}

with

staging_events as (
    {{ staging_events('ddl') }}
),

cdc_topics as (
    select * from {{ ref('cdc_topics') }}
),

final as (
    select
        concat_ws(':', kafka_topic, cast(kafka_partition as string), cast(kafka_offset as string))
            as event_id,
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
        coalesce(nullif(cdc_topics.source_dialect, ''), lower(staging_events.source_db_type))
            as source_dialect,
        'not_translated' as translation_status,
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
)

select * from final
