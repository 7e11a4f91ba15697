{#
    The JSON envelope of every dataworks_json / datahub_blob record (docs/formats.md sections
    1 and 2; seeds 000 and 002), one row per bronze record, decoded in one pass by the exact
    JSON function (macro exact_json: Java on Jackson's streaming parser), every value's text as
    sent (1.50 stays 1.50). Ops, keys and ordering are SQL in stg_dataworks__events.

    - Structural errors (empty value, invalid UTF-8 or JSON, duplicate key, not an object, a
      field of the wrong JSON type, e.g. payload an array) come back from the function as a
      reason, never as a failure; then: payload or payload.op missing (missing_required_field),
      a schema.dataColumn item without a name or a schema.primaryKey with a null name
      (invalid_field_type), a column named twice in schema.dataColumn (invalid_field_value),
      payload.sequenceId not digits (invalid_field_type), a payload.timestamp field not epoch
      ms (invalid_field_type) or outside the years 1-9999 (invalid_field_value). The first
      problem is decode_error / decode_error_detail, and the row's other fields are NULL.
    - Text fields take a JSON string as sent and a number as its exact text (a boolean or an
      object as its JSON text: op codes are checked against the vendor's list downstream).
    - sequence_id: digits without leading zeros (a JSON integer or a string of digits, blanks
      around allowed). Times: a JSON integer or a string of digits, epoch ms (UTC).
    - Images: payload.before / after.dataColumn as column -> value text; a key maps to NULL
      for SQL NULL, an absent column is absent, a NULL map means the image is not carried.

    A table, not a view: stg_dataworks__events (ephemeral) and the pairing model read it twice
    and its test reads it; as a view each read would decode again.

    Incremental: a run appends the new batches' records only (a record depends on no other).
#}

{{ config(materialized='incremental', incremental_strategy='append') }}

{% set held_batch = held_max('ingest_batch_id') if is_incremental() else -1 %}
{% set new_records = "source_format in ('dataworks_json', 'datahub_blob') and ingest_batch_id > "
    ~ held_batch %}

{% if is_incremental() and nothing_new_in([(ref('stg_bronze__kafka_records'), new_records)]) %}
with

final as (
    {{ no_new_rows() }}
)

{% else %}

{# the envelope's fields (seeds 000 and 002), each value's text exactly as sent #}
{% set decode_envelope = exact_json(
    'cdc_dataworks_envelope',
    'version string, '
    ~ '`schema` struct<dataColumn: array<struct<name: string, type: string>>, '
    ~ 'primaryKey: array<string>, source: struct<dbType: string, dbVersion: string, '
    ~ 'dbName: string, schemaName: string, tableName: string>>, '
    ~ 'payload struct<op: string, sequenceId: string, scn: string, '
    ~ '`timestamp`: struct<eventTime: string, systemTime: string, checkpointTime: string>, '
    ~ 'before: struct<dataColumn: map<string,string>>, '
    ~ 'after: struct<dataColumn: map<string,string>>, ddl: struct<text: string>>'
) %}

with

bronze_records as (
    select
        source_format,
        topic,
        partition,
        offset,
        timestamp,
        value,
        ingest_batch_id
    from {{ ref('stg_bronze__kafka_records') }}
    where {{ new_records }}
),

{# one call of the function per record: its struct is read in the next CTEs #}
parsed as (
    select
        * except (value),
        {{ decode_envelope }}(value) as message
    from bronze_records
),

{# the envelope's parts; the integers' digits once (read by the checks and the casts) #}
fields as (
    select
        * except (message),
        message.decode_error as json_error,
        message.decode_error_detail as json_error_detail,
        message.version as envelope_version,
        message.schema.source,
        message.schema.primarykey as primary_key,
        message.schema.datacolumn.name as column_names,
        message.schema.datacolumn.type as column_type_names,
        message.payload,
        message.payload.timestamp as times,
        {{ integer_digits('message.payload.sequenceid', signed=false) }} as sequence_digits,
        {{ integer_digits('message.payload.timestamp.eventtime') }} as event_time_digits,
        {{ integer_digits('message.payload.timestamp.systemtime') }} as system_time_digits,
        {{ integer_digits('message.payload.timestamp.checkpointtime') }} as checkpoint_time_digits
    from parsed
),

{#
    what makes the envelope undecodable, first problem first (the function's verdict first);
    no lambda on the common path, only array fields and sizes: Spark interprets a lambda row
    by row, which cost more than the decoding
#}
checked as (
    select
        *,
        coalesce(
            case
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
                when size(array_compact(primary_key)) < size(primary_key)
                    then named_struct(
                        'reason', 'invalid_field_type',
                        'detail', 'schema.primaryKey must be an array of names'
                    )
                when size(array_compact(column_names)) < size(column_names)
                    then named_struct(
                        'reason', 'invalid_field_type',
                        'detail', 'schema.dataColumn items need a string name'
                    )
                when size(array_distinct(column_names)) < size(column_names)
                    then named_struct(
                        'reason', 'invalid_field_value',
                        'detail', concat(
                            'schema.dataColumn names the column ',
                            get(filter(
                                column_names,
                                (name, i) -> array_position(column_names, name) != i + 1
                            ), 0),
                            ' twice'
                        )
                    )
                when payload.sequenceid is not null and sequence_digits = ''
                    then named_struct(
                        'reason', 'invalid_field_type',
                        'detail', 'payload.sequenceId must be a string of digits'
                    )
            end,
            {{ epoch_ms_problem(
                'times.eventtime', 'payload.timestamp.eventTime', digits='event_time_digits'
            ) }},
            {{ epoch_ms_problem(
                'times.systemtime', 'payload.timestamp.systemTime', digits='system_time_digits'
            ) }},
            {{ epoch_ms_problem(
                'times.checkpointtime', 'payload.timestamp.checkpointTime',
                digits='checkpoint_time_digits'
            ) }}
        ) as problem
    from fields
),

final as (
    select
        source_format,
        topic,
        partition,
        offset,
        timestamp,
        ingest_batch_id,
        problem.reason as decode_error,
        problem.detail as decode_error_detail,
        {# an undecodable record keeps its coordinates only #}
        if(problem is null, envelope_version, null) as envelope_version,
        if(problem is null, payload.op, null) as op_code,
        if(problem is null, source.dbtype, null) as source_db_type,
        if(problem is null, source.dbversion, null) as source_db_version,
        if(problem is null, source.dbname, null) as source_database,
        if(problem is null, source.schemaname, null) as source_schema,
        if(problem is null, source.tablename, null) as source_table,
        if(problem is null, primary_key, null) as primary_key,
        if(problem is null, map_from_arrays(column_names, column_type_names), null)
            as column_types,
        if(problem is null, regexp_replace(sequence_digits, '^0+(?=.)', ''), null)
            as sequence_id,
        if(problem is null, payload.scn, null) as scn,
        if(problem is null, cast(event_time_digits as bigint), null) as event_time_ms,
        if(problem is null, cast(system_time_digits as bigint), null) as system_time_ms,
        if(problem is null, cast(checkpoint_time_digits as bigint), null) as checkpoint_time_ms,
        if(problem is null, payload.before.datacolumn, null) as before_image,
        if(problem is null, payload.after.datacolumn, null) as after_image,
        if(problem is null, payload.ddl.text, null) as ddl_text
    from checked
)

{% endif %}

select * from final
