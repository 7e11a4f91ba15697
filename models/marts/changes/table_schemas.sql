{#
    Every version of every source table's schema that the stream has declared: per source
    table and schema version, the column names in order, their source types, the key columns,
    where the version was first and last seen (ordering key, event time), and the schema
    changes of silver.schema_changes (column changes, create table) captured since the
    table's previous version, up to this version's first sighting (schema_change_ids): the
    versions follow the captured DDL.

    A version is a distinct (column_types, key_columns, source_schema_version) of the table,
    from whatever each format carries (DataWorks dataColumn, Canal mysqlType, DTS fields,
    Lindorm schema, Qlik metadata messages) on change rows and captured DDL records. Formats
    that declare no types (DataHub Tuple, Shareplex) have no rows here. schema_version is the
    format's own version where it has one (Qlik tableVersion), else the position of the
    version in first-seen order (1, 2, ...). Keys of all_columns tables are not declared keys
    and are left NULL.

    Read from int_schema_versions_by_batch (the versions each ingest batch declares), so a
    build reads the change events of the batches it computes, not every change event; this
    table, one row per version, is then rebuilt whole from those rows and schema_changes.
#}

with

versions_by_batch as (
    select * from {{ ref('int_schema_versions_by_batch') }}
),

schema_changes as (
    select * from {{ ref('schema_changes') }}
),

{# each version's sightings over every batch (min_by: the event time of the first sighting) #}
versions as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        column_entries,
        key_columns,
        source_schema_version,
        min(first_seen_ordering_key) as first_seen_ordering_key,
        max(last_seen_ordering_key) as last_seen_ordering_key,
        min_by(first_seen_event_time, first_seen_ordering_key) as first_seen_event_time,
        sum(n_events) as n_events
    from versions_by_batch
    group by 1, 2, 3, 4, 5, 6, 7
),

numbered as (
    select
        *,
        lag(first_seen_ordering_key) over (
            partition by source_format, source_database, source_schema, source_table
            order by first_seen_ordering_key
        ) as previous_first_seen_ordering_key
    from versions
),

{# the column changes captured between the previous version's first sighting and this one's #}
column_changes as (
    select
        schema_changes.schema_change_id,
        schema_changes.source_format,
        schema_changes.source_database,
        schema_changes.source_schema,
        schema_changes.source_table,
        schema_changes.ordering_key
    from schema_changes
    where
        schema_changes.change_kind in (
            'create_table', 'add_column', 'drop_column', 'rename_column', 'change_column_type'
        )
),

followed_changes as (
    select
        numbered.source_format,
        numbered.source_database,
        numbered.source_schema,
        numbered.source_table,
        numbered.first_seen_ordering_key,
        array_sort(collect_list(column_changes.schema_change_id)) as schema_change_ids
    from numbered
    inner join column_changes
        on numbered.source_format = column_changes.source_format
        and numbered.source_database <=> column_changes.source_database
        and numbered.source_schema <=> column_changes.source_schema
        and numbered.source_table = column_changes.source_table
        and numbered.first_seen_ordering_key >= column_changes.ordering_key
        and (
            numbered.previous_first_seen_ordering_key is null
            or numbered.previous_first_seen_ordering_key < column_changes.ordering_key
        )
    group by 1, 2, 3, 4, 5
),

final as (
    select
        numbered.source_format,
        numbered.source_database,
        numbered.source_schema,
        numbered.source_table,
        coalesce(
            numbered.source_schema_version,
            cast(
                row_number() over (
                    partition by
                        numbered.source_format,
                        numbered.source_database,
                        numbered.source_schema,
                        numbered.source_table
                    order by numbered.first_seen_ordering_key
                ) as string
            )
        ) as schema_version,
        transform(numbered.column_entries, entry -> entry.key) as column_names,
        map_from_entries(numbered.column_entries) as column_types,
        numbered.key_columns,
        numbered.first_seen_ordering_key,
        numbered.last_seen_ordering_key,
        numbered.first_seen_event_time,
        numbered.n_events,
        coalesce(followed_changes.schema_change_ids, array()) as schema_change_ids
    from numbered
    left join followed_changes
        on numbered.source_format = followed_changes.source_format
        and numbered.source_database <=> followed_changes.source_database
        and numbered.source_schema <=> followed_changes.source_schema
        and numbered.source_table = followed_changes.source_table
        and numbered.first_seen_ordering_key = followed_changes.first_seen_ordering_key
)

select * from final
