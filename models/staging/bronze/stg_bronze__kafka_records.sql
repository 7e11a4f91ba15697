{#
    Every bronze record with the registry's format of its topic (NULL when the topic is not in
    the registry): the one place where topics become formats. Only the ingest batches up to
    the one pinned when the current build started (macros/cdc_bronze_pin.sql): the ingest job
    may add batches while dbt runs.
#}

with

kafka_records as (
    select * from {{ source('bronze', 'kafka_records') }}
    where ingest_batch_id <= {{ pinned_bronze_batch() }}
),

cdc_topics as (
    select * from {{ ref('stg_bronze__topics') }}
),

final as (
    select
        cdc_topics.format as source_format,
        cdc_topics.source_dialect,
        cdc_topics.canal_legacy_swap,
        kafka_records.topic,
        kafka_records.partition,
        kafka_records.offset,
        kafka_records.timestamp,
        kafka_records.key,
        kafka_records.value,
        kafka_records.ingest_batch_id
    from kafka_records
    left join cdc_topics
        on kafka_records.topic = cdc_topics.topic
)

select * from final
