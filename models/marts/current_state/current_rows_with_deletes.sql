{#
    Soft-delete view: one row per source row identity that has a version (source identity +
    row_key), its current version in gold.int_row_versions (the current version of
    gold.row_history), live or deleted. A deleted row keeps the values it had when it ended,
    with is_deleted, deleted_at (event time of the delete, key move or truncate that ended it,
    UTC) and deleted_ordering_key. gold.current_rows is its live rows (both from the macro
    current_versions, macros/cdc_gold.sql).
#}

{{ config(materialized='view') }}

with

current_versions as (
    {{ current_versions(ref('int_row_versions')) }}
),

final as (
    select * from current_versions
)

select * from final
