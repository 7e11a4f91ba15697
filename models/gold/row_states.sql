{#
    The current state of every source row identity ever seen, deleted ones included (their
    tombstone keeps an older change delivered late from bringing the row back). The working
    table behind gold.current_rows; one row per (source identity, row_key).

    Incremental by design (partition-scoped overwrite): the table is partitioned by row_bucket,
    a hash of the row identity in var('cdc_row_buckets') buckets (changing it needs
    --full-refresh). A run reads the changes of silver.change_events resolved after the
    newest batch it already applied (resolved_batch_id), and rewrites only the buckets those
    changes touch, merging each touched row's stored state with its new changes. The merge is
    the same computation as a full build, because a state is kept in a form that merges like
    the changes themselves:

    - last_change: the change with the highest ordering key (a delete wins a tie).
    - whole_row_ordering_key: the ordering key of the latest change that states the whole row
      or ends it (insert, snapshot, full update, delete, key move away).
    - column_entries: column -> (value text, ordering key of the change that set it), for the
      changes since that whole-row change. A partial after image (after_image_is_partial)
      provides only some columns: each column keeps the value of the latest change that
      provided it; NULL sets NULL. A partial change also states the columns of its own
      before image it did not change (Shareplex sends the identifying columns there).

    Key moves: an update whose before_row_key differs from its row_key ends the row under the
    old key at the update's ordering key. A partial change that moves the key carries the old
    key's earlier changes over to the new key (one move deep); these are read from the whole
    of silver.change_events for the old keys involved, so a late change of the old key still
    reaches the new key.

    The result equals `dbt build --full-refresh` (tested).
#}

{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['row_bucket'],
    on_schema_change='fail',
) }}

with

change_events as (
    select * from {{ ref('change_events') }}
),

{% if is_incremental() %}
applied_batches as (
    select coalesce(max(last_resolved_batch_id), -1) as last_resolved_batch_id
    from {{ this }}
),

new_changes as (
    select change_events.*
    from change_events
    cross join applied_batches
    where change_events.resolved_batch_id > applied_batches.last_resolved_batch_id
),
{% else %}
new_changes as (
    select * from change_events
),
{% endif %}

