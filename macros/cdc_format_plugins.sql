{#
    Generated from the format plug-ins (src/cdc_lakehouse/formats/) by `python -m cdc_lakehouse.formats generate`;
    do not edit. cdc_all_staging_event_models(): one entry per staging folder, its
    events model, the registry formats it decodes, 'paired_in' (the intermediate model
    that completes its rows across records, which silver reads instead) and
    'resolves_later' (a row can become final in a later batch than its own). Read by
    macros/cdc_formats.sql and macros/cdc_incremental.sql.
#}
{% macro cdc_all_staging_event_models() %}
    {{ return([
        {'model': 'stg_datahub_tuple__events', 'formats': ['datahub_tuple'], 'paired_in': 'int_datahub_tuple__events_paired', 'resolves_later': true},
        {'model': 'stg_dataworks__events', 'formats': ['dataworks_json', 'datahub_blob'], 'paired_in': 'int_dataworks__events_paired', 'resolves_later': true},
        {'model': 'stg_debezium__events', 'formats': ['debezium_json']},
        {'model': 'stg_dts_avro__events', 'formats': ['dts_avro']},
        {'model': 'stg_dts_canal__events', 'formats': ['dts_canal_json']},
        {'model': 'stg_dts_shareplex__events', 'formats': ['dts_shareplex_json'], 'paired_in': 'int_dts_shareplex__events_keyed', 'resolves_later': true},
        {'model': 'stg_lindorm__events', 'formats': ['lindorm_debezium']},
        {'model': 'stg_qlik__events', 'formats': ['qlik_json', 'qlik_avro'], 'resolves_later': true},
    ]) }}
{% endmacro %}

{#
    cdc_format_orderings(): each staging folder's ordering rule, from its plug-in's
    ordering: the parts [name, width, is text] before the Kafka tail, most significant
    first, and whether a record's rows carry their index (row_index). Read by macro
    format_ordering_key (macros/cdc_keys.sql).
#}
{% macro cdc_format_orderings() %}
    {{ return({
        'datahub_tuple': {'parts': [['sequence_id', 30, false], ['image_rank', 1, false]], 'row_index': false},
        'dataworks': {'parts': [['sequence_id', 30, false], ['image_rank', 1, false]], 'row_index': false},
        'debezium': {'parts': [['log_position', 20, false], ['log_offset', 20, false], ['log_row', 10, false]], 'row_index': false},
        'dts_avro': {'parts': [['load_rank', 1, false], ['source_timestamp', 20, false], ['record_id', 20, false]], 'row_index': false},
        'dts_canal': {'parts': [['es_ms', 20, false], ['snapshot_rank', 1, false]], 'row_index': true},
        'dts_shareplex': {'parts': [['scn', 30, false], ['seq', 10, false], ['image_rank', 1, false]], 'row_index': false},
        'lindorm': {'parts': [['source_ts_ms', 20, false], ['payload_ts_ms', 20, false]], 'row_index': false},
        'qlik': {'parts': [['load_rank', 1, false], ['change_sequence', 35, true]], 'row_index': false},
    }) }}
{% endmacro %}
