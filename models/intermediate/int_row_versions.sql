{#
    The versions of every source row identity (source identity + row_key) ever seen, in
    ordering-key order: the one place gold's rules are applied (macros/cdc_gold.sql).
    gold.current_rows (the live current versions), gold.row_history (every version) and
    gold.current_rows_with_deletes (every current version) read it. One row per row identity:

    - row_events: the identity's own distinct events - its changes (redeliveries removed: one
      per fingerprint, the first by ordering key) and the key moves away from it - update-
      before halves included (whether one is a version depends on what else arrives); a change
      resolved again in a later batch (a split update's after half, completed) replaces its
      stored event. This is what a run needs to compute the identity's versions again.
    - versions: the SCD2 versions (macro row_versions) of its kept events (update-before
      halves dropped unless first, macro kept_row_events), the kept events carried from the
      keys it moved from by partial changes, through chains of such moves (each hop at a
      later move: the old key's events before the move), and its table's truncates.
    - current_version and n_versions: the last element of versions (NULL when there is none)
      and how many there are, stored apart so that gold.current_rows reads one struct per
      identity instead of every version (Parquet reads only the columns a query names).
    - last_resolved_batch_id: the newest ingest batch of its events and its table's
      truncates; the table's largest is the watermark of the next run.

    One shuffle: every event of an identity is collected into one row (group by the identity)
    and everything else - resolving, deduplicating, ordering, replaying - is array work on
    that row (macros/cdc_gold.sql); the table's truncates are joined in per table (a few rows,
    broadcast). Only partial key moves, which carry one identity's events into another, add a
    join of the identities' kept events.

    Incremental, applied by Delta's MERGE on the row identity (incremental_strategy merge,
    macros/cdc_merge.sql): a run reads the changes of silver.change_events resolved after the
    watermark and the truncates ingested after it, computes again only the touched identities -
    those with a new event, those that carry the events of such an identity (a later partial key
    move from it) and those of a table with a new truncate - from their stored row_events merged
    with the new ones, and merges them into the table: their rows updated or inserted, a
    retracted identity (below) deleted, every other row untouched. So a run equals `dbt build
    --full-refresh` (tested), and it costs what the touched identities hold, in computation and
    in what it writes: deletion vectors are on (delta.enableDeletionVectors), so a MERGE marks
    the replaced rows in a small deletion vector file and writes only the new rows, instead of
    rewriting every file that holds a touched row (1,048 events on 210,062: the gold MERGEs
    wrote 2.5 MB with them, 126 MB without; `make maintenance` compacts them away). The table is partitioned by row_bucket, a hash bucket of the row identity's source
    table (macro row_bucket, var('cdc_row_buckets'); changing either needs --full-refresh, and an
    incremental run on a state bucketed otherwise stops and says so: macro
    assert_row_bucket_layout), so a typed gold view, which names its table's bucket, reads one
    partition, and a key move stays in its bucket. The partial key moves are read from the whole
    of silver.change_events (a few rows; the query leaves the recursion out when there is none),
    and the carried events of an old key from its stored row.
    The CTEs such a run names in several places (the new events, the identities it touches
    and reads, the key-move chains) are computed once (macro computed_once): Spark would
    otherwise compute each again at every place that names it.

    Keys learned later: a Shareplex insert carries no key; it is keyed by the key its table's
    upd / del messages send (key_source unique_key), and by all its columns while none has
    arrived. When the key arrives in a later batch, staging computes the insert's batch again
    (its resolved_batch_id becomes that later batch): the run then deletes the insert's
    provisional all-columns identity, which a full build never has (its row in the run's output
    has no row_events: merge_delete_condition).
#}

{{ config(
    materialized='incremental',
    incremental_strategy='merge',
    unique_key=['source_format', 'source_database', 'source_schema', 'source_table', 'row_key'],
    merge_delete_condition='DBT_INTERNAL_SOURCE.row_events is null',
    partition_by=['row_bucket'],
    on_schema_change='fail',
    tblproperties={
        row_bucket_layout_property() | trim: row_bucket_layout() | trim,
        'delta.enableDeletionVectors': 'true',
    },
) }}

