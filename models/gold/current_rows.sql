{#
    Current state of every live source row: the live rows of gold.row_states (which holds the
    latest state by ordering key of every row identity, tombstones included, and explains the
    merge of partial after images and key moves), with truncates applied.

    - A delete leaves no row, and an older change delivered late cannot bring the row back.
    - A truncate (silver.table_truncates) removes every row of its table whose latest change
      is older than the truncate; a column value set before the truncate is not carried over.
    - Duplicate deliveries change nothing; ties in the ordering key cannot occur between
      different changes (it ends in Kafka partition, offset, row index and topic: equal format
      ordering fields are broken by partition, offset, then topic name).

    A view: it costs nothing to build, and what it reads is one row per row identity.
#}

{{ config(materialized='view') }}

with

row_states as (
    select * from {{ ref('row_states') }}
),

table_truncates as (
    select * from {{ ref('table_truncates') }}
),

latest_truncates as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        max(ordering_key) as truncate_ordering_key
    from table_truncates
    group by 1, 2, 3, 4
),

live_rows as (
    select
        row_states.*,
        latest_truncates.truncate_ordering_key
    from row_states
    left join latest_truncates
        on row_states.source_format = latest_truncates.source_format
        and row_states.source_database <=> latest_truncates.source_database
        and row_states.source_schema <=> latest_truncates.source_schema
        and row_states.source_table = latest_truncates.source_table
    where not row_states.is_deleted
        and (
            latest_truncates.truncate_ordering_key is null
            or row_states.last_change.ordering_key > latest_truncates.truncate_ordering_key
        )
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        map_from_entries(
            transform(
                array_sort(
                    filter(
                        map_entries(column_entries),
                        column_entry -> truncate_ordering_key is null
                        or column_entry.value.ordering_key > truncate_ordering_key
                    )
                ),
                column_entry -> struct(column_entry.key, column_entry.value.value)
            )
        ) as row_values,
        last_change.op as last_op,
        last_change.ordering_key as last_ordering_key,
        last_change.event_time as last_event_time
    from live_rows
)

select * from final
