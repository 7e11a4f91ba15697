{#
    The incremental materialization (dbt-spark 1.11's, overridden) for one change: on an
    existing table, a Python model's DataFrame becomes a temporary view of the session
    (py_temporary_view below), as a SQL model's query does, instead of a
    table `<schema>.<model>__dbt_tmp` written with saveAsTable. The sparksession adapter runs
    Python models in dbt's own session, so the view is there for the insert that follows.

    dbt-spark writes that table because its other submission methods run the model on a
    cluster: here it was a second write and read of the run's rows (and a table created and
    dropped in the metastore) on every incremental run, about a second per model even with
    nothing to decode. The rows the insert writes are the same: the view is the model's
    DataFrame, evaluated once, by the insert. The rest is dbt-spark 1.11's body, unchanged
    (the first build and --full-refresh write the table directly, as before).

    And a strategy dbt-spark lacks, replace_where (the name dbt-databricks gives it): Delta's
    `insert into <table> replace where <predicate> select ...`, one commit that replaces every
    row matching the predicate with the run's rows - the run may leave a batch with fewer rows
    or none (silver.quarantine, whose records can leave it), which an insert overwrite of
    partitions, replacing only the partitions the run writes, cannot. The predicate is the
    run's own (computed while the model compiles), so the model's SQL says it with macro
    replace_where(predicate) (macros/cdc_incremental.sql); Delta checks every written row
    against it.

    And one more: an incremental run with nothing new writes nothing - no hooks, no insert of
    no rows (on Delta an empty commit); its result says "nothing new". It cost 0.3-0.5 s per
    model of a format without new records, 2-8 s per gold MERGE of no rows. A SQL model says so
    by its query, no_new_rows() (macros/cdc_incremental.sql; no temporary view either), or, with
    an enforced contract, its whole query with nothing_new_marker(): the contract is checked on
    that query all the same (check_contract_before_write); a Python
    model by a session configuration key its run sets (python_found_nothing_new below;
    cdc_lakehouse.decode.incremental.report_nothing_new), so its code runs first, before the
    pre-hooks: it only defines the temporary view, which the insert evaluates. A model that is
    up to date (macro up_to_date, macros/cdc_test_scope.sql: no bronze record since the
    recorded build, of the same project files and vars) writes nothing either, without a
    query: a Python model's code is not even run, the contract is not checked again.
#}
{% materialization incremental, adapter='spark', supported_languages=['sql', 'python'] -%}
  {#-- Validate early so we don't run SQL if the file_format + strategy combo is invalid --#}
  {%- set raw_file_format = config.get('file_format', default='parquet') -%}
  {%- set raw_strategy = config.get('incremental_strategy') or 'append' -%}
  {%- set grant_config = config.get('grants') -%}

  {%- set file_format = dbt_spark_validate_get_file_format(raw_file_format) -%}
  {#-- cdc_lakehouse: replace_where (below), on Delta; the others as dbt-spark validates them --#}
  {%- if raw_strategy == 'replace_where' and file_format == 'delta' -%}
    {%- set strategy = 'replace_where' -%}
  {%- else -%}
    {%- set strategy = dbt_spark_validate_get_incremental_strategy(raw_strategy, file_format) -%}
  {%- endif -%}

  {#-- Set vars --#}

  {%- set unique_key = config.get('unique_key', none) -%}
  {%- set partition_by = config.get('partition_by', none) -%}
  {%- set language = model['language'] -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set incremental_predicates = config.get('predicates', none) or config.get('incremental_predicates', none) -%}
  {%- set target_relation = this -%}
  {%- set existing_relation = load_relation(this) -%}
  {% set tmp_relation = this.incorporate(path = {"identifier": this.identifier ~ '__dbt_tmp'}) -%}

  {#-- cdc_lakehouse: a temporary view for Python models too (no database and schema) --#}
  {%- set tmp_relation = tmp_relation.include(database=false, schema=false) -%}

  {#-- Set Overwrite Mode --#}
  {%- if strategy in ['insert_overwrite', 'microbatch'] and partition_by -%}
    {%- call statement() -%}
      set spark.sql.sources.partitionOverwriteMode = DYNAMIC
    {%- endcall -%}
  {%- endif -%}

  {#-- cdc_lakehouse: an incremental run with nothing new writes nothing --#}
  {%- set merging = (
    existing_relation is not none and not existing_relation.is_view and not should_full_refresh()
  ) -%}
  {%- set nothing_to_write = merging and (
    up_to_date() or (language == 'sql' and nothing_new_marker() in compiled_code)
  ) -%}
  {%- set python_view = merging and language == 'python' and not nothing_to_write -%}
  {%- if python_view -%}
    {#-- the model's DataFrame first (nothing is written yet): the model tells whether it
         found anything new --#}
    {%- call statement('create_tmp_relation', language=language) -%}
      {{ py_temporary_view(compiled_code, tmp_relation.identifier) }}
    {%- endcall -%}
    {%- set nothing_to_write = python_found_nothing_new() -%}
  {%- endif -%}

  {#-- Run pre-hooks --#}
  {%- if not nothing_to_write -%}
    {{ run_hooks(pre_hooks) }}
  {%- endif -%}

  {#-- Incremental run logic --#}
  {%- if nothing_to_write -%}
    {#-- cdc_lakehouse: the contract is checked all the same (a model with an enforced
         contract keeps its whole query beside the marker: macro nothing_new_marker) --#}
    {#-- (not when up to date: the recorded build checked this same model file) --#}
    {%- if not up_to_date() -%}
      {{ check_contract_before_write() }}
    {%- endif -%}
    {%- call noop_statement('main', 'nothing new') -%}
      {{ compiled_code }}
    {%- endcall -%}
  {%- elif existing_relation is none -%}
    {#-- Relation must be created --#}
    {%- call statement('main', language=language) -%}
      {{ create_table_as(False, target_relation, compiled_code, language) }}
    {%- endcall -%}
    {% do persist_constraints(target_relation, model) %}
  {%- elif existing_relation.is_view or should_full_refresh() -%}
    {#-- Relation must be dropped & recreated --#}
    {% set is_delta = (file_format == 'delta' and existing_relation.is_delta) %}
    {% if not is_delta %} {#-- If Delta, we will `create or replace` below, so no need to drop --#}
      {% do adapter.drop_relation(existing_relation) %}
    {% endif %}
    {%- call statement('main', language=language) -%}
      {{ create_table_as(False, target_relation, compiled_code, language) }}
    {%- endcall -%}
    {% do persist_constraints(target_relation, model) %}
  {%- else -%}
    {#-- Relation must be merged (a Python model's temporary view exists already) --#}
    {%- if language == 'sql' -%}
      {%- call statement('create_tmp_relation', language=language) -%}
        {{ create_table_as(True, tmp_relation, compiled_code, language) }}
      {%- endcall -%}
    {%- endif -%}
    {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
    {%- call statement('main') -%}
      {%- if strategy == 'replace_where' -%}
        {{ get_replace_where_sql(tmp_relation, target_relation, compiled_code) }}
      {%- else -%}
        {{ dbt_spark_get_incremental_sql(strategy, tmp_relation, target_relation, existing_relation, unique_key, incremental_predicates) }}
      {%- endif -%}
    {%- endcall -%}
  {%- endif -%}

  {#-- a Python model's temporary view, written from or not --#}
  {%- if python_view -%}
    {% call statement('drop_relation') -%}
      drop view if exists {{ tmp_relation }}
    {%- endcall %}
  {%- endif -%}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}

  {% do persist_docs(target_relation, model) %}

  {%- if not nothing_to_write -%}
    {{ run_hooks(post_hooks) }}
  {%- endif -%}

  {{ return({'relations': [target_relation]}) }}

{%- endmaterialization %}

{#
    python_found_nothing_new(): true when the Python model just run set its session key
    cdc_lakehouse.nothing_new.<schema>.<table> to "true" (cdc_lakehouse.decode.incremental.
    report_nothing_new: its run found no new record to append). A model that never sets it
    (any other Python model) is written as dbt-spark writes it.
#}
{% macro python_found_nothing_new() %}
    {% set key = 'cdc_lakehouse.nothing_new.' ~ this.schema ~ '.' ~ this.identifier %}
    {% set found = run_query('set ' ~ key) %}
    {{ return(found.columns[1].values()[0] | string == 'true') }}
{% endmacro %}

{#
    py_temporary_view(compiled_code, view_name): a Python model's code that leaves its
    DataFrame as the temporary view view_name of the session (the sparksession adapter runs
    Python models in dbt's own session, so the view outlives the model's code).
#}
{% macro py_temporary_view(compiled_code, view_name) %}
{{ compiled_code }}
# --- cdc_lakehouse: the model's DataFrame as a temporary view (macros/cdc_incremental_materialization.sql) --- #
dbt = dbtObj(spark.table)
df = model(dbt, spark)
df.createOrReplaceTempView("{{ view_name }}")
{% endmacro %}

{#
    get_replace_where_sql(source, target, compiled_code): the replace_where statement of the
    predicate the model's SQL names (macro replace_where); a model without it fails to compile.
#}
{% macro get_replace_where_sql(source, target, compiled_code) %}
    {%- set found = modules.re.search(replace_where_pattern(), compiled_code) -%}
    {%- if not found -%}
        {% do exceptions.raise_compiler_error(
            model.name ~ ": incremental_strategy replace_where needs its predicate in the SQL: "
            ~ "{{ replace_where('<predicate>') }}"
        ) %}
    {%- endif -%}
    {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | join(', ') -%}
    insert into {{ target }} replace where {{ found.group(1) }}
    select {{ columns }} from {{ source }}
{% endmacro %}
