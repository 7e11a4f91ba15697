{#
    SCD type 2 history of every source row: one row per version of each row identity (source
    identity + row_key), in ordering-key order, never arrival order. Same semantics as
    gold.current_rows (read its header), plus truncates (silver.table_truncates).

    - A version is made by each change of the row (deduplicated: a delivery of a change whose
      content - op, stated values, row keys, source positions and times - equals an earlier
      delivery's gives no extra version; the first one by ordering key stays), by a key move
      away from the row's key (a deleted version at the move's ordering key, change_kind
      key_move, moved_to_row_key = the new key) and by a truncate of its table while the row
      is live (a deleted version at the truncate's ordering key, op and change_kind
      truncate). A key move or truncate of a row that is not live makes no version; a delete
      always does (it is a change).
    - The update-before half of a split update (op update without an after image: DataWorks
      UPDATE_BEFOR, Tuple _before_image_ Y, Shareplex UPDATE BEFORE) is half of one change,
      not a version of its own; it makes a version only when no other change of the row orders
      before it (the row is first seen through it: its before image is the row as it was).
    - row_values is the whole row as of the version. A whole-row change (insert, snapshot,
      update with a whole after image) states the row. A partial change (after_image_is_partial:
      Shareplex upd, Qlik columnMask, DTS EmptyObject NONE) overlays the previous version's
      values with the columns it provides (a NULL value sets NULL), after the unchanged
      columns of its own before image (current_rows does the same); after a deleted version
      the merge starts from nothing. A deleted version keeps the row as it was when it ended
      (the previous values overlaid with the columns of the delete's before image).
    - A partial change that moves the row to a new key starts the new key from the old key's
      row as of the move (the old key's changes before the move, carried along; one move
      deep, like current_rows).
    - valid_to_ordering_key / valid_to: the next version's ordering key / event time (NULL for
      the current version). valid_from / valid_to are source event times (UTC); they follow
      the ordering key, so where a format orders a full-load row before changes with earlier
      timestamps, valid_from can be later than valid_to.

    The distinct changes (redeliveries and update-before halves removed, as above) come from
    gold.int_changes_deduplicated, computed once there.

    The running merge is one `aggregate` over the row's events sorted by ordering key; the
    carried events of a partial key move sort right before the move (sort_rank 0) and update
    a separate state that only the move reads.
#}

with

kept_changes as (
    select * from {{ ref('int_changes_deduplicated') }}
),

table_truncates as (
    select * from {{ ref('table_truncates') }}
    where ordering_key is not null
),

change_rows as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        'change' as change_kind,
        op,
        ordering_key,
        event_time,
        event_id,
        op = 'delete' as is_deleted,
        is_partial,
        stated_values,
        cast(null as string) as moved_to_row_key,
        case
            when is_partial and before_row_key != row_key then before_row_key
        end as moved_from_row_key
    from kept_changes
),

{# a key move ends the row under its old key, at the move's ordering key #}
key_move_rows as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        before_row_key as row_key,
        'key_move' as change_kind,
        op,
        ordering_key,
        event_time,
        event_id,
        true as is_deleted,
        false as is_partial,
        before_image as stated_values,
        row_key as moved_to_row_key,
        cast(null as string) as moved_from_row_key
    from kept_changes
    where before_row_key is not null
        and before_row_key != row_key
),

row_changes as (
    select * from change_rows
    union all
    select * from key_move_rows
),

truncated_tables as (
    select distinct source_format, source_database, source_schema, source_table
    from table_truncates
),

