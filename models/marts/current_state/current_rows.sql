{#
    Current state of every live source row: the current versions of gold.int_row_versions,
    which applies gold's rules (macros/cdc_gold.sql), that are not deleted (the rows of
    gold.current_rows_with_deletes that are not deleted, from the same macro current_versions).

    - The latest change by ordering key wins; a delete leaves no row, and an older change
      delivered late cannot bring the row back (the identity's versions keep the delete).
    - Partial after images are merged column by column with the previous version; a partial
      change that moves the key starts from the old key's row, through chains of such moves.
    - A truncate (silver.table_truncates) ends every row of its table that is live before it;
      a column value set before the truncate is not carried over.
    - Duplicate deliveries change nothing (last_ordering_key is the first delivery's); ties in
      the ordering key cannot occur between different changes (it ends in Kafka partition,
      offset, row index and topic).

    A Delta table with the change data feed on (delta.enableChangeDataFeed): a downstream job
    reads what each build changed with table_changes('gold.current_rows', <version>) - an
    insert, an update (pre- and post-image) or a delete per row identity
    (docs/how-to/maintenance.md "How to maintain the lake: change data feed, time travel,
    OPTIMIZE and VACUUM"). Incremental, applied by MERGE on the row identity
    (macros/cdc_merge.sql): a run takes the identities of gold.int_row_versions that a batch
    changed since the newest last_resolved_batch_id it holds (every change, truncate or carried
    event of an identity raises its last_resolved_batch_id), updates or inserts the live ones
    and deletes the others (their row in the run's output has no last_ordering_key:
    merge_delete_condition), with the provisional identities retracted since (macro
    retracted_identities). Equal to a full refresh (tested).
#}

-- depends_on: {{ ref('change_events') }}
{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key=['source_format', 'source_database', 'source_schema', 'source_table', 'row_key'],
    merge_delete_condition='DBT_INTERNAL_SOURCE.last_ordering_key is null',
    on_schema_change='fail',
    tblproperties={'delta.enableChangeDataFeed': 'true', 'delta.enableDeletionVectors': 'true'},
) }}

{% set incremental = is_incremental() %}
{% set applied_batch_id = held_max('last_resolved_batch_id') if incremental else -1 %}

{# no identity resolved and no provisional one retracted since the last run: no MERGE (the
   query stays whole, for the contract check: macro nothing_new_marker) #}
{% if incremental and nothing_new_since(applied_batch_id) %}{{ nothing_new_marker() }}{% endif %}

with

row_versions as (
    select * from {{ ref('int_row_versions') }}
    {% if incremental %}
    where last_resolved_batch_id > {{ applied_batch_id }}
    {% endif %}
),

{% if incremental %}
change_events as (
    select * from {{ ref('change_events') }}
),
{% endif %}

current_versions as (
    {{ current_versions('row_versions') }}
),

live_rows as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_values,
        last_op,
        last_ordering_key,
        last_event_time,
        last_resolved_batch_id
    from current_versions
    where not is_deleted
),

{% if incremental %}
ended_identities as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key
    from row_versions
    where current_version is null or current_version.is_deleted
    union
    {{ retracted_identities('change_events', applied_batch_id) }}
),
{% endif %}

final as (
    select * from live_rows
    {% if incremental %}
    union all
    {# the identities that are not live any more (deleted, or retracted): rows that delete
       theirs (the join on false gives every other column NULL, of its type) #}
    select
        ended_identities.source_format,
        ended_identities.source_database,
        ended_identities.source_schema,
        ended_identities.source_table,
        ended_identities.row_key,
        live_rows.row_values,
        live_rows.last_op,
        live_rows.last_ordering_key,
        live_rows.last_event_time,
        live_rows.last_resolved_batch_id
    from ended_identities
    left join live_rows on false
    {% endif %}
)

select * from final
