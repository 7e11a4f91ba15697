{#
    paired_split_updates(events, match_columns, decoded): the body of an intermediate model that pairs
    the two halves of split updates in a format's staging events (DataWorks UPDATE_BEFOR /
    UPDATE_AFTER, DataHub Tuple before / after image records).

    Arguments:
    - events: the staging *_events relation (a ref), one row per record, with the columns of
      staging_event_columns() and image_rank (0 = before half, 1 = anything else).
    - match_columns: the columns that name one update in both halves (compared with <=>).
    - decoded: the decoding model's table events is computed from (a ref): a run with no new
      batch in it computes nothing (macro nothing_new).

    A before half is a change with op update and image_rank 0; an after half, one with image
    rank 1 and no before image. Output columns: those of events, with before_row_key of an
    after half set to its before half's row_key (the greatest, should two match) and its
    resolved_batch_id raised to the batch that first delivered that before half.

    For an incremental model partitioned by ingest_batch_id (batch_partitioned_config()): a
    run computes the new batches and the older batches holding an after half still without its
    before half that a new before half completes; before halves held from earlier runs pair
    new after halves.
#}
{% macro paired_split_updates(events, match_columns, decoded) %}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% if is_incremental() and nothing_new(decoded, held_batch) %}
{{ no_new_rows() }}
{% else %}

with

all_events as (
    select * from {{ events }}
),

{% if is_incremental() %}

{# held after halves still waiting for their before half, that a new before half completes:
   their batches are computed again #}
reopened_batches as (
    select distinct held.ingest_batch_id
    from {{ this }} as held
    inner join (
        select * from all_events
        where ingest_batch_id > {{ held_batch }} and {{ split_update_half('before') }}
    ) as new_halves
        on {% for column in match_columns -%}
        held.{{ column }} <=> new_halves.{{ column }}
        {%- if not loop.last %}
        and {% endif %}
        {%- endfor %}
    where {{ split_update_half('after', 'held') }}
        and held.before_row_key is null
),
{% endif %}

events as (
    select * from all_events
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
        or ingest_batch_id in (select ingest_batch_id from reopened_batches)
    {% endif %}
),

update_before_halves as (
    select
        {{ match_columns | join(', ') }},
        max(row_key) as before_row_key,
        min(ingest_batch_id) as before_half_batch_id
    from (
        select {{ match_columns | join(', ') }}, row_key, ingest_batch_id
        from events
        where {{ split_update_half('before') }}
        {% if is_incremental() %}
        {# before halves held from earlier runs, for new after halves (duplicates of the
           batches computed again change neither max nor min) #}
        union all
        select {{ match_columns | join(', ') }}, row_key, ingest_batch_id
        from {{ this }}
        where {{ split_update_half('before') }}
        {% endif %}
    )
    group by {{ match_columns | join(', ') }}
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
        on {{ split_update_half('after', 'events') }}
        {%- for column in match_columns %}
        and events.{{ column }} <=> update_before_halves.{{ column }}
        {%- endfor %}
)

select * from final
{% endif %}
{% endmacro %}

{#
    split_update_half(half, relation=none): the condition that a staging event row (of
    relation, a CTE alias) is the before or the after half of a split update (see
    paired_split_updates).
#}
{% macro split_update_half(half, relation=none) -%}
    {%- set prefix = relation ~ '.' if relation else '' -%}
    {{ prefix }}record_kind = 'change'
        and {{ prefix }}op = 'update'
    {%- if half == 'before' %}
        and {{ prefix }}image_rank = 0
    {%- else %}
        and {{ prefix }}image_rank = 1
        and {{ prefix }}before_image is null
    {%- endif -%}
{%- endmacro %}

{#
    shareplex_update_before_half(half, seq_offset): the join condition that the row of half
    (an alias of update_before_halves in int_dts_shareplex__events_keyed) is the UPDATE BEFORE
    half of rekeyed's Shareplex UPDATE AFTER row without a before image: same table,
    transaction and SCN, at rekeyed's seq plus seq_offset (' - 1': the previous seq; '': the
    same seq).
#}
{% macro shareplex_update_before_half(half, seq_offset) -%}
    rekeyed.record_kind = 'change'
        and rekeyed.source_op = 'UPDATE AFTER'
        and rekeyed.before_image is null
        and rekeyed.source_format = {{ half }}.source_format
        and rekeyed.source_schema <=> {{ half }}.source_schema
        and rekeyed.source_table = {{ half }}.source_table
        and rekeyed.transaction_id <=> {{ half }}.transaction_id
        and rekeyed.source_scn = {{ half }}.source_scn
        and rekeyed.seq{{ seq_offset }} <=> {{ half }}.seq
{%- endmacro %}
