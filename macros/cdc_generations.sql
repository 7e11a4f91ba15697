{#
    Readers never see a half-written table (issue 21).

    Spark's dynamic partition overwrite (dbt-spark's insert_overwrite on Parquet) deletes each
    old partition directory and renames the new one in, one partition after the other: a query
    that listed the files before fails on a missing file or misses a partition. On Parquet,
    every incremental model with incremental_strategy='insert_overwrite' and partition_by is
    instead written as a new generation beside the old data and switched in with one metastore
    call (cdc_lakehouse.generations, through the adapter's write_generation):

    1. the run's rows (dbt's __dbt_tmp view) are written under
       <table dir>/_generations/<generation>/<col>=<value>/;
    2. partitions the table lacks are added pointing at empty directories (no row visible);
    3. one alterPartitions call (one Hive alter_partitions transaction) points every written
       partition at its generation directory, and every partition the run must empty at an
       empty one;
    4. refresh table.

    A query planned before the switch reads the old generation whole (its files are kept for
    var('cdc_reader_grace_s') seconds after the switch), one planned after it the new one. A
    write killed at any point leaves the table as it was: such models need no interrupted-
    write bracket (mark_write_started skips them). Delta keeps dbt-spark's path: its commit
    is atomic already.

    Not covered: `--full-refresh` and a model's first build drop and create the table (readers
    get an error while it runs), and `table` models are dropped and created on every run.
#}

{#
    writes_generations(): true when the current model is written by generation switches.
    var('cdc_generation_writes') decides; unset, it is on with a shared metastore
    (CDC_METASTORE_JDBC_URL: other processes can read while dbt writes) and off with the
    embedded Derby one, where no other process can read the lake during a build, so the
    switch would only add its cost (about 1.5-2 s per write).
#}
{% macro generation_writes_enabled() %}
    {% set chosen = var('cdc_generation_writes', none) %}
    {% if chosen is none %}
        {{ return(env_var('CDC_METASTORE_JDBC_URL', '') != '') }}
    {% endif %}
    {{ return(chosen in [true, 'true', 'True', 1]) }}
{% endmacro %}

{% macro writes_generations() %}
    {{ return(
        execute
        and generation_writes_enabled()
        and model.config.materialized == 'incremental'
        and (config.get('incremental_strategy') or 'append') == 'insert_overwrite'
        and config.get('partition_by')
        and config.get('file_format', 'parquet') not in ['delta', 'iceberg', 'hudi']
    ) }}
{% endmacro %}

{#
    get_insert_overwrite_sql, overriding dbt-spark's (called by its incremental
    materialization on an existing table, after the __dbt_tmp relation was created): for a
    model that writes_generations(), write and switch the generation here (the partitions of
    late_batch_partitions() emptied for a model with config empties_late_batches), and return
    the statement that ends the write (refresh table, done already: harmless); otherwise
    dbt-spark's insert overwrite.
#}
{% macro get_insert_overwrite_sql(source_relation, target_relation, existing_relation) %}
    {%- if writes_generations() -%}
        {%- set emptied = late_batch_partitions() if config.get('empties_late_batches') else [] -%}
        {%- set switch = adapter.write_generation(
            source_relation | string,
            target_relation.schema,
            target_relation.identifier,
            emptied,
            var('cdc_reader_grace_s'),
        ) -%}
        {{ log(
            target_relation ~ ': generation ' ~ switch['generation'] ~ ', '
            ~ switch['written'] ~ ' partitions written (' ~ switch['added'] ~ ' new), '
            ~ switch['emptied'] ~ ' emptied, ' ~ switch['removed'] ~ ' old directories removed'
        ) }}
        refresh table {{ target_relation }}
    {%- else -%}
        {#- dbt-spark 1.11's get_insert_overwrite_sql (its macros have no namespace to call) -#}
        {%- set dest_columns = adapter.get_columns_in_relation(target_relation) -%}
        {%- set dest_cols_csv = dest_columns | map(attribute='quoted') | join(', ') -%}
        {% if existing_relation.is_iceberg %}
            insert overwrite {{ target_relation }}
        {% else %}
            insert overwrite table {{ target_relation }}
            {{ partition_cols(label="partition") }}
        {% endif %}
        select {{ dest_cols_csv }} from {{ source_relation }}
    {%- endif -%}
{% endmacro %}

{#
    spark__create_view_as, overriding dbt-spark's: an existing view is changed with one
    `alter view ... as` (one metastore call) instead of `create or replace view`, which Spark
    runs as a drop and a create - a query between the two fails (TABLE_OR_VIEW_NOT_FOUND).
    A view with an enforced contract is checked first (dbt's get_assert_columns_equivalent: a
    mismatch fails the model before the view changes). A new view, or one with column docs,
    takes dbt-spark's SQL (copied: the adapter's macros cannot be called by a namespace).
#}
{% macro spark__create_view_as(relation, sql) -%}
    {%- set existing = load_relation(relation) -%}
    {%- if existing is not none and existing.is_view and not config.persist_column_docs() -%}
        {%- if config.get('contract').enforced -%}
            {{ get_assert_columns_equivalent(sql) }}
        {%- endif %}
        alter view {{ relation }} as
        {{ sql }}
    {%- else -%}
        {#- dbt-spark 1.11's spark__create_view_as -#}
        create or replace view {{ relation }}
        {% if config.persist_column_docs() -%}
            {% set model_columns = model.columns %}
            {% set query_columns = get_columns_in_query(sql) %}
            (
            {{ get_persist_docs_column_list(model_columns, query_columns) }}
            )
        {% endif %}
        {{ comment_clause() }}
        {%- set contract_config = config.get('contract') -%}
        {%- if contract_config.enforced -%}
            {{ get_assert_columns_equivalent(sql) }}
        {%- endif %}
        as
            {{ sql }}
    {%- endif -%}
{%- endmacro %}
