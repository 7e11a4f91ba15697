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
        case when op != 'delete' then coalesce(after_image, before_image) end as row_values
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
        cast(null as map<string, string>) as row_values
    from change_events
    where before_row_key is not null
        and before_row_key != row_key
),

row_versions as (
    select * from row_states
    union all
    select * from key_moves
),

latest as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        max_by(
            struct(op, ordering_key, event_time, is_deleted, row_values),
            struct(ordering_key, is_deleted)
        ) as last_change
    from row_versions
    group by source_format, source_database, source_schema, source_table, row_key
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        last_change.row_values as row_values,
        last_change.op as last_op,
        last_change.ordering_key as last_ordering_key,
        last_change.event_time as last_event_time
    from latest
    where not last_change.is_deleted
)

select * from final
