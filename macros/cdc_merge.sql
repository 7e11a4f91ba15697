{#
    spark__get_merge_sql, overriding dbt-spark 1.11's (its merge incremental strategy on Delta:
    `merge into <table> using <the run's rows> on <unique_key> when matched then update set *
    when not matched then insert *`) in two ways; with neither config set and non-null keys it
    is dbt-spark's statement:

    - the unique_key columns match null-safely (`<=>`): the row identity of gold's models has
      nullable parts (source_database, source_schema), and with `=` a row whose key holds a
      NULL never matches its stored row, so a run would insert it again beside it;
    - config merge_delete_condition (SQL over DBT_INTERNAL_SOURCE): a run's row for which it
      is true deletes the stored row of its key (and is never inserted). The gold models
      recompute the identities a batch touched and emit, for an identity that has no row any
      more (a row that left gold.current_rows, a version that left gold.row_history, an
      identity retracted when its key was learned), a row of its key whose condition holds:
      one MERGE - one Delta commit - updates, inserts and deletes what the batch changed.

    The statement is Delta's MERGE INTO (docs.delta.io, "Upsert into a table using merge"):
    `update set *` / `insert *` take the target's columns by name from the run's rows.
#}
{% macro spark__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
    {%- set predicates = [] if incremental_predicates is none else [] + incremental_predicates -%}
    {%- set dest_columns = adapter.get_columns_in_relation(target) -%}
    {%- set merge_update_columns = config.get('merge_update_columns') -%}
    {%- set merge_exclude_columns = config.get('merge_exclude_columns') -%}
    {%- set update_columns = get_merge_update_columns(
        merge_update_columns, merge_exclude_columns, dest_columns
    ) -%}
    {%- set delete_condition = config.get('merge_delete_condition') -%}
    {%- if unique_key -%}
        {%- set keys = [unique_key] if unique_key is string else unique_key -%}
        {%- for key in keys -%}
            {%- do predicates.append(
                'DBT_INTERNAL_SOURCE.' ~ key ~ ' <=> DBT_INTERNAL_DEST.' ~ key
            ) -%}
        {%- endfor -%}
    {%- else -%}
        {%- do predicates.append('FALSE') -%}
    {%- endif -%}

    {{ sql_header if sql_header is not none }}

    merge into {{ target }} as DBT_INTERNAL_DEST
    using {{ source }} as DBT_INTERNAL_SOURCE
    on {{ predicates | join('\n        and ') }}
    {%- if delete_condition %}
    when matched and ({{ delete_condition }}) then delete
    {%- endif %}
    when matched then update set
    {%- if update_columns %}
        {%- for column_name in update_columns %}
        {{ column_name }} = DBT_INTERNAL_SOURCE.{{ column_name }}{{ ',' if not loop.last }}
        {%- endfor %}
    {%- else %} *
    {%- endif %}
    when not matched {%- if delete_condition %} and not ({{ delete_condition }}){% endif %} then insert *
{% endmacro %}
