{#
    cdc_all_staging_event_models(): the staging models that decode a message format, and the
    registry formats each one decodes. Silver models union every one that var cdc_formats
    chooses (cdc_staging_event_models below; or, where an entry names one, the intermediate
    model that completes its records across records: 'paired_in'), and silver.quarantine
    keeps the records of formats that no chosen model decodes.

    Adding a format = one staging folder whose *_events model has the columns of
    staging_event_columns() below (macro staging_event_row, macros/cdc_staging.sql), plus
    one entry here and the folder's +enabled line in dbt_project.yml.

    'resolves_later': true when a row of the entry's table can become final in a later ingest
    batch than its own (resolved_batch_id > ingest_batch_id: a split update's half paired, a
    Shareplex key learned, a Qlik data message decoded when its metadata arrives). Without
    it every row's resolved_batch_id is its ingest_batch_id, so the queries that look for rows
    resolved after a batch read only the table's partitions after it
    (staging_batches_resolved_after, macros/cdc_incremental.sql).
#}
{% macro cdc_all_staging_event_models() %}
    {{ return([
        {'model': 'stg_dataworks__events', 'formats': ['dataworks_json', 'datahub_blob'],
            'paired_in': 'int_dataworks__events_paired', 'resolves_later': true},
        {'model': 'stg_dts_canal__events', 'formats': ['dts_canal_json']},
        {'model': 'stg_qlik__events', 'formats': ['qlik_json', 'qlik_avro'],
            'resolves_later': true},
        {'model': 'stg_datahub_tuple__events', 'formats': ['datahub_tuple'],
            'paired_in': 'int_datahub_tuple__events_paired', 'resolves_later': true},
        {'model': 'stg_lindorm__events', 'formats': ['lindorm_debezium']},
        {'model': 'stg_dts_avro__events', 'formats': ['dts_avro']},
        {'model': 'stg_dts_shareplex__events', 'formats': ['dts_shareplex_json'],
            'paired_in': 'int_dts_shareplex__events_keyed', 'resolves_later': true},
        {'model': 'stg_debezium__events', 'formats': ['debezium_json']},
    ]) }}
{% endmacro %}

{#
    cdc_staging_event_models(): the entries of cdc_all_staging_event_models() that var
    cdc_formats chooses: an entry is chosen when the list names one of its formats, and then
    decodes all of them (one folder, one decoder: dataworks_json with datahub_blob, qlik_json
    with qlik_avro). Unset (the default): every entry. dbt_project.yml enables the staging
    folders by the same rule; intermediate models ask cdc_folder_enabled().

    Raises a compilation error (dbt exits 2) when cdc_formats is not a non-empty list of
    registry formats that a staging model decodes.
#}
{% macro cdc_staging_event_models() %}
    {% set chosen = var('cdc_formats', none) %}
    {% set entries = cdc_all_staging_event_models() %}
    {% if chosen is none %}
        {{ return(entries) }}
    {% endif %}
    {% set known = cdc_decoded_formats(all_formats=true) %}
    {% if chosen is string or chosen is mapping or chosen is not iterable or chosen | length == 0 %}
        {% do exceptions.raise_compiler_error(
            "var cdc_formats must be a non-empty list of formats, e.g. "
            ~ "--vars '{cdc_formats: [dts_canal_json]}'; got " ~ chosen
        ) %}
        {# reached only where raise_compiler_error returns: the SQL lint's stand-in, whose
           var() gives a placeholder text (tests/lint/sqlfluff_jinja/exceptions.py) #}
        {{ return(entries) }}
    {% endif %}
    {% set unknown = chosen | reject('in', known) | list %}
    {% if unknown %}
        {% do exceptions.raise_compiler_error(
            "var cdc_formats: unknown format(s) " ~ unknown | join(', ')
            ~ "; choose from " ~ known | join(', ')
        ) %}
    {% endif %}
    {% set enabled = [] %}
    {% for entry in entries %}
        {% if entry.formats | select('in', chosen) | list %}
            {% do enabled.append(entry) %}
        {% endif %}
    {% endfor %}
    {{ return(enabled) }}
{% endmacro %}

{#
    cdc_folder_enabled(folder): true when var cdc_formats chooses the staging folder
    models/staging/<folder>/ (its stg_<folder>__events entry); the intermediate models of the
    folder pass it to config(enabled=...).
#}
{% macro cdc_folder_enabled(folder) %}
    {% for entry in cdc_staging_event_models() %}
        {% if entry.model == 'stg_' ~ folder ~ '__events' %}
            {{ return(true) }}
        {% endif %}
    {% endfor %}
    {{ return(false) }}
{% endmacro %}

{#
    cdc_decoded_formats(all_formats=false): every registry format that a staging model chosen
    by var cdc_formats decodes; with all_formats, that any staging model decodes.
#}
{% macro cdc_decoded_formats(all_formats=false) %}
    {% set formats = [] %}
    {% set entries = cdc_all_staging_event_models() if all_formats else cdc_staging_event_models() %}
    {% for staging in entries %}
        {% do formats.extend(staging.formats) %}
    {% endfor %}
    {{ return(formats) }}
{% endmacro %}

{#
    staging_event_columns(): the contract of a format's staging *_events model: one row per
    change (a multi-row message gives one row per change, numbered by kafka_row_index), control
    event, DDL or quarantined record. Columns a format does not have are NULL.

    - record_kind: change | control | ddl | quarantine (quarantine_reason / _detail set).
    - op: insert | update | delete | snapshot for changes (docs/formats.md "Normalized vocabulary");
      source_op: the op exactly as sent.
    - control_type (control rows): heartbeat | transaction_begin | transaction_commit |
      transaction_rollback | transaction_marker | tombstone (Debezium's NULL value after a
      delete).
    - before_image / after_image: map column -> value text; NULL value = SQL NULL; a column
      absent from the map = not provided. after_image_is_partial: true when the after image
      holds only the columns the message provided (Shareplex upd, Qlik columnMask, DTS
      EmptyObject NONE), so an absent column keeps its previous value; false when the image is
      the whole row (an absent column is then NULL).
    - key_columns, key_source (primary_key | unique_key | row_id | declared (seed
      cdc_declared_keys) | all_columns), row_key,
      before_row_key: see macros/cdc_keys.sql.
    - ordering_key: text, fixed width up to its last part; compares like the format's ordering
      tuple (docs/formats.md), ending in Kafka partition, offset, row index (Canal) and topic
      (macro kafka_ordering_tail in macros/cdc_keys.sql): two different changes never tie.
    - column_types: column -> source type text as the message declares it, in column order;
      source_schema_version: the format's own schema version (Qlik tableVersion).
    - transaction_id, transaction_event_index (1-based position in the transaction),
      transaction_event_count (changes in the transaction), is_last_event_in_transaction.
    - event_time (at the source), capture_time, checkpoint_time: UTC timestamps.
    - resolved_batch_id: the ingest batch in which the row became final: its own
      ingest_batch_id, or the later batch that delivered the other half of a split update
      (whose pairing sets before_row_key). Incremental gold reads the rows resolved since its
      last run.
    No raw bytes: silver.quarantine takes a quarantined record's value from bronze by its Kafka
    coordinates, so the staging tables do not write every message again.
#}
{% macro staging_event_columns() %}
    {{ return([
        'source_format', 'kafka_topic', 'kafka_partition', 'kafka_offset', 'kafka_row_index',
        'kafka_timestamp', 'ingest_batch_id', 'record_kind', 'quarantine_reason',
        'quarantine_detail', 'op', 'source_op', 'source_db_type', 'source_database',
        'source_schema', 'source_table', 'control_type', 'key_source', 'key_columns',
        'column_types', 'source_schema_version', 'before_image', 'after_image',
        'after_image_is_partial', 'row_key', 'before_row_key', 'ordering_key', 'event_time',
        'capture_time', 'checkpoint_time', 'source_sequence_id', 'source_scn',
        'source_position', 'transaction_id', 'transaction_event_index',
        'transaction_event_count', 'is_last_event_in_transaction', 'ddl_text',
        'resolved_batch_id',
    ]) }}
{% endmacro %}

{#
    staging_events(record_kind): the rows of every staging *_events model (its 'paired_in'
    intermediate model where it has one) with that record_kind (none: of every kind), in the
    columns of staging_event_columns(), as one union all.
#}
{% macro staging_events(record_kind) %}
    {%- for staging in cdc_staging_event_models() %}
    select {{ staging_event_columns() | join(', ') }}
    from {{ ref(staging.get('paired_in', staging.model)) }}
    {%- if record_kind is not none %}
    where record_kind = '{{ record_kind }}'
    {%- endif %}
    {%- if not loop.last %}
    union all
    {%- endif %}
    {%- endfor %}
{% endmacro %}
