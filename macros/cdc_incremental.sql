{#
    Incremental helpers for the staging *_events and silver models.

    Those models are materialized incremental with incremental_strategy='insert_overwrite'
    and partition_by=['ingest_batch_id'] (the ingest batch of the record itself): a run
    rewrites whole batch partitions - the new batches, plus any older batch whose rows a new
    record completes (the after half of a split update whose before half arrives later). Each
    rewritten partition is computed exactly as a full build computes it, so an incremental run
    gives the same rows as `dbt build --full-refresh`, and its cost follows the new data.
#}

{#
    held_max(column, relation): the largest value of column in relation (default: the model's
    own table, {{ this }}), -1 when it holds no rows. Read once at run time with run_query, so
    it reaches the SQL as a literal and Spark prunes partitions and parquet row groups with it.
#}
{% macro held_max(column, relation=none) %}
    {% if not execute %}
        {{ return(-1) }}
    {% endif %}
    {% set relation = relation if relation is not none else this %}
    {% set result = run_query(
        'select coalesce(max(' ~ column ~ '), -1) as held from ' ~ relation
    ) %}
    {{ return(result.columns[0].values()[0] | int) }}
{% endmacro %}

{#
    batch_partitioned_config(): the config of a model whose table is partitioned by
    ingest_batch_id and rewritten batch partition by batch partition (see the header).
#}
{% macro batch_partitioned_config() %}
    {{ config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['ingest_batch_id'],
        on_schema_change='fail',
    ) }}
{% endmacro %}

{#
    resolved_batches(record_kind, watermark): the ingest batches (a list of ints) that hold a
    staging row of that record_kind resolved after watermark: the batch partitions a silver
    model rewrites in an incremental run. Read with run_query, so the model's filter is a
    literal list and Spark prunes the staging tables' partitions with it.
#}
{% macro resolved_batches(record_kind, watermark) %}
    {% if not execute %}
        {{ return([]) }}
    {% endif %}
    {% set result = run_query(
        'select distinct ingest_batch_id from (' ~ staging_events(record_kind)
        ~ ') where resolved_batch_id > ' ~ watermark ~ ' order by 1'
    ) %}
    {{ return(result.columns[0].values() | map('int') | list) }}
{% endmacro %}

{# batch_filter(batches): a where-clause condition keeping the rows of those batches #}
{% macro batch_filter(batches, column='ingest_batch_id') -%}
    {%- if batches | length > 0 -%}
        {{ column }} in ({{ batches | join(', ') }})
    {%- else -%}
        false
    {%- endif -%}
{%- endmacro %}

{#
    has_rows(relation, condition): true when relation holds a row where condition (Spark SQL)
    is true. Read at run time with run_query (a single exists query, which reads only the
    columns condition names), so a model can leave out SQL that would find nothing. True
    while parsing and when the relation does not exist yet (dbt compile on an empty lake):
    then the model keeps the SQL that handles such rows.
#}
{% macro has_rows(relation, condition) %}
    {% if not execute or load_relation(relation) is none %}
        {{ return(true) }}
    {% endif %}
    {% set result = run_query(
        'select exists(select 1 from ' ~ relation ~ ' where ' ~ condition ~ ') as found'
    ) %}
    {{ return(result.columns[0].values()[0] | string | lower == 'true') }}
{% endmacro %}
