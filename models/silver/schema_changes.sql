{#
    Captured DDL of every format, as sent. Translation to Spark SQL (sqlglot) and the change
    classification come later (issue 6); until then translation_status is 'not_translated'.
#}

with

dataworks_events as (
    select * from {{ ref('stg_dataworks__events') }}
    where record_kind = 'ddl'
),

cdc_topics as (
    select * from {{ ref('cdc_topics') }}
),

final as (
    select
        concat_ws(':', kafka_topic, cast(kafka_partition as string), cast(kafka_offset as string))
            as event_id,
        dataworks_events.source_format,
        dataworks_events.source_db_type,
        dataworks_events.source_database,
        dataworks_events.source_schema,
        dataworks_events.source_table,
        dataworks_events.source_op as ddl_op,
        dataworks_events.ddl_text,
        coalesce(nullif(cdc_topics.source_dialect, ''), lower(dataworks_events.source_db_type))
            as source_dialect,
        'not_translated' as translation_status,
        dataworks_events.ordering_key,
        dataworks_events.event_time,
        dataworks_events.kafka_topic,
        dataworks_events.kafka_partition,
        dataworks_events.kafka_offset,
        dataworks_events.kafka_timestamp,
        dataworks_events.ingest_batch_id
    from dataworks_events
    left join cdc_topics
        on dataworks_events.kafka_topic = cdc_topics.topic
)

select * from final
