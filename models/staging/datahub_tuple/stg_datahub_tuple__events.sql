{#
    DataHub Tuple records (stg_datahub_tuple__decoded) in the normalized vocabulary of
    docs/formats.md: every decoded record classified as a change or a quarantined record (Tuple
    carries no DDL and no heartbeats), with its normalized op, key columns, row keys and
    ordering key. Source: docs/formats.md section 2 (seed 002). Per record only: the after half
    of an update learns its before half's key in int_datahub_tuple__events_paired, the model
    silver reads.

    - Op: _operation_type_ I / U / D -> insert / update / delete (case-sensitive). An update is
      two records sharing _sequence_id_: the before half (_before_image_ = Y) and the after
      half (_after_image_ = Y). The record's data columns are the before image when
      _before_image_ = Y, else the after image. Flags that contradict the op are quarantined
      (inconsistent_image_flags); absent flags are implied for I (N/Y) and D (Y/N) only.
    - Table: _source_table_, else the last dot-separated part of the topic (one table per
      topic). Tuple has no database or schema name: both NULL.
    - Keys: Tuple records carry no primary key. Key columns declared in the seed
      cdc_declared_keys (topic + table) win (key_source declared); else every column of the
      image identifies the row (key_source all_columns).
    - Ordering key (text, fixed width up to the topic, compares like the tuple): _sequence_id_
      as a 30-digit number, the image rank (0 = _before_image_ Y, 1 = after image), Kafka
      partition (10 digits), offset (20 digits) and topic (macro kafka_ordering_tail). Without a
      primary key DataHub shards Tuple records randomly, so only the sequence id orders them.

    Ephemeral: its one reader, int_datahub_tuple__events_paired, is the table.
#}

{{ config(materialized='ephemeral') }}

{% set checks = [
    ['op_code is null', 'missing_required_field', "'_operation_type_ is missing'"],
    [
        'op is null', 'unknown_op',
        "concat('_operation_type_ ', op_code, ' is not a Tuple op (I, U, D)')",
    ],
    ['sequence_id is null', 'missing_required_field', "'_sequence_id_ is missing'"],
    ['length(sequence_id) > 30', 'invalid_field_type', "'_sequence_id_ has more than 30 digits'"],
    [
        "op_code = 'U' and (before_flag is null or after_flag is null)", 'missing_required_field',
        "'update without _before_image_ / _after_image_: its half is unknown'",
    ],
    [
        'not flags_consistent', 'inconsistent_image_flags',
        "concat('_operation_type_ ', op_code, ' with _before_image_ ', "
        ~ "coalesce(before_flag, 'NULL'), ' and _after_image_ ', coalesce(after_flag, 'NULL'))",
    ],
    [
        'size(key_columns) = 0', 'missing_key_column',
        "'the record has no data column to identify the row'",
    ],
    missing_key_check([['row_image', 'key_columns']], 'key column(s) missing from the record: '),
] %}

with

records as (
    select * from {{ ref('stg_datahub_tuple__decoded') }}
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
        coalesce(declared_key_columns, array_sort(map_keys(coalesce(row_image, map()))))
            as key_columns
    from with_declared_keys
),

normalized as (
    select
        * except (source_table),
        'change' as op_kind,
        table_name as source_table,
        source_table is null as source_table_from_topic,
        case when before_flag = 'Y' and flags_consistent then row_image end as before_image,
        case when after_flag = 'Y' and flags_consistent then row_image end as after_image,
        {{ canonical_row_key('row_image', 'key_columns') }} as row_key,
        case
            when before_flag = 'Y' then {{ canonical_row_key('row_image', 'key_columns') }}
        end as before_row_key,
        {{ format_ordering_key(
            'datahub_tuple', {'sequence_id': 'sequence_id', 'image_rank': 'image_rank'}
        ) }} as ordering_key,
        {{ quarantine_checks(checks) }}
    from keyed
),

final as (
    select
        {{ staging_event_row(
            [
                'op', 'source_table', 'key_source', 'key_columns', 'before_image',
                'after_image', 'row_key', 'before_row_key', 'ordering_key',
            ],
            renamed={
                'source_op': 'op_code',
                'event_time': 'timestamp_millis(execute_time_ms)',
                'source_sequence_id': 'sequence_id',
            },
            extra=['source_table_from_topic', 'image_rank', 'before_image_flag', 'after_image_flag'],
        ) }}
    from normalized
)

select * from final
