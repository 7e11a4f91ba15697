{#
    DTS Shareplex JSON messages (stg_dts_shareplex__messages) in the normalized vocabulary of
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
      key, the columns of data. An insert carries neither: it uses the key columns most
      recently sent (by ordering key) for its table when its data has all of them, else every
      column of data (all_columns). row_key: key overlaid by data (the identifying values
      after the change); before_row_key: from key (or, for an UPDATE AFTER without key, from
      its UPDATE BEFORE half: same table, trans and scn, seq one lower, else equal).
    - Ordering key (text, fixed width up to the topic, compares like the tuple): scn (30
      digits), seq (10 digits, 0 when absent), image rank (0 = UPDATE BEFORE, 1 = anything
      else), Kafka partition (10 digits), offset (20 digits) and topic, dot-separated (macro
      kafka_ordering_tail).
    - event_time: meta.time (UTC; the Z may be missing). capture_time: meta.posttime (when DTS
      posted the transaction). transaction_id: trans; transaction_event_index: seq;
      transaction_event_count: size; is_last_event_in_transaction: seq = size.
      source_position: meta.rowid (Oracle ROWID of the row; kept, not used as a key).

    A table, not a view (see stg_dataworks__events): four silver models and tests read it.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run rewrites
    the new batches; the older batches holding an UPDATE AFTER that a new UPDATE BEFORE
    completes; and the older batches holding changes keyed by the learned key of a table
    whose learned key settles in a new batch. key_learned_batch_id: the first batch after which
    the table's learned key did not change again; the resolved_batch_id of a change keyed by
    it is at least that batch (the same in a full and an incremental build).
#}

{{ batch_partitioned_config() }}

{# the op, op kind, images, sent key columns and ordering key of a message #}
{% set classification %}
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
end as before_values,
case
    when op_code in ('ins', 'INSERT', 'upd', 'UPDATE', 'UPDATE AFTER') then data_image
end as after_values,
{# the columns that identify the row, when the message itself says #}
case
    when key_image is not null and size(key_image) > 0 then map_keys(key_image)
    when op_code in ('del', 'DELETE') and size(data_image) > 0 then map_keys(data_image)
end as sent_key_columns,
case
    when scn is not null and length(scn) <= 30 and coalesce(seq, 0) <= 9999999999
        then concat_ws(
            '.',
            {{ padded_number('scn', 30) }},
            {{ padded_number('coalesce(seq, 0)', 10) }},
            cast(case when op_code = 'UPDATE BEFORE' then 0 else 1 end as string),
            {{ kafka_ordering_tail() }}
        )
end as ordering_key
{% endset %}

with

all_messages as (
    select * from {{ ref('stg_dts_shareplex__messages') }}
),

{% if is_incremental() %}
{% set held_batch = held_max('ingest_batch_id') %}

new_classified as (
    select
        *,
        {{ classification }}
    from all_messages
    where ingest_batch_id > {{ held_batch }}
),
{% endif %}

{# every message that sent its identifying columns: of all batches in a full build; of the
   new batches plus the held rows in an incremental one #}
key_messages as (
    select
        source_format,
        source_schema,
        source_table,
        ingest_batch_id,
        ordering_key,
        array_sort(sent_key_columns) as sent_key_columns
    {% if is_incremental() %}
    from new_classified
    {% else %}
    from (select *, {{ classification }} from all_messages)
    {% endif %}
    where decode_error is null
        and op_kind = 'change'
        and sent_key_columns is not null
        and ordering_key is not null
    {% if is_incremental() %}
    union all
    select
        source_format,
        source_schema,
        source_table,
        ingest_batch_id,
        ordering_key,
        sent_key_columns
    from {{ this }}
    where record_kind = 'change' and sent_key_columns is not null
    {% endif %}
),

{# per table and batch: the identifying columns most recently sent (by ordering key) in the
   batches up to it #}
running_keys as (
    select
        source_format,
        source_schema,
        source_table,
        ingest_batch_id,
        max(batch_latest) over (
            partition by source_format, source_schema, source_table
            order by ingest_batch_id
            rows between unbounded preceding and current row
        ).sent_key_columns as learned_key_columns
    from (
        select
            source_format,
            source_schema,
            source_table,
            ingest_batch_id,
            max(struct(ordering_key, sent_key_columns)) as batch_latest
        from key_messages
        group by 1, 2, 3, 4
    )
),

key_histories as (
    select
        *,
        max_by(learned_key_columns, ingest_batch_id) over (
            partition by source_format, source_schema, source_table
        ) as final_key_columns
    from running_keys
),

{# per table: the identifying columns its messages sent most recently (for inserts), and the
   first batch after which they did not change again #}
table_keys as (
    select
        source_format,
        source_schema,
        source_table,
        max(final_key_columns) as learned_key_columns,
        min(ingest_batch_id) as key_learned_batch_id
    from (
        select
            *,
            max(
                case when learned_key_columns != final_key_columns then ingest_batch_id end
            ) over (partition by source_format, source_schema, source_table) as last_other_batch
        from key_histories
    )
    where ingest_batch_id > coalesce(last_other_batch, -1)
    group by 1, 2, 3
),

{% if is_incremental() %}
{# older batches to compute again: those holding an UPDATE AFTER without key that a new
   UPDATE BEFORE completes, and those holding changes keyed by a learned key that settled
   in another batch since #}
reopened_batches as (
    select distinct held.ingest_batch_id
    from {{ this }} as held
    inner join new_classified as new_halves
        on new_halves.op_code = 'UPDATE BEFORE'
        and held.source_format = new_halves.source_format
        and held.source_schema <=> new_halves.source_schema
        and held.source_table = new_halves.source_table
        and held.transaction_id <=> new_halves.trans
        and held.source_scn = new_halves.scn
        and (
            held.transaction_event_index - 1 <=> new_halves.seq
            or held.transaction_event_index <=> new_halves.seq
        )
    where held.record_kind = 'change'
        and held.source_op = 'UPDATE AFTER'
        and held.before_image is null
        and held.before_row_key is null
    union
    select held.ingest_batch_id
    from {{ this }} as held
    left join table_keys
        on held.source_format = table_keys.source_format
        and held.source_schema <=> table_keys.source_schema
        and held.source_table = table_keys.source_table
    where held.record_kind = 'change'
        and held.sent_key_columns is null
        and not held.key_learned_batch_id <=> table_keys.key_learned_batch_id
),
{% endif %}

messages as (
    select * from all_messages
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
        or ingest_batch_id in (select ingest_batch_id from reopened_batches)
    {% endif %}
),

classified as (
    select
        *,
        {{ classification }}
    from messages
),

imaged as (
    select
        *,
        case
            when op_code in ('del', 'DELETE', 'UPDATE BEFORE') then before_values
            else {{ overlay_image('key_image', 'data_image') }}
        end as identity_image
    from classified
),

keyed as (
    select
        imaged.*,
        case
            when imaged.sent_key_columns is not null then imaged.sent_key_columns
            when size(
                {{ missing_key_columns('imaged.identity_image', 'table_keys.learned_key_columns') }}
            ) = 0 then table_keys.learned_key_columns
            else map_keys(coalesce(imaged.identity_image, map()))
        end as key_columns,
        case
            when imaged.sent_key_columns is not null then 'unique_key'
            when size(
                {{ missing_key_columns('imaged.identity_image', 'table_keys.learned_key_columns') }}
            ) = 0 then 'unique_key'
            else 'all_columns'
        end as key_source,
        table_keys.key_learned_batch_id as table_key_learned_batch_id
    from imaged
    left join table_keys
        on imaged.source_format = table_keys.source_format
        and imaged.source_schema <=> table_keys.source_schema
        and imaged.source_table = table_keys.source_table
),

checked as (
    select
        *,
        case
            when decode_error is not null then decode_error
            when op_kind is null then 'unknown_op'
            when source_table is null then 'missing_required_field'
            when op_kind != 'change' then null
            when scn is null then 'missing_required_field'
            when ordering_key is null then 'invalid_field_type'
            when op_code in ('ins', 'INSERT', 'upd', 'UPDATE', 'UPDATE AFTER')
                and data_image is null then 'missing_required_field'
            when op_code in ('upd', 'UPDATE') and key_image is null
                then 'missing_required_field'
            when op_code in ('del', 'DELETE', 'UPDATE BEFORE') and before_values is null
                then 'missing_required_field'
            when size(key_columns) = 0 then 'missing_key_column'
        end as quarantine_reason,
        case
            when decode_error is not null then decode_error_detail
            when op_kind is null then concat('meta.op ', op_code, ' is not a Shareplex op')
            when source_table is null then 'meta.table is missing'
            when op_kind != 'change' then null
            when scn is null then 'meta.scn is missing'
            when ordering_key is null
                then 'meta.scn has more than 30 digits or meta.seq more than 10'
            when op_code in ('ins', 'INSERT', 'upd', 'UPDATE', 'UPDATE AFTER')
                and data_image is null then concat(op_code, ' without data')
            when op_code in ('upd', 'UPDATE') and key_image is null
                then concat(op_code, ' without key (the old identifying values)')
            when op_code in ('del', 'DELETE', 'UPDATE BEFORE') and before_values is null
                then concat(op_code, ' without data or key')
            when size(key_columns) = 0 then 'the message has no column to identify the row'
        end as quarantine_detail
    from keyed
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
        cast(null as string) as control_type,
        image_rank,
        cast(null as string) as source_db_type,
        cast(null as string) as source_database,
        source_schema,
        source_table,
        key_source,
        key_columns,
        cast(null as map<string, string>) as column_types,
        cast(null as string) as source_schema_version,
        before_values as before_image,
        after_values as after_image,
        op_code in ('upd', 'UPDATE', 'UPDATE AFTER') as after_image_is_partial,
        {{ canonical_row_key('identity_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_values', 'key_columns') }} as before_row_key,
        ordering_key,
        timestamp_millis(event_time_ms) as event_time,
        timestamp_millis(post_time_ms) as capture_time,
        cast(null as timestamp) as checkpoint_time,
        cast(null as string) as source_sequence_id,
        scn as source_scn,
        rowid as source_position,
        trans as transaction_id,
        cast(seq as int) as transaction_event_index,
        cast(size as int) as transaction_event_count,
        seq = size as is_last_event_in_transaction,
        case
            when op_code = 'TRUNCATE' then concat('TRUNCATE TABLE ', table_name)
            when op_code = 'DROP COLUMN' then cast(value as string)
        end as ddl_text,
        value as raw_value,
        array_sort(sent_key_columns) as sent_key_columns,
        case
            when quarantine_reason is null and op_kind = 'change' and sent_key_columns is null
                then table_key_learned_batch_id
        end as key_learned_batch_id,
        seq
    from checked
),

{# The after half of a split update learns its before half's key (see the header). #}
update_before_halves as (
    select
        source_format,
        source_schema,
        source_table,
        transaction_id,
        source_scn,
        seq,
        max(row_key) as before_row_key,
        min(ingest_batch_id) as before_half_batch_id
    from (
        select
            source_format,
            source_schema,
            source_table,
            transaction_id,
            source_scn,
            seq,
            row_key,
            ingest_batch_id
        from events
        where record_kind = 'change' and source_op = 'UPDATE BEFORE'
        {% if is_incremental() %}
        {# UPDATE BEFORE halves held from earlier runs, for new UPDATE AFTER halves #}
        union all
        select
            source_format,
            source_schema,
            source_table,
            transaction_id,
            source_scn,
            cast(transaction_event_index as bigint) as seq,
            row_key,
            ingest_batch_id
        from {{ this }}
        where record_kind = 'change' and source_op = 'UPDATE BEFORE'
        {% endif %}
    )
    group by 1, 2, 3, 4, 5, 6
),

paired as (
    select
        events.* except (before_row_key, resolved_batch_id),
        coalesce(
            events.before_row_key, previous_half.before_row_key, same_seq_half.before_row_key
        ) as before_row_key,
        {# final once its UPDATE BEFORE half first arrived, and its learned key settled #}
        greatest(
            events.resolved_batch_id,
            coalesce(
                previous_half.before_half_batch_id,
                same_seq_half.before_half_batch_id,
                events.resolved_batch_id
            ),
            coalesce(events.key_learned_batch_id, events.resolved_batch_id)
        ) as resolved_batch_id
    from events
    left join update_before_halves as previous_half
        on events.record_kind = 'change'
        and events.source_op = 'UPDATE AFTER'
        and events.before_image is null
        and events.source_format = previous_half.source_format
        and events.source_schema <=> previous_half.source_schema
        and events.source_table = previous_half.source_table
        and events.transaction_id <=> previous_half.transaction_id
        and events.source_scn = previous_half.source_scn
        and events.seq - 1 <=> previous_half.seq
    left join update_before_halves as same_seq_half
        on events.record_kind = 'change'
        and events.source_op = 'UPDATE AFTER'
        and events.before_image is null
        and events.source_format = same_seq_half.source_format
        and events.source_schema <=> same_seq_half.source_schema
        and events.source_table = same_seq_half.source_table
        and events.transaction_id <=> same_seq_half.transaction_id
        and events.source_scn = same_seq_half.source_scn
        and events.seq <=> same_seq_half.seq
),

final as (
    select * except (seq) from paired
)

select * from final
