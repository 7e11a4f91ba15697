{#
    How fresh every source is: per Kafka topic of the registry (grain 'topic') and per source
    table within it (grain 'table'), the newest event time of its row changes, the newest
    heartbeat or transaction marker of the topic, and the lag: now minus the newer of the two,
    in seconds (UTC). A source that sends only heartbeats is fresh; a topic that sent nothing
    has no lag (NULL) and is stale at every configured level.

    freshness_status is 'pass', 'warn' or 'error', as `dbt source freshness` reports: the lag
    against vars cdc_freshness_warn_after_s / cdc_freshness_error_after_s (seconds; null = that
    level off). Its two data tests (models/marts/changes/_changes__models.yml) warn or fail the build
    when a monitored topic is stale.

    Heartbeats and transaction markers (silver.control_events) name no table: they tell that
    the whole topic (the sync task) delivered everything up to their time, so a table's row
    takes its topic's newest one. Which formats send them: docs/formats.md, "Normalized
    vocabulary" (DataWorks / DataHub Blob MHEARTBEAT and transaction ops, DTS Avro HEARTBEAT /
    CHECKPOINT and BEGIN / COMMIT / ROLLBACK / ABORT); the others send none, so they are fresh
    only while rows change.

    A view: the lag is computed when the view is read, against current_timestamp() (or var
    cdc_freshness_now, pinned at build time), so it is never the lag of the last build. A build
    only replaces the view. A read of the topic rows (the data tests) is one aggregation of
    the registry and three or four columns of silver.change_events and silver.control_events:
    the table rows are a union branch of their own, which Spark leaves out of such a query.
#}

{{ config(materialized='view') }}

{% set warn_after_s = freshness_threshold('cdc_freshness_warn_after_s') %}
{% set error_after_s = freshness_threshold('cdc_freshness_error_after_s') %}
{# the thresholds in microseconds as SQL: null when a level is off #}
{% set warn_after_us = (warn_after_s * 1000000) | int if warn_after_s is not none else 'null' %}
{% set error_after_us = (error_after_s * 1000000) | int if error_after_s is not none else 'null' %}
{% set monitored_topics = var('cdc_freshness_topics', none) %}
{% if monitored_topics is string %}
{% set monitored_topics = [monitored_topics] %}
{% endif %}

with

cdc_topics as (
    select * from {{ ref('stg_bronze__topics') }}
),

change_events as (
    select * from {{ ref('change_events') }}
),

control_events as (
    select * from {{ ref('control_events') }}
),

{#
    the registry's topics, the row changes and the heartbeats / transaction markers side by
    side, so that one aggregation gives every topic: a topic that sent nothing still has its
    registry row
#}
topic_signals as (
    select
        topic as kafka_topic,
        format as source_format,
        true as is_registered,
        cast(null as timestamp) as event_time,
        cast(null as timestamp) as heartbeat_time
    from cdc_topics
    union all
    select
        kafka_topic,
        source_format,
        false as is_registered,
        event_time,
        cast(null as timestamp) as heartbeat_time
    from change_events
    union all
    select
        kafka_topic,
        source_format,
        false as is_registered,
        cast(null as timestamp) as event_time,
        event_time as heartbeat_time
    from control_events
),

topic_rows as (
    select
        'topic' as grain,
        kafka_topic,
        source_format,
        max(is_registered) as is_registered,
        cast(null as string) as source_database,
        cast(null as string) as source_schema,
        cast(null as string) as source_table,
        max(event_time) as newest_event_time,
        max(heartbeat_time) as newest_heartbeat_time
    from topic_signals
    group by 2, 3
),

table_events as (
    select
        kafka_topic,
        source_format,
        source_database,
        source_schema,
        source_table,
        max(event_time) as newest_event_time
    from change_events
    group by 1, 2, 3, 4, 5
),

topic_heartbeats as (
    select
        kafka_topic,
        source_format,
        max(event_time) as newest_heartbeat_time
    from control_events
    group by 1, 2
),

{#
    heartbeats and transaction markers name no table: they tell that the whole topic
    delivered everything up to their time, so a table takes its topic's newest one
#}
table_rows as (
    select
        'table' as grain,
        table_events.kafka_topic,
        table_events.source_format,
        cdc_topics.topic is not null as is_registered,
        table_events.source_database,
        table_events.source_schema,
        table_events.source_table,
        table_events.newest_event_time,
        topic_heartbeats.newest_heartbeat_time
    from table_events
    left join topic_heartbeats
        on table_events.kafka_topic = topic_heartbeats.kafka_topic
        and table_events.source_format = topic_heartbeats.source_format
    left join cdc_topics
        on table_events.kafka_topic = cdc_topics.topic
        and table_events.source_format = cdc_topics.format
),

signals as (
    select * from topic_rows
    union all
    select * from table_rows
),

lags as (
    select
        *,
        greatest(newest_event_time, newest_heartbeat_time) as newest_signal_time,
        {{ cdc_freshness_now() }} as measured_at
    from signals
),

final as (
    select
        grain,
        kafka_topic,
        source_format,
        is_registered,
        source_database,
        source_schema,
        source_table,
        newest_event_time,
        newest_heartbeat_time,
        newest_signal_time,
        measured_at,
        (unix_micros(measured_at) - unix_micros(newest_signal_time)) / 1e6 as lag_s,
        case
            when {{ error_after_us }} is not null
                and (
                    newest_signal_time is null
                    or unix_micros(measured_at) - unix_micros(newest_signal_time)
                    > {{ error_after_us }}
                )
                then 'error'
            when {{ warn_after_us }} is not null
                and (
                    newest_signal_time is null
                    or unix_micros(measured_at) - unix_micros(newest_signal_time)
                    > {{ warn_after_us }}
                )
                then 'warn'
            else 'pass'
        end as freshness_status,
        {% if monitored_topics is none %}
        true
        {% elif monitored_topics | length == 0 %}
        false
        {% else %}
        kafka_topic in (
            {%- for topic in monitored_topics -%}
            '{{ topic | replace("'", "\\'") }}'{{ ', ' if not loop.last }}
            {%- endfor -%}
        )
        {% endif %} as is_monitored
    from lags
)

select * from final
