{#
    Generic data test: none of `column_names` holds a NULL in the model. One query for all of
    a model's not-null columns (a dbt test node costs about 0.1 s of fixed Spark and dbt time,
    so one per column made most of a build's tests). Fails with one row per column that holds
    NULLs: column_name, null_rows.
#}
{% test not_null_columns(model, column_names) %}

with

null_counts as (
    select
        {% for column_name in column_names -%}
        count_if(`{{ column_name }}` is null) as `{{ column_name }}`{{ ',' if not loop.last }}
        {% endfor %}
    from {{ model }}
),

unpivoted as (
    select
        stack(
            {{ column_names | length }},
            {% for column_name in column_names -%}
            '{{ column_name }}', `{{ column_name }}`{{ ',' if not loop.last }}
            {% endfor %}
        ) as (column_name, null_rows)
    from null_counts
)

select * from unpivoted
where null_rows > 0

{% endtest %}
