{#
    One bronze snapshot per build. The ingest job may add bronze batches while a build runs
    (with a shared metastore, issue 21); every model of one build must see the same records,
    or the accounting check and the watermarks would disagree between models.

    pin_bronze_batches (on-run-start of `dbt run` and `dbt build`) writes the newest ingest
    batch in bronze.kafka_records when the command starts to silver.cdc_bronze_pin;
    stg_bronze__kafka_records, which every decoding model, silver.quarantine and the accounting
    check read, keeps the records up to it. Batches that land during the build are picked up
    by the next one. A bronze batch is whole once it is visible: the ingest job adds its
    partition to the metastore after its files are in place.

    Other commands (`dbt test`, `dbt show`) keep the pin of the last run or build, so they see
    what that build built.
#}

{# in the target's silver schema (macro cdc_schema): each target pins for its own builds #}
{% macro bronze_pin_table() -%}
    {{ cdc_schema('silver') }}.cdc_bronze_pin
{%- endmacro %}

{# on-run-start: pin the newest bronze batch for this run or build #}
{% macro pin_bronze_batches() %}
    {% if not execute or flags.WHICH not in ['run', 'build'] %}
        {{ return('') }}
    {% endif %}
    {% set bronze = source('bronze', 'kafka_records') %}
    {% do run_query('create schema if not exists ' ~ cdc_schema('silver')) %}
    {% do run_query(
        'create table if not exists ' ~ bronze_pin_table()
        ~ ' (bronze_batch_id bigint, pinned_at timestamp, invocation_id string) using delta'
    ) %}
    {% if load_relation(bronze) is none %}
        {{ return('') }}
    {% endif %}
    {% do run_query(
        'insert overwrite ' ~ bronze_pin_table()
        ~ ' select coalesce(max(ingest_batch_id), -1), current_timestamp(), '
        ~ "'" ~ invocation_id ~ "' from " ~ bronze
    ) %}
    {{ return('') }}
{% endmacro %}

{# the pinned batch as a scalar subquery (NULL before the first run: no record) #}
{% macro pinned_bronze_batch() -%}
    (select max(bronze_batch_id) from {{ bronze_pin_table() }})
{%- endmacro %}
