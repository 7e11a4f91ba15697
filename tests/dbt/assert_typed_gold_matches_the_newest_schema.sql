-- Typed gold models generated from an older schema version than their source table's newest
-- one in silver.table_schemas (a column added, dropped or retyped since
-- `python -m cdc_lakehouse.codegen gold-tables` wrote them): one row per such model, with the
-- command that regenerates it. Severity warn (tests/dbt/_tests.yml): the model still builds
-- with the columns it was generated with. The generator records what it read in each model's
-- meta cdc_typed_gold (source: the table's identity, schema_version: the version, as Spark
-- SQL literals); a model without it (written by hand) is not checked. The stale models are
-- also logged as dbt warnings, each naming the model and the command, when the test compiles.

{%- set typed_models = [] %}
{%- if execute %}
    {%- for node in graph.nodes.values() | sort(attribute='unique_id') %}
        {%- set meta = (node.config or {}).get('meta') or node.get('meta') or {} %}
        {%- set generated_from = meta.get('cdc_typed_gold') if node.resource_type == 'model' %}
        {%- if generated_from and generated_from.get('source') %}
            {%- set out = node.original_file_path.split('/')[:-2] | join('/') %}
            {%- set command = 'python -m cdc_lakehouse.codegen gold-tables --table ' ~ node.name
                ~ ('' if out == 'models/marts/current_state/tables' else ' --out ' ~ out) %}
            {%- do typed_models.append({
                'name': node.name | replace("'", "\\'"),
                'command': command | replace("'", "\\'"),
                'source': generated_from['source'],
                'schema_version': generated_from.get('schema_version') or 'null',
            }) %}
        {%- endif %}
    {%- endfor %}
{%- endif %}

{% set stale_models_sql %}
with

table_schemas as (
    select * from {{ ref('table_schemas') }}
),

newest_versions as (
    select
        source_format,
        source_database,
        source_schema,
        source_table,
        max_by(schema_version, struct(first_seen_ordering_key, schema_version))
            as newest_version
    from table_schemas
    group by source_format, source_database, source_schema, source_table
),

generated_models as (
    {% for model in typed_models %}
        select
            '{{ model.name }}' as model_name,
            '{{ model.command }}' as command,
            array({{ model.source }}, {{ model.schema_version }}) as generated_from
        {% if not loop.last %}
            union all
        {% endif %}
    {% else %}
        select
            cast(null as string) as model_name,
            cast(null as string) as command,
            cast(null as array<string>) as generated_from
        limit 0
    {% endfor %}
),

stale_models as (
    select
        generated_models.model_name,
        generated_models.command,
        generated_models.generated_from[4] as generated_version,
        newest_versions.newest_version,
        newest_versions.source_format,
        concat_ws(
            '.',
            newest_versions.source_database,
            newest_versions.source_schema,
            newest_versions.source_table
        ) as source_table
    from generated_models
    inner join newest_versions
        on generated_models.generated_from[0] <=> newest_versions.source_format
        and generated_models.generated_from[1] <=> newest_versions.source_database
        and generated_models.generated_from[2] <=> newest_versions.source_schema
        and generated_models.generated_from[3] <=> newest_versions.source_table
    where not (generated_models.generated_from[4] <=> newest_versions.newest_version)
),

final as (
    select
        model_name,
        generated_version,
        newest_version,
        concat(
            'typed gold model ', model_name, ' was generated from schema version ',
            coalesce(generated_version, 'none'), ' of ', source_format, ' table ',
            source_table, '; silver.table_schemas has a newer one (', newest_version,
            '): regenerate it with `', command, '`'
        ) as message
    from stale_models
)

select * from final
{% endset %}

{%- if execute and typed_models and load_relation(ref('table_schemas')) is not none %}
    {%- for row in run_query(stale_models_sql) %}
        {%- do exceptions.warn(row['message']) %}
    {%- endfor %}
{%- endif %}

{{ stale_models_sql }}
