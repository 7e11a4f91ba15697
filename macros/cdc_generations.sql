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

    `table` models (unpartitioned) are switched whole: see the table materialization below.
    Not covered: `--full-refresh` of an incremental model and a model's first build drop and
    create the table (readers get an error while it runs).
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

{#
    The table materialization (dbt-spark 1.11's, overridden): with generation writes on and
    an existing unpartitioned Parquet table, the model's rows are written as a new generation
    beside the table's data and the table is pointed at it with one
    `alter table .. set location` (adapter.switch_table_generation,
    cdc_lakehouse.generations.switch_table): readers see the old rows or the new ones, never
    a missing table. The model's SQL (or Python model's DataFrame) becomes a temporary view
    first; a table whose columns differ from the model's is dropped (its directory with it)
    and created from that view (readers get an error for that moment, as before). Otherwise - generation writes
    off, a first build, Delta - dbt-spark's body below: drop, then create (after removing the
    directory a dropped table that generation switches had relocated leaves behind).
#}
{% materialization table, adapter = 'spark', supported_languages=['sql', 'python'] %}
    {%- set language = model['language'] -%}
    {%- set identifier = model['alias'] -%}
    {%- set grant_config = config.get('grants') -%}
    {%- set old_relation = adapter.get_relation(
        database=database, schema=schema, identifier=identifier) -%}
    {%- set target_relation = api.Relation.create(
        identifier=identifier, schema=schema, database=database, type='table') -%}

    {{ run_hooks(pre_hooks) }}

    {%- if switches_table_generations(old_relation) -%}
        {%- set view_name = identifier ~ '__dbt_generation' -%}
        {%- call statement('main', language=language) -%}
            {%- if language == 'python' -%}
                {{ py_temporary_view(compiled_code, view_name) }}
            {%- else -%}
                {%- if config.get('contract').enforced -%}
                    {{ get_assert_columns_equivalent(compiled_code) }}
                {%- endif %}
                create or replace temporary view `{{ view_name }}` as
                {{ compiled_code }}
            {%- endif -%}
        {%- endcall -%}
        {%- set switch = adapter.switch_table_generation(
            view_name, schema, identifier, var('cdc_reader_grace_s')) -%}
        {%- if switch['switched'] -%}
            {{ log(target_relation ~ ': generation ' ~ switch['generation'] ~ ', '
                   ~ switch['removed'] ~ ' old directories removed') }}
        {%- else -%}
            {{ log(target_relation ~ ': columns changed, dropped and created') }}
            {%- call statement('create_from_generation_view') -%}
                {{ create_table_as(False, target_relation, 'select * from `' ~ view_name ~ '`') }}
            {%- endcall -%}
        {%- endif -%}
        {%- call statement('drop_generation_view') -%}
            drop view if exists `{{ view_name }}`
        {%- endcall -%}
    {%- else -%}
        {#- dbt-spark 1.11's table materialization -#}
        {% if old_relation is not none %}
            {% set is_delta = (old_relation.is_delta and config.get('file_format', validator=validation.any[basestring]) == 'delta') %}
            {% set is_iceberg = (old_relation.is_iceberg and config.get('file_format', validator=validation.any[basestring]) == 'iceberg') %}
            {% set old_relation_type = old_relation.type %}
        {% else %}
            {% set is_delta = false %}
            {% set is_iceberg = false %}
            {% set old_relation_type = target_relation.type %}
        {% endif %}
        {% if not is_delta and not is_iceberg %}
            {% set existing_relation = target_relation %}
            {{ adapter.drop_relation(existing_relation.incorporate(type=old_relation_type)) }}
            {#- a table that generation switches relocated leaves its directory when dropped -#}
            {% do adapter.remove_dropped_table_dir(schema, identifier) %}
        {% endif %}
        {%- call statement('main', language=language) -%}
            {{ create_table_as(False, target_relation, compiled_code, language) }}
        {%- endcall -%}
    {%- endif -%}

    {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
    {% do apply_grants(target_relation, grant_config, should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {% do persist_constraints(target_relation, model) %}
    {{ run_hooks(post_hooks) }}
    {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

{#
    switches_table_generations(old_relation): true when a table model's run replaces an
    existing unpartitioned Parquet table by a generation switch.
#}
{% macro switches_table_generations(old_relation) %}
    {{ return(
        execute
        and generation_writes_enabled()
        and old_relation is not none
        and old_relation.is_table
        and not config.get('partition_by')
        and config.get('file_format', 'parquet') not in ['delta', 'iceberg', 'hudi']
        and not old_relation.is_delta
        and not old_relation.is_iceberg
    ) }}
{% endmacro %}

{#
    py_temporary_view(compiled_code, view_name): a Python model's code that leaves its
    DataFrame as the temporary view view_name of the session (the sparksession adapter runs
    Python models in dbt's own session, so the view outlives the model's code).
#}
{% macro py_temporary_view(compiled_code, view_name) %}
{{ compiled_code }}
# --- cdc_lakehouse: the model's DataFrame as a temporary view (macros/cdc_generations.sql) --- #
dbt = dbtObj(spark.table)
df = model(dbt, spark)
df.createOrReplaceTempView("{{ view_name }}")
{% endmacro %}
