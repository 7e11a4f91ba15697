{#
    SCD type 2 history of every source row: one row per version of each row identity (source
    identity + row_key), in ordering-key order, never arrival order. The versions of
    gold.int_row_versions, one row each; the rules are in macros/cdc_gold.sql:

    - A version is made by each change of the row (a redelivery of a change - same op, stated
      values, row keys, source positions and times - gives none; the first delivery by
      ordering key stays), by a key move away from the row's key (a deleted version,
      change_kind key_move, moved_to_row_key = the new key) and by a truncate of its table
      while the row is live (a deleted version, op and change_kind truncate). A key move or
      truncate of a row that is not live makes no version; a delete always does.
    - The update-before half of a split update (op update without an after image) makes a
      version only when no other change of the row orders before it.
    - row_values is the whole row as of the version: a whole-row change states it; a partial
      change overlays the previous version's values with the columns it provides (NULL sets
      NULL), after a deleted version starting from nothing; a partial change that moves the
      key starts from the old key's row as of the move, through chains of such moves (like
      current_rows, which reads the same versions). A deleted version keeps the row as it was
      when it ended.
    - valid_to_ordering_key / valid_to: the next version's ordering key / event time (NULL for
      the current version). valid_from / valid_to are source event times (UTC); they follow
      the ordering key, so where a format orders a full-load row before changes with earlier
      timestamps, valid_from can be later than valid_to.

    A Delta table with the change data feed on (delta.enableChangeDataFeed:
    docs/how-to/maintenance.md "How to maintain the lake: change data feed, time travel,
    OPTIMIZE and VACUUM"). Incremental, applied by MERGE on (row identity, version_number)
    (macros/cdc_merge.sql): a run takes the identities of gold.int_row_versions that a batch
    changed since the newest last_resolved_batch_id it holds (every change, truncate or carried
    event of an identity raises it), with the provisional identities retracted since (macro
    retracted_identities); it updates or inserts their versions, and deletes the versions it
    holds of them that are no more (a late change can end an update-before half's version, a
    retracted identity has none): their rows in the run's output have no
    valid_from_ordering_key (merge_delete_condition). Equal to a full refresh (tested).
#}

-- depends_on: {{ ref('change_events') }}
{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key=[
        'source_format', 'source_database', 'source_schema', 'source_table', 'row_key',
        'version_number',
    ],
    merge_delete_condition='DBT_INTERNAL_SOURCE.valid_from_ordering_key is null',
    on_schema_change='fail',
    tblproperties={'delta.enableChangeDataFeed': 'true', 'delta.enableDeletionVectors': 'true'},
) }}

{% set incremental = is_incremental() %}
{% set applied_batch_id = held_max('last_resolved_batch_id') if incremental else -1 %}
{% set source_identity = 'source_format, source_database, source_schema, source_table' %}

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

versions as (
    select
        row_versions.source_format,
        row_versions.source_database,
        row_versions.source_schema,
        row_versions.source_table,
        row_versions.row_key,
        row_versions.last_resolved_batch_id,
        version_index + 1 as version_number,
        version,
        try_element_at(row_versions.versions, version_index + 2) as next_version
    from row_versions
        lateral view posexplode(row_versions.versions) exploded as version_index, version
),

history as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        version_number,
        version.row_values,
        version.op,
        version.change_kind,
        version.is_deleted,
        version.ordering_key as valid_from_ordering_key,
        next_version.ordering_key as valid_to_ordering_key,
        version.event_time as valid_from,
        next_version.event_time as valid_to,
        next_version is null as is_current,
        version.event_id,
        version.moved_to_row_key,
        last_resolved_batch_id
    from versions
),

{% if incremental %}
change_events as (
    select * from {{ ref('change_events') }}
),

{# the identities whose versions the run rewrites #}
rewritten_identities as (
    select {{ source_identity }}, row_key from row_versions
    union
    {{ retracted_identities('change_events', applied_batch_id) }}
),

{# the versions the table holds of them that the run does not give again: rows that delete
   theirs (the join on false gives every other column NULL, of its type) #}
ended_versions as (
    select
        held.source_format,
        held.source_database,
        held.source_schema,
        held.source_table,
        held.row_key,
        held.version_number,
        history.row_values,
        history.op,
        history.change_kind,
        history.is_deleted,
        history.valid_from_ordering_key,
        history.valid_to_ordering_key,
        history.valid_from,
        history.valid_to,
        history.is_current,
        history.event_id,
        history.moved_to_row_key,
        history.last_resolved_batch_id
    from {{ this }} as held
    left semi join rewritten_identities
        on {{ same_table('held', 'rewritten_identities') }}
        and held.row_key = rewritten_identities.row_key
    left anti join history as given
        on {{ same_table('held', 'given') }}
        and held.row_key = given.row_key
        and held.version_number = given.version_number
    left join history on false
),
{% endif %}

final as (
    select * from history
    {% if incremental %}
    union all
    select * from ended_versions
    {% endif %}
)

select * from final
