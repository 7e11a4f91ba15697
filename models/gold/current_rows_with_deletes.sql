{#
    Soft-delete table: one row per source row identity that has a version (source identity +
    row_key), its current version in gold.int_row_versions (the current version of
    gold.row_history), live or deleted. A deleted row keeps the values it had when it ended,
    with is_deleted, deleted_at (event time of the delete, key move or truncate that ended it,
    UTC) and deleted_ordering_key. gold.current_rows and the typed gold views read its rows
    that are not deleted.

    A table, rewritten by every build from the current versions alone (macro
    current_versions, macros/cdc_gold.sql; not the versions arrays): gold's current state,
    one row per identity, in a few files. A query of one source table's rows (a typed gold
    view and its key test) reads these files instead of every bucket of
    gold.int_row_versions: a typed key test's query 0.59 -> 0.30 s on a 200-table
    lake (bench/HISTORY.md 2026-11-28). Its cost is the size of the current state, not of
    the history.
#}

with

current_versions as (
    {{ current_versions(ref('int_row_versions')) }}
),

final as (
    select * from current_versions
)

select * from final
