{#
    DTS Avro records (stg_dts_avro__decoded) in the normalized vocabulary of docs/formats.md: every
    decoded Record classified as a change, a control event, a DDL or a quarantined record,
    with its normalized op, key columns, row keys and ordering key. Source: docs/formats.md
    section 4a (seed 003).

    - operation: INSERT / UPDATE / DELETE -> insert / update / delete; INIT / FILL (full
      load) -> snapshot; DDL -> ddl (afterImages holds the statement); BEGIN, COMMIT,
      ROLLBACK / ABORT -> control transaction_begin / _commit / _rollback; HEARTBEAT /
      CHECKPOINT -> control heartbeat. COMMAND, FINISH, CONTROL, RDB and NOOP have no entry
      in docs/formats.md's normalized vocabulary: they are never guessed, they go to quarantine
      as unknown_op (raw bytes kept for a replay once a mapping is decided).
    - Keys: tags["pk_uk_info"]: PRIMARY (key_source primary_key), else the first unique key
      (unique_key); without one, every column of `fields` (all_columns). The row an UPDATE
      applies to is identified by its after image with NONE (not provided) columns taken from
      the before image, so an update that does not provide an unchanged key column still
      finds its row.
    - Ordering key (text, fixed width up to the topic, compares like the tuple): load rank (0 =
      INIT / FILL full-load row, 1 = anything else: a full-load row orders before every change
      of its key, whatever its sourceTimestamp, because DTS starts the incremental stream before
      the full load reads), sourceTimestamp (epoch seconds, 20 digits), id (20 digits), Kafka
      partition (10 digits), offset (20 digits) and topic, dot-separated (macro
      kafka_ordering_tail).
    - event_time: sourceTimestamp (seconds). capture_time: tags["readerThroughoutTime"]
      (epoch ms, when DTS read the log record); bornTimestamp is not used (real producers
      write it in seconds, the schema says ms). source_schema_version: tags["metaVersion"].

    A table, not a view: four silver models and tests read it.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run computes
    the new batches only (a record of this format depends on no other record).
#}

{{ batch_partitioned_config() }}

{% set checks = [
    [
        'op_kind is null', 'unknown_op',
        "concat('operation ', operation, "
        ~ "' has no mapping in the normalized vocabulary (docs/formats.md)')",
    ],
    [
        "op_kind = 'ddl' and ddl_text is null", 'missing_required_field',
        "'DDL record without the statement text in afterImages'",
    ],
    ["op_kind != 'change'", none, none],
    [
        'source_table is null', 'missing_required_field',
        "concat('objectName ', coalesce(object_name, 'null'), ' names no table')",
    ],
    [
        "operation in ('INSERT', 'UPDATE', 'INIT', 'FILL') and after_image is null",
        'missing_required_field', "concat(operation, ' without an afterImages array')",
    ],
    [
        "operation = 'DELETE' and before_image is null", 'missing_required_field',
        "'DELETE without a beforeImages array'",
    ],
    [
        'size(key_columns) = 0', 'missing_key_column',
        "'the record lists no columns to identify the row'",
    ],
    missing_key_check(
        [['identity_image', 'key_columns'], ['before_image', 'key_columns']],
        'key column(s) not provided in the image: ',
    ),
] %}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% if is_incremental() and nothing_new(ref('stg_dts_avro__decoded'), held_batch) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

with

records as (
    select * from {{ ref('stg_dts_avro__decoded') }}
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
    {% endif %}
),

classified as (
    select
        * except (key_columns, key_source, after_image_is_partial),
        case operation
            when 'INSERT' then 'insert'
            when 'UPDATE' then 'update'
            when 'DELETE' then 'delete'
            when 'INIT' then 'snapshot'
            when 'FILL' then 'snapshot'
        end as op,
        case
            when operation in ('INSERT', 'UPDATE', 'DELETE', 'INIT', 'FILL') then 'change'
            when operation in (
                    'BEGIN', 'COMMIT', 'ROLLBACK', 'ABORT', 'HEARTBEAT', 'CHECKPOINT'
                ) then 'control'
            when operation = 'DDL' then 'ddl'
        end as op_kind,
        case when operation in ('INIT', 'FILL') then 0 else 1 end as load_rank,
        {# the image that says which row the record is about (and its key values after it) #}
        case
            when operation = 'DELETE' then before_image
            when after_image is not null
                then {{ overlay_image('before_image', 'after_image') }}
        end as identity_image,
        coalesce(key_source, 'all_columns') as key_source,
        coalesce(key_columns, column_names) as key_columns,
        coalesce(after_image_is_partial, false) as after_image_is_partial
    from records
),

normalized as (
    select
        *,
        case
            when operation in ('HEARTBEAT', 'CHECKPOINT') then 'heartbeat'
            when operation = 'BEGIN' then 'transaction_begin'
            when operation = 'COMMIT' then 'transaction_commit'
            when operation in ('ROLLBACK', 'ABORT') then 'transaction_rollback'
        end as control_type,
        {{ canonical_row_key('identity_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        {{ format_ordering_key('dts_avro', {
            'load_rank': 'load_rank',
            'source_timestamp': 'source_timestamp',
            'record_id': 'record_id',
        }) }} as ordering_key,
        {{ quarantine_checks(checks) }}
    from classified
),

final as (
    select
        {{ staging_event_row(
            [
                'op', 'control_type', 'source_database', 'source_schema', 'source_table',
                'key_source', 'key_columns', 'column_types', 'before_image', 'after_image',
                'after_image_is_partial', 'row_key', 'before_row_key', 'ordering_key',
                'source_position', 'ddl_text',
            ],
            renamed={
                'source_op': 'operation',
                'source_db_type': 'source_type',
                'source_schema_version': "try_element_at(tags, 'metaVersion')",
                'event_time': 'timestamp_seconds(source_timestamp)',
                'capture_time':
                    "timestamp_millis(try_cast(try_element_at(tags, 'readerThroughoutTime') as bigint))",
                'source_sequence_id': 'cast(record_id as string)',
                'transaction_id': "nullif(source_txid, '')",
            },
        ) }}
    from normalized
)

{% endif %}

select * from final
