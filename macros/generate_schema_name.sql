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

{#
    cdc_target_schemas(): every schema this target writes (a sorted list, lowercase): its
    nodes' (models, seeds, tests), the hooks' (cdc_schema('silver')) and the target's own. What
    the clean-up of interrupted writes looks at (macros/cdc_interrupted_writes.sql) and what
    drop_target_schemas drops (macros/cdc_target_schemas.sql).
#}
{% macro cdc_target_schemas() %}
    {% set schemas = [cdc_schema('silver') | lower, target.schema | trim | lower] %}
    {% for node in graph.nodes.values() %}
        {% do schemas.append(node.schema | lower) %}
    {% endfor %}
    {{ return(schemas | unique | sort) }}
{% endmacro %}
