{#
    Plain Debezium JSON records (MySQL and PostgreSQL connectors, Kafka Connect's JSON
    converter) decoded in one pass into the normalized vocabulary of docs/formats.md (section
    6): every Kafka record classified as a change, a truncate (ddl), a tombstone (control) or a
    quarantined record, with its normalized op, key columns, images, row keys and ordering key.
    Source of the facts: Debezium's MySQL and PostgreSQL connector documentation (change event
    keys and values, the source block, tombstones, the Decimal logical type).

    - Decoding: the exact JSON function (macro exact_json) reads each value once, every value's
      text as sent (1.50 stays 1.50, JSON null is SQL NULL); structural errors (invalid UTF-8
      or JSON, duplicate key, not an object, a field of the wrong JSON type) come back as a
      reason, never as a failure. Two shapes: with schemas {"schema": {...}, "payload": {...}},
      and schemaless (schemas.enable=false: the payload itself, recognized by a top level with
      op and no payload).
    - Tombstone: a Kafka record with a NULL value (sent after each delete, for log compaction)
      is a control event (control_type tombstone): nothing to apply, the delete before it did.
      A value of zero bytes is no tombstone (quarantine empty_value).
    - op c / u / d / r -> insert / update / delete / snapshot (case-sensitive); t (PostgreSQL
      TRUNCATE) -> ddl with ddl_text "TRUNCATE TABLE <schema or db>.<table>" (the message
      carries no statement), so it reaches silver.table_truncates like other formats'
      truncates; any other op -> quarantine unknown_op. An update whose before is null (a
      PostgreSQL table without REPLICA IDENTITY FULL) has no before image, like the formats
      that send none.
    - Images: before / after as column -> value text. With schemas, a field of logical type
      org.apache.kafka.connect.data.Decimal (base64 of the two's-complement big-endian unscaled
      integer, parameters.scale) is decoded to its plain text with exactly scale fraction
      digits (Java, cdc_lakehouse.formats.debezium.ConnectDecimal, any length); text that is not base64
      quarantines the record (invalid_field_value). Schemaless messages carry decimals as
      strings (decimal.handling.mode=string), kept as sent; dates and times are kept as sent.
    - column_types: the schema's after (else before) struct fields, Kafka Connect type plus the
      logical type's name in parentheses (int32 (io.debezium.time.Date)), as Lindorm's decoder
      writes them; NULL without schemas.
    - Key columns: the field names of the Kafka record's key (JSON, with schemas its payload),
      in the key's order (key_source primary_key); a NULL key (a table without primary key):
      every column of the image (all_columns).
    - Ordering key (text, fixed width up to the topic, compares like the tuple): PostgreSQL
      source.lsn (20 digits), 20 zeros, 10 zeros; MySQL the binlog file number (digits after
      the last '.' of source.file, 20), source.pos (20), source.row (10; the row within the
      binlog event); then Kafka partition, offset and topic (macro kafka_ordering_tail).
      Snapshot rows share their position: the Kafka offset orders them.
    - Times: source.ts_ms (when the change was made in the database) -> event_time;
      payload.ts_ms (when the connector processed it) -> capture_time.

    Pieces kept in its plug-in (src/cdc_lakehouse/formats/debezium/macros.sql): the log
    position check, the Decimal decoding.

    A table, not a view: four silver models and its tests read it; as a view each of them would
    decode again.

    Incremental (macros/cdc_incremental.sql): partitioned by ingest_batch_id; a run decodes
    the new batches only (a record of this format depends on no other record).
#}

{{ batch_partitioned_config() }}

{% set decimal_type = 'org.apache.kafka.connect.data.Decimal' %}
{#
    the checks after the record's own verdict (decode_error: the JSON, the payload, op, table,
    position and schema problems, first first; macro quarantine_checks)
