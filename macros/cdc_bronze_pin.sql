{#
    One bronze snapshot per build. The ingest job may add bronze batches while a build runs
    (with a shared metastore, issue 21); every model of one build must see the same records,
    or the accounting check and the watermarks would disagree between models.

    pin_bronze_batches (on-run-start of `dbt run` and `dbt build`) records the newest ingest
    batch in bronze.kafka_records when the command starts in the view silver.cdc_bronze_pin;
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

{#
    on-run-start: pin the newest bronze batch for this run or build. The pin is a view of one
    row of literals (bronze_batch_id, pinned_at, invocation_id), replaced at each run: a
    metastore update, no table write. Each model's scalar subquery over it (pinned_bronze_batch)
    reads no file and starts no Spark job: over the Delta table it was before, each of the
    about 50 subqueries of an incremental build ran a job on the table's state (about 0.1 s
    each), and the pin's first Delta write took about 5 s of every build's start.
#}
{% macro pin_bronze_batches() %}
    {% if not execute or flags.WHICH not in ['run', 'build'] %}
        {{ return('') }}
    {% endif %}
    {% set bronze = source('bronze', 'kafka_records') %}
    {% do run_query('create schema if not exists ' ~ cdc_schema('silver')) %}
    {% set held = adapter.get_relation(
        database=none, schema=cdc_schema('silver'), identifier='cdc_bronze_pin'
    ) %}
    {% do tested_batches_as_view() %}
    {% if held is not none and held.type != 'view' %}
        {# a lake pinned before the pin became a view: its Delta table gives way #}
        {% do run_query('drop table ' ~ bronze_pin_table()) %}
    {% endif %}
    {# no bronze table yet: no batch pinned (NULL), an empty one: -1 #}
    {% set batch = held_max('ingest_batch_id', bronze) if load_relation(bronze) is not none
        else 'null' %}
    {% do run_query(
        'create or replace view ' ~ bronze_pin_table() ~ ' as select cast(' ~ batch
        ~ " as bigint) as bronze_batch_id, timestamp'"
        ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "' as pinned_at, '"
        ~ invocation_id ~ "' as invocation_id"
    ) %}
    {{ return('') }}
{% endmacro %}

{# the pinned batch as a scalar subquery (NULL before the first run: no record) #}
{% macro pinned_bronze_batch() -%}
    (select max(bronze_batch_id) from {{ bronze_pin_table() }})
{%- endmacro %}
