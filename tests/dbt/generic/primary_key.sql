{#
    Generic data test: `key_columns` name one row of the model (no two rows share a key
    combination; NULLs compare equal) and none of `not_null_columns` holds a NULL. One query
    and one dbt node for both checks (what unique_combination_of_columns and
    not_null_columns check in two): the generated typed gold models carry one each, so a
    project with N source tables runs N of these nodes, not 2N.

    Fails with one row per broken check: check_name ('duplicated key' or 'null <column>')
    and failing_rows (key combinations held by more than one row, or rows holding NULL).
#}
{% test primary_key(model, key_columns, not_null_columns) %}

with

per_key as (
    select
        count(*) as key_rows,
        {% for column_name in not_null_columns -%}
        count_if(`{{ column_name }}` is null) as `{{ column_name }}`{{ ',' if not loop.last }}
        {% endfor %}
    from {{ model }}
    group by {% for column_name in key_columns %}`{{ column_name }}`{{ ', ' if not loop.last }}{% endfor %}
),

totals as (
    select
        count_if(key_rows > 1) as duplicated_keys,
        {% for column_name in not_null_columns -%}
        coalesce(sum(`{{ column_name }}`), 0) as `{{ column_name }}`{{ ',' if not loop.last }}
        {% endfor %}
    from per_key
),

unpivoted as (
    select
        stack(
            {{ (not_null_columns | length) + 1 }},
            'duplicated key', duplicated_keys,
            {% for column_name in not_null_columns -%}
            'null {{ column_name }}', `{{ column_name }}`{{ ',' if not loop.last }}
            {% endfor %}
        ) as (check_name, failing_rows)
    from totals
)

select * from unpivoted
where failing_rows > 0

{% endtest %}
