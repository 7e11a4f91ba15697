{#
    The shared shapes of the staging stg_<folder>__events models: the normalized event row
    (staging_event_row) and the quarantine checks (quarantine_checks, missing_key_check). A
    staging model states only what its format has; these macros put it in the one order and
    the one vocabulary of staging_event_columns() (macros/cdc_formats.sql).
#}

{#
    staging_event_types(): the Spark SQL type of each staging_event_columns() column that a
    format may lack, for its typed NULL.
#}
{% macro staging_event_types() %}
    {{ return({
        'op': 'string', 'source_op': 'string', 'source_db_type': 'string',
        'source_database': 'string', 'source_schema': 'string', 'source_table': 'string',
        'control_type': 'string', 'key_source': 'string', 'key_columns': 'array<string>',
        'column_types': 'map<string, string>', 'source_schema_version': 'string',
        'before_image': 'map<string, string>', 'after_image': 'map<string, string>',
        'row_key': 'string', 'before_row_key': 'string', 'ordering_key': 'string',
        'event_time': 'timestamp', 'capture_time': 'timestamp', 'checkpoint_time': 'timestamp',
        'source_sequence_id': 'string', 'source_scn': 'string', 'source_position': 'string',
        'transaction_id': 'string', 'transaction_event_index': 'int',
        'transaction_event_count': 'int', 'is_last_event_in_transaction': 'boolean',
        'ddl_text': 'string',
    }) }}
{% endmacro %}

{#
    staging_event_row(columns, renamed={}, extra=[]): the select list of a staging event row.

    Arguments:
    - columns: the staging_event_columns() the model's relation holds under their own names
      (what its format has, computed in an earlier CTE).
    - renamed: a dict of further staging_event_columns() name -> SQL expression (a decoded
      column renamed or cast).
    - extra: names of further columns of the relation to keep after the contract's (a
      format's own columns, for its readers and its intermediate model).
    Every other column of the contract is:
    - a bronze coordinate every decoding model passes through: kafka_topic <- topic,
      kafka_partition <- partition, kafka_offset <- offset, kafka_timestamp <- timestamp;
      source_format and ingest_batch_id as they are; kafka_row_index 0
      (single-row formats); resolved_batch_id <- ingest_batch_id (final in its own batch);
    - quarantine_reason / quarantine_detail, as quarantine_checks() names them; record_kind:
      op_kind (change, control or ddl, a column of the relation), or quarantine when
      quarantine_reason is set;
    - after_image_is_partial: false (the after image is the whole row);
    - a NULL of its type (staging_event_types()): the format does not have it.

    Output columns: staging_event_columns() in its order, then the extra columns.
#}
{% macro staging_event_row(columns, renamed={}, extra=[]) -%}
    {%- set defaults = {
        'source_format': 'source_format',
        'kafka_topic': 'topic',
        'kafka_partition': 'partition',
        'kafka_offset': 'offset',
        'kafka_row_index': '0',
        'kafka_timestamp': 'timestamp',
        'ingest_batch_id': 'ingest_batch_id',
        'record_kind': "case when quarantine_reason is null then op_kind else 'quarantine' end",
        'quarantine_reason': 'quarantine_reason',
        'quarantine_detail': 'quarantine_detail',
        'after_image_is_partial': 'false',
        'resolved_batch_id': 'ingest_batch_id',
    } -%}
    {%- set contract = staging_event_columns() -%}
    {%- set unknown = (columns + renamed.keys() | list) | reject('in', contract) | list -%}
    {%- if unknown | length > 0 -%}
        {{ exceptions.raise_compiler_error(
            'staging_event_row: not a staging event column: ' ~ unknown | join(', ')
            ~ ' (pass it in extra)'
        ) }}
    {%- endif -%}
    {%- set items = [] -%}
    {%- for name in contract -%}
        {%- if name in columns -%}
            {%- do items.append(name) -%}
        {%- elif name in renamed -%}
            {%- do items.append(renamed[name] ~ ' as ' ~ name) -%}
        {%- elif defaults.get(name) == name -%}
            {%- do items.append(name) -%}
        {%- elif name in defaults -%}
            {%- do items.append(defaults[name] ~ ' as ' ~ name) -%}
        {%- else -%}
            {%- do items.append('cast(null as ' ~ staging_event_types()[name] ~ ') as ' ~ name) -%}
        {%- endif -%}
    {%- endfor -%}
    {{ (items + extra) | join(',\n        ') }}
{%- endmacro %}

{#
    quarantine_checks(checks): the quarantine verdict of a decoded record, from one list of
    checks.

    Arguments:
    - checks: a list of [condition, reason, detail] entries, tried in order after the decoding
      model's own verdict (decode_error / decode_error_detail, set by the Python decoder,
      always first); the first whose condition (Spark SQL, boolean) is true decides. reason is
      a reason code (docs/explanation/gold-rules.md "What the tables promise"), or none to
      pass the record (e.g. a control record past the checks common to every kind); detail is
      a Spark SQL text expression.

    Output columns: quarantine_reason (the deciding check's reason code; NULL when no check
    holds or the deciding check passes the record) and quarantine_detail (its detail; NULL
    likewise).
#}
{% macro quarantine_checks(checks) -%}
    {%- set verdicts = [['decode_error is not null', 'decode_error', 'decode_error_detail']] -%}
    {%- for condition, reason, detail in checks -%}
        {%- if reason is none -%}
            {%- do verdicts.append([condition, 'null', 'null']) -%}
        {%- else -%}
            {%- do verdicts.append([condition, "'" ~ reason ~ "'", detail]) -%}
        {%- endif -%}
    {%- endfor -%}
    {%- for output in ['reason', 'detail'] %}
        case
            {%- for condition, reason, detail in verdicts %}
            when {{ condition }} then {{ reason if output == 'reason' else detail }}
            {%- endfor %}
        end as quarantine_{{ output }}
        {%- if not loop.last %},{% endif %}
    {%- endfor %}
{%- endmacro %}

{#
    missing_key_check(images, detail_prefix): the quarantine_checks() entry of a record whose
    image lacks a key column.

    Arguments:
    - images: a list of [image, key_columns] pairs (SQL expressions: a map column -> value
      text, an array of column names); the key columns of each image that it does not carry
      count (an image that is NULL lacks none).
    - detail_prefix: the detail's text before the missing columns (default 'key column(s)
      missing from the image: ').

    Returns: [condition, 'missing_key_column', detail], the detail naming the missing
    columns, comma-separated, first image's first.
#}
{% macro missing_key_check(images, detail_prefix='key column(s) missing from the image: ') %}
    {% set missing = namespace(columns=none) %}
    {% for image, key_columns in images %}
        {% set columns = missing_key_columns(image, key_columns) %}
        {% if loop.first %}
            {% set missing.columns = columns %}
        {% else %}
            {% set missing.columns =
                'array_union(' ~ missing.columns ~ ', coalesce(' ~ columns ~ ', array()))' %}
        {% endif %}
    {% endfor %}
    {{ return([
        'size(' ~ missing.columns ~ ') > 0',
        'missing_key_column',
        "concat('" ~ detail_prefix ~ "', array_join(" ~ missing.columns ~ ", ', '))",
    ]) }}
{% endmacro %}
