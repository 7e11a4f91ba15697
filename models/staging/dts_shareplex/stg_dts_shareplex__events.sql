{#
    DTS Shareplex JSON messages (stg_dts_shareplex__decoded) in the normalized vocabulary of
    docs/formats.md: every decoded message classified as a change, a DDL or a quarantined record,
    with its normalized op, images, key columns, row keys and ordering key. Source: docs/formats.md
    section 4b (seed 003). Shareplex sends no heartbeats and no transaction markers: the
    transaction position (seq of size) is on every change instead.

    - meta.op (case-sensitive, as documented): ins / INSERT -> insert, data is the whole new
      row. upd / UPDATE -> update: data holds only the changed columns (new values) and is the
      after image (after_image_is_partial = true); key holds the old identifying values and
      is the before image. del / DELETE -> delete: data (overlaid by key, if sent) holds the
      identifying values and is the before image. The split pair UPDATE BEFORE / UPDATE AFTER
      maps like DataWorks's two-message update: UPDATE BEFORE is an update whose before image
      is data (after image NULL, image rank 0, so it orders before its after half); UPDATE
      AFTER is an update whose after image is data (partial, as upd) and whose before image is
      key when sent. TRUNCATE and DROP COLUMN -> ddl, source_op as sent; ddl_text is
      "TRUNCATE TABLE <meta.table>" for TRUNCATE (the message carries no statement) and the
      raw message text for DROP COLUMN (its column is only in the message). Any other op ->
      quarantine unknown_op.
    - Key columns (key_source unique_key: the identifying columns the message itself sends,
      not known to be the primary key): the columns of key when sent; for a delete without
      key, the columns of data. row_key: key overlaid by data (the identifying values after
      the change); before_row_key: from key. A message that sends no key (an insert) has
      NULL key columns, key source and row keys here: int_dts_shareplex__events_keyed, the
      model silver reads, gives it its table's learned key, and an UPDATE AFTER without key
      its UPDATE BEFORE half's key.
    - Ordering key (text, fixed width up to the topic, compares like the tuple): scn (30
      digits), seq (10 digits, 0 when absent), image rank (0 = UPDATE BEFORE, 1 = anything
      else), Kafka partition (10 digits), offset (20 digits) and topic, dot-separated (macro
      kafka_ordering_tail).
    - event_time: meta.time (UTC; the Z may be missing). capture_time: meta.posttime (when DTS
      posted the transaction). transaction_id: trans; transaction_event_index: seq;
      transaction_event_count: size; is_last_event_in_transaction: seq = size.
      source_position: meta.rowid (Oracle ROWID of the row; kept, not used as a key).

    Ephemeral: its one reader, int_dts_shareplex__events_keyed, is the table.
#}

{{ config(materialized='ephemeral') }}

{# the last check: without a key of its own, a message is keyed by its table's learned key
   when it has all of its columns, else by all its columns - none when it has none #}
{% set checks = [
    ['op_kind is null', 'unknown_op', "concat('meta.op ', op_code, ' is not a Shareplex op')"],
    ['source_table is null', 'missing_required_field', "'meta.table is missing'"],
    ["op_kind != 'change'", none, none],
    ['scn is null', 'missing_required_field', "'meta.scn is missing'"],
    [
        'ordering_key is null', 'invalid_field_type',
        "'meta.scn has more than 30 digits or meta.seq more than 10'",
    ],
    [
        "op_code in ('ins', 'INSERT', 'upd', 'UPDATE', 'UPDATE AFTER') and data_image is null",
        'missing_required_field', "concat(op_code, ' without data')",
    ],
    [
        "op_code in ('upd', 'UPDATE') and key_image is null", 'missing_required_field',
        "concat(op_code, ' without key (the old identifying values)')",
    ],
    [
        "op_code in ('del', 'DELETE', 'UPDATE BEFORE') and before_image is null",
        'missing_required_field', "concat(op_code, ' without data or key')",
    ],
    [
        'sent_key_columns is null and size(coalesce(identity_image, map())) = 0',
        'missing_key_column', "'the message has no column to identify the row'",
    ],
] %}

with

messages as (
    select * from {{ ref('stg_dts_shareplex__decoded') }}
),

classified as (
    select
        *,
        case
            when op_code in ('ins', 'INSERT') then 'insert'
            when op_code in ('upd', 'UPDATE', 'UPDATE BEFORE', 'UPDATE AFTER') then 'update'
            when op_code in ('del', 'DELETE') then 'delete'
        end as op,
        case
            when op_code in (
                    'ins', 'INSERT', 'upd', 'UPDATE', 'UPDATE BEFORE', 'UPDATE AFTER', 'del',
                    'DELETE'
                ) then 'change'
            when op_code in ('TRUNCATE', 'DROP COLUMN') then 'ddl'
        end as op_kind,
        case when op_code = 'UPDATE BEFORE' then 0 else 1 end as image_rank,
        case
            when op_code in ('upd', 'UPDATE', 'UPDATE AFTER') then key_image
            when op_code in ('del', 'DELETE', 'UPDATE BEFORE')
                then {{ overlay_image('data_image', 'key_image') }}
        end as before_image,
        case
            when op_code in ('ins', 'INSERT', 'upd', 'UPDATE', 'UPDATE AFTER') then data_image
        end as after_image,
        {# the columns that identify the row, when the message itself says #}
        case
            when key_image is not null and size(key_image) > 0 then map_keys(key_image)
            when op_code in ('del', 'DELETE') and size(data_image) > 0 then map_keys(data_image)
        end as sent_key_columns,
        {{ format_ordering_key('dts_shareplex', {
            'scn': 'scn',
            'seq': 'coalesce(seq, 0)',
            'image_rank': "case when op_code = 'UPDATE BEFORE' then 0 else 1 end",
        }) }} as ordering_key
    from messages
),

imaged as (
    select
        *,
        case
            when op_code in ('del', 'DELETE', 'UPDATE BEFORE') then before_image
            else {{ overlay_image('key_image', 'data_image') }}
        end as identity_image
    from classified
),

normalized as (
    select
        * except (sent_key_columns),
        case when sent_key_columns is not null then 'unique_key' end as key_source,
        sent_key_columns as key_columns,
        {{ canonical_row_key('identity_image', 'sent_key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'sent_key_columns') }} as before_row_key,
        op_code in ('upd', 'UPDATE', 'UPDATE AFTER') as after_image_is_partial,
        case
            when op_code = 'TRUNCATE' then concat('TRUNCATE TABLE ', table_name)
            when op_code = 'DROP COLUMN' then cast(value as string)
        end as ddl_text,
        {# the key it sends, sorted, when it counts for its table's learned key #}
        case
            when decode_error is null and op_kind = 'change' and ordering_key is not null
                then array_sort(sent_key_columns)
        end as sent_key_columns,
        {{ quarantine_checks(checks) }}
    from imaged
),

final as (
    select
        {{ staging_event_row(
            [
                'op', 'source_schema', 'source_table', 'key_source', 'key_columns',
                'before_image', 'after_image', 'after_image_is_partial', 'row_key',
                'before_row_key', 'ordering_key', 'ddl_text',
            ],
            renamed={
                'source_op': 'op_code',
                'event_time': 'timestamp_millis(event_time_ms)',
                'capture_time': 'timestamp_millis(post_time_ms)',
                'source_scn': 'scn',
                'source_position': 'rowid',
                'transaction_id': 'trans',
                'transaction_event_index': 'cast(seq as int)',
                'transaction_event_count': 'cast(size as int)',
                'is_last_event_in_transaction': 'seq = size',
            },
            extra=['image_rank', 'sent_key_columns', 'identity_image', 'seq'],
        ) }}
    from normalized
)

select * from final
