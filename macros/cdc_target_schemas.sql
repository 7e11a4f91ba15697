{#
    drop_target_schemas(): `dbt run-operation drop_target_schemas --target ci` (make
    drop-schemas TARGET=ci): drops every schema of this target that exists
    (cdc_target_schemas: its models', seeds' and tests' schemas, the hooks') with every table in them
    (managed Delta tables: their files too), and logs each one dropped. For the end of a CI
    run (CDC_CI_RUN_ID names its schemas) and a dev environment no longer needed.

    Raises (dbt stops, nothing dropped): on target prod, and when one of those schemas is a
    source's (bronze, the ingest job's) or one of production's plain names (bronze, silver,
    gold): a target whose schemas are production's is never dropped.
#}
{% macro drop_target_schemas() %}
    {% if target.name == 'prod' %}
        {{ exceptions.raise_compiler_error(
            "drop_target_schemas: target prod holds production's schemas; pass --target dev or"
            ~ " --target ci"
        ) }}
    {% endif %}
    {% set protected = ['bronze', 'silver', 'gold'] %}
    {% for node in graph.sources.values() %}
        {% do protected.append(node.schema | lower) %}
    {% endfor %}
    {% set schemas = cdc_target_schemas() %}
    {% for schema in schemas %}
        {% if schema in protected %}
            {{ exceptions.raise_compiler_error(
                "drop_target_schemas: target " ~ target.name ~ " writes schema " ~ schema
                ~ ", which is production's; nothing dropped"
            ) }}
        {% endif %}
    {% endfor %}
    {% set existing = run_query('show schemas').columns[0].values() | map('lower') | list %}
    {% for schema in schemas %}
        {% if schema in existing %}
            {% do run_query('drop schema if exists `' ~ schema ~ '` cascade') %}
            {{ log('dropped schema ' ~ schema, info=true) }}
        {% endif %}
    {% endfor %}
{% endmacro %}
