{#
    Generic data test on a freshness status column (pass < warn < error, the statuses of
    `dbt source freshness`; silver.source_freshness): passes when every row's status is below
    `level` (warn or error), fails with each row at that level or worse - so a warn-severity
    node counts the stale rows at warn, an error-severity node those at error.
#}
{% test freshness_status_below(model, column_name, level) %}

{% set levels = {'warn': ['warn', 'error'], 'error': ['error']} %}
{% if level not in levels %}
    {{ exceptions.raise_compiler_error(
        'freshness_status_below: level must be warn or error, got: ' ~ level
    ) }}
{% endif %}

select *
from {{ model }}
where {{ column_name }} in ('{{ levels[level] | join("', '") }}')

{% endtest %}
