{#
    Data tests of an incremental build check the batches that build added, not the whole
    history again (issue 20: a scheduled build should cost what its new data costs).

    - After a `dbt build` of the whole project (no --select / --exclude / --selector /
      --resource-type / --exclude-resource-type but `--exclude-resource-type unit_test`:
      unit tests read fixed rows, not the lake) in which every node succeeded,
      record_tested_batches (on-run-end) appends to silver.cdc_tested_batches the bronze
      ingest batch the build pinned when it started (macros/cdc_bronze_pin.sql): every record
      up to it went through every model and passed every test.
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
#}

{% macro tested_batches_table() -%}
    {{ cdc_schema('silver') }}.cdc_tested_batches
{%- endmacro %}

{# on-run-end: record the newest bronze batch a successful whole-project build covered #}
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
    {% do run_query(
        'create table if not exists ' ~ tested_batches_table()
        ~ ' (tested_through_batch_id bigint, build_started_at timestamp, invocation_id string)'
        ~ ' using delta'
    ) %}
    {% do run_query(
        'insert into ' ~ tested_batches_table()
        ~ " select bronze_batch_id, timestamp'" ~ run_started_at.strftime('%Y-%m-%d %H:%M:%S.%f')
        ~ "', '" ~ invocation_id ~ "' from " ~ bronze_pin_table()
        ~ " where invocation_id = '" ~ invocation_id ~ "' and bronze_batch_id >= 0"
    ) %}
    {{ return('') }}
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
    recorded_batch(): the newest bronze batch a recorded whole-project build covered (every
    model ran on every record up to it, every test passed), as an int read once per invocation
    (adapter.invocation_scalar), -1 when the table holds no row; none before the first record
    (no silver.cdc_tested_batches) and while parsing. Also a watermark: macro read_through.
#}
{% macro recorded_batch() %}
    {% if not execute %}
        {{ return(none) }}
    {% endif %}
    {% set relation = adapter.get_relation(
        database=none, schema=cdc_schema('silver'), identifier='cdc_tested_batches'
    ) %}
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
