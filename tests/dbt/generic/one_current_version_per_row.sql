{#
    Generic data test for SCD2 history models: every row identity (the combination of
    `row_columns`, NULLs equal) has exactly one version with `current_column` true. Fails with
    the identities that have none or several.
#}
{% test one_current_version_per_row(model, row_columns, current_column='is_current') %}

with

identities as (
    select
        {{ row_columns | join(', ') }},
        count_if({{ current_column }}) as n_current_versions
    from {{ model }}
    group by {{ row_columns | join(', ') }}
)

select * from identities
where n_current_versions != 1

{% endtest %}
