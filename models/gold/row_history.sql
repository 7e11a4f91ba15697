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

    A view: its versions are stored, computed incrementally, in gold.int_row_versions.
#}

{{ config(materialized='view') }}

with

row_versions as (
    select * from {{ ref('int_row_versions') }}
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

final as (
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
)

select * from final
