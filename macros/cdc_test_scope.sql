{#
    Data tests of an incremental build check the batches that build added, not the whole
    history again (issue 20: a scheduled build should cost what its new data costs).

    - After a `dbt build` of the whole project (no --select / --exclude / --selector /
      --resource-type / --exclude-resource-type but `--exclude-resource-type unit_test`:
      unit tests read fixed rows, not the lake) in which every node succeeded,
      record_tested_batches (on-run-end) replaces the view silver.cdc_tested_batches (one row
      of literals, like the bronze pin: reading it starts no Spark job) with the bronze ingest
      batch the build pinned when it started (macros/cdc_bronze_pin.sql): every record up to
      it went through every model and passed every test.
    - A generic data test of a later run then reads only the rows of its model resolved after
      that batch (get_where_subquery below): coalesce(resolved_batch_id, ingest_batch_id),
      resolved_batch_id, last_resolved_batch_id or ingest_batch_id, the first the model
      declares in its YAML. A model with none of them (a view over the whole state, a seed)
      is tested whole.
    - Every test reads everything on --full-refresh, with --vars '{cdc_full_tests: true}', or
      when no build has been recorded yet. A failed or partial build records nothing, so the
      next build tests its batches again.
    - Singular tests (tests/dbt/*.sql) are not scoped: the accounting check,
      assert_every_bronze_record_accounted_for, covers every bronze record on every run.
    - The record also keeps the build's built_state (the project's files and vars). A build
      with no new bronze record since the recorded build, of the same built_state
      (build_up_to_date) has nothing to test: every data test passes as it passed then,
      without a query on its model (spark__get_test_sql below), and the models write nothing.
#}

{% macro tested_batches_table() -%}
    {{ cdc_schema('silver') }}.cdc_tested_batches
{%- endmacro %}

{# the relation silver.cdc_tested_batches as dbt's relation cache holds it, or none #}
{% macro held_tested_batches() %}
    {{ return(adapter.get_relation(
        database=none, schema=cdc_schema('silver'), identifier='cdc_tested_batches'
    )) }}
{% endmacro %}

{# on-run-end: record the bronze batch a successful whole-project build covered, and its state #}
{% macro record_tested_batches(results) %}
    {% if not execute or flags.WHICH != 'build' %}
        {{ return('') }}
    {% endif %}
    {% set excluded_types = invocation_args_dict.get('exclude_resource_types') or [] %}
    {% if invocation_args_dict.get('select') or invocation_args_dict.get('exclude')
        or invocation_args_dict.get('selector') or invocation_args_dict.get('resource_types')
        or excluded_types | reject('equalto', 'unit_test') | list | length > 0 %}
        {{ return('') }}
    {% endif %}
    {% for result in results %}
        {% if result.status not in ['success', 'pass', 'warn'] %}
            {{ return('') }}
        {% endif %}
    {% endfor %}
    {% set pinned = run_query('select bronze_batch_id from ' ~ bronze_pin_table()
        ~ " where invocation_id = '" ~ invocation_id ~ "'").columns[0].values() %}
    {% if pinned | length == 0 or pinned[0] is none or pinned[0] < 0 %}
        {{ return('') }}
    {% endif %}
    {% do run_query(
        'create or replace view ' ~ tested_batches_table() ~ ' as select cast('
        ~ pinned[0] | int ~ " as bigint) as tested_through_batch_id, timestamp'"
        ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f') ~ "' as build_started_at, '"
        ~ invocation_id ~ "' as invocation_id, '" ~ built_state() ~ "' as built_state"
    ) %}
    {{ return('') }}
{% endmacro %}

{#
    built_state(): what a build's tables are a function of besides bronze, as an md5 (the
    adapter's project_state: the files of the project's models, macros, seeds, tests and
    dbt_project.yml, the cdc_lakehouse package's source, the source of the project's JVM
    functions (jvm/exact-json/src), the --vars and the target's schema).
    Two invocations with the same built_state build the same tables from the same records.
#}
{% macro built_state() %}
    {{ return(adapter.project_state(invocation_id)) }}
{% endmacro %}

{#
    tested_batches_as_view(): on-run-start (macros/cdc_bronze_pin.sql): a lake that recorded
    its builds in a Delta table (before 2026-12-06) keeps its newest record as the view, with
    no built_state (nothing is up to date until the next recorded build); the table goes.
#}
{% macro tested_batches_as_view() %}
    {% set held = held_tested_batches() %}
    {% if held is none or held.type == 'view' %}
        {{ return('') }}
    {% endif %}
    {% set newest = run_query(
        'select tested_through_batch_id, build_started_at, invocation_id from ' ~ held
        ~ ' order by tested_through_batch_id desc, build_started_at desc limit 1'
    ).rows %}
    {% do run_query('drop table ' ~ held) %}
    {% if newest | length > 0 %}
        {% do run_query(
            'create or replace view ' ~ tested_batches_table() ~ ' as select cast('
            ~ newest[0][0] | int ~ " as bigint) as tested_through_batch_id, timestamp'"
            ~ newest[0][1] ~ "' as build_started_at, '" ~ newest[0][2]
            ~ "' as invocation_id, cast(null as string) as built_state"
        ) %}
    {% endif %}
    {{ return('') }}
{% endmacro %}

{#
    build_up_to_date(): true in a `dbt run` or `dbt build` (no --full-refresh) when the recorded
    build had this invocation's built_state and covered the bronze batch this invocation pinned:
    no record has come since, and every model, seed and test is as that build ran it, and it
    succeeded. Every table would come out as it is, every test would pass as it passed. Then
    - an incremental model on its existing table is up to date (macro up_to_date): it asks
      nothing and writes nothing ("nothing new");
    - a table model's existing table is not rebuilt ("unchanged",
      macros/cdc_table_materialization.sql);
    - a data test passes as it passed then, without a query on its model (spark__get_test_sql
      below).
    One query per invocation (adapter.invocation_scalar) of the two bookkeeping views: no Spark
    job, no file read.
    What it cannot see, as an incremental run cannot either: a table changed by hand under the
    project (then run with --full-refresh, or --vars '{cdc_full_tests: true}' to test all).
#}
{% macro build_up_to_date() %}
    {% if not execute or flags.WHICH not in ['run', 'build'] or flags.FULL_REFRESH
        or var('cdc_full_tests', false) %}
        {{ return(false) }}
    {% endif %}
    {% set relation = held_tested_batches() %}
    {% if relation is none %}
        {{ return(false) }}
    {% endif %}
    {% set found = adapter.invocation_scalar(
        invocation_id,
        'select exists(select 1 from ' ~ relation ~ " where built_state = '" ~ built_state()
        ~ "' and tested_through_batch_id >= " ~ pinned_bronze_batch() ~ ')'
    ) %}
    {{ return(found | string | lower == 'true') }}
{% endmacro %}

{#
    up_to_date(): while compiling or running an incremental model on its existing table (dbt's
    is_incremental()) in an up-to-date build (build_up_to_date): the model holds every record
    it can hold. Its watermark queries (held_max of its own table, nothing_new_in,
    resolved_batches, batches_resolved_after, late_resolved_batches) then answer "nothing"
    without asking Spark, and the incremental materialization writes nothing.
#}
{% macro up_to_date() %}
    {{ return(
        execute and model.resource_type == 'model' and is_incremental() and build_up_to_date()
    ) }}
{% endmacro %}

{# the batch expression of a tested node (by its YAML columns), or none #}
{% macro test_batch_expression(node) %}
    {% set columns = node.columns.keys() | list if node is not none else [] %}
    {% if 'resolved_batch_id' in columns and 'ingest_batch_id' in columns %}
        {{ return('coalesce(resolved_batch_id, ingest_batch_id)') }}
    {% endif %}
    {% for column in ['resolved_batch_id', 'last_resolved_batch_id', 'ingest_batch_id'] %}
        {% if column in columns %}
            {{ return(column) }}
        {% endif %}
    {% endfor %}
    {{ return(none) }}
{% endmacro %}

{#
    recorded_batch(): the bronze batch the last recorded whole-project build covered (every
    model ran on every record up to it, every test passed), as an int read once per invocation
    (adapter.invocation_scalar); none before the first record (no silver.cdc_tested_batches)
    and while parsing. Also a watermark: macro read_through.
#}
{% macro recorded_batch() %}
    {% if not execute %}
        {{ return(none) }}
    {% endif %}
    {% set relation = held_tested_batches() %}
    {% if relation is none %}
        {{ return(none) }}
    {% endif %}
    {{ return(adapter.invocation_scalar(
        invocation_id, 'select coalesce(max(tested_through_batch_id), -1) from ' ~ relation
    ) | int) }}
{% endmacro %}

{#
    the batch the data tests are scoped by, as a literal (recorded_batch: each test's filter on
    it lets Delta skip the files of older batches by their statistics, where a scalar subquery
    ran again in every test and skipped nothing), or none: nothing recorded, --full-refresh or
    var cdc_full_tests (test everything)
#}
{% macro tested_through_batch() %}
    {% if not execute or flags.FULL_REFRESH or var('cdc_full_tests', false) %}
        {{ return(none) }}
    {% endif %}
    {% set through = recorded_batch() %}
    {{ return(none if through is none else through | string) }}
{% endmacro %}

{#
    dbt's get_where_subquery, overridden: a generic test's model, filtered by the test's own
    `where` config (dbt's behaviour) and, on an incremental build, to the rows resolved after
    the last recorded build (see the header).
#}
{% macro get_where_subquery(relation) -%}
    {% set conditions = [] %}
    {% set where = config.get('where', '') %}
    {% if where %}
        {% do conditions.append('(' ~ where ~ ')') %}
    {% endif %}
    {% set node_id = model.get('attached_node') if model is mapping else none %}
    {% set node = graph.nodes.get(node_id) if node_id else none %}
    {% set expression = test_batch_expression(node) if node is not none else none %}
    {% if expression is not none %}
        {% set through = tested_through_batch() %}
        {% if through is not none %}
            {% do conditions.append(expression ~ ' > ' ~ through) %}
        {% endif %}
    {% endif %}
    {% if conditions %}
        {% do return('(select * from ' ~ relation ~ ' where ' ~ conditions | join(' and ') ~ ') dbt_subquery') %}
    {% endif %}
    {% do return(relation) %}
{%- endmacro %}

{#
    dbt's get_test_sql for Spark, overridden: the query that counts a data test's failing rows.
    In an up-to-date build (build_up_to_date) a test's model is as the recorded build tested it
    (same records, same project files, every test passed): the query is a row of zero failures,
    which Spark answers without reading or even planning the test's own query (0.2-0.4 s per
    test, about 15 s of node time in a no-op build of the bundled sample). The compiled test
    (target/compiled) is unchanged; target/run shows what ran.
#}
{% macro spark__get_test_sql(main_sql, fail_calc, warn_if, error_if, limit) -%}
    {%- if build_up_to_date() -%}
    -- cdc_lakehouse: no record since a recorded build of this project, which passed this test
    select 0 as failures, false as should_warn, false as should_error
    {%- else -%}
    {{ default__get_test_sql(main_sql, fail_calc, warn_if, error_if, limit) }}
    {%- endif -%}
{%- endmacro %}
