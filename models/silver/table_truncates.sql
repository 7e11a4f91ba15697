{#
    One row per captured TRUNCATE of a source table, every format, from silver.schema_changes.
    gold.row_history ends every row of the table that is live before the truncate's ordering
    key with a deleted version at that key.

    How a truncate arrives (formats.md "Normalized vocabulary"; until issue 6 classifies DDL
    with sqlglot, a truncate is recognized by its op or by the start of its statement):
    - DataWorks / DataHub Blob: op TRUNCATE (payload.ddl.text holds the statement); a QUERY
      whose text is a TRUNCATE counts too.
    - DTS Shareplex: op TRUNCATE (no statement; staging writes "TRUNCATE TABLE <meta.table>").
    - DTS Canal JSON: an isDdl message whose sql starts with TRUNCATE.
    - DTS Avro: a DDL record whose statement (afterImages) starts with TRUNCATE; its objectName
      is usually the database only, so the table comes from the statement.
    - DataHub Tuple, Lindorm and Qlik send no truncate.

    The table: the record's own source_table when it names one, else the name after TRUNCATE
    [TABLE] in the statement (quotes and backticks removed; a two-part name is database.table
    for MySQL-family dialects and schema.table otherwise, a three-part name
    database.schema.table). A statement naming several tables keeps the first one only.

    ordering_key is the record's own ordering key from the format's staging model, built
    like the ordering keys of the same format's row changes (same tuple, same widths), so it
    compares with the changes of the truncated table: DataWorks / Blob sequenceId.1.partition
    .offset; Shareplex scn.seq.1.partition.offset; Canal es.1.partition.offset.0 (a truncate in
    the same millisecond as a change is ordered by Kafka position); DTS Avro
    1.sourceTimestamp.id.partition.offset (a full-load INIT / FILL row, load rank 0, orders
    before every truncate). NULL when the record lacks the position (e.g. a DataWorks DDL
    without sequenceId): such a truncate cannot be placed and gold ignores it.
#}

{% set mysql_family = "('mysql', 'mariadb', 'polardb', 'polardb-x', 'tidb')" %}

with

schema_changes as (
    select * from {{ ref('schema_changes') }}
),

truncates as (
    select
        *,
        regexp_extract(
            ddl_text,
            '(?is)^\\s*truncate\\s+(?:table\\s+)?((?:`[^`]+`|"[^"]+"|[^\\s.;,`"]+)'
            || '(?:\\s*\\.\\s*(?:`[^`]+`|"[^"]+"|[^\\s.;,`"]+))*)',
            1
        ) as truncated_name
    from schema_changes
    where upper(ddl_op) = 'TRUNCATE'
        or ddl_text rlike '(?is)^\\s*truncate\\s'
),

named as (
    select
        *,
        transform(
            regexp_extract_all(truncated_name, '(`[^`]+`|"[^"]+"|[^\\s.;,`"]+)', 1),
            part -> regexp_replace(part, '^[`"]|[`"]$', '')
        ) as name_parts
    from truncates
),

final as (
    select
        event_id,
        source_format,
        case
            when source_table is not null then source_database
            when size(name_parts) = 3 then name_parts[0]
            when size(name_parts) = 2
                and coalesce(source_dialect, '') in {{ mysql_family }}
                then name_parts[0]
            else source_database
        end as source_database,
        case
            when source_table is not null then source_schema
            when size(name_parts) = 3 then name_parts[1]
            when size(name_parts) = 2
                and coalesce(source_dialect, '') not in {{ mysql_family }}
                then name_parts[0]
            else source_schema
        end as source_schema,
        coalesce(source_table, nullif(try_element_at(name_parts, -1), '')) as source_table,
        ddl_op,
        ddl_text,
        ordering_key,
        event_time,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        ingest_batch_id
    from named
)

select * from final
