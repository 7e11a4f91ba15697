{#
    DTS / open-source Canal JSON rows (stg_dts_canal__rows) in the normalized vocabulary of
    docs/formats.md: every row of every message classified as a change, a DDL or a quarantined
    record, with its normalized op, key columns, row keys and ordering key. Canal has no
    heartbeats or transaction markers, so no control rows. Source: docs/formats.md section 4c
    (seed 003).

    - type INSERT / UPDATE / DELETE / INIT -> insert / update / delete / snapshot (case-
      sensitive); isDdl (or a DDL type when isDdl is absent) -> ddl with ddl_text = sql and
      source_op = type; any other type -> quarantine unknown_op.
    - Key columns: pkNames; without them, every column of the row's image (all_columns).
    - One message carries several rows (kafka_row_index = index in data). If any row of a
      message is quarantined, the WHOLE message is one quarantine row (kafka_row_index 0, the
      first problem's reason): a message is applied completely or not at all, and
      silver.quarantine keeps one row per Kafka record.
    - Ordering key (text, fixed width up to the topic, compares like the tuple): es (ms) as 20
      digits, then 0 for a full-load INIT row / 1 for a change (snapshot first within the same
      millisecond; the vendor documents do not order INIT rows before changes otherwise, so es
      decides), then Kafka partition (10), offset (20), row index (10) and topic, dot-separated (macro
      kafka_ordering_tail). es is not unique: the changes of one row in the same millisecond are
      ordered by their Kafka position.

    A table, not a view: four silver models and its tests read it; as a view each of them would
    plan and run the decoding, classification and window again.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run computes
    the new batches only (a record of this format depends on no other record).
#}

{{ batch_partitioned_config() }}

with

canal_rows as (
    select * from {{ ref('stg_dts_canal__rows') }}
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_max('ingest_batch_id') }}
    {% endif %}
),

op_codes as (
    select
        *,
        case
            when is_ddl then null
            when type_code = 'INSERT' then 'insert'
            when type_code = 'UPDATE' then 'update'
            when type_code = 'DELETE' then 'delete'
            when type_code = 'INIT' then 'snapshot'
        end as op,
        case
            when is_ddl then 'ddl'
            when type_code in ('INSERT', 'UPDATE', 'DELETE', 'INIT') then 'change'
        end as op_kind,
        case when type_code = 'INIT' then 0 else 1 end as snapshot_rank,
        {# the image that says which row the record is about #}
        case when type_code = 'DELETE' then before_image else after_image end as state_image
    from canal_rows
),

keyed as (
    select
        *,
        case
            when is_ddl then null
            when size(pk_names) > 0 then 'primary_key'
            else 'all_columns'
        end as key_source,
        case
            when is_ddl then null
            when size(pk_names) > 0 then pk_names
            else array_sort(map_keys(state_image))
        end as key_columns
    from op_codes
),

checked as (
    select
        *,
        case
            when decode_error is not null then decode_error
            when op_kind is null then 'unknown_op'
            when es_ms is null then 'missing_required_field'
            when op_kind = 'ddl' and coalesce(trim(sql_text), '') = ''
                then 'missing_required_field'
            when op_kind = 'ddl' then null
            when source_table is null then 'missing_required_field'
            when op in ('insert', 'snapshot', 'update') and after_image is null
                then 'missing_required_field'
            when op in ('delete', 'update') and before_image is null
                then 'missing_required_field'
            when size({{ missing_key_columns('state_image', 'key_columns') }}) > 0
                or size({{ missing_key_columns('before_image', 'key_columns') }}) > 0
                then 'missing_key_column'
        end as row_reason,
        case
            when decode_error is not null then decode_error_detail
            when op_kind is null then concat(
                'type ', type_code, ' is not a Canal DML type (INSERT, UPDATE, DELETE, INIT) ',
                'and isDdl is not true'
            )
            when es_ms is null then 'es is missing'
            when op_kind = 'ddl' and coalesce(trim(sql_text), '') = ''
                then concat('DDL message (type ', type_code, ') without sql')
            when op_kind = 'ddl' then null
            when source_table is null then 'table is missing'
            when (op in ('insert', 'snapshot', 'update') and after_image is null)
                or (op in ('delete', 'update') and before_image is null)
                then concat(
                    type_code,
                    ' without its ',
                    case
                        when op in ('insert', 'snapshot', 'update') and after_image is null
                            then 'after'
                        else 'before'
                    end,
                    ' image: ',
                    case
                        when canal_legacy_swap and op = 'update'
                            then 'on a canal_legacy_swap topic an UPDATE needs data (the old '
                            || 'row) and old (the new row)'
                        when canal_legacy_swap then 'neither data nor old carries a row'
                        when data_row is null and old_row is not null
                            then 'data is null or empty and only old carries a row (a DTS '
                            || 'instance created before 2022-03-20? set canal_legacy_swap for '
                            || 'the topic in seeds/cdc_topics.csv)'
                        else 'data is null or empty'
                    end
                )
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
        end as row_detail
    from keyed
),

{# the first problem of the message (lowest row index), if any row has one #}
messages as (
    select
        *,
        min(
            case
                when row_reason is not null then named_struct(
                    'row_index', row_index, 'reason', row_reason, 'detail', row_detail
                )
            end
        ) over (partition by topic, partition, offset) as message_problem
    from checked
),

events as (
    select
        source_format,
        {{ kafka_record_columns('row_index') }},
        case when message_problem is null then op_kind else 'quarantine' end as record_kind,
        message_problem.reason as quarantine_reason,
        case
            when message_problem is null then null
            when row_count > 1 then concat(
                'row ', cast(message_problem.row_index as string), ' of ',
                cast(row_count as string), ': ', message_problem.detail,
                ' (the whole message is quarantined)'
            )
            else message_problem.detail
        end as quarantine_detail,
        case when message_problem is null then op end as op,
        type_code as source_op,
        cast(null as string) as control_type,
        cast(null as string) as source_db_type,
        source_database,
        cast(null as string) as source_schema,
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
        canal_id as source_sequence_id,
        cast(null as string) as source_scn,
        gtid as source_position,
        gtid as transaction_id,
        cast(null as int) as transaction_event_index,
        cast(null as int) as transaction_event_count,
        cast(null as boolean) as is_last_event_in_transaction,
        case
            when es_ms is not null then concat_ws(
                '.',
                {{ padded_number('es_ms', 20) }},
                cast(snapshot_rank as string),
                {{ kafka_ordering_tail(row_index='row_index') }}
            )
        end as ordering_key,
        timestamp_millis(es_ms) as event_time,
        timestamp_millis(ts_ms) as capture_time,
        cast(null as timestamp) as checkpoint_time,
        case when is_ddl then sql_text end as ddl_text,
        value as raw_value
    from messages
    {# a quarantined message is one row: its first row stands for it #}
    where message_problem is null or row_index = 0
),

final as (
    select * from events
)

select * from final