{# one version per change: the row's values as the change states them #}
change_versions as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        op,
        ordering_key,
        event_time,
        resolved_batch_id,
        op = 'delete' as is_deleted,
        op != 'delete' and after_image_is_partial as is_partial,
        case
            when op = 'delete' then null
            {# a partial change also states the columns of its before image it did not change #}
            when after_image_is_partial then map_concat(
                map_filter(
                    coalesce(before_image, map()),
                    (column_name, column_value) -> not map_contains_key(after_image, column_name)
                ),
                after_image
            )
            else coalesce(after_image, before_image)
        end as row_values
    from new_changes
),

{# an update that moves the key ends the row under its old key #}
key_moves as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        before_row_key as row_key,
        op,
        ordering_key,
        event_time,
        resolved_batch_id,
        true as is_deleted,
        false as is_partial,
        cast(null as map<string, string>) as row_values
    from new_changes
    where before_row_key is not null
        and before_row_key != row_key
),

{# partial changes that move the key, over the whole history #}
partial_key_moves as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        before_row_key,
        ordering_key,
        resolved_batch_id
    from change_events
    where after_image_is_partial
        and before_row_key != row_key
),

{# the old key's changes before each partial key move, stated under the new key; in an
   incremental run only pairs where the move or the old key's change is new #}
moved_histories as (
    select
        old_key_changes.source_format,
        old_key_changes.source_database,
        old_key_changes.source_schema,
        old_key_changes.source_table,
        partial_key_moves.row_key,
        old_key_changes.op,
        old_key_changes.ordering_key,
        old_key_changes.event_time,
        greatest(old_key_changes.resolved_batch_id, partial_key_moves.resolved_batch_id)
            as resolved_batch_id,
        old_key_changes.op = 'delete' as is_deleted,
        old_key_changes.op != 'delete' and old_key_changes.after_image_is_partial as is_partial,
        case
            when old_key_changes.op = 'delete' then null
            when old_key_changes.after_image_is_partial then map_concat(
                map_filter(
                    coalesce(old_key_changes.before_image, map()),
                    (column_name, column_value)
                    -> not map_contains_key(old_key_changes.after_image, column_name)
                ),
                old_key_changes.after_image
            )
            else coalesce(old_key_changes.after_image, old_key_changes.before_image)
        end as row_values
    from partial_key_moves
    inner join change_events as old_key_changes
        on partial_key_moves.source_format = old_key_changes.source_format
        and partial_key_moves.source_database <=> old_key_changes.source_database
        and partial_key_moves.source_schema <=> old_key_changes.source_schema
        and partial_key_moves.source_table = old_key_changes.source_table
        and partial_key_moves.before_row_key = old_key_changes.row_key
        and old_key_changes.ordering_key < partial_key_moves.ordering_key
    {% if is_incremental() %}
    cross join applied_batches
    where greatest(old_key_changes.resolved_batch_id, partial_key_moves.resolved_batch_id)
        > applied_batches.last_resolved_batch_id
    {% endif %}
),

new_versions as (
    select
        *,
        pmod(
            xxhash64(source_format, source_database, source_schema, source_table, row_key),
            {{ var('cdc_row_buckets') }}
        ) as row_bucket
    from (
        select * from change_versions
        union all
        select * from key_moves
        union all
        select * from moved_histories
    )
),

{# every contribution to a row's state: the new versions, and the stored state of every row
   in a bucket they touch (all of it is rewritten) #}
state_contributions as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_bucket,
        struct(op, ordering_key, event_time, is_deleted) as change,
        case when not is_partial then ordering_key end as whole_row_ordering_key,
        case
            when not is_deleted then transform_values(
                row_values,
                (column_name, column_value)
                -> named_struct('value', column_value, 'ordering_key', ordering_key)
            )
        end as column_entries,
        resolved_batch_id
    from new_versions
    {% if is_incremental() %}
    union all
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_bucket,
        last_change as change,
        whole_row_ordering_key,
        column_entries,
        last_resolved_batch_id as resolved_batch_id
    from {{ this }}
    where row_bucket in (select distinct row_bucket from new_versions)
    {% endif %}
),

row_summaries as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_bucket,
        max_by(change, struct(change.ordering_key, change.is_deleted)) as last_change,
        max(whole_row_ordering_key) as whole_row_ordering_key,
        max(resolved_batch_id) as last_resolved_batch_id
    from state_contributions
    group by 1, 2, 3, 4, 5, 6
),

{# each column: the latest value since the row's latest whole-row change #}
column_values as (
    select
        state_contributions.source_format,
        state_contributions.source_database,
        state_contributions.source_schema,
        state_contributions.source_table,
        state_contributions.row_key,
        entries.column_name,
        max_by(entries.entry, entries.entry.ordering_key) as entry
    from state_contributions
    inner join row_summaries
        on state_contributions.source_format = row_summaries.source_format
        and state_contributions.source_database <=> row_summaries.source_database
        and state_contributions.source_schema <=> row_summaries.source_schema
        and state_contributions.source_table = row_summaries.source_table
        and state_contributions.row_key = row_summaries.row_key
    lateral view explode(state_contributions.column_entries) entries as column_name, entry
    where row_summaries.whole_row_ordering_key is null
        or entries.entry.ordering_key >= row_summaries.whole_row_ordering_key
    group by 1, 2, 3, 4, 5, 6
),

row_entries as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        map_from_entries(collect_list(struct(column_name, entry))) as column_entries
    from column_values
    group by 1, 2, 3, 4, 5
),

final as (
    select
        row_summaries.source_format,
        row_summaries.source_database,
        row_summaries.source_schema,
        row_summaries.source_table,
        row_summaries.row_key,
        row_summaries.last_change,
        row_summaries.last_change.is_deleted as is_deleted,
        row_summaries.whole_row_ordering_key,
        coalesce(
            row_entries.column_entries,
            cast(map() as map<string, struct<value: string, ordering_key: string>>)
        ) as column_entries,
        row_summaries.last_resolved_batch_id,
        row_summaries.row_bucket
    from row_summaries
    left join row_entries
        on row_summaries.source_format = row_entries.source_format
        and row_summaries.source_database <=> row_entries.source_database
        and row_summaries.source_schema <=> row_entries.source_schema
        and row_summaries.source_table = row_entries.source_table
        and row_summaries.row_key = row_entries.row_key
)

select * from final
