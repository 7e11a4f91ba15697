{#
    The schema versions each ingest batch declares: per batch and per declared version of a
    source table (column_types as entries, key_columns, source_schema_version), where the batch's
    change rows and captured DDL records first and last declared it and how many did.
    silver.table_schemas adds the batches up, so a build reads the change events of the batches
    it computes, not every change event of the history.

    What a version is and which keys count: silver.table_schemas. A change row's batch is its
    record's ingest_batch_id; resolved_batch_id is the newest verdict among the batch's rows
    (a Qlik data message decoded when its metadata arrived, a split update's half completed
    later: that later batch).

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run computes the
    batches of change_events holding a row resolved after the newest verdict it holds (the new
    batches, and older ones a new record completed: the partitions change_events rewrote since)
    and the new batches of captured_ddl, each from all of that batch's rows, as a full build
    does. A batch keeps its records' rows in change_events when it is rewritten (a split update
    is completed, a late decoding added), so a rewritten batch still declares what it declared.
#}

{{ batch_partitioned_config() }}

{% if is_incremental() %}
{% set held_batch = held_max('resolved_batch_id') %}
{% set batches = batches_resolved_after(ref('change_events'), held_batch) %}
{% endif %}

with

change_events as (
    select * from {{ ref('change_events') }}
    {% if is_incremental() %}
    where {{ batch_filter(batches) }}
    {% endif %}
),

captured_ddl as (
    select * from {{ ref('captured_ddl') }}
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }} or {{ batch_filter(batches) }}
    {% endif %}
),

declared as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        map_entries(column_types) as column_entries,
        case when key_source != 'all_columns' then key_columns end as key_columns,
        source_schema_version,
        ordering_key,
        event_time,
        ingest_batch_id,
        coalesce(resolved_batch_id, ingest_batch_id) as resolved_batch_id
    from change_events
    where column_types is not null
    union all
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        map_entries(column_types) as column_entries,
        key_columns,
        source_schema_version,
        ordering_key,
        event_time,
        ingest_batch_id,
        ingest_batch_id as resolved_batch_id
    from captured_ddl
    where column_types is not null
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        column_entries,
        key_columns,
        source_schema_version,
        ingest_batch_id,
        min(ordering_key) as first_seen_ordering_key,
        max(ordering_key) as last_seen_ordering_key,
        min_by(event_time, ordering_key) as first_seen_event_time,
        count(*) as n_events,
        max(resolved_batch_id) as resolved_batch_id
    from declared
    group by 1, 2, 3, 4, 5, 6, 7, 8
)

select * from final
