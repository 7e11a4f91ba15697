{#
    The schema of a node, per target (profiles.yml; dbt's generate_schema_name_for_env
    pattern):
    - prod: the node's +schema as it is - exactly bronze, silver and gold
      (docs/architecture.md), never prefixed.
    - any other target (dev, ci): the target's schema, then the node's +schema:
      dev_alice_silver, ci_1234_gold, ...; lowercase, every character but a-z, 0-9 and _ made
      _ (the Hive metastore's database names), so a user name such as "a.lice" still works.
    A node without +schema goes to the target's schema itself.
#}
{% macro generate_schema_name(custom_schema_name, node) -%}
    {%- if target.name == 'prod' -%}
        {{ (custom_schema_name if custom_schema_name is not none else target.schema) | trim }}
    {%- elif custom_schema_name is none -%}
        {{ cdc_safe_schema_name(target.schema) }}
    {%- else -%}
        {{ cdc_safe_schema_name(target.schema ~ '_' ~ custom_schema_name) }}
    {%- endif -%}
{%- endmacro %}

{% macro cdc_safe_schema_name(name) -%}
    {{ modules.re.sub('[^a-z0-9_]', '_', name | trim | lower) }}
{%- endmacro %}

{#
    cdc_schema(layer): the schema this target writes for layer ('bronze', 'silver', 'gold'):
    where the hooks keep their own tables (the bronze pin, the tested batches), beside the
    models of the layer.
#}
{% macro cdc_schema(layer) -%}
    {{ generate_schema_name(layer, none) }}
{%- endmacro %}
