{#
    Qlik Replicate / Talend Data Integration messages (stg_qlik__messages) in the normalized
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
    models and tests read it several times (see stg_dataworks__events).

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run computes
    the batches holding a decoding resolved after the newest one it holds: the new batches,
    and older batches whose data message waited for a metadata message that a new batch
    delivered (stg_qlik__messages decodes it again; its resolved_batch_id is that later
    batch). Per record only the latest decoding counts.
#}

{{ batch_partitioned_config() }}

{% if is_incremental() %}
{% set batches = batches_resolved_after(ref('stg_qlik__messages'), held_max('resolved_batch_id')) %}
{% endif %}

with

decodings as (
    select
        *,
        coalesce(resolved_batch_id, ingest_batch_id) as record_resolved_batch_id
    from {{ ref('stg_qlik__messages') }}
    {% if is_incremental() %}
    where {{ batch_filter(batches) }}
    {% endif %}
),

{# the latest decoding of each record (a waiting data message decoded again later) #}
messages as (
    select * except (resolved_batch_id)
    from decodings
    qualify row_number() over (
        partition by topic, partition, offset order by record_resolved_batch_id desc
    ) = 1
),

classified as (
    select
        *,
        case operation
            when 'INSERT' then 'insert'
            when 'UPDATE' then 'update'
            when 'DELETE' then 'delete'
            when 'REFRESH' then 'snapshot'
        end as op,
        case
            when message_type = 'MD' then 'ddl'
            when message_type = 'DT'
                and operation in ('INSERT', 'UPDATE', 'DELETE', 'REFRESH') then 'change'
        end as op_kind,
        {# the image that says which row the record is about #}
        case when operation = 'DELETE' then before_image else after_image end as state_image
    from messages
),

keyed as (
    select
        *,
        case when size(key_columns) > 0 then 'primary_key' else 'all_columns' end as key_source,
        case
            when size(key_columns) > 0 then key_columns
            when op_kind = 'change' then array_sort(map_keys(state_image))
            {# a metadata row of a table without a key declares no key (NULL, as
               silver.table_schemas reads all_columns keys) #}
        end as row_key_columns
    from classified
),

checked as (
    select
        *,
        case
            when decode_error is not null then decode_error
            when op_kind is null then 'unknown_op'
            when op_kind != 'change' then null
            when operation != 'REFRESH' and coalesce(change_sequence, '') = ''
                then 'missing_required_field'
            when state_image is null then 'missing_required_field'
            when size({{ missing_key_columns('state_image', 'row_key_columns') }}) > 0
                or size({{ missing_key_columns('before_image', 'row_key_columns') }}) > 0
                then 'missing_key_column'
        end as quarantine_reason,
        case
            when decode_error is not null then decode_error_detail
            when message_type not in ('MD', 'DT')
                then concat('envelope type ', message_type, ' is neither MD nor DT')
            when op_kind is null
                then concat('headers.operation ', operation, ' is not a Qlik operation')
            when op_kind != 'change' then null
            when operation != 'REFRESH' and coalesce(change_sequence, '') = ''
                then concat(operation, ' without headers.changeSequence')
            when state_image is null then concat(operation, ' without data')
            else concat(
                'key column(s) missing from the image (not provided by columnMask?): ',
                array_join(
                    array_union(
                        {{ missing_key_columns('state_image', 'row_key_columns') }},
                        coalesce(
                            {{ missing_key_columns('before_image', 'row_key_columns') }}, array()
                        )
                    ),
                    ', '
                )
            )
        end as quarantine_detail
    from keyed
),

final as (
    select
        source_format,
        {{ kafka_record_columns(resolved_batch_id='record_resolved_batch_id') }},
        case when quarantine_reason is null then op_kind else 'quarantine' end as record_kind,
        quarantine_reason,
        quarantine_detail,
        case when op_kind = 'change' then op end as op,
        case when message_type = 'MD' then 'METADATA' else operation end as source_op,
        cast(null as string) as source_db_type,
        qlik_task as source_database,
        source_schema,
        source_table,
        cast(null as string) as control_type,
        key_source,
        row_key_columns as key_columns,
        column_types,
        cast(table_version as string) as source_schema_version,
        before_image,
        after_image,
        coalesce(after_image_is_partial, false) as after_image_is_partial,
        {{ canonical_row_key('state_image', 'row_key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'row_key_columns') }} as before_row_key,
        case
            when message_type = 'MD' and table_version is not null then concat_ws(
                '.',
                '0',
                {{ padded_number('table_version', 35) }},
                {{ kafka_ordering_tail() }}
            )
            when operation = 'REFRESH' then concat_ws(
                '.',
                '1',
                repeat('0', 35),
                {{ kafka_ordering_tail() }}
            )
            when op_kind = 'change' and coalesce(change_sequence, '') != '' then concat_ws(
                '.',
                '2',
                lpad(change_sequence, 35, '0'),
                {{ kafka_ordering_tail() }}
            )
        end as ordering_key,
        timestamp_micros(
            case when message_type = 'MD' then metadata_time_us else event_time_us end
        ) as event_time,
        cast(null as timestamp) as capture_time,
        cast(null as timestamp) as checkpoint_time,
        nullif(change_sequence, '') as source_sequence_id,
        cast(null as string) as source_scn,
        nullif(stream_position, '') as source_position,
        nullif(transaction_id, '') as transaction_id,
        cast(transaction_event_counter as int) as transaction_event_index,
        cast(null as int) as transaction_event_count,
        transaction_last_event as is_last_event_in_transaction,
        cast(null as string) as ddl_text,
        value as raw_value,
        {# Qlik-specific, for readers of this model #}
        qlik_server,
        schema_id,
        metadata_match,
        changed_columns,
        not_provided_columns
    from checked
)

select * from final
