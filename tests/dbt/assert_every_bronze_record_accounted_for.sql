-- Counting holds: every bronze record is accounted for in silver as change rows (one per row
-- index of a multi-row message), a control event, a captured DDL record or a quarantined record,
-- and no (record, row index) is counted twice. Returns the records that break this. The
-- records are those of the last run or build (stg_bronze__kafka_records: bronze up to the batch
-- pinned when it started); batches ingested since wait for the next build.

with

kafka_records as (
    select
        topic,
        partition,
        offset
    from {{ ref('stg_bronze__kafka_records') }}
),

accounted as (
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        kafka_row_index
    from {{ ref('change_events') }}
    union all
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as kafka_row_index
    from {{ ref('control_events') }}
    union all
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as kafka_row_index
    from {{ ref('captured_ddl') }}
    union all
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as kafka_row_index
    from {{ ref('quarantine') }}
),

accounted_counts as (
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        count(*) as n_rows,
        count(distinct kafka_row_index) as n_row_indexes
    from accounted
    group by 1, 2, 3
),

final as (
    select
        kafka_records.topic,
        kafka_records.partition,
        kafka_records.offset,
        coalesce(accounted_counts.n_rows, 0) as n_rows,
        accounted_counts.n_row_indexes
    from kafka_records
    left join accounted_counts
        on kafka_records.topic = accounted_counts.kafka_topic
        and kafka_records.partition = accounted_counts.kafka_partition
        and kafka_records.offset = accounted_counts.kafka_offset
    where accounted_counts.n_rows is null
        or accounted_counts.n_rows != accounted_counts.n_row_indexes
)

select * from final
