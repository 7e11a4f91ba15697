{#
    The current state of every source row identity ever seen, deleted ones included (their
    tombstone keeps an older change delivered late from bringing the row back). The working
    table behind gold.current_rows; one row per (source identity, row_key).

    Incremental by design (partition-scoped overwrite): the table is partitioned by row_bucket,
    a hash of the row identity in var('cdc_row_buckets') buckets (changing it needs
    --full-refresh). A run reads the changes of silver.change_events resolved after the
    newest batch it already applied (resolved_batch_id), and rewrites only the buckets those
    changes touch, merging each row's stored state with its new changes in one aggregation
    (the other rows of those buckets merge alone, which gives them back as they are). The
    merge is the same computation as a full build, because a state is kept in a form that
    merges like the changes themselves:

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
    key's earlier changes over to the new key, through chains of moves (a recursive CTE);
    these are read from the whole of silver.change_events for the old keys involved, so a
    late change of an old key still reaches the new key. A run first asks whether
    silver.change_events holds any partial key move (has_rows); without one it leaves the
    recursive CTE out, since Spark runs even an empty recursion as extra jobs (about 1.3 s
    warm of 3.8 s on a 20,000-change lake).

    Keys learned later: a Shareplex insert carries no key; it is keyed by the key its table's
    upd / del messages send (key_source unique_key), and by all its columns while none has
    arrived. When the key arrives in a later batch, staging computes the insert's batch again
    (its resolved_batch_id becomes that later batch): the run then removes the insert's
    provisional all-columns identity, which a full build never has.

    The result equals `dbt build --full-refresh` (tested).
#}

{{ config(
    materialized='incremental',
    incremental_strategy='insert_overwrite',
    partition_by=['row_bucket'],
    on_schema_change='fail',
) }}

{# the newest batch an earlier run applied: a literal, so Spark prunes with it #}
{% set applied_batch_id = held_max('last_resolved_batch_id') if is_incremental() else -1 %}

{# a partial change that moves the key (partial_key_moves below); asked of the whole history #}
{% set partial_key_move = 'after_image_is_partial and before_row_key != row_key' %}
{% set with_partial_key_moves = has_rows(ref('change_events'), partial_key_move) %}

with recursive

change_events as (
    select * from {{ ref('change_events') }}
),

{# one version per change: the row's values as the change states them (read lazily: a run
   uses the new ones, and the old keys' history of partial key moves) #}
all_change_versions as (
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
    from change_events
),

change_versions as (
    select all_change_versions.*
    from all_change_versions
    {% if is_incremental() %}
    where resolved_batch_id > {{ applied_batch_id }}
    {% endif %}
),

{% if is_incremental() %}
{# changes built in an earlier run and keyed again now by a key learned since (their batch was
   computed again: ingest_batch_id already applied, resolved_batch_id new): the identity they
   had before, all the columns of their image, is removed #}
retracted_identities as (
    select distinct
        source_format,
        source_database,
        source_schema,
        source_table,
        provisional_row_key as row_key,
        pmod(
            xxhash64(
                source_format, source_database, source_schema, source_table, provisional_row_key
            ),
            {{ var('cdc_row_buckets') }}
        ) as row_bucket
    from (
        select
            change_events.*,
            {{ canonical_row_key('after_image', 'map_keys(after_image)') }} as provisional_row_key
        from change_events
        where change_events.resolved_batch_id > {{ applied_batch_id }}
            and change_events.ingest_batch_id <= {{ applied_batch_id }}
            and change_events.key_source = 'unique_key'
            and change_events.after_image is not null
    )
    where provisional_row_key != row_key
),
{% endif %}

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
    from change_events
    where before_row_key is not null
        and before_row_key != row_key
        {% if is_incremental() %}
        and resolved_batch_id > {{ applied_batch_id }}
        {% endif %}
),

{% if with_partial_key_moves %}
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
    where {{ partial_key_move }}
),

{# A partial change that moves the row to a new key leaves the columns it did not provide to
   the old key's history: every version of the old key before the move is also a version of
   the new key, through any chain of such moves (each hop at a later move). #}
inherited_versions (
    source_format,
    source_database,
    source_schema,
    source_table,
    row_key,
    op,
    ordering_key,
    event_time,
    resolved_batch_id,
    is_deleted,
    is_partial,
    row_values,
    move_ordering_key
) as (
    select
        old_key_versions.source_format,
        old_key_versions.source_database,
        old_key_versions.source_schema,
        old_key_versions.source_table,
        partial_key_moves.row_key,
        old_key_versions.op,
        old_key_versions.ordering_key,
        old_key_versions.event_time,
        greatest(old_key_versions.resolved_batch_id, partial_key_moves.resolved_batch_id),
        old_key_versions.is_deleted,
        old_key_versions.is_partial,
        old_key_versions.row_values,
        partial_key_moves.ordering_key
    from partial_key_moves
    inner join all_change_versions as old_key_versions
        on partial_key_moves.source_format = old_key_versions.source_format
        and partial_key_moves.source_database <=> old_key_versions.source_database
        and partial_key_moves.source_schema <=> old_key_versions.source_schema
        and partial_key_moves.source_table = old_key_versions.source_table
        and partial_key_moves.before_row_key = old_key_versions.row_key
        and old_key_versions.ordering_key < partial_key_moves.ordering_key
    union all
    select
        inherited_versions.source_format,
        inherited_versions.source_database,
        inherited_versions.source_schema,
        inherited_versions.source_table,
        partial_key_moves.row_key,
        inherited_versions.op,
        inherited_versions.ordering_key,
        inherited_versions.event_time,
        greatest(inherited_versions.resolved_batch_id, partial_key_moves.resolved_batch_id),
        inherited_versions.is_deleted,
        inherited_versions.is_partial,
        inherited_versions.row_values,
        partial_key_moves.ordering_key
    from inherited_versions
    inner join partial_key_moves
        on inherited_versions.source_format = partial_key_moves.source_format
        and inherited_versions.source_database <=> partial_key_moves.source_database
        and inherited_versions.source_schema <=> partial_key_moves.source_schema
        and inherited_versions.source_table = partial_key_moves.source_table
        and inherited_versions.row_key = partial_key_moves.before_row_key
        and inherited_versions.move_ordering_key < partial_key_moves.ordering_key
),

{# in an incremental run, the inherited versions where the move or the version is new #}
moved_histories as (
    select inherited_versions.* except (move_ordering_key)
    from inherited_versions
    {% if is_incremental() %}
    where resolved_batch_id > {{ applied_batch_id }}
    {% endif %}
),
{% endif %}

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
        {% if with_partial_key_moves %}
        union all
        select * from moved_histories
        {% endif %}
    )
),

{% if is_incremental() %}
{# the stored state of every row in a bucket the new versions touch (all of it is written
   again; a row with no new version merges alone, which gives its state back as it is), but a
   retracted one (a bucket whose only rows are retracted would keep its old files
   - dynamic partition overwrite writes only buckets that have rows - which takes a lake of a
   few rows) #}
held_states as (
    select *
    from {{ this }} as held_states
    where row_bucket in (
        select row_bucket from new_versions
        union
        select row_bucket from retracted_identities
    )
        and not exists (
            select 1
            from retracted_identities
            where retracted_identities.source_format = held_states.source_format
                and retracted_identities.source_database <=> held_states.source_database
                and retracted_identities.source_schema <=> held_states.source_schema
                and retracted_identities.source_table = held_states.source_table
                and retracted_identities.row_key = held_states.row_key
        )
),
{% endif %}

{# every contribution to a row's state: its new versions and its stored state #}
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
    from held_states
    {% endif %}
),

{# one pass over the contributions: the latest change, the latest whole-row change and every
   column entry; then each column keeps its latest entry since that whole-row change #}
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
        max(resolved_batch_id) as last_resolved_batch_id,
        flatten(collect_list(map_entries(column_entries))) as column_entry_list
    from state_contributions
    group by 1, 2, 3, 4, 5, 6
),

{# sorted by column name, then ordering key: a column's last entry is its latest, and a held
   row merged alone, the same row merged with new changes and the same row built by a full
   refresh hold their map in one order, whatever order the shuffle gave #}
sorted_entries as (
    select
        *,
        array_sort(
            transform(
                filter(
                    column_entry_list,
                    column_entry -> whole_row_ordering_key is null
                    or column_entry.value.ordering_key >= whole_row_ordering_key
                ),
                column_entry -> named_struct(
                    'column_name', column_entry.key,
                    'ordering_key', column_entry.value.ordering_key,
                    'entry', column_entry.value
                )
            )
        ) as entries
    from row_summaries
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        last_change,
        last_change.is_deleted as is_deleted,
        whole_row_ordering_key,
        map_from_entries(
            transform(
                filter(
                    entries,
                    {# position is 0-based, try_element_at 1-based: + 2 is the next entry #}
                    (column_entry, position) -> try_element_at(entries, position + 2).column_name
                    is distinct from column_entry.column_name
                ),
                column_entry -> struct(column_entry.column_name, column_entry.entry)
            )
        ) as column_entries,
        last_resolved_batch_id,
        row_bucket
    from sorted_entries
)

select * from final
