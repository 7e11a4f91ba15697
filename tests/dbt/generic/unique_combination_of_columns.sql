{#
    Generic data test: the combination of `combination_of_columns` is unique in the model
    (NULLs compare equal). Fails with the duplicated combinations.
#}
{% test unique_combination_of_columns(model, combination_of_columns) %}

with

grouped as (
    select
        {{ combination_of_columns | join(', ') }},
        count(*) as n_rows
    from {{ model }}
    group by {{ combination_of_columns | join(', ') }}
)

select * from grouped
where n_rows > 1

{% endtest %}
