{#
    table_properties(relation): the table properties of relation, a dict of name -> value
    (both strings), read with one `show tblproperties`; empty when the table does not exist or
    while dbt parses. The project keeps three there: cdc_lakehouse.row_buckets (macros/cdc_gold.sql),
    cdc_lakehouse.seed_checksum (macros/cdc_seed_materialization.sql) and
    cdc_lakehouse.view_checksum (macros/cdc_view_materialization.sql).
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

{#
    holds_table_property(relation, key, value): true when relation (a table or a view) has
    table property key set to value. Read from dbt's relation cache when it lists the
    relation's properties (dbt-spark fills it with show table extended, whose information has
    a line "Table Properties: [key=value, ...]"): no query then; else one show tblproperties.
#}
{% macro holds_table_property(relation, key, value) %}
    {% set information = relation.information or '' %}
    {% set listed = key ~ '=' ~ value %}
    {{ return(
        (listed ~ ',') in information or (listed ~ ']') in information
        or table_properties(relation).get(key) == value
    ) }}
{% endmacro %}
