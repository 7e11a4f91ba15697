{#
    Qlik Replicate / Talend Data Integration messages (stg_qlik__decoded) in the normalized
    vocabulary of docs/formats.md section 5 (seed 004): every decoded record classified as a
    change (data message), a ddl row (metadata message = one table version) or a quarantined
    record, with its normalized op, key columns, row keys and ordering key.

    Ordering key (text, fixed width up to the topic, compares like the tuple of docs/formats.md):
        rank . sequence(35) . partition(10) . offset(20) . topic (macro kafka_ordering_tail)
    - rank 2, changeSequence (35 digits, YYYYMMDDHHmmSShh + 19-digit counter, compared as
      text; shorter digit strings are left-padded with zeros) for INSERT / UPDATE / DELETE;
    - rank 1 and 35 zeros for REFRESH (full load, changeSequence ""): every snapshot row
      orders before every CDC row of the same key;
    - rank 0 and tableVersion (35 digits) for metadata messages: a table version is not a
      row change; within one table the key orders its versions.

    Key columns: primaryKeyPosition > 0 of the matched metadata message, in key order; a
    table without one is keyed by all columns of the image. A table, not a view: silver
    models and tests read it several times.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run computes
    the batches holding a decoding resolved after the newest one it holds: the new batches,
    and older batches whose data message waited for a metadata message that a new batch
    delivered (stg_qlik__decoded decodes it again; its resolved_batch_id is that later
    batch). Per record only the latest decoding counts.
#}

{{ batch_partitioned_config() }}

{% if is_incremental() %}
{% set batches = batches_resolved_after(ref('stg_qlik__decoded'), held_max('resolved_batch_id')) %}
{% endif %}

{% set checks = [
    [
        "message_type not in ('MD', 'DT')", 'unknown_op',
        "concat('envelope type ', message_type, ' is neither MD nor DT')",
    ],
    [
        'op_kind is null', 'unknown_op',
        "concat('headers.operation ', operation, ' is not a Qlik operation')",
    ],
    ["op_kind != 'change'", none, none],
    [
        "operation != 'REFRESH' and coalesce(change_sequence, '') = ''",
        'missing_required_field', "concat(operation, ' without headers.changeSequence')",
    ],
    ['state_image is null', 'missing_required_field', "concat(operation, ' without data')"],
    missing_key_check(
        [['state_image', 'key_columns'], ['before_image', 'key_columns']],
        'key column(s) missing from the image (not provided by columnMask?): ',
    ),
] %}

{% if is_incremental() and batches | length == 0 %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

with

decodings as (
    select
        * except (resolved_batch_id),
        coalesce(resolved_batch_id, ingest_batch_id) as resolved_batch_id
    from {{ ref('stg_qlik__decoded') }}
    {% if is_incremental() %}
    where {{ batch_filter(batches) }}
    {% endif %}
),

{# the latest decoding of each record (a waiting data message decoded again later) #}
messages as (
    select * from decodings
    qualify
        row_number() over (
            partition by topic, partition, offset order by resolved_batch_id desc
        ) = 1
),

classified as (
    select
        * except (key_columns),
        case
            when op_kind = 'change' then case operation
                when 'INSERT' then 'insert'
                when 'UPDATE' then 'update'
                when 'DELETE' then 'delete'
                when 'REFRESH' then 'snapshot'
            end
        end as op,
        case when size(key_columns) > 0 then 'primary_key' else 'all_columns' end as key_source,
        case
            when size(key_columns) > 0 then key_columns
            when op_kind = 'change' then array_sort(map_keys(state_image))
            {# a metadata row of a table without a key declares no key (NULL, as
               silver.table_schemas reads all_columns keys) #}
        end as key_columns
    from (
        select
            *,
            case
                when message_type = 'MD' then 'ddl'
                when message_type = 'DT'
                    and operation in ('INSERT', 'UPDATE', 'DELETE', 'REFRESH') then 'change'
            end as op_kind,
            {# the image that says which row the record is about #}
            case when operation = 'DELETE' then before_image else after_image end as state_image
        from messages
    )
),

normalized as (
    select
        * except (after_image_is_partial, transaction_id),
        coalesce(after_image_is_partial, false) as after_image_is_partial,
        nullif(transaction_id, '') as transaction_id,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        {{ format_ordering_key('qlik', {
            'load_rank': "case when message_type = 'MD' then 0 when operation = 'REFRESH' then 1 "
                ~ 'else 2 end',
            'change_sequence': "case when message_type = 'MD' then cast(table_version as string) "
                ~ "when operation = 'REFRESH' then '' when op_kind = 'change' "
                ~ "and coalesce(change_sequence, '') != '' then change_sequence end",
        }) }} as ordering_key,
        {{ quarantine_checks(checks) }}
    from classified
),

{# extra: Qlik's own columns, for readers of this model #}
final as (
    select
        {{ staging_event_row(
            [
                'op', 'source_schema', 'source_table', 'key_source', 'key_columns',
                'column_types', 'before_image', 'after_image', 'after_image_is_partial',
                'row_key', 'before_row_key', 'ordering_key', 'transaction_id',
                'resolved_batch_id',
            ],
            renamed={
                'source_op': "case when message_type = 'MD' then 'METADATA' else operation end",
                'source_database': 'qlik_task',
                'source_schema_version': 'cast(table_version as string)',
                'event_time': "timestamp_micros(case when message_type = 'MD' "
                    ~ "then metadata_time_us else event_time_us end)",
                'source_sequence_id': "nullif(change_sequence, '')",
                'source_position': "nullif(stream_position, '')",
                'transaction_event_index': 'cast(transaction_event_counter as int)',
                'is_last_event_in_transaction': 'transaction_last_event',
            },
            extra=[
                'qlik_server', 'schema_id', 'metadata_match', 'changed_columns',
                'not_provided_columns',
            ],
        ) }}
    from normalized
)

{% endif %}

select * from final
