{#
    Schemas are exactly bronze, silver and gold (docs/architecture.md): a model's +schema is used as
    it is, not prefixed with the target schema as dbt does by default.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if custom_schema_name is none -%}
        {{ target.schema | trim }}
    {%- else -%}
        {{ custom_schema_name | trim }}
    {%- endif -%}
{%- endmacro %}
