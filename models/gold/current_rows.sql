{#
    Current state of every live source row, computed from the ordering key, never from arrival
    order: per (source identity, row_key), the change with the highest ordering key wins.

    - A delete wins like any change and leaves no row: an older change delivered late cannot
      bring the row back (its ordering key is lower).
    - A duplicate delivery of a change has the same content and ordering key up to the Kafka
      offset, so it changes nothing.
    - An update that changes the key also ends the row under its old key (before_row_key), at
      the update's ordering key.
    - An update-before half whose after half has not arrived leaves the row as its before
      image, i.e. as it was.
    - Partial after images (after_image_is_partial: Shareplex upd, Qlik columnMask, DTS
      EmptyObject NONE) hold only the columns the message provided: each column takes its
      value from the latest change that provided it, since the latest whole-row change (insert,
      snapshot, full update or delete) of the row. A NULL value sets NULL. A partial change
      also states the columns of its own before image that it did not change (Shareplex
      sends the identifying columns there), so a row first seen through a partial update
      still has its key columns. A partial change that moves the row to a new key carries
      the old key's earlier changes over to the new key (one move deep).
#}

with

change_events as (
    select * from {{ ref('change_events') }}
),

row_states as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        op,
        ordering_key,
        event_time,
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
        true as is_deleted,
        false as is_partial,
        cast(null as map<string, string>) as row_values
    from change_events
    where before_row_key is not null
        and before_row_key != row_key
),

{# a partial change that moves the row to a new key takes the old key's history along, so
   the columns it did not provide keep their values under the new key (one move deep) #}
moved_histories as (
    select
        row_states.source_format,
        row_states.source_database,
        row_states.source_schema,
        row_states.source_table,
        change_events.row_key,
        row_states.op,
        row_states.ordering_key,
        row_states.event_time,
        row_states.is_deleted,
        row_states.is_partial,
        row_states.row_values
    from change_events
    inner join row_states
        on change_events.source_format = row_states.source_format
        and change_events.source_database <=> row_states.source_database
        and change_events.source_schema <=> row_states.source_schema
        and change_events.source_table = row_states.source_table
        and change_events.before_row_key = row_states.row_key
        and row_states.ordering_key < change_events.ordering_key
    where change_events.after_image_is_partial
        and change_events.before_row_key != change_events.row_key
),

row_versions as (
    select * from row_states
    union all
    select * from key_moves
    union all
    select * from moved_histories
),

latest as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        max_by(
            struct(op, ordering_key, event_time, is_deleted, is_partial, row_values),
            struct(ordering_key, is_deleted)
        ) as last_change,
        {# the latest change that states the whole row (or its end) #}
        max(case when not is_partial then ordering_key end) as whole_row_ordering_key,
        max(case when is_partial then ordering_key end) as partial_ordering_key
    from row_versions
    group by source_format, source_database, source_schema, source_table, row_key
),

live_rows as (
    select
        *,
        coalesce(partial_ordering_key > whole_row_ordering_key, partial_ordering_key is not null)
            as needs_merge
    from latest
    where not last_change.is_deleted
),

{# rows whose latest changes are partial: each column from the latest change providing it #}
merged_columns as (
    select
        row_versions.source_format,
        row_versions.source_database,
        row_versions.source_schema,
        row_versions.source_table,
        row_versions.row_key,
        image_entries.column_name,
        max_by(image_entries.column_value, row_versions.ordering_key) as column_value
    from row_versions
    inner join live_rows
        on row_versions.source_format = live_rows.source_format
        and row_versions.source_database <=> live_rows.source_database
        and row_versions.source_schema <=> live_rows.source_schema
        and row_versions.source_table = live_rows.source_table
        and row_versions.row_key = live_rows.row_key
        and live_rows.needs_merge
    lateral view explode(row_versions.row_values) image_entries as column_name, column_value
    where not row_versions.is_deleted
        and (
            live_rows.whole_row_ordering_key is null
            or row_versions.ordering_key >= live_rows.whole_row_ordering_key
        )
    group by 1, 2, 3, 4, 5, 6
),

merged_rows as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        map_from_entries(sort_array(collect_list(struct(column_name, column_value))))
            as row_values
    from merged_columns
    group by 1, 2, 3, 4, 5
),

final as (
    select
        live_rows.source_format,
        live_rows.source_database,
        live_rows.source_schema,
        live_rows.source_table,
        live_rows.row_key,
        case
            when live_rows.needs_merge then merged_rows.row_values
            else live_rows.last_change.row_values
        end as row_values,
        live_rows.last_change.op as last_op,
        live_rows.last_change.ordering_key as last_ordering_key,
        live_rows.last_change.event_time as last_event_time
    from live_rows
    left join merged_rows
        on live_rows.needs_merge
        and live_rows.source_format = merged_rows.source_format
        and live_rows.source_database <=> merged_rows.source_database
        and live_rows.source_schema <=> merged_rows.source_schema
        and live_rows.source_table = merged_rows.source_table
        and live_rows.row_key = merged_rows.row_key
)

select * from final
