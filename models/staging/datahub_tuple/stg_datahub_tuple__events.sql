{#
    DataHub Tuple records (stg_datahub_tuple__records) in the normalized vocabulary of
    docs/formats.md: every decoded record classified as a change or a quarantined record (Tuple
    carries no DDL and no heartbeats), with its normalized op, key columns, row keys and
    ordering key. Source: docs/formats.md section 2 (seed 002).

    - Op: _operation_type_ I / U / D -> insert / update / delete (case-sensitive). An update is
      two records sharing _sequence_id_: the before half (_before_image_ = Y) and the after
      half (_after_image_ = Y). The record's data columns are the before image when
      _before_image_ = Y, else the after image. Flags that contradict the op are quarantined
      (inconsistent_image_flags); absent flags are implied for I (N/Y) and D (Y/N) only.
    - Table: _source_table_, else the last dot-separated part of the topic (one table per
      topic). Tuple has no database or schema name: both NULL.
    - Keys: Tuple records carry no primary key. Key columns declared in the seed
      cdc_declared_keys (topic + table) win (key_source declared); else every column of the
      image identifies the row (key_source all_columns). The after half of an update takes
      its before_row_key from its before half (same topic, table and _sequence_id_), so an
      update that changes a key column (with all_columns: any column) ends the old row.
    - Ordering key (text, fixed width up to the topic, compares like the tuple): _sequence_id_
      as a 30-digit number, the image rank (0 = _before_image_ Y, 1 = after image), Kafka
      partition (10 digits), offset (20 digits) and topic (macro kafka_ordering_tail). Without a
      primary key DataHub shards Tuple records randomly, so only the sequence id orders them.

    A table, not a view: four silver models and the tests read it (see stg_dataworks__events).
    Incremental like stg_dataworks__events: a run rewrites the new batches and the older
    batches holding an after half that a new before half completes.
#}

{{ batch_partitioned_config() }}

with

all_records as (
    select * from {{ ref('stg_datahub_tuple__records') }}
),

{% if is_incremental() %}
{% set held_batch = held_max('ingest_batch_id') %}

{# held after halves still waiting for their before half, that a new before half completes
   (same topic, table and _sequence_id_): their batches are computed again #}
reopened_batches as (
    select distinct held.ingest_batch_id
    from {{ this }} as held
    inner join all_records as new_halves
        on new_halves.ingest_batch_id > {{ held_batch }}
        and new_halves.op_code = 'U'
        and new_halves.before_image_flag = 'Y'
        and held.kafka_topic = new_halves.topic
        and held.source_table = coalesce(
            new_halves.source_table, element_at(split(new_halves.topic, '[.]'), -1)
        )
        and held.source_sequence_id = new_halves.sequence_id
    where held.record_kind = 'change'
        and held.op = 'update'
        and held.image_rank = 1
        and held.before_row_key is null
),
{% endif %}

records as (
    select * from all_records
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
        or ingest_batch_id in (select ingest_batch_id from reopened_batches)
    {% endif %}
),

classified as (
    select
        *,
        coalesce(source_table, element_at(split(topic, '[.]'), -1)) as table_name,
        case op_code
            when 'I' then 'insert'
            when 'U' then 'update'
            when 'D' then 'delete'
        end as op,
        coalesce(
            before_image_flag, case op_code when 'I' then 'N' when 'D' then 'Y' end
        ) as before_flag,
        coalesce(
            after_image_flag, case op_code when 'I' then 'Y' when 'D' then 'N' end
        ) as after_flag
    from records
),

flagged as (
    select
        *,
        coalesce(
            (op_code = 'I' and before_flag = 'N' and after_flag = 'Y')
            or (op_code = 'D' and before_flag = 'Y' and after_flag = 'N')
            or (op_code = 'U' and before_flag != after_flag),
            false
        ) as flags_consistent,
        case when before_flag = 'Y' then 0 else 1 end as image_rank
    from classified
),

with_declared_keys as (
    {{ join_declared_keys('flagged', 'table_name') }}
),

keyed as (
    select
        *,
        case when declared_key_columns is not null then 'declared' else 'all_columns' end
            as key_source,
        case
            when declared_key_columns is not null then declared_key_columns
            else array_sort(map_keys(coalesce(row_image, map())))
        end as key_columns
    from with_declared_keys
),

checked as (
    select
        *,
        case
            when decode_error is not null then decode_error
            when op_code is null then 'missing_required_field'
            when op is null then 'unknown_op'
            when sequence_id is null then 'missing_required_field'
            when length(sequence_id) > 30 then 'invalid_field_type'
            when op_code = 'U' and (before_flag is null or after_flag is null)
                then 'missing_required_field'
            when not flags_consistent then 'inconsistent_image_flags'
            when size(key_columns) = 0 then 'missing_key_column'
            when size({{ missing_key_columns('row_image', 'key_columns') }}) > 0
                then 'missing_key_column'
        end as quarantine_reason,
        case
            when decode_error is not null then decode_error_detail
            when op_code is null then '_operation_type_ is missing'
            when op is null
                then concat('_operation_type_ ', op_code, ' is not a Tuple op (I, U, D)')
            when sequence_id is null then '_sequence_id_ is missing'
            when length(sequence_id) > 30 then '_sequence_id_ has more than 30 digits'
            when op_code = 'U' and (before_flag is null or after_flag is null)
                then 'update without _before_image_ / _after_image_: its half is unknown'
            when not flags_consistent then concat(
                '_operation_type_ ', op_code, ' with _before_image_ ',
                coalesce(before_flag, 'NULL'), ' and _after_image_ ', coalesce(after_flag, 'NULL')
            )
            when size(key_columns) = 0 then 'the record has no data column to identify the row'
            when size({{ missing_key_columns('row_image', 'key_columns') }}) > 0 then concat(
                'key column(s) missing from the record: ',
                array_join({{ missing_key_columns('row_image', 'key_columns') }}, ', ')
            )
        end as quarantine_detail
    from keyed
),

events as (
    select
        source_format,
        {{ kafka_record_columns() }},
        case when quarantine_reason is null then 'change' else 'quarantine' end as record_kind,
        quarantine_reason,
        quarantine_detail,
        op,
        op_code as source_op,
        cast(null as string) as source_db_type,
        cast(null as string) as source_database,
        cast(null as string) as source_schema,
        table_name as source_table,
        source_table is null as source_table_from_topic,
        cast(null as string) as control_type,
        image_rank,
        before_image_flag,
        after_image_flag,
        key_source,
        key_columns,
        cast(null as map<string, string>) as column_types,
        cast(null as string) as source_schema_version,
        case when before_flag = 'Y' and flags_consistent then row_image end as before_image,
        case when after_flag = 'Y' and flags_consistent then row_image end as after_image,
        false as after_image_is_partial,
        {{ canonical_row_key('row_image', 'key_columns') }} as row_key,
        case
            when before_flag = 'Y' then {{ canonical_row_key('row_image', 'key_columns') }}
        end as before_row_key,
        case
            when sequence_id is not null and length(sequence_id) <= 30 then concat_ws(
                '.',
                {{ padded_number('sequence_id', 30) }},
                cast(image_rank as string),
                {{ kafka_ordering_tail() }}
            )
        end as ordering_key,
        timestamp_millis(execute_time_ms) as event_time,
        cast(null as timestamp) as capture_time,
        cast(null as timestamp) as checkpoint_time,
        sequence_id as source_sequence_id,
        cast(null as string) as source_scn,
        cast(null as string) as source_position,
        cast(null as string) as transaction_id,
        cast(null as int) as transaction_event_index,
        cast(null as int) as transaction_event_count,
        cast(null as boolean) as is_last_event_in_transaction,
        cast(null as string) as ddl_text,
        value as raw_value
    from checked
),

{# The after half of an update learns its before half's key (gold.current_rows ends the row
   under the old key when they differ). #}
update_before_halves as (
    select
        kafka_topic,
        source_table,
        source_sequence_id,
        max(row_key) as before_row_key,
        min(ingest_batch_id) as before_half_batch_id
    from (
        select kafka_topic, source_table, source_sequence_id, row_key, ingest_batch_id
        from events
        where record_kind = 'change' and op = 'update' and image_rank = 0
        {% if is_incremental() %}
        {# before halves held from earlier runs, for new after halves #}
        union all
        select kafka_topic, source_table, source_sequence_id, row_key, ingest_batch_id
        from {{ this }}
        where record_kind = 'change' and op = 'update' and image_rank = 0
        {% endif %}
    )
    group by 1, 2, 3
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
        and events.kafka_topic = update_before_halves.kafka_topic
        and events.source_table = update_before_halves.source_table
        and events.source_sequence_id = update_before_halves.source_sequence_id
)

select * from final
