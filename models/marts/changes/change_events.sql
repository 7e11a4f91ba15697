{#
    One row per row change, every format, one vocabulary (docs/formats.md "Normalized vocabulary").
    Every staging *_events model of cdc_staging_event_models() contributes its change records;
    the columns below are the contract of this table.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run rewrites
    the batch partitions holding a staging change resolved after the newest resolved_batch_id
    it holds - the new batches, and older ones whose split update a new half completed.

    row_identity_hash / before_row_identity_hash: the hash of the row identity (source
    identity + row_key / before_row_key, macro row_identity_hash), computed once here for
    users' joins (gold buckets its state by the source table, macro row_bucket).
#}

{{ batch_partitioned_config() }}

{% if is_incremental() %}
{% set batches = resolved_batches('change', held_max('resolved_batch_id')) %}
{% endif %}

with

{# no staging change resolved since the last run: nothing to rewrite (no_new_rows) #}
{% if is_incremental() and execute and batches | length == 0 %}

final as (
    {{ no_new_rows() }}
)

{% else %}

staging_events as (
    select * from ({{ staging_events('change') }})
    {% if is_incremental() %}
    where {{ batch_filter(batches) }}
    {% endif %}
),

final as (
    select
        concat_ws(
            ':',
            kafka_topic,
            cast(kafka_partition as string),
            cast(kafka_offset as string),
            cast(kafka_row_index as string)
        )
            as event_id,
        source_format,
        source_db_type,
        source_database,
        source_schema,
        source_table,
        op,
        source_op,
        before_image,
        after_image,
        after_image_is_partial,
        key_columns,
        key_source,
        row_key,
        before_row_key,
        {{ row_identity_hash('row_key') }} as row_identity_hash,
        {{ row_identity_hash('before_row_key') }} as before_row_identity_hash,
        ordering_key,
        event_time,
        capture_time,
        source_sequence_id,
        source_scn,
        source_position,
        transaction_id,
        transaction_event_index,
        transaction_event_count,
        is_last_event_in_transaction,
        column_types,
        source_schema_version,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        kafka_row_index,
        kafka_timestamp,
        ingest_batch_id,
        resolved_batch_id
    from staging_events
)

{% endif %}

select * from final
