{#
    Soft-delete view: one row per source row identity that has a version (source identity +
    row_key), its current version in gold.int_row_versions (the current version of
    gold.row_history), live or deleted. A deleted row keeps the values it had when it ended,
    with is_deleted, deleted_at (event time of the delete, key move or truncate that ended it,
    UTC) and deleted_ordering_key. gold.current_rows is its live rows.
#}

{{ config(materialized='view') }}

with

row_versions as (
    select * from {{ ref('int_row_versions') }}
    where current_version is not null
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        current_version.row_values,
        current_version.is_deleted,
        case when current_version.is_deleted then current_version.event_time end as deleted_at,
        case
            when current_version.is_deleted then current_version.ordering_key
        end as deleted_ordering_key,
        case
            when not current_version.is_deleted then null
            when current_version.change_kind = 'change' then 'delete'
            else current_version.change_kind
        end as deleted_by,
        current_version.moved_to_row_key,
        current_version.op as last_op,
        current_version.ordering_key as last_ordering_key,
        current_version.event_time as last_event_time,
        n_versions
    from row_versions
)

select * from final
