{#
    Every bronze record that could not be decoded, with its reason code, a detail, the raw
    value and its Kafka coordinates. Nothing is dropped silently: a record is here, or in
    change_events, control_events or schema_changes.

    A record can leave quarantine: a Qlik data message waits here (missing_table_metadata)
    until the metadata message it needs arrives in a later batch, and is then a change.
    resolved_batch_id is the batch of the verdict (its own batch, or for a record a later
    record completed, that later batch).

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run writes the
    partitions of the batches after the newest verdict it holds, and rewrites the older
    batches holding a record whose verdict changed since: one Delta commit replaces the rows of
    all those batches (incremental_strategy replace_where), so a batch whose records all left
    quarantine becomes empty, and a reader sees the table before or after the run. A run with
    no such batch (no bronze record after the newest verdict, no verdict changed) writes
    nothing: "nothing new". A run reads the batches after the newest verdict held or, when
    later, after the bronze batch the last recorded whole-project build went through (macro
    read_through): the newest verdict lags behind bronze while new batches bring no
    quarantined record, and those batches are not read again.
#}

{{ config(
    materialized='incremental',
    incremental_strategy='replace_where',
    partition_by=['ingest_batch_id'],
    on_schema_change='fail',
) }}

{% set nothing_new = false %}
{% if is_incremental() %}
{% set held_batch = read_through('resolved_batch_id') %}
{% set late_batches = late_resolved_batches(held_batch) %}
{# no bronze record after the newest verdict held, no verdict changed since: nothing to do #}
{% set nothing_new = not late_batches and nothing_new_in([
    (ref('stg_bronze__kafka_records'), 'ingest_batch_id > ' ~ held_batch),
]) %}
{{ replace_where('ingest_batch_id > ' ~ held_batch ~ ' or ' ~ batch_filter(late_batches)) }}
{% endif %}

{# the query stays whole, for the contract check (macro nothing_new_marker) #}
{% if nothing_new %}{{ nothing_new_marker() }}{% endif %}

with

kafka_records as (
    select * from {{ ref('stg_bronze__kafka_records') }}
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }} or {{ batch_filter(late_batches) }}
    {% endif %}
),

staging_events as (
    select * from ({{ staging_events('quarantine') }})
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }} or {{ batch_filter(late_batches) }}
    {% endif %}
),

{# each quarantined record's raw bytes from bronze (staging does not carry them). The
   quarantined records, usually few, are broadcast: bronze is read once in place, never
   shuffled #}
staging_quarantine as (
    select /*+ broadcast(staging_events) */
        staging_events.*,
        kafka_records.value as raw_value
    from staging_events
    inner join kafka_records
        on staging_events.kafka_topic = kafka_records.topic
        and staging_events.kafka_partition = kafka_records.partition
        and staging_events.kafka_offset = kafka_records.offset
        and staging_events.ingest_batch_id = kafka_records.ingest_batch_id
),

{# formats decoded by a staging model (cdc_staging_event_models); the others are quarantined
   (noqa LT05: the line is short, the list it renders is not) #}
decoded_formats as (
    select explode(array('{{ cdc_decoded_formats() | join("', '") }}')) as source_format -- noqa: LT05
),

undecoded_records as (
    select
        kafka_records.source_format,
        kafka_records.topic as kafka_topic,
        kafka_records.partition as kafka_partition,
        kafka_records.offset as kafka_offset,
        kafka_records.timestamp as kafka_timestamp,
        kafka_records.ingest_batch_id,
        case
            when kafka_records.source_format is null then 'unregistered_topic'
            else 'unsupported_format'
        end as reason,
        case
            when kafka_records.source_format is null
                then concat('topic ', kafka_records.topic, ' is not in seeds/cdc_topics.csv')
            when kafka_records.source_format in ('{{ cdc_decoded_formats(true) | join("', '") }}') -- noqa: LT05
                then concat(
                    'format ', kafka_records.source_format, ' is not in var cdc_formats'
                )
            else concat('no decoder for format ', kafka_records.source_format, ' yet')
        end as reason_detail,
        kafka_records.value as raw_value,
        kafka_records.ingest_batch_id as resolved_batch_id
    from kafka_records
    left anti join decoded_formats
        on kafka_records.source_format = decoded_formats.source_format
),

decode_failures as (
    select
        source_format,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        kafka_timestamp,
        ingest_batch_id,
        quarantine_reason as reason,
        quarantine_detail as reason_detail,
        raw_value,
        resolved_batch_id
    from staging_quarantine
),

unioned as (
    select * from decode_failures
    union all
    select * from undecoded_records
),

final as (
    select
        concat_ws(':', kafka_topic, cast(kafka_partition as string), cast(kafka_offset as string))
            as event_id,
        source_format,
        reason,
        reason_detail,
        raw_value,
        try_validate_utf8(cast(raw_value as string)) as raw_value_text,
        kafka_topic,
        kafka_partition,
        kafka_offset,
        kafka_timestamp,
        resolved_batch_id,
        ingest_batch_id
    from unioned
)

select * from final
