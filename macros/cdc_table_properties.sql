{#
    table_properties(relation): the table properties of relation, a dict of name -> value
    (both strings), read with one `show tblproperties`; empty when the table does not exist or
    while dbt parses. The project keeps three there: cdc_lakehouse.write_in_progress
    (macros/cdc_interrupted_writes.sql), cdc_lakehouse.row_buckets (macros/cdc_gold.sql) and
    cdc_lakehouse.seed_checksum (macros/cdc_seed_materialization.sql).
#}
{% macro table_properties(relation) %}
    {% if not execute or load_relation(relation) is none %}
        {{ return({}) }}
    {% endif %}
    {% set result = run_query("show tblproperties " ~ relation) %}
    {% set properties = {} %}
    {% for row in result.rows %}
        {% do properties.update({row[0]: row[1]}) %}
    {% endfor %}
    {{ return(properties) }}
{% endmacro %}
