{#
    A table creation killed half way (kill -9, OOM, a lost machine): see
    cdc_lakehouse.runtime.interrupted_writes. Every table is a Delta table, whose writes become visible
    only with their commit, so a killed write leaves the table as its last commit left it; only
    a killed CREATE TABLE AS SELECT leaves a directory that is not a table, and Delta refuses
    to create the table there again.

    on-run-start: remove such directories in the schemas this target writes
    (cdc_target_schemas: one dbt command at a time writes a target's schemas; a dev or
    CI target never touches production's); not in the sources' tables: they are the ingest
    job's, which may be creating one right now.
#}
{% macro remove_write_leftovers() %}
    {% if execute %}
        {% set sources = [] %}
        {% for node in graph.sources.values() %}
            {% do sources.append(node.schema ~ '.' ~ node.identifier) %}
        {% endfor %}
        {% do adapter.remove_write_leftovers(sources, cdc_target_schemas()) %}
    {% endif %}
{% endmacro %}
