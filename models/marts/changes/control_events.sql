{#
    Heartbeats and transaction markers of every format: they carry no row, but tell how fresh
    (heartbeat) and how complete (transaction boundaries) the change stream is. Incremental
    (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run writes the new batches'
    partitions.
#}

{{ batch_partitioned_config() }}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}

with

{# no staging control row resolved since the last run, so none ingested since: nothing new
   (no_new_rows) #}
{% if is_incremental() and execute and resolved_batches('control', held_batch) | length == 0 %}

final as (
    {{ no_new_rows() }}
)

{% else %}

staging_events as (
    select * from ({{ staging_events('control') }})
    {% if is_incremental() %}
    {# control rows never change once written: the new batches only #}
    where ingest_batch_id > {{ held_batch }}
    {% endif %}
),

final as (
    select
        concat_ws(':', kafka_topic, cast(kafka_partition as string), cast(kafka_offset as string))
            as event_id,
        source_format,
        control_type,
        source_op,
        source_db_type,
        source_database,
        source_schema,
        source_table,
        ordering_key,
        event_time,
        checkpoint_time,
        source_sequence_id,
        source_position,
        transaction_id,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        kafka_timestamp,
        ingest_batch_id
    from staging_events
)

{% endif %}

select * from final
