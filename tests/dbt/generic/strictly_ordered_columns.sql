{#
    Generic data test: on every row where both are set, `lower_column` < `upper_column`
    (e.g. an SCD2 version's valid_from_ordering_key < valid_to_ordering_key). Fails with the
    rows where it is not.
#}
{% test strictly_ordered_columns(model, lower_column, upper_column) %}

select * from {{ model }}
where {{ lower_column }} is not null
    and {{ upper_column }} is not null
    and not {{ lower_column }} < {{ upper_column }}

{% endtest %}
