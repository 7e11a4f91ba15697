{#
    Gold's rules, written once. gold.int_row_versions applies them; gold.current_rows,
    gold.row_history and gold.current_rows_with_deletes read its versions, so they cannot
    drift apart.

    A row event is one struct (row_event_type below): a change of the row (change_kind
    'change'), the end of the row under its old key by an update that moves the key
    ('key_move'), or a truncate of its table ('truncate'). lane_row_key is the row key whose
    state the event changes (NULL for a truncate: every row of the table).
#}

{# row_identity_hash(row_key): the row identity's hash (silver.change_events computes it once) #}
{% macro row_identity_hash(row_key) -%}
    case
        when {{ row_key }} is not null then xxhash64(
            source_format, source_database, source_schema, source_table, {{ row_key }}
        )
    end
{%- endmacro %}

{# same_table(left, right): the join condition of two relations' source identities #}
{% macro same_table(left, right) -%}
    {{ left }}.source_format = {{ right }}.source_format
    and {{ left }}.source_database <=> {{ right }}.source_database
    and {{ left }}.source_schema <=> {{ right }}.source_schema
    and {{ left }}.source_table = {{ right }}.source_table
{%- endmacro %}

{#
    row_bucket(source_identity): the partition of gold's state (gold.int_row_versions) that
    holds a source table's row identities: a hash bucket of the table, var('cdc_row_buckets')
    buckets. source_identity is the SQL of its four columns, in order (source_format,
    source_database, source_schema, source_table): column names, or literals for one table
    (a typed gold view names its table's bucket so that Spark reads that partition alone;
    NULL hashes as an absent value, whatever its type). A table's identities share a bucket,
    so a key move never leaves it.
#}
{% macro row_bucket(source_identity) -%}
    pmod(xxhash64({{ source_identity }}), {{ var('cdc_row_buckets') }})
{%- endmacro %}

{#
    gold.int_row_versions' bucket layout, kept as a table property (row_bucket_layout_property)
    that the table gets whenever it is created - its first build and every full refresh, which
    drops and creates it (config tblproperties) - and that every run on the existing table
    checks first (assert_row_bucket_layout). A run on a state bucketed otherwise - by the row
    identity (lakes built before 2026-11-29: no property), or with another
    var('cdc_row_buckets') - would write an identity's new row into its new bucket and keep its
    old row in the old one: gold would hold the identity twice. Such a run stops instead,
    before it writes, with one line: run `dbt build --full-refresh` once.
#}
{% macro row_bucket_layout() -%}
    source_table/{{ var('cdc_row_buckets') }}
{%- endmacro %}

{% macro row_bucket_layout_property() -%}
    cdc_lakehouse.row_buckets
{%- endmacro %}

{#
    assert_row_bucket_layout(): raise the compilation error above when the model's existing
    table holds another layout. Checked on every run that keeps the table (dbt's
    is_incremental(): the table exists and this is not a full refresh), the recovery of an
    interrupted write included: it rewrites only the buckets it computes.
#}
{% macro assert_row_bucket_layout() %}
    {% if not (execute and dbt.is_incremental()) %}
        {{ return('') }}
    {% endif %}
    {% set held = table_properties(this).get(row_bucket_layout_property()) %}
    {% if held != row_bucket_layout() %}
        {% set held_text = "'" ~ held ~ "'" if held
            else 'the row identity (a lake built before 2026-11-29)' %}
        {% do exceptions.raise_compiler_error(
            this ~ " holds its rows in buckets of " ~ held_text ~ ", this project writes '"
            ~ row_bucket_layout() ~ "' (var cdc_row_buckets): run `dbt build --full-refresh` once"
        ) %}
    {% endif %}
    {{ return('') }}
{% endmacro %}

{% macro row_event_type() -%}
    struct<
        change_kind: string,
        op: string,
        ordering_key: string,
        event_time: timestamp,
        event_id: string,
        is_deleted: boolean,
        is_partial: boolean,
        is_before_half: boolean,
        stated_values: map<string, string>,
        lane_row_key: string,
        moved_from_row_key: string,
        moved_to_row_key: string,
        fingerprint: string,
        resolved_batch_id: bigint
    >
{%- endmacro %}

{#
    change_row_events(): the row events of one silver.change_events row, as SQL of an
    array (read from the change_events columns):

    - the change itself, on its row key. stated_values is the row as the change states it:
      the before image of a delete, the after image (a partial one overlaid on the unchanged
      columns of its own before image: Shareplex sends the identifying columns there), else
      the before image. The update-before half of a split update (op update without an after
      image) is marked is_before_half. A partial change that moves the key names the old key
      (moved_from_row_key): it starts from the old key's row.
    - an update whose before_row_key differs from its row_key also ends the row under the old
      key (change_kind key_move, at the update's ordering key).

    fingerprint is what a redelivery repeats: op, stated values, row keys, source positions
    and times - everything but the Kafka coordinates (so the same update sent once split and
    once as one message, as DataWorks documents both, is one change too).
#}
{% macro change_row_events() -%}
    {%- set is_partial = "op != 'delete' and after_image_is_partial" -%}
    {%- set is_before_half = "op = 'update' and after_image is null" -%}
    {%- set stated_values -%}
        case
            when op = 'delete' then before_image
            when after_image_is_partial then {{ overlay_image('before_image', 'after_image') }}
            else coalesce(after_image, before_image)
        end
    {%- endset -%}
    {%- set fingerprint -%}
        sha2(
            to_json(
                named_struct(
                    'op', op,
                    'is_before_half', {{ is_before_half }},
                    'is_partial', {{ is_partial }},
                    'stated_values', array_sort(map_entries({{ stated_values }})),
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
        )
    {%- endset -%}
    filter(
        array(
            cast(named_struct(
                'change_kind', 'change',
                'op', op,
                'ordering_key', ordering_key,
                'event_time', event_time,
                'event_id', event_id,
                'is_deleted', op = 'delete',
                'is_partial', {{ is_partial }},
                'is_before_half', {{ is_before_half }},
                'stated_values', {{ stated_values }},
                'lane_row_key', row_key,
                'moved_from_row_key', case
                    when {{ is_partial }} and before_row_key != row_key then before_row_key
                end,
                'moved_to_row_key', cast(null as string),
                'fingerprint', {{ fingerprint }},
                'resolved_batch_id', resolved_batch_id
            ) as {{ row_event_type() }}),
            case
                when before_row_key != row_key and not ({{ is_before_half }}) then cast(named_struct(
                    'change_kind', 'key_move',
                    'op', op,
                    'ordering_key', ordering_key,
                    'event_time', event_time,
                    'event_id', event_id,
                    'is_deleted', true,
                    'is_partial', false,
                    'is_before_half', false,
                    'stated_values', before_image,
                    'lane_row_key', before_row_key,
                    'moved_from_row_key', cast(null as string),
                    'moved_to_row_key', row_key,
                    'fingerprint', {{ fingerprint }},
                    'resolved_batch_id', resolved_batch_id
                ) as {{ row_event_type() }})
            end
        ),
        row_event -> row_event is not null
    )
{%- endmacro %}

{# truncate_row_event(): the row event of one silver.table_truncates row (every row of its table) #}
{% macro truncate_row_event() -%}
    cast(named_struct(
        'change_kind', 'truncate',
        'op', 'truncate',
        'ordering_key', ordering_key,
        'event_time', event_time,
        'event_id', event_id,
        'is_deleted', true,
        'is_partial', false,
        'is_before_half', false,
        'stated_values', cast(null as map<string, string>),
        'lane_row_key', cast(null as string),
        'moved_from_row_key', cast(null as string),
        'moved_to_row_key', cast(null as string),
        'fingerprint', cast(null as string),
        'resolved_batch_id', ingest_batch_id
    ) as {{ row_event_type() }})
{%- endmacro %}

{#
    first_of_each(events, fields): the first element of each run of elements equal in `fields`
    (struct field names) of the array column `events` (sorted so that equal ones are
    adjacent). `events` must be a column, not an expression: it is read once per element.
#}
{% macro first_of_each(events, fields) -%}
    filter(
        {{ events }},
        (row_event, i) -> i = 0
        {%- for field in fields %}
        or not ({{ events }}[i - 1].{{ field }} <=> row_event.{{ field }})
        {%- endfor %}
    )
{%- endmacro %}

{#
    event_comparator(fields): an array_sort comparator of row events by `fields`, a list of
    [struct field name, 'asc' | 'desc'] pairs (NULL sorts first ascending).
#}
{% macro event_comparator(fields) -%}
    (l, r) -> case
        {%- for field, direction in fields %}
        {%- set lower, higher = ('-1', '1') if direction == 'asc' else ('1', '-1') %}
        when l.{{ field }} is null and r.{{ field }} is not null then {{ lower }}
        when l.{{ field }} is not null and r.{{ field }} is null then {{ higher }}
        when l.{{ field }} < r.{{ field }} then {{ lower }}
        when l.{{ field }} > r.{{ field }} then {{ higher }}
        {%- endfor %}
        else 0
    end
{%- endmacro %}

{#
    The three steps from an identity's collected events (collect_list of row events: the
    stored ones and the new ones) to its distinct events, each over the array column the step
    before gives:

    - by_resolution(events): sorted by change_kind, event_id, newest resolved_batch_id first;
    - resolved_by_fingerprint(by_resolution): a change resolved again (a split update's after
      half completed by its before half, which sets before_row_key) replaces the stored event
      of the same change (the newest resolution of each change_kind + event_id), sorted by
      change_kind, fingerprint, ordering_key;
    - distinct_row_events(by_fingerprint): one event per fingerprint and change_kind - the
      first delivery by ordering key (a redelivery repeats the fingerprint) - in the order
      they apply (sorted_row_events).
#}
{% macro by_resolution(events) -%}
    array_sort(
        {{ events }},
        {{ event_comparator([['change_kind', 'asc'], ['event_id', 'asc'], ['resolved_batch_id', 'desc']]) }}
    )
{%- endmacro %}

{% macro resolved_by_fingerprint(by_resolution) -%}
    array_sort(
        {{ first_of_each(by_resolution, ['change_kind', 'event_id']) }},
        {{ event_comparator([['change_kind', 'asc'], ['fingerprint', 'asc'], ['ordering_key', 'asc']]) }}
    )
{%- endmacro %}

{% macro distinct_row_events(by_fingerprint) -%}
    {{ sorted_row_events(first_of_each(by_fingerprint, ['change_kind', 'fingerprint'])) }}
{%- endmacro %}

{#
    kept_row_events(events, first_whole_ordering_key): a row identity's own distinct events
    (distinct_row_events) less the update-before halves of split updates: a before half is
    half of one change, not a version of its own; it is kept only when no whole change of the
    row orders before it (the row is first seen through it: its before image is the row as it
    was). first_whole_ordering_key: first_whole_ordering_key(events) of the same array.
#}
{% macro kept_row_events(events, first_whole_ordering_key) -%}
    filter(
        {{ events }},
        row_event -> not row_event.is_before_half
        or {{ first_whole_ordering_key }} is null
        or row_event.ordering_key < {{ first_whole_ordering_key }}
    )
{%- endmacro %}

{# first_whole_ordering_key(events): the ordering key of the first whole change of the array #}
{% macro first_whole_ordering_key(events) -%}
    array_min(
        transform(
            filter(
                {{ events }},
                row_event -> row_event.change_kind = 'change' and not row_event.is_before_half
            ),
            row_event -> row_event.ordering_key
        )
    )
{%- endmacro %}

{#
    sorted_row_events(events): events in the order they apply - the precedence of gold:

    - by ordering key (never arrival order);
    - at an equal ordering key (one Kafka record), a delete (or key move, truncate) applies
      last: a delete wins a tie;
    - then by lane, change_kind and event_id, only to make the order total.

    The carried events of a partial key move (the old key's events before the move) have
    ordering keys below the move's, so they sort before it.
#}
{% macro sorted_row_events(events) -%}
    array_sort(
        {{ events }},
        (l, r) -> case
            when l.ordering_key < r.ordering_key then -1
            when l.ordering_key > r.ordering_key then 1
            when not l.is_deleted and r.is_deleted then -1
            when l.is_deleted and not r.is_deleted then 1
            when coalesce(l.lane_row_key, '') < coalesce(r.lane_row_key, '') then -1
            when coalesce(l.lane_row_key, '') > coalesce(r.lane_row_key, '') then 1
            when l.change_kind < r.change_kind then -1
            when l.change_kind > r.change_kind then 1
            when l.event_id < r.event_id then -1
            when l.event_id > r.event_id then 1
            else 0
        end
    )
{%- endmacro %}

{#
    row_versions(events, row_key): the versions of the row identity `row_key`, as SQL of an
    array, from its sorted events (sorted_row_events): its own events, the carried events of
    the keys it moved from (through chains of partial key moves) and its table's truncates.

    One `aggregate` replays them, keeping the state of every lane (row key) it reads:
    lane_states is row key -> the live row (absent when not live).

    - A change of the row's own key makes a version. A whole change (insert, snapshot, update
      with a whole after image) states the row. A partial change (after_image_is_partial)
      overlays the previous row with the columns it provides (NULL sets NULL); after a deleted
      version it starts from nothing; a partial change that moves the key starts from the old
      key's row as of the move (its lane), else from its own. A delete makes a deleted version
      that keeps the row as it was when it ended (overlaid with the delete's before image).
    - A key move away or a truncate makes a deleted version only while the row is live. A
      truncate ends every lane.
    - An event of another lane (carried) changes only that lane's state.
#}
{% macro row_versions(events, row_key) -%}
    {%- set own_state = "try_element_at(acc.lane_states, " ~ row_key ~ ")" -%}
    {%- set lane_state = "try_element_at(acc.lane_states, e.lane_row_key)" -%}
    {%- set new_lane_state -%}
        case
            when e.is_deleted then cast(null as map<string, string>)
            when e.is_partial then {{ overlay_image(
                'coalesce(try_element_at(acc.lane_states, e.moved_from_row_key), '
                ~ lane_state ~ ', map())',
                'e.stated_values'
            ) }}
            else e.stated_values
        end
    {%- endset -%}
    aggregate(
        {{ events }},
        named_struct(
            'lane_states', cast(map() as map<string, map<string, string>>),
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
        (acc, e) -> named_struct(
            'lane_states', case
                when e.lane_row_key is null then cast(map() as map<string, map<string, string>>)
                else map_concat(
                    map_filter(acc.lane_states, (lane, state) -> lane != e.lane_row_key),
                    map_filter(map(e.lane_row_key, {{ new_lane_state }}), (lane, state) -> state is not null)
                )
            end,
            'versions', case
                when e.lane_row_key is not null and e.lane_row_key != {{ row_key }} then acc.versions
                {# a key move or truncate ends only a live row #}
                when e.change_kind != 'change' and {{ own_state }} is null then acc.versions
                else concat(
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
                                when e.is_deleted then {{ overlay_image(own_state, 'e.stated_values') }}
                                else {{ new_lane_state }}
                            end,
                            'moved_to_row_key', e.moved_to_row_key
                        )
                    )
                )
            end
        ),
        acc -> acc.versions
    )
{%- endmacro %}

{#
    current_versions(row_versions, live_only=false, row_bucket=none): the select of the
    current versions of gold.int_row_versions (`row_versions`, a ref to it): one row per row
    identity that has a version, with its values and how it ended if it did (the columns of
    gold.current_rows_with_deletes; last_resolved_batch_id, the newest ingest batch that
    changed the identity, scopes the data tests of an incremental build to the identities it
    rewrote); live_only keeps the rows not deleted (gold.current_rows').
    row_bucket, the SQL of one table's bucket (macro row_bucket on its literals), reads that
    partition alone: a typed gold view of one source table passes its own.
    gold.current_rows, gold.current_rows_with_deletes and every typed gold view read gold's
    state through it, not through one another: each view level a query names costs Spark a
    metastore lookup and an analysis on every query (0.15-0.25 s for the two levels a typed
    key test saved, bench/HISTORY.md 2026-11-28).
#}
{% macro current_versions(row_versions, live_only=false, row_bucket=none) -%}
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        current_version.row_values,
        current_version.is_deleted,
        case when current_version.is_deleted then current_version.event_time end as deleted_at,
        case
            when current_version.is_deleted then current_version.ordering_key
        end as deleted_ordering_key,
        case
            when not current_version.is_deleted then null
            when current_version.change_kind = 'change' then 'delete'
            else current_version.change_kind
        end as deleted_by,
        current_version.moved_to_row_key,
        current_version.op as last_op,
        current_version.ordering_key as last_ordering_key,
        current_version.event_time as last_event_time,
        n_versions,
        last_resolved_batch_id
    from {{ row_versions }}
    where current_version is not null
    {%- if live_only %}
        and not current_version.is_deleted
    {%- endif %}
    {%- if row_bucket is not none %}
        and row_bucket = {{ row_bucket }}
    {%- endif %}
{%- endmacro %}

{#
    retracted_identities(change_events, applied_batch_id): the select of the row identities
    (source_format, source_database, source_schema, source_table, row_key) that a run after
    applied_batch_id retracts: the provisional all-columns identity of a change keyed by all
    its columns when it was first built (a Shareplex insert before its table's key arrived)
    and keyed again since by the key learned later - staging computed its batch again, so its
    ingest_batch_id is applied and its resolved_batch_id new. A full build never has such an
    identity; an incremental gold model deletes it (merge_delete_condition).
#}
{% macro retracted_identities(change_events, applied_batch_id) -%}
    select distinct
        source_format,
        source_database,
        source_schema,
        source_table,
        provisional_row_key as row_key
    from (
        select
            source_format,
            source_database,
            source_schema,
            source_table,
            {{ canonical_row_key('after_image', 'map_keys(after_image)') }} as provisional_row_key,
            row_key
        from {{ change_events }}
        where resolved_batch_id > {{ applied_batch_id }}
            and ingest_batch_id <= {{ applied_batch_id }}
            and key_source = 'unique_key'
            and after_image is not null
    )
    where provisional_row_key != row_key
{%- endmacro %}

{#
    nothing_new_since(applied_batch_id): nothing_new_in (macros/cdc_incremental.sql) for a
    model that applies gold.int_row_versions (gold.current_rows, gold.row_history): true when
    no identity was resolved after applied_batch_id (its last_resolved_batch_id) and no change
    resolved since may retract a provisional identity (the changes retracted_identities reads).
#}
{% macro nothing_new_since(applied_batch_id) -%}
    {{ return(nothing_new_in([
        (ref('int_row_versions'), 'last_resolved_batch_id > ' ~ applied_batch_id),
        (
            ref('change_events'),
            'resolved_batch_id > ' ~ applied_batch_id ~ ' and ingest_batch_id <= '
            ~ applied_batch_id ~ " and key_source = 'unique_key' and after_image is not null"
        ),
    ])) }}
{%- endmacro %}
