{#
    DataWorks / DataHub Blob messages in the normalized vocabulary of docs/formats.md: every decoded
    envelope classified as a change, a control event, a DDL or a quarantined record, with its
    normalized op, key columns, row keys and ordering key.

    Ordering key (text, fixed width up to the topic, compares like the tuple): sequenceId as a
    30-digit number, then the image rank (0 = update-before half, 1 = anything else), then Kafka
    partition, offset and topic (macro kafka_ordering_tail). Source: docs/formats.md section 1.

    A table, not a view: four silver models and its tests read it, and as a view each of them
    would plan and run the classification and the pairing join again.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run rewrites
    the new batches and the older batches holding an after half that a new before half
    completes (the pair's resolved_batch_id is then the new batch).
#}

{{ batch_partitioned_config() }}

with

all_envelopes as (
    select * from {{ ref('stg_dataworks__envelopes') }}
),

{% if is_incremental() %}
{% set held_batch = held_max('ingest_batch_id') %}

{# held after halves of split updates still waiting for their before half, that a new
   before half completes: their batches are computed again #}
reopened_batches as (
    select distinct held.ingest_batch_id
    from {{ this }} as held
    inner join all_envelopes as new_halves
        on new_halves.ingest_batch_id > {{ held_batch }}
        and new_halves.op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE')
        and held.source_format = new_halves.source_format
        and held.source_database <=> new_halves.source_database
        and held.source_schema <=> new_halves.source_schema
        and held.source_table = new_halves.source_table
        and held.source_sequence_id = new_halves.sequence_id
    where held.record_kind = 'change'
        and held.op = 'update'
        and held.image_rank = 1
        and held.before_image is null
        and held.before_row_key is null
),
{% endif %}

envelopes as (
    select * from all_envelopes
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
        or ingest_batch_id in (select ingest_batch_id from reopened_batches)
    {% endif %}
),

op_codes as (
    select
        *,
        case
            when op_code = 'INSERT' then 'insert'
            when op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE', 'UPDATE_AFTER', 'UPDATE') then 'update'
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

checked as (
    select
        *,
        case
            when decode_error is not null then decode_error
            when op_kind is null then 'unknown_op'
            when op_kind != 'change' then null
            when sequence_id is null or source_table is null then 'missing_required_field'
            when length(sequence_id) > 30 then 'invalid_field_type'
            when op_code in ('INSERT', 'UPDATE_AFTER', 'UPDATE') and after_image is null
                then 'missing_required_field'
            when op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE', 'DELETE') and before_image is null
                then 'missing_required_field'
            when size({{ missing_key_columns('state_image', 'key_columns') }}) > 0
                or size({{ missing_key_columns('before_image', 'key_columns') }}) > 0
                then 'missing_key_column'
        end as quarantine_reason,
        case
            when decode_error is not null then decode_error_detail
            when op_kind is null then concat('payload.op ', op_code, ' is not a DataWorks op')
            when op_kind != 'change' then null
            when sequence_id is null then 'payload.sequenceId is missing'
            when source_table is null then 'schema.source.tableName is missing'
            when length(sequence_id) > 30 then 'payload.sequenceId has more than 30 digits'
            when op_code in ('INSERT', 'UPDATE_AFTER', 'UPDATE') and after_image is null
                then concat(op_code, ' without payload.after.dataColumn')
            when op_code in ('UPDATE_BEFOR', 'UPDATE_BEFORE', 'DELETE') and before_image is null
                then concat(op_code, ' without payload.before.dataColumn')
            else concat(
                'key column(s) missing from the image: ',
                array_join(
                    array_union(
                        {{ missing_key_columns('state_image', 'key_columns') }},
                        coalesce({{ missing_key_columns('before_image', 'key_columns') }}, array())
                    ),
                    ', '
                )
            )
        end as quarantine_detail
    from key_columns
),

events as (
    select
        source_format,
        {{ kafka_record_columns() }},
        case when quarantine_reason is null then op_kind else 'quarantine' end as record_kind,
        quarantine_reason,
        quarantine_detail,
        op,
        op_code as source_op,
        case
            when op_code = 'MHEARTBEAT' then 'heartbeat'
            when op_code = 'TRANSACTION_BEGIN' then 'transaction_begin'
            when op_code in ('TRANSACTION_END', 'XACOMMIT') then 'transaction_commit'
            when op_code = 'XAROLLBACK' then 'transaction_rollback'
            when op_code = 'GTID' then 'transaction_marker'
        end as control_type,
        image_rank,
        source_db_type,
        source_database,
        source_schema,
        source_table,
        key_source,
        key_columns,
        column_types,
        cast(null as string) as source_schema_version,
        before_image,
        after_image,
        false as after_image_is_partial,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        sequence_id as source_sequence_id,
        scn as source_scn,
        cast(null as string) as source_position,
        cast(null as string) as transaction_id,
        cast(null as int) as transaction_event_index,
        cast(null as int) as transaction_event_count,
        cast(null as boolean) as is_last_event_in_transaction,
        case
            when sequence_id is not null and length(sequence_id) <= 30 then concat_ws(
                '.',
                {{ padded_number('sequence_id', 30) }},
                cast(image_rank as string),
                {{ kafka_ordering_tail() }}
            )
        end as ordering_key,
        timestamp_millis(event_time_ms) as event_time,
        timestamp_millis(system_time_ms) as capture_time,
        timestamp_millis(checkpoint_time_ms) as checkpoint_time,
        ddl_text,
        value as raw_value
    from checked
),

{# The after half of a split update learns its before half's key, so that a primary-key
   update also ends the row under the old key (gold.current_rows). #}
update_before_halves as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        source_sequence_id,
        max(row_key) as before_row_key,
        min(ingest_batch_id) as before_half_batch_id
    from (
        select
            source_format,
            source_database,
            source_schema,
            source_table,
            source_sequence_id,
            row_key,
            ingest_batch_id
        from events
        where record_kind = 'change' and image_rank = 0
        {% if is_incremental() %}
        {# before halves held from earlier runs, for new after halves (duplicates of the
           batches computed again change neither max) #}
        union all
        select
            source_format,
            source_database,
            source_schema,
            source_table,
            source_sequence_id,
            row_key,
            ingest_batch_id
        from {{ this }}
        where record_kind = 'change' and image_rank = 0
        {% endif %}
    )
    group by 1, 2, 3, 4, 5
),

final as (
    select
        events.* except (before_row_key, resolved_batch_id),
        coalesce(events.before_row_key, update_before_halves.before_row_key) as before_row_key,
        {# the after half is final once its before half has first arrived, maybe in a later
           batch (a redelivered before half changes nothing) #}
        greatest(
            events.resolved_batch_id,
            coalesce(update_before_halves.before_half_batch_id, events.resolved_batch_id)
        ) as resolved_batch_id
    from events
    left join update_before_halves
        on events.record_kind = 'change'
        and events.op = 'update'
        and events.image_rank = 1
        and events.before_image is null
        and events.source_format = update_before_halves.source_format
        and events.source_database <=> update_before_halves.source_database
        and events.source_schema <=> update_before_halves.source_schema
        and events.source_table = update_before_halves.source_table
        and events.source_sequence_id = update_before_halves.source_sequence_id
)

select * from final