#}
{% set checks = [
    ["op_kind = 'control'", none, none],
    [
        "op_code in ('c', 'u', 'r') and after_image is null", 'missing_required_field',
        "concat('op ', op_code, ' without payload.after')",
    ],
    [
        "op_code = 'd' and before_image is null", 'missing_required_field',
        "'op d without payload.before'",
    ],
    [
        'size(bad_decimals) > 0', 'invalid_field_value',
        "concat('payload.', bad_decimals[0], ' is not base64 of an unscaled integer ("
        ~ decimal_type ~ ")')",
    ],
    ["op_kind = 'ddl'", none, none],
    ['size(key_columns) = 0', 'missing_key_column', "'the row has no column to identify it'"],
    missing_key_check([['state_image', 'key_columns']]),
] %}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% set new_records = "source_format = 'debezium_json' and ingest_batch_id > " ~ held_batch %}
{% if is_incremental() and nothing_new_in([(ref('stg_bronze__kafka_records'), new_records)]) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

{% set payload_fields = (
    'op: string, ts_ms: string, before: map<string,string>, after: map<string,string>, '
    ~ 'source: struct<connector: string, db: string, `schema`: string, `table`: string, '
    ~ 'lsn: string, txId: string, ts_ms: string, snapshot: string, file: string, pos: string, '
    ~ '`row`: string, gtid: string, sequence: string>, '
    ~ 'transaction: struct<id: string, total_order: string>'
) %}
{# the Debezium value (both shapes), each value's text exactly as sent #}
{% set decode_debezium = exact_json(
    'cdc_debezium_json',
    '`schema` struct<fields: array<struct<field: string, fields: array<struct<field: string, '
    ~ 'type: string, name: string, parameters: map<string,string>>>>>>, '
    ~ 'payload struct<' ~ payload_fields ~ '>, '
    ~ payload_fields | replace(': ', ' ')
) %}

with

bronze_records as (
    select
        source_format,
        topic,
        partition,
        offset,
        timestamp,
        key,
        value,
        ingest_batch_id
    from {{ ref('stg_bronze__kafka_records') }}
    where {{ new_records }}
),

{# one call of the function per record: its struct is read in the next CTEs #}
parsed as (
    select
        * except (value),
        value is null as is_tombstone,
        {{ decode_debezium }}(value) as message,
        from_json(cast(key as string), 'map<string,string>') as key_object
    from bronze_records
),

{# the payload of either shape: schemaless, the top level is the payload #}
shaped as (
    select
        * except (message),
        message.decode_error as json_error,
        message.decode_error_detail as json_error_detail,
        case
            when message.payload is null and message.op is not null
                then named_struct(
                    'op', message.op, 'ts_ms', message.ts_ms, 'before', message.before,
                    'after', message.after, 'source', message.source,
                    'transaction', message.transaction
                )
            else message.payload
        end as payload,
        {# the schema's after (else before) struct: the row's columns #}
        coalesce(
            get(filter(message.schema.fields, f -> f.field = 'after'), 0).fields,
            get(filter(message.schema.fields, f -> f.field = 'before'), 0).fields
        ) as row_fields,
        case
            when
                map_contains_key(key_object, 'payload') and map_contains_key(key_object, 'schema')
                and size(key_object) = 2
                then from_json(key_object['payload'], 'map<string,string>')
            else key_object
        end as key_payload
    from parsed
),

fields as (
    select
        *,
        payload.op as op_code,
        payload.source.connector,
        nullif(payload.source.db, '') as source_database,
        nullif(payload.source.schema, '') as source_schema,
        nullif(payload.source.table, '') as source_table,
        payload.source.file as binlog_file,
        regexp_replace(
            {{ integer_digits('payload.source.lsn', signed=false) }}, '^0+(?=.)', ''
        ) as lsn_digits,
        regexp_replace(regexp_extract(payload.source.file, '\\.([0-9]+)$', 1), '^0+(?=.)', '')
            as binlog_file_digits,
        regexp_replace(
            {{ integer_digits('payload.source.pos', signed=false) }}, '^0+(?=.)', ''
        ) as pos_digits,
        regexp_replace(
            {{ integer_digits('payload.source.row', signed=false) }}, '^0+(?=.)', ''
        ) as row_digits,
        {{ integer_digits('payload.source.ts_ms', signed=false) }} as source_ts_digits,
        {{ integer_digits('payload.ts_ms', signed=false) }} as payload_ts_digits,
        transform(row_fields, f -> f.field) as row_field_names,
        filter(row_fields, f -> f.name = '{{ decimal_type }}') as decimal_fields,
        {# the decimal columns without an integer scale #}
        transform(
            filter(
                row_fields,
                f -> f.name = '{{ decimal_type }}'
                and not coalesce(f.parameters['scale'] rlike '^-?[0-9]{1,4}$', false)
            ),
            f -> f.field
        ) as unscaled_decimals
    from shaped
),

{# what makes the record undecodable, first problem first (the function's verdict first) #}
decoded as (
    select
        *,
        coalesce(
            case
                when is_tombstone then null
                when json_error is not null
                    then named_struct('reason', json_error, 'detail', json_error_detail)
                when payload is null
                    then named_struct(
                        'reason', 'missing_required_field', 'detail', 'payload is missing'
                    )
                when payload.op is null
                    then named_struct(
                        'reason', 'missing_required_field', 'detail', 'payload.op is missing'
                    )
                when key is not null and key_payload is null
                    then named_struct(
                        'reason', 'invalid_json',
                        'detail', 'the Kafka key is not a JSON object (with schemas: its payload)'
                    )
                when
                    size(array_compact(row_field_names)) < size(row_field_names)
                    or size(array_distinct(row_field_names)) < size(row_field_names)
                    then named_struct(
                        'reason', 'invalid_field_type',
                        'detail', 'schema: the row struct needs one distinct field name per column'
                    )
                when size(unscaled_decimals) > 0
                    then named_struct(
                        'reason', 'invalid_field_value',
                        'detail', concat(
                            'schema: the {{ decimal_type }} field ',
                            unscaled_decimals[0],
                            ' has no integer parameters.scale'
                        )
                    )
            end,
            {{ epoch_ms_problem(
                'payload.source.ts_ms', 'payload.source.ts_ms', signed=false,
                digits='source_ts_digits'
            ) }},
            {{ epoch_ms_problem(
                'payload.ts_ms', 'payload.ts_ms', signed=false, digits='payload_ts_digits'
            ) }}
        ) as record_problem
    from fields
),

{# where the change is in the source's log (its ordering), or why it cannot be placed #}
positioned as (
    select
        *,
        {{ debezium_position_problem() }} as position_problem
    from decoded
),

{# the record's verdict and op, in the normalized vocabulary #}
classified as (
    select
        *,
        coalesce(
            record_problem,
            case
                when is_tombstone then null
                when op_code not in ('c', 'u', 'd', 'r', 't')
                    then named_struct(
                        'reason', 'unknown_op',
                        'detail', concat(
                            'payload.op ', op_code, ' is not a Debezium op (c, u, d, r, t)'
                        )
                    )
                when source_table is null then named_struct(
                    'reason', 'missing_required_field',
                    'detail', 'payload.source.table is missing'
                )
            end,
            position_problem,
            case
                when
                    length(lsn_digits) > 20 or length(binlog_file_digits) > 20
                    or length(pos_digits) > 20 or length(row_digits) > 10
                    then named_struct(
                        'reason', 'invalid_field_value',
                        'detail', 'payload.source: a position has more digits than its '
                        || 'ordering key part (lsn, file number, pos: 20; row: 10)'
                    )
            end
        ) as problem
    from positioned
),

{# the op and the decimal columns' scales (schema parameters) #}
typed as (
    select
        *,
        problem.reason as decode_error,
        problem.detail as decode_error_detail,
        case
            when problem is not null or is_tombstone then null
            when op_code = 'c' then 'insert'
            when op_code = 'u' then 'update'
            when op_code = 'd' then 'delete'
            when op_code = 'r' then 'snapshot'
        end as op,
        case
            when is_tombstone then 'control'
            when problem is not null then null
            when op_code in ('c', 'u', 'd', 'r') then 'change'
            when op_code = 't' then 'ddl'
        end as op_kind,
        case
            when record_problem is null then map_from_entries(transform(
                decimal_fields, f -> struct(f.field, cast(f.parameters['scale'] as int))
            ))
        end as decimal_scales
    from classified
),

{# the images, Connect Decimal values decoded (Java: the plug-in's ConnectDecimal) #}
images as (
    select
        *,
        {{ debezium_decimal_image('payload.before') }} as before_image,
        {{ debezium_decimal_image('payload.after') }} as after_image,
        case
            when op_kind != 'change' then null
            when key_payload is not null then 'primary_key'
            else 'all_columns'
        end as key_source
    from typed
),

keyed as (
    select
        *,
        case when op_code = 'd' then before_image else after_image end as state_image,
        {# the decimal columns whose value is not base64 of an integer: 'before.x', 'after.y' #}
        case when size(decimal_fields) = 0 then array() else concat(
                    transform(
                        filter(
                            map_keys(coalesce(payload.before, map())),
                            c -> payload.before[c] is not null and before_image[c] is null
                        ),
                        c -> concat('before.', c)
                    ),
                    transform(
                        filter(
                            map_keys(coalesce(payload.after, map())),
                            c -> payload.after[c] is not null and after_image[c] is null
                        ),
                        c -> concat('after.', c)
                    )
                )
        end as bad_decimals
    from images
),

normalized as (
    select
        *,
        case
            when op_kind != 'change' then null
            when key_payload is not null then map_keys(key_payload)
            else array_sort(map_keys(coalesce(state_image, map())))
        end as key_columns,
        case
            when op_kind = 'control' then null
            when connector = 'postgresql' then 'PostgreSQL'
            when connector = 'mysql' then 'MySQL'
            else connector
        end as source_db_type,
        case
            when
                problem is null and payload.source.ts_ms is not null and not is_tombstone
                then cast(source_ts_digits as bigint)
        end as source_ts_ms,
        case
            when problem is null and payload.ts_ms is not null and not is_tombstone
                then cast(payload_ts_digits as bigint)
        end as payload_ts_ms,
        case when problem is null and not is_tombstone then {{ format_ordering_key('debezium', {
            'log_position': "if(lsn_digits != '', lsn_digits, binlog_file_digits)",
            'log_offset': "if(lsn_digits != '', '0', pos_digits)",
            'log_row': "if(lsn_digits != '', '0', coalesce(nullif(row_digits, ''), '0'))",
        }) }} end as ordering_key,
        case
            when lsn_digits != '' then lsn_digits
            when payload.source.file is not null
                then concat(payload.source.file, ':', payload.source.pos)
        end as position_text,
        case
            when op_code = 't' then concat(
                'TRUNCATE TABLE ',
                concat_ws('.', coalesce(source_schema, source_database), source_table)
            )
        end as ddl_text,
        case when record_problem is null then map_from_entries(transform(
                row_fields,
                f -> struct(
                    f.field,
                    case
                        when f.name is not null and f.name != '' and f.type is not null
                            then concat(f.type, ' (', f.name, ')')
                        else f.type
                    end
                )
            ))
        end as column_types
    from keyed
),

checked as (
    select
        *,
        {{ canonical_row_key('state_image', 'key_columns') }} as row_key,
        {{ canonical_row_key('before_image', 'key_columns') }} as before_row_key,
        {{ quarantine_checks(checks) }}
    from normalized
),

final as (
    select
        {{ staging_event_row(
            [
                'quarantine_reason', 'quarantine_detail', 'source_db_type', 'source_database',
                'source_schema', 'source_table', 'key_source', 'key_columns', 'column_types',
                'before_image', 'after_image', 'row_key', 'before_row_key', 'ordering_key',
                'ddl_text',
            ],
            renamed={
                'op': "case when quarantine_reason is null then op end",
                'source_op': 'op_code',
                'control_type': "case when op_kind = 'control' then 'tombstone' end",
                'event_time': 'timestamp_millis(source_ts_ms)',
                'capture_time': 'timestamp_millis(payload_ts_ms)',
                'source_position': 'position_text',
                'transaction_id': 'coalesce(payload.transaction.id, payload.source.txid, '
                ~ 'payload.source.gtid)',
            },
        ) }}
    from checked
)

{% endif %}

select * from final
