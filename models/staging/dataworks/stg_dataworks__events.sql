{#
    DataWorks / DataHub Blob messages in the normalized vocabulary of docs/formats.md: every
    decoded envelope classified as a change, a control event, a DDL or a quarantined record,
    with its normalized op, key columns, row keys and ordering key. Per record only: the after
    half of a split update learns its before half's key in int_dataworks__events_paired, the
    model silver reads.

    Ordering key (text, fixed width up to the topic, compares like the tuple): sequenceId as a
    30-digit number, then the image rank (0 = update-before half, 1 = anything else), then Kafka
    partition, offset and topic (macro kafka_ordering_tail). Source: docs/formats.md section 1.

    Ephemeral: its one reader, int_dataworks__events_paired, is the table.
#}

{{ config(materialized='ephemeral') }}

{% set checks = [
    ['op_kind is null', 'unknown_op', "concat('payload.op ', op_code, ' is not a DataWorks op')"],
    ["op_kind != 'change'", none, none],
    ['sequence_id is null', 'missing_required_field', "'payload.sequenceId is missing'"],
    ['source_table is null', 'missing_required_field', "'schema.source.tableName is missing'"],
    [
        'length(sequence_id) > 30', 'invalid_field_type',
        "'payload.sequenceId has more than 30 digits'",
    ],
    [
        "op_code in ('INSERT', 'UPDATE_AFTER', 'UPDATE') and after_image is null",
        'missing_required_field', "concat(op_code, ' without payload.after.dataColumn')",
    ],
    [
        "op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE', 'DELETE') and before_image is null",
        'missing_required_field', "concat(op_code, ' without payload.before.dataColumn')",
    ],
    missing_key_check([['state_image', 'key_columns'], ['before_image', 'key_columns']]),
] %}

with

envelopes as (
    select * from {{ ref('stg_dataworks__decoded') }}
),

op_codes as (
    select
        *,
        case
            when op_code = 'INSERT' then 'insert'
            when
                op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE', 'UPDATE_AFTER', 'UPDATE')
                then 'update'
            when op_code = 'DELETE' then 'delete'
        end as op,
        case
            when op_code in (
                    'INSERT', 'UPDATE_BEFOR', 'UPDATE_BEFORE', 'UPDATE_AFTER', 'UPDATE', 'DELETE'
                ) then 'change'
            when op_code in (
                    'MHEARTBEAT', 'TRANSACTION_BEGIN', 'TRANSACTION_END', 'GTID', 'XACOMMIT',
                    'XAROLLBACK'
                ) then 'control'
            when op_code in (
                    'CREATE', 'ALTER', 'ERASE', 'QUERY', 'TRUNCATE', 'RENAME', 'CINDEX', 'DINDEX'
                ) then 'ddl'
        end as op_kind,
        case when op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE') then 0 else 1 end as image_rank,
        {# the image that says which row the record is about, and its state afterwards #}
        case
            when op_code in ('DELETE', 'UPDATE_BEFOR', 'UPDATE_BEFORE') then before_image
            else coalesce(after_image, before_image)
        end as state_image
    from envelopes
),

keyed as (
    select
        *,
        case
            when size(primary_key) > 0 then 'primary_key'
            when array_contains(map_keys(coalesce(column_types, map())), '#alibaba_rds_row_id#')
                or array_contains(map_keys(coalesce(state_image, map())), '#alibaba_rds_row_id#')
                then 'row_id'
            else 'all_columns'
        end as key_source
    from op_codes
),

key_columns as (
    select
        *,
        case key_source
            when 'primary_key' then primary_key
            when 'row_id' then array('#alibaba_rds_row_id#')
            else array_sort(map_keys(state_image))
        end as key_columns
    from keyed
),

normalized as (
    select
        *,
        case
            when op_code = 'MHEARTBEAT' then 'heartbeat'
            when op_code = 'TRANSACTION_BEGIN' then 'transaction_begin'
            when op_code in ('TRANSACTION_END', 'XACOMMIT') then 'transaction_commit'
            when op_code = 'XAROLLBACK' then 'transaction_rollback'
            when op_code = 'GTID' then 'transaction_marker'
        end as control_type,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        {{ format_ordering_key(
            'dataworks', {'sequence_id': 'sequence_id', 'image_rank': 'image_rank'}
        ) }} as ordering_key,
        {{ quarantine_checks(checks) }}
    from key_columns
),

final as (
    select
        {{ staging_event_row(
            [
                'op', 'source_db_type', 'source_database', 'source_schema', 'source_table',
                'control_type', 'key_source', 'key_columns', 'column_types', 'before_image',
                'after_image', 'row_key', 'before_row_key', 'ordering_key', 'ddl_text',
            ],
            renamed={
                'source_op': 'op_code',
                'event_time': 'timestamp_millis(event_time_ms)',
                'capture_time': 'timestamp_millis(system_time_ms)',
                'checkpoint_time': 'timestamp_millis(checkpoint_time_ms)',
                'source_sequence_id': 'sequence_id',
                'source_scn': 'scn',
            },
            extra=['image_rank'],
        ) }}
    from normalized
)

select * from final