{# rows and truncates of the truncated tables, newest first: the first truncate after each
   event of a row is the one that can end the state that event set #}
table_timelines as (
    select
        row_changes.source_format,
        row_changes.source_database,
        row_changes.source_schema,
        row_changes.source_table,
        row_changes.row_key,
        row_changes.ordering_key,
        false as is_truncate
    from row_changes
    left semi join truncated_tables
        on row_changes.source_format = truncated_tables.source_format
        and row_changes.source_database <=> truncated_tables.source_database
        and row_changes.source_schema <=> truncated_tables.source_schema
        and row_changes.source_table = truncated_tables.source_table
    union all
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        cast(null as string) as row_key,
        ordering_key,
        true as is_truncate
    from table_truncates
),

next_truncates as (
    select
        *,
        min(case when is_truncate then ordering_key end) over (
            partition by source_format, source_database, source_schema, source_table
            order by ordering_key desc
            rows between unbounded preceding and 1 preceding
        ) as next_truncate_ordering_key
    from table_timelines
),

{# each row's truncates: the first truncate after each of its events #}
row_truncates as (
    select distinct
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        next_truncate_ordering_key
    from next_truncates
    where not is_truncate
        and next_truncate_ordering_key is not null
),

truncate_rows as (
    select
        row_truncates.source_format,
        row_truncates.source_database,
        row_truncates.source_schema,
        row_truncates.source_table,
        row_truncates.row_key,
        'truncate' as change_kind,
        'truncate' as op,
        table_truncates.ordering_key,
        table_truncates.event_time,
        table_truncates.event_id,
        true as is_deleted,
        false as is_partial,
        cast(null as map<string, string>) as stated_values,
        cast(null as string) as moved_to_row_key,
        cast(null as string) as moved_from_row_key
    from row_truncates
    inner join table_truncates
        on row_truncates.source_format = table_truncates.source_format
        and row_truncates.source_database <=> table_truncates.source_database
        and row_truncates.source_schema <=> table_truncates.source_schema
        and row_truncates.source_table = table_truncates.source_table
        and row_truncates.next_truncate_ordering_key = table_truncates.ordering_key
),

row_events as (
    select * from row_changes
    union all
    select * from truncate_rows
),

{# the old key's events before a partial key move, carried to the new key #}
carried_events as (
    select
        row_events.source_format,
        row_events.source_database,
        row_events.source_schema,
        row_events.source_table,
        moves.row_key,
        named_struct(
            'sort_ordering_key', moves.ordering_key,
            'sort_rank', 0,
            'ordering_key', row_events.ordering_key,
            'event_id', row_events.event_id
        ) as sort_key,
        true as is_carried,
        row_events.change_kind,
        row_events.op,
        row_events.ordering_key,
        row_events.event_time,
        row_events.event_id,
        row_events.is_deleted,
        row_events.is_partial,
        row_events.stated_values,
        row_events.moved_to_row_key,
        cast(null as string) as moved_from_row_key
    from change_rows as moves
    inner join row_events
        on moves.source_format = row_events.source_format
        and moves.source_database <=> row_events.source_database
        and moves.source_schema <=> row_events.source_schema
        and moves.source_table = row_events.source_table
        and moves.moved_from_row_key = row_events.row_key
        and row_events.ordering_key < moves.ordering_key
    where moves.moved_from_row_key is not null
),

all_events as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        named_struct(
            'sort_ordering_key', ordering_key,
            'sort_rank', 1,
            'ordering_key', ordering_key,
            'event_id', event_id
        ) as sort_key,
        false as is_carried,
        change_kind,
        op,
        ordering_key,
        event_time,
        event_id,
        is_deleted,
        is_partial,
        stated_values,
        moved_to_row_key,
        moved_from_row_key
    from row_events
    union all
    select * from carried_events
),

event_lists as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        array_sort(
            collect_list(
                struct(
                    sort_key,
                    is_carried,
                    change_kind,
                    op,
                    ordering_key,
                    event_time,
                    event_id,
                    is_deleted,
                    is_partial,
                    stated_values,
                    moved_to_row_key,
                    moved_from_row_key
                )
            ),
            (l, r) -> case
                when l.sort_key < r.sort_key then -1
                when l.sort_key > r.sort_key then 1
                else 0
            end
        ) as events
    from all_events
    group by source_format, source_database, source_schema, source_table, row_key
),

{# the running merge: the accumulator holds the versions so far and carried_state, the old
   key's row for the next partial key move; the row is live when its last version is not
   deleted (row_state) #}
{% set row_state -%}
    case
        when not try_element_at(acc.versions, -1).is_deleted
            then try_element_at(acc.versions, -1).row_values
    end
{%- endset %}
{% set merge_base -%}
    coalesce(
        case when e.moved_from_row_key is not null then acc.carried_state end,
        {{ row_state }},
        map()
    )
{%- endset %}
version_lists as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        aggregate(
            events,
            named_struct(
                'carried_state', cast(null as map<string, string>),
                'versions', cast(
                    array() as array<struct<
                        change_kind: string,
                        op: string,
                        ordering_key: string,
                        event_time: timestamp,
                        event_id: string,
                        is_deleted: boolean,
                        row_values: map<string, string>,
                        moved_to_row_key: string
                    >>
                )
            ),
            (acc, e) -> case
                when e.is_carried then named_struct(
                    'carried_state', case
                        when e.is_deleted then cast(null as map<string, string>)
                        when e.is_partial then {{ overlay_image(
                            'coalesce(acc.carried_state, map())', 'e.stated_values'
                        ) }}
                        else e.stated_values
                    end,
                    'versions', acc.versions
                )
                {# a key move or truncate ends only a live row #}
                when e.change_kind != 'change' and {{ row_state }} is null then acc
                else named_struct(
                    'carried_state', case
                        when e.moved_from_row_key is null then acc.carried_state
                    end,
                    'versions', concat(
                        acc.versions,
                        array(
                            named_struct(
                                'change_kind', e.change_kind,
                                'op', e.op,
                                'ordering_key', e.ordering_key,
                                'event_time', e.event_time,
                                'event_id', e.event_id,
                                'is_deleted', e.is_deleted,
                                'row_values', case
                                    {# the row as it was when it ended #}
                                    when e.is_deleted then {{ overlay_image(
                                        row_state, 'e.stated_values'
                                    ) }}
                                    when e.is_partial then {{ overlay_image(
                                        merge_base, 'e.stated_values'
                                    ) }}
                                    else e.stated_values
                                end,
                                'moved_to_row_key', e.moved_to_row_key
                            )
                        )
                    )
                )
            end,
            acc -> acc.versions
        ) as versions
    from event_lists
),

versions as (
    select
        version_lists.source_format,
        version_lists.source_database,
        version_lists.source_schema,
        version_lists.source_table,
        version_lists.row_key,
        version_index + 1 as version_number,
        version,
        try_element_at(version_lists.versions, version_index + 2) as next_version
    from version_lists
    lateral view posexplode(version_lists.versions) exploded as version_index, version
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
        version.moved_to_row_key
    from versions
)

select * from final
