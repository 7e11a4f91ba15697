-- Counting holds: every bronze record is accounted for in silver as change rows (one per row
-- index of a multi-row message), a control event, a captured DDL record or a quarantined record,
-- and no (record, row index) is counted twice. Returns the records that break this. The
-- records are those of the last run or build (stg_bronze__kafka_records: bronze up to the batch
-- pinned when it started); batches ingested since wait for the next build.
--
-- On an incremental build (macros/cdc_test_scope.sql: a build was recorded, no --full-refresh,
-- no var cdc_full_tests) the records checked are the new ones - of the ingest batches after the
-- last recorded build - and those whose silver rows were resolved since (a Qlik data message
-- decoded when its metadata arrived moves from quarantine to the changes): each is counted
-- against all of silver, so every new record is accounted for on every run.

{#- the group here, not only in tests/dbt/_tests.yml: it reads stg_bronze__kafka_records,
    private to group silver, and dbt's partial parsing re-parses this file without the yml's
    config when a macro it calls changes ("Parsing Error ... private to the 'silver' group") #}
{{ config(group='silver') }}

{%- set through = tested_through_batch() %}
{#-
    the few records of an incremental build: silver's rows are matched against them in memory;
    on a full test every record is checked, so no row is left out and there is nothing to match
#}
{%- set hint = '/*+ broadcast(checked_records) */' if through is not none else '' %}

with

kafka_records as (
    select
        topic,
        partition,
        offset,
        ingest_batch_id
    from {{ ref('stg_bronze__kafka_records') }}
),

accounted as (
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        kafka_row_index,
        resolved_batch_id
    from {{ ref('change_events') }}
    union all
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as kafka_row_index,
        ingest_batch_id as resolved_batch_id
    from {{ ref('control_events') }}
    union all
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as kafka_row_index,
        null as resolved_batch_id
    from {{ ref('captured_ddl') }}
    union all
    select
        kafka_topic,
        kafka_partition,
        kafka_offset,
        0 as kafka_row_index,
        coalesce(resolved_batch_id, ingest_batch_id) as resolved_batch_id
    from {{ ref('quarantine') }}
),

checked_records as (
    select
        topic,
        partition,
        offset
    from kafka_records
    {%- if through is not none %}
    where ingest_batch_id > {{ through }}
    union
    select
        kafka_topic as topic,
        kafka_partition as partition,
        kafka_offset as offset
    from accounted
    where resolved_batch_id > {{ through }}
    {%- endif %}
),

accounted_counts as (
    select {{ hint }}
        accounted.kafka_topic,
        accounted.kafka_partition,
        accounted.kafka_offset,
        count(*) as n_rows,
        count(distinct accounted.kafka_row_index) as n_row_indexes
    from accounted
    {%- if through is not none %}
    left semi join checked_records
        on accounted.kafka_topic = checked_records.topic
        and accounted.kafka_partition = checked_records.partition
        and accounted.kafka_offset = checked_records.offset
    {%- endif %}
    group by 1, 2, 3
),

final as (
    select
        checked_records.topic,
        checked_records.partition,
        checked_records.offset,
        coalesce(accounted_counts.n_rows, 0) as n_rows,
        accounted_counts.n_row_indexes
    from checked_records
    left join accounted_counts
        on checked_records.topic = accounted_counts.kafka_topic
        and checked_records.partition = accounted_counts.kafka_partition
        and checked_records.offset = accounted_counts.kafka_offset
    where accounted_counts.n_rows is null
        or accounted_counts.n_rows != accounted_counts.n_row_indexes
)

select * from final
