{#
    Soft-delete view: one row per source row identity ever seen (source identity + row_key),
    its latest state from gold.row_history's current version, live or deleted. A deleted row
    keeps the values it had when it ended, with is_deleted, deleted_at (event time of the
    delete, key move or truncate that ended it, UTC) and deleted_ordering_key. The live rows
    are gold.current_rows, plus truncates applied.
#}

{{ config(materialized='view') }}

with

row_history as (
    select * from {{ ref('row_history') }}
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_values,
        is_deleted,
        case when is_deleted then valid_from end as deleted_at,
        case when is_deleted then valid_from_ordering_key end as deleted_ordering_key,
        case
            when not is_deleted then null
            when change_kind = 'change' then 'delete'
            else change_kind
        end as deleted_by,
        moved_to_row_key,
        op as last_op,
        valid_from_ordering_key as last_ordering_key,
        valid_from as last_event_time,
        version_number as n_versions
    from row_history
    where is_current
)

select * from final
