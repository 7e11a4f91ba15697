{# placeholder until the scd2 branch lands #}
with

schema_changes as (
    select * from {{ ref('schema_changes') }}
),

final as (
    select
        event_id,
        source_format,
        source_database,
        source_schema,
        source_table,
        ordering_key,
        event_time
    from schema_changes
    where upper(ddl_op) = 'TRUNCATE'
        or ddl_text rlike '^(?i)\\s*truncate\\s'
)

select * from final
