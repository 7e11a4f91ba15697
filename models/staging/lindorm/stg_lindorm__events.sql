{#
    Lindorm data subscription messages (Debezium format V2.0, stg_lindorm__decoded) in the
    normalized vocabulary of docs/formats.md: every decoded envelope classified as a change or a
    quarantined record (Lindorm sends no DDL, heartbeats or transaction markers), with its
    normalized op, key columns, row keys and ordering key. Source: docs/formats.md section 3
    (seed 001).

    - Op: payload.op c / u / d / r -> insert / update / delete / snapshot (case-sensitive).
      Snapshot rows are ordinary rows ordered by their timestamps.
    - Images are whole rows (after_image_is_partial = false): a column missing from `after`
      is removed (NULL); the decoder adds such columns as NULL when the before image or the
      schema names them (removed_columns).
    - Keys: HBase tables (table_kind hbase) are keyed by their row key column ROW
      (key_source primary_key, seed 001). Lindorm SQL tables: the messages carry no key
      information, so key columns declared in the seed cdc_declared_keys (topic + table) are
      used (key_source declared); else every column of the row identifies it (key_source
      all_columns; the before image of an update is then keyed by its own columns, so any
      changed value ends the old row in gold.current_rows).
    - Ordering key (text, fixed width up to the topic, compares like the tuple): source.ts_ms
      (20 digits), payload.ts_ms (20 digits, 0 when absent), Kafka partition (10 digits), offset
      (20 digits), topic (macro kafka_ordering_tail). Lindorm carries no log position or
      transaction id; delivery is at-least-once, so duplicates share the timestamps and differ
      only by Kafka coordinates.

    A table, not a view: four silver models and the tests read it.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run computes
    the new batches only (a record of this format depends on no other record).
#}

{{ batch_partitioned_config() }}

{% set checks = [
    [
        'op is null', 'unknown_op',
        "concat('payload.op ', op_code, ' is not a Lindorm Debezium op (c, u, d, r)')",
    ],
    ['source_table is null', 'missing_required_field', "'payload.source.table is missing'"],
    ['source_ts_ms is null', 'missing_required_field', "'payload.source.ts_ms is missing'"],
    [
        "op_code in ('c', 'u', 'r') and after_image is null", 'missing_required_field',
        "concat('op ', op_code, ' without payload.after')",
    ],
    [
        "op_code = 'd' and before_image is null", 'missing_required_field',
        "'op d without payload.before'",
    ],
    ['size(key_columns) = 0', 'missing_key_column', "'the row has no column to identify it'"],
    missing_key_check([['state_image', 'key_columns'], ['before_image', 'before_key_columns']]),
] %}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% if is_incremental() and nothing_new(ref('stg_lindorm__decoded'), held_batch) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

with

envelopes as (
    select * from {{ ref('stg_lindorm__decoded') }}
    {% if is_incremental() %}
    where ingest_batch_id > {{ held_batch }}
    {% endif %}
),

classified as (
    select
        *,
        case op_code
            when 'c' then 'insert'
            when 'u' then 'update'
            when 'd' then 'delete'
            when 'r' then 'snapshot'
        end as op,
        'change' as op_kind,
        {# the image that says which row the record is about, and its state afterwards #}
        case when op_code = 'd' then before_image else after_image end as state_image
    from envelopes
),

with_declared_keys as (
    {{ join_declared_keys('classified', 'source_table') }}
),

keyed as (
    select
        *,
        case
            when table_kind = 'hbase' then 'primary_key'
            when declared_key_columns is not null then 'declared'
            else 'all_columns'
        end as key_source,
        case
            when table_kind = 'hbase' then array('ROW')
            when declared_key_columns is not null then declared_key_columns
            else array_sort(map_keys(coalesce(state_image, map())))
        end as key_columns,
        case
            when table_kind = 'hbase' then array('ROW')
            when declared_key_columns is not null then declared_key_columns
            else array_sort(map_keys(coalesce(before_image, map())))
        end as before_key_columns
    from with_declared_keys
),

normalized as (
    select
        *,
        case table_kind when 'hbase' then 'HBase' when 'sql' then 'Lindorm' end
            as source_db_type,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'before_key_columns') }} as before_row_key,
        {{ format_ordering_key(
            'lindorm', {'source_ts_ms': 'source_ts_ms', 'payload_ts_ms': 'coalesce(payload_ts_ms, 0)'}
        ) }} as ordering_key,
        {{ quarantine_checks(checks) }}
    from keyed
),

final as (
    select
        {{ staging_event_row(
            [
                'op', 'source_db_type', 'source_database', 'source_schema', 'source_table',
                'key_source', 'key_columns', 'column_types', 'before_image', 'after_image',
                'row_key', 'before_row_key', 'ordering_key',
            ],
            renamed={
                'source_op': 'op_code',
                'event_time': 'timestamp_millis(source_ts_ms)',
                'capture_time': 'timestamp_millis(payload_ts_ms)',
            },
            extra=[
                'table_kind', 'source_version', 'removed_columns', 'binary_columns',
                'raw_before_image', 'raw_after_image',
            ],
        ) }}
    from normalized
)

{% endif %}

select * from final
