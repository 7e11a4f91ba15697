{#
    One row per captured TRUNCATE of a source table, every format: the schema changes of
    silver.schema_changes classified as change_kind 'truncate' by the sqlglot translation
    (whatever the record's op: a DataWorks QUERY or a DTS Avro DDL record holding a TRUNCATE
    statement counts too). gold.current_rows and gold.row_history end every row of the table
    that is live before the truncate's ordering key.

    How a truncate arrives (docs/formats.md "Normalized vocabulary"):
    - DataWorks / DataHub Blob: op TRUNCATE (payload.ddl.text holds the statement), or a QUERY
      whose statement is a TRUNCATE.
    - DTS Shareplex: op TRUNCATE (no statement; staging writes "TRUNCATE TABLE <meta.table>").
    - DTS Canal JSON: an isDdl message whose sql is a TRUNCATE.
    - DTS Avro: a DDL record whose statement (afterImages) is a TRUNCATE; its objectName is
      usually the database only, so the table comes from the statement.
    - DataHub Tuple, Lindorm and Qlik send no truncate.

    The table: the record's own table when it names one, else the table the statement names
    (silver.schema_changes: database.table in MySQL-family dialects, schema.table otherwise).
    A TRUNCATE naming several tables gives one row per table.

    ordering_key is the record's own ordering key from the format's staging model, built like
    the ordering keys of the same format's row changes, so it compares with the changes of the
    truncated table. NULL when the record lacks the position (e.g. a DataWorks DDL without
    sequenceId): such a truncate cannot be placed and gold ignores it.
#}

with

schema_changes as (
    select * from {{ ref('schema_changes') }}
),

final as (
    select
        schema_change_id,
        event_id,
        source_format,
        source_database,
        source_schema,
        source_table,
        ddl_op,
        ddl_text,
        ordering_key,
        event_time,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        ingest_batch_id
    from schema_changes
    where change_kind = 'truncate'
        and source_table is not null
)

select * from final
