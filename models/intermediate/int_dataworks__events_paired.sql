{#
    The DataWorks / DataHub Blob events (stg_dataworks__events) with each split update paired:
    the after half (UPDATE_AFTER) learns its before half's key (UPDATE_BEFOR / UPDATE_BEFORE,
    same format, database, schema, table and sequenceId) as before_row_key, so that a
    primary-key update also ends the row under the old key (gold.current_rows).

    A table, not a view: four silver models and the tests read it, and as a view each of them
    would plan and run the classification and the pairing join again.

    Incremental (macro paired_split_updates, macros/cdc_pairing.sql): partitioned by
    ingest_batch_id; a run rewrites the new batches and the older batches holding an after
    half that a new before half completes (the pair's resolved_batch_id is then the new
    batch).
#}

{{ config(enabled=cdc_folder_enabled('dataworks')) }}
{{ batch_partitioned_config() }}

{{ paired_split_updates(
    ref('stg_dataworks__events'),
    ['source_format', 'source_database', 'source_schema', 'source_table', 'source_sequence_id'],
    ref('stg_dataworks__decoded'),
) }}
