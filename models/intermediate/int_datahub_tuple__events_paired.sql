{#
    The DataHub Tuple events (stg_datahub_tuple__events) with each update paired: the after
    half (_after_image_ = Y) learns its before half's key (same topic, table and
    _sequence_id_) as before_row_key, so an update that changes a key column (with
    all_columns: any column) ends the old row in gold.current_rows.

    Materialized and incremental as int_dataworks__events_paired (macro paired_split_updates,
    macros/cdc_pairing.sql).
#}

{{ config(enabled=cdc_folder_enabled('datahub_tuple')) }}
{{ batch_partitioned_config() }}

{{ paired_split_updates(
    ref('stg_datahub_tuple__events'),
    ['kafka_topic', 'source_table', 'source_sequence_id'],
    ref('stg_datahub_tuple__decoded'),
) }}
