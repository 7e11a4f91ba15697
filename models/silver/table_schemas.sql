{#
    Every version of every source table's schema that the stream has declared: per source
    table and schema version, the column names in order, their source types, the key columns,
    and where the version was first and last seen (ordering key, event time).

    A version is a distinct (column_types, key_columns, source_schema_version) of the table,
    from whatever each format carries (DataWorks dataColumn, Canal mysqlType, DTS fields,
    Lindorm schema, Qlik metadata messages) on change rows and schema-change rows. Formats
    that declare no types (DataHub Tuple, Shareplex) have no rows here. schema_version is the
    format's own version where it has one (Qlik tableVersion), else the position of the
    version in first-seen order (1, 2, ...). Keys of all_columns tables are not declared keys
    and are left NULL.
#}

with

change_events as (
    select * from {{ ref('change_events') }}
),

schema_changes as (
    select * from {{ ref('schema_changes') }}
),

declared as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        map_entries(column_types) as column_entries,
        case when key_source != 'all_columns' then key_columns end as key_columns,
        source_schema_version,
        ordering_key,
        event_time
    from change_events
    where column_types is not null
    union all
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        map_entries(column_types) as column_entries,
        key_columns,
        source_schema_version,
        ordering_key,
        event_time
    from schema_changes
    where column_types is not null
),

versions as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        column_entries,
        key_columns,
        source_schema_version,
        min(ordering_key) as first_seen_ordering_key,
        max(ordering_key) as last_seen_ordering_key,
        min_by(event_time, ordering_key) as first_seen_event_time,
        count(*) as n_events
    from declared
    group by 1, 2, 3, 4, 5, 6, 7
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        coalesce(
            source_schema_version,
            cast(
                row_number() over (
                    partition by source_format, source_database, source_schema, source_table
                    order by first_seen_ordering_key
                ) as string
            )
        ) as schema_version,
        transform(column_entries, entry -> entry.key) as column_names,
        map_from_entries(column_entries) as column_types,
        key_columns,
        first_seen_ordering_key,
        last_seen_ordering_key,
        first_seen_event_time,
        n_events
    from versions
)

select * from final
