{#
    Current state of every live source row: the rows of gold.current_rows_with_deletes (the
    current version of each row identity of gold.int_row_versions, which applies gold's
    rules, macros/cdc_gold.sql) that are not deleted. Read from gold.int_row_versions
    through the same macro (current_versions), not through that view.

    - The latest change by ordering key wins; a delete leaves no row, and an older change
      delivered late cannot bring the row back (the identity's versions keep the delete).
    - Partial after images are merged column by column with the previous version; a partial
      change that moves the key starts from the old key's row, through chains of such moves.
    - A truncate (silver.table_truncates) ends every row of its table that is live before it;
      a column value set before the truncate is not carried over.
    - Duplicate deliveries change nothing (last_ordering_key is the first delivery's); ties in
      the ordering key cannot occur between different changes (it ends in Kafka partition,
      offset, row index and topic).

    A view: one row per live row identity.
#}

{{ config(materialized='view') }}

with

live_versions as (
    {{ current_versions(ref('int_row_versions'), live_only=true) }}
),

final as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        row_key,
        row_values,
        last_op,
        last_ordering_key,
        last_event_time,
        last_resolved_batch_id
    from live_versions
)

select * from final
