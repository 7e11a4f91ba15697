{#
    The DTS Shareplex events (stg_dts_shareplex__events) completed across messages:

    - Key learning: a message that sends no key (an insert) takes the key columns most
      recently sent (by ordering key) for its table when its image has all of them
      (key_source unique_key), else every column of its image (all_columns); row_key and
      before_row_key follow. key_learned_batch_id: the first batch after which the table's
      learned key did not change again; the resolved_batch_id of a change keyed by it is at
      least that batch (the same in a full and an incremental build).
    - Split updates: an UPDATE AFTER without key learns its UPDATE BEFORE half's key (same
      table, trans and scn, seq one lower, else equal) as before_row_key.

    A table, not a view (see int_dataworks__events_paired): four silver models and tests
    read it.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run rewrites
    the new batches; the older batches holding an UPDATE AFTER that a new UPDATE BEFORE
    completes; and the older batches holding changes keyed by the learned key of a table
    whose learned key settles in a new batch.
#}

{{ config(enabled=cdc_folder_enabled('dts_shareplex')) }}
{{ batch_partitioned_config() }}
{% set decoded = ref('stg_dts_shareplex__decoded') %}
{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% if is_incremental() and nothing_new(decoded, held_batch) %}
{{ no_new_rows() }}
{% else %}

with

all_events as (
    select * from {{ ref('stg_dts_shareplex__events') }}
),

{% if is_incremental() %}
new_events as (
    select * from all_events
    where ingest_batch_id > {{ held_batch }}
),
{% endif %}

{# every message whose sent key counts: of all batches in a full build; of the new batches
   plus the held rows in an incremental one #}
key_messages as (
    select
        source_format,
        source_schema,
        source_table,
        ingest_batch_id,
        ordering_key,
        sent_key_columns
    from {{ 'new_events' if is_incremental() else 'all_events' }}
    where sent_key_columns is not null
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
    where sent_key_columns is not null
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
    ) as batch_keys
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
    ) as key_changes
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
    inner join new_events as new_halves
        on new_halves.source_op = 'UPDATE BEFORE'
        and held.source_format = new_halves.source_format
        and held.source_schema <=> new_halves.source_schema
        and held.source_table = new_halves.source_table
        and held.transaction_id <=> new_halves.transaction_id
        and held.source_scn = new_halves.source_scn
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

events as (
    select * from all_events
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
        or ingest_batch_id in (select reopened_batches.ingest_batch_id from reopened_batches)
    {% endif %}
),

{# a message without a key of its own: its table's learned key when its image has all of
   those columns, else all its columns #}
{% set missing_learned_key =
    missing_key_columns('events.identity_image', 'table_keys.learned_key_columns') %}
keyed as (
    select
        events.* except (key_source, key_columns, row_key, before_row_key),
        coalesce(
            events.key_source,
            case
                when size({{ missing_learned_key }}) = 0 then 'unique_key'
                else 'all_columns'
            end
        ) as key_source,
        coalesce(
            events.key_columns,
            case
                when size({{ missing_learned_key }}) = 0 then table_keys.learned_key_columns
                else map_keys(coalesce(events.identity_image, map()))
            end
        ) as key_columns,
        events.key_columns is null as is_key_learned,
        events.row_key,
        events.before_row_key,
        table_keys.key_learned_batch_id as table_key_learned_batch_id
    from events
    left join table_keys
        on events.source_format = table_keys.source_format
        and events.source_schema <=> table_keys.source_schema
        and events.source_table = table_keys.source_table
),

rekeyed as (
    select
        * except (row_key, before_row_key, table_key_learned_batch_id, is_key_learned),
        case
            when is_key_learned then {{ canonical_row_key('identity_image', 'key_columns') }}
            else row_key
        end as row_key,
        case
            when is_key_learned then {{ canonical_row_key('before_image', 'key_columns') }}
            else before_row_key
        end as before_row_key,
        case
            when record_kind = 'change' and is_key_learned then table_key_learned_batch_id
        end as key_learned_batch_id
    from keyed
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
        from rekeyed
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

{# each UPDATE AFTER half without a before image joined to its UPDATE BEFORE half: the one at
   the previous seq, else the one at the same seq #}
final as (
    select
        rekeyed.* except (before_row_key, resolved_batch_id, identity_image, seq),
        coalesce(
            rekeyed.before_row_key, previous_half.before_row_key, same_seq_half.before_row_key
        ) as before_row_key,
        {# final once its UPDATE BEFORE half first arrived, and its learned key settled #}
        greatest(
            rekeyed.resolved_batch_id,
            coalesce(
                previous_half.before_half_batch_id,
                same_seq_half.before_half_batch_id,
                rekeyed.resolved_batch_id
            ),
            coalesce(rekeyed.key_learned_batch_id, rekeyed.resolved_batch_id)
        ) as resolved_batch_id
    from rekeyed
    left join update_before_halves as previous_half
        on {{ shareplex_update_before_half('previous_half', ' - 1') }}
    left join update_before_halves as same_seq_half
        on {{ shareplex_update_before_half('same_seq_half', '') }}
)

select * from final
{% endif %}
