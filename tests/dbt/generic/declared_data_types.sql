{#
    Generic data test: the model's columns are exactly the columns of its YAML, each of its
    declared data_type - what an enforced contract checks, for a model dbt cannot enforce one
    on (a dbt Python model: dbt refuses `contract: {enforced: true}` on Python models at
    parse time). Same comparison as dbt's contract (macros/cdc_contracts.sql): Spark's type of
    each column of the model's relation, and of `cast(null as <data_type>)`; no data read.

    Fails with one row per column that differs: column_name, declared_type (NULL: the table has
    a column its YAML does not declare), actual_type (NULL: a declared column is missing).
#}
{% test declared_data_types(model) %}

{% set mismatches = [] %}
{% if execute %}
    {% set declared_columns = tested_model_columns() %}
    {% set declared = {} %}
    {% if declared_columns %}
        {% for column in format_columns(get_column_schema_from_query(
            get_empty_schema_sql(declared_columns))) %}
            {% do declared.update({column['name'] | lower: column['data_type']}) %}
        {% endfor %}
    {% endif %}
    {% set actual = {} %}
    {% for column in format_columns(get_column_schema_from_query('select * from ' ~ model)) %}
        {% do actual.update({column['name'] | lower: column['data_type']}) %}
    {% endfor %}
    {% set names = declared.keys() | list %}
    {% for name in actual.keys() if name not in names %}
        {% do names.append(name) %}
    {% endfor %}
    {% for name in names %}
        {% if declared.get(name) != actual.get(name) %}
            {% do mismatches.append((name, declared.get(name), actual.get(name))) %}
        {% endif %}
    {% endfor %}
{% endif %}

with

mismatches as (
    select
        cast(null as string) as column_name,
        cast(null as string) as declared_type,
        cast(null as string) as actual_type
    {% for name, declared_type, actual_type in mismatches %}
    union all
    select
        {{ dbt.string_literal(name) }},
        {{ dbt.string_literal(declared_type) if declared_type is not none else 'null' }},
        {{ dbt.string_literal(actual_type) if actual_type is not none else 'null' }}
    {% endfor %}
)

select * from mismatches
where column_name is not null

{% endtest %}