{# a run on its existing table stops here if it is bucketed otherwise (assert_row_bucket_layout) #}
{% do assert_row_bucket_layout() %}

{% set incremental = is_incremental() %}

{# the newest batch an earlier run applied: a literal, so Spark prunes with it #}
{% set applied_batch_id = held_max('last_resolved_batch_id') if incremental else -1 %}

{# nothing resolved or truncated since the last run: no query, no MERGE (nothing_new_in) #}
{% if incremental and nothing_new_in([
    (ref('change_events'), 'resolved_batch_id > ' ~ applied_batch_id),
    (ref('table_truncates'), 'ordering_key is not null and ingest_batch_id > ' ~ applied_batch_id),
]) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

{# a partial change that moves the key; asked of the whole history #}
{% set partial_key_move = 'after_image_is_partial and before_row_key != row_key' %}
{% set with_partial_key_moves = has_rows(ref('change_events'), partial_key_move) %}
{% set source_identity = 'source_format, source_database, source_schema, source_table' %}

with recursive

change_events as (
    select * from {{ ref('change_events') }}
),

table_truncates as (
    select * from {{ ref('table_truncates') }}
    where ordering_key is not null
),

{# the row events of the changes resolved since the last run, each on its lane's identity #}
new_events as (
    select
        {{ source_identity }},
        row_event.lane_row_key as row_key,
        {{ row_bucket(source_identity) }} as row_bucket,
        row_event
    from change_events
        lateral view explode({{ change_row_events() }}) exploded as row_event
    {% if incremental %}
    where resolved_batch_id > {{ applied_batch_id }}
        and {{ computed_once() }}
    {% endif %}
),

{% if with_partial_key_moves %}
partial_key_moves as (
    select
        {{ source_identity }},
        row_key,
        before_row_key,
        ordering_key
    from change_events
    where {{ partial_key_move }}
),

{# every (identity, old key) whose events the identity carries: the old key's events before
   bound_ordering_key, through chains of partial key moves (each hop at a later move) #}
carried_keys (
    source_format,
    source_database,
    source_schema,
    source_table,
    row_key,
    carried_row_key,
    bound_ordering_key
) as (
    select * from partial_key_moves
    union all
    select
        carried_keys.source_format,
        carried_keys.source_database,
        carried_keys.source_schema,
        carried_keys.source_table,
        carried_keys.row_key,
        partial_key_moves.before_row_key,
        partial_key_moves.ordering_key
    from carried_keys
    inner join partial_key_moves
        on {{ same_table('carried_keys', 'partial_key_moves') }}
        and carried_keys.carried_row_key = partial_key_moves.row_key
        and carried_keys.bound_ordering_key > partial_key_moves.ordering_key
),

carried_bounds as (
    select
        {{ source_identity }},
        row_key,
        {{ row_bucket(source_identity) }} as row_bucket,
        carried_row_key,
        max(bound_ordering_key) as bound_ordering_key
    from carried_keys
    where carried_row_key != row_key
    group by all
    having {{ computed_once(incremental) }}
),
{% endif %}

{% if incremental %}
{# the provisional identities of changes keyed again since (macro retracted_identities) #}
retracted_keys as (
    {{ retracted_identities('change_events', applied_batch_id) }}
),

{# those the table holds: they are deleted #}
retracted_identities as (
    select
        held.source_format,
        held.source_database,
        held.source_schema,
        held.source_table,
        held.row_key,
        held.row_bucket
    from {{ this }} as held
    left semi join retracted_keys
        on {{ same_table('held', 'retracted_keys') }}
        and held.row_key = retracted_keys.row_key
    where {{ computed_once() }}
),

{# the identities this run computes again: those with a new event, those of a table with a new
   truncate, and those that carry the events of an identity with a new event (a later partial
   key move from it); every other identity keeps its stored row #}
touched_identities as (
    select {{ source_identity }}, row_key, row_bucket
    from new_events
    where {{ computed_once() }}
    union
    select
        held.source_format,
        held.source_database,
        held.source_schema,
        held.source_table,
        held.row_key,
        held.row_bucket
    from {{ this }} as held
    left semi join table_truncates
        on {{ same_table('held', 'table_truncates') }}
        and table_truncates.ingest_batch_id > {{ applied_batch_id }}
    {% if with_partial_key_moves %}
    union
    select
        carried_bounds.source_format,
        carried_bounds.source_database,
        carried_bounds.source_schema,
        carried_bounds.source_table,
        carried_bounds.row_key,
        carried_bounds.row_bucket
    from carried_bounds
    left semi join new_events
        on {{ same_table('carried_bounds', 'new_events') }}
        and carried_bounds.carried_row_key = new_events.row_key
    {% endif %}
),

{# the identities whose stored events the run reads: the touched ones, and the old keys whose
   events a touched one carries #}
read_identities as (
    select * from touched_identities
    where {{ computed_once() }}
    {% if with_partial_key_moves %}
    union
    select
        carried_bounds.source_format,
        carried_bounds.source_database,
        carried_bounds.source_schema,
        carried_bounds.source_table,
        carried_bounds.carried_row_key as row_key,
        carried_bounds.row_bucket
    from carried_bounds
    left semi join touched_identities
        on {{ same_table('carried_bounds', 'touched_identities') }}
        and carried_bounds.row_key = touched_identities.row_key
    {% endif %}
),

{# the stored rows of the identities read, but a retracted one #}
held_rows as (
    select held.*
    from {{ this }} as held
    left semi join read_identities
        on {{ same_table('held', 'read_identities') }}
        and held.row_key = read_identities.row_key
        and held.row_bucket = read_identities.row_bucket
    left anti join retracted_identities
        on {{ same_table('held', 'retracted_identities') }}
        and held.row_key = retracted_identities.row_key
),
{% endif %}

{# every event of the identities the run computes (and of the old keys they carry from) #}
all_events as (
    select * from new_events
    {% if incremental %}
    union all
    select
        {{ source_identity }},
        row_key,
        row_bucket,
        row_event
    from held_rows
        lateral view explode(row_events) exploded as row_event
    {% endif %}
),

{# each identity's events, one row per identity: the one shuffle of the model #}
collected_events as (
    select
        {{ source_identity }},
        row_key,
        row_bucket,
        {{ by_resolution('collect_list(row_event)') }} as by_resolution
    from all_events
    group by all
),

resolved_events as (
    select
        {{ source_identity }},
        row_key,
        row_bucket,
        {{ resolved_by_fingerprint('by_resolution') }} as by_fingerprint
    from collected_events
),

{# the identity's own distinct events in the order they apply #}
distinct_events as (
    select
        {{ source_identity }},
        row_key,
        row_bucket,
        {{ distinct_row_events('by_fingerprint') }} as row_events
    from resolved_events
),

identity_events as (
    select
        *,
        {{ first_whole_ordering_key('row_events') }} as first_whole_ordering_key
    from distinct_events
    where {{ computed_once(incremental) }}
),

{# the truncates of each table: every identity of the table replays them #}
truncate_events as (
    select
        {{ source_identity }},
        collect_list({{ truncate_row_event() }}) as row_events,
        max(ingest_batch_id) as last_resolved_batch_id
    from table_truncates
    group by all
),

{% if with_partial_key_moves %}
{# the kept events of every identity, one row each, for the identities that carry them #}
old_key_events as (
    select
        {{ source_identity }},
        row_key,
        row_event
    from identity_events
        lateral view explode(
            {{ kept_row_events('row_events', 'first_whole_ordering_key') }}
        ) exploded as row_event
),

{# the kept events an identity carries from the old keys it moved from (each old key's events
   before the move that left it), through chains of partial key moves #}
carried_events as (
    select
        carried_bounds.source_format,
        carried_bounds.source_database,
        carried_bounds.source_schema,
        carried_bounds.source_table,
        carried_bounds.row_key,
        collect_list(old_key.row_event) as row_events,
        max(old_key.row_event.resolved_batch_id) as last_resolved_batch_id
    from carried_bounds
    inner join old_key_events as old_key
        on {{ same_table('carried_bounds', 'old_key') }}
        and carried_bounds.carried_row_key = old_key.row_key
        and carried_bounds.bound_ordering_key > old_key.row_event.ordering_key
    group by all
),
{% endif %}

{# the events each identity replays: its kept own events, the carried ones, its table's
   truncates #}
replayed_events as (
    select
        identity_events.source_format,
        identity_events.source_database,
        identity_events.source_schema,
        identity_events.source_table,
        identity_events.row_key,
        identity_events.row_bucket,
        identity_events.row_events,
        {{ sorted_row_events(
            'concat(' ~ kept_row_events(
                'identity_events.row_events', 'identity_events.first_whole_ordering_key'
            )
            ~ (', coalesce(carried_events.row_events, array())' if with_partial_key_moves else '')
            ~ ', coalesce(truncate_events.row_events, array()))'
        ) }} as replayed_events,
        greatest(
            array_max(transform(identity_events.row_events, e -> e.resolved_batch_id)),
            {% if with_partial_key_moves %}carried_events.last_resolved_batch_id,{% endif %}
            truncate_events.last_resolved_batch_id
        ) as last_resolved_batch_id
    from identity_events
    {% if with_partial_key_moves %}
    left join carried_events
        on {{ same_table('identity_events', 'carried_events') }}
        and identity_events.row_key = carried_events.row_key
    {% endif %}
    left join truncate_events
        on {{ same_table('identity_events', 'truncate_events') }}
),

computed as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_events,
        {{ row_versions('replayed_events', 'row_key') }} as versions,
        {# the current version apart from the arrays (versions here is the alias above,
           computed once): gold.current_rows_with_deletes reads these columns alone #}
        try_element_at(versions, -1) as current_version,
        size(versions) as n_versions,
        last_resolved_batch_id,
        row_bucket
    from replayed_events
),

final as (
    {% if incremental %}
    {# the rows the merge updates or inserts: the touched identities' #}
    select computed.*
    from computed
    left semi join touched_identities
        on {{ same_table('computed', 'touched_identities') }}
        and computed.row_key = touched_identities.row_key
    union all
    {# the rows it deletes: a retracted identity, without row_events (merge_delete_condition;
       the join on false gives every other column NULL, of its type) #}
    select
        retracted_identities.source_format,
        retracted_identities.source_database,
        retracted_identities.source_schema,
        retracted_identities.source_table,
        retracted_identities.row_key,
        computed.row_events,
        computed.versions,
        computed.current_version,
        computed.n_versions,
        computed.last_resolved_batch_id,
        retracted_identities.row_bucket
    from retracted_identities
    left join computed on false
    {% else %}
    select * from computed
    {% endif %}
)

{% endif %}

select * from final
