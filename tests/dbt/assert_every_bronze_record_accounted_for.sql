-- Counting holds: every bronze record is a change, a control event, a schema change or in
-- quarantine - exactly once. Returns the records that are missing or counted twice.

with

kafka_records as (
    select topic, partition, offset from {{ source('bronze', 'kafka_records') }}
),

accounted as (
    select kafka_topic, kafka_partition, kafka_offset from {{ ref('change_events') }}
    union all
    select kafka_topic, kafka_partition, kafka_offset from {{ ref('control_events') }}
    union all
    select kafka_topic, kafka_partition, kafka_offset from {{ ref('schema_changes') }}
    union all
    select kafka_topic, kafka_partition, kafka_offset from {{ ref('quarantine') }}
),

accounted_counts as (
    select kafka_topic, kafka_partition, kafka_offset, count(*) as n_rows
    from accounted
    group by 1, 2, 3
),

final as (
    select
        kafka_records.topic,
        kafka_records.partition,
        kafka_records.offset,
        coalesce(accounted_counts.n_rows, 0) as n_rows
    from kafka_records
    left join accounted_counts
        on kafka_records.topic = accounted_counts.kafka_topic
        and kafka_records.partition = accounted_counts.kafka_partition
        and kafka_records.offset = accounted_counts.kafka_offset
    where coalesce(accounted_counts.n_rows, 0) != 1
)

select * from final
