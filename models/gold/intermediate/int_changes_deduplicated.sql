{#
    The distinct changes of each source row identity, for gold.row_history (an intermediate
    model: computed once here, it is read several times there). One row per change of
    silver.change_events, except:

    - a redelivery of a change (the same op, stated values, row keys, source positions and
      times - everything but the Kafka coordinates, so the same update sent once split and
      once as one message, as DataWorks documents both, is one change too) is dropped; the
      first delivery by ordering key stays;
    - the update-before half of a split update (op update without an after image: DataWorks
      UPDATE_BEFOR, Tuple _before_image_ Y, Shareplex UPDATE BEFORE) is dropped unless no
      whole change of the row orders before it (the row is first seen through it).

    stated_values is the row as the change states it: the before image of a delete, the
    after image (a partial one overlaid on its own before image), else the before image.
#}

with

change_events as (
    select * from {{ ref('change_events') }}
),

changes as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        before_row_key,
        op,
        ordering_key,
        event_time,
        capture_time,
        event_id,
        before_image,
        source_sequence_id,
        source_scn,
        source_position,
        transaction_id,
        transaction_event_index,
        transaction_event_count,
        op = 'update' and after_image is null as is_before_half,
        op != 'delete' and after_image_is_partial as is_partial,
        case
            when op = 'delete' then before_image
            {# a partial change also states the columns of its before image it did not change #}
            when after_image_is_partial then {{ overlay_image('before_image', 'after_image') }}
            else coalesce(after_image, before_image)
        end as stated_values
    from change_events
),

{# what a redelivery repeats: the change's op, row keys, stated values, source position and
   times - everything but the Kafka coordinates (so the same update sent once split and once
   as one message, as DataWorks documents both, is one change too) #}
fingerprinted as (
    select
        *,
        sha2(
            to_json(
                named_struct(
                    'op', op,
                    'is_before_half', is_before_half,
                    'is_partial', is_partial,
                    'stated_values', array_sort(map_entries(stated_values)),
                    'before_row_key', before_row_key,
                    'event_time', event_time,
                    'capture_time', capture_time,
                    'source_sequence_id', source_sequence_id,
                    'source_scn', source_scn,
                    'source_position', source_position,
                    'transaction_id', transaction_id,
                    'transaction_event_index', transaction_event_index,
                    'transaction_event_count', transaction_event_count
                )
            ),
            256
        ) as change_fingerprint
    from changes
),

{# the first delivery of each fingerprint: the row partitioning of both windows here is the
   same (the row identity), so Spark shuffles the changes once, not once per window #}
deliveries as (
    select
        *,
        coalesce(
            lag(change_fingerprint) over (
                partition by source_format, source_database, source_schema, source_table, row_key
                order by change_fingerprint, ordering_key
            ) != change_fingerprint,
            true
        ) as is_first_delivery
    from fingerprinted
),

distinct_changes as (
    select
        *,
        min(case when not is_before_half then ordering_key end) over (
            partition by source_format, source_database, source_schema, source_table, row_key
        ) as first_whole_change_ordering_key
    from deliveries
    where is_first_delivery
),

kept_changes as (
    select * from distinct_changes
    where not is_before_half
        or first_whole_change_ordering_key is null
        or ordering_key < first_whole_change_ordering_key
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        before_row_key,
        op,
        ordering_key,
        event_time,
        event_id,
        before_image,
        is_partial,
        stated_values
    from kept_changes
)

select * from final
