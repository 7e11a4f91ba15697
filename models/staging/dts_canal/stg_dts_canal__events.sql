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

{# why an image its op needs is missing (the detail of missing_required_field) #}
{% set missing_image_detail %}
concat(
    type_code,
    ' without its ',
    case
        when op in ('insert', 'snapshot', 'update') and after_image is null then 'after'
        else 'before'
    end,
    ' image: ',
    case
        when canal_legacy_swap and op = 'update'
            then 'on a canal_legacy_swap topic an UPDATE needs data (the old '
            || 'row) and old (the new row)'
        when canal_legacy_swap then 'neither data nor old carries a row'
        when not has_data_row and has_old_row
            then 'data is null or empty and only old carries a row (a DTS '
            || 'instance created before 2022-03-20? set canal_legacy_swap for '
            || 'the topic in seeds/cdc_topics.csv)'
        else 'data is null or empty'
    end
)
{% endset %}

{% set checks = [
    [
        'op_kind is null', 'unknown_op',
        "concat('type ', type_code, ' is not a Canal DML type (INSERT, UPDATE, DELETE, INIT) ', "
        ~ "'and isDdl is not true')",
    ],
    ['es_ms is null', 'missing_required_field', "'es is missing'"],
    [
        "op_kind = 'ddl' and coalesce(trim(sql_text), '') = ''", 'missing_required_field',
        "concat('DDL message (type ', type_code, ') without sql')",
    ],
    ["op_kind = 'ddl'", none, none],
    ['source_table is null', 'missing_required_field', "'table is missing'"],
    [
        "(op in ('insert', 'snapshot', 'update') and after_image is null) "
        ~ "or (op in ('delete', 'update') and before_image is null)",
        'missing_required_field', missing_image_detail,
    ],
    missing_key_check([['state_image', 'key_columns'], ['before_image', 'key_columns']]),
] %}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% if is_incremental() and nothing_new(ref('stg_dts_canal__rows'), held_batch) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

with

canal_rows as (
    select * from {{ ref('stg_dts_canal__rows') }}
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
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

{# the verdict of each row of a message #}
checked as (
    select
        *,
        {{ quarantine_checks(checks) }}
    from keyed
),

{# the first problem of the message (lowest row index), if any row has one #}
messages as (
    select
        *,
        min(
            case
                when quarantine_reason is not null then named_struct(
                    'row_index', row_index,
                    'reason', quarantine_reason,
                    'detail', quarantine_detail
                )
            end
        ) over (partition by topic, partition, offset) as message_problem
    from checked
),

normalized as (
    select
        * except (op, quarantine_reason, quarantine_detail),
        case when message_problem is null then op end as op,
        message_problem.reason as quarantine_reason,
        case
            when message_problem is null then null
            when row_count > 1
                then concat(
                    'row ', cast(message_problem.row_index as string), ' of ',
                    cast(row_count as string), ': ', message_problem.detail,
                    ' (the whole message is quarantined)'
                )
            else message_problem.detail
        end as quarantine_detail,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        case
            when es_ms is not null then concat_ws(
                '.',
                {{ padded_number('es_ms', 20) }},
                cast(snapshot_rank as string),
                {{ kafka_ordering_tail(row_index='row_index') }}
            )
        end as ordering_key,
        case when is_ddl then sql_text end as ddl_text
    from messages
    {# a quarantined message is one row: its first row stands for it #}
    where message_problem is null or row_index = 0
),

final as (
    select
        {{ staging_event_row(
            [
                'quarantine_reason', 'quarantine_detail', 'op', 'source_database',
                'source_table', 'key_source', 'key_columns', 'column_types', 'before_image',
                'after_image', 'row_key', 'before_row_key', 'ordering_key', 'ddl_text',
            ],
            renamed={
                'kafka_row_index': 'row_index',
                'source_op': 'type_code',
                'event_time': 'timestamp_millis(es_ms)',
                'capture_time': 'timestamp_millis(ts_ms)',
                'source_sequence_id': 'canal_id',
                'source_position': 'gtid',
                'transaction_id': 'gtid',
            },
        ) }}
    from normalized
)

{% endif %}

select * from final
