{#
    canonical_row_key(image, key_columns): the row key of gold.current_rows, as SQL.

    A JSON object of key column -> value text, keys sorted by name, SQL NULL as JSON null, e.g.
    {"id":"1","name":"joe"}. NULL when the image is NULL. Values are compared as text, exactly
    as the message carried them.
#}
{% macro canonical_row_key(image, key_columns) -%}
    case
        when {{ image }} is not null then to_json(
            map_from_arrays(
                array_sort({{ key_columns }}),
                transform(array_sort({{ key_columns }}), k -> element_at({{ image }}, k))
            )
        )
    end
{%- endmacro %}

{#
    missing_key_columns(image, key_columns): the key columns the image does not carry (array).
#}
{% macro missing_key_columns(image, key_columns) -%}
    filter({{ key_columns }}, k -> not array_contains(map_keys({{ image }}), k))
{%- endmacro %}

{#
    padded_number(expr, width): non-negative integer text left-padded with zeros to `width`
    characters, so that text order equals numeric order in ordering keys.
#}
{% macro padded_number(expr, width) -%}
    lpad(cast({{ expr }} as string), {{ width }}, '0')
{%- endmacro %}

{#
    join_declared_keys(relation, table_column): every row of `relation` (a CTE with a `topic`
    column) plus declared_key_columns (array, NULL when none): the key columns declared in the
    seed cdc_declared_keys for the row's topic and table (`table_column`); a row naming the
    table wins over the topic's '*' row. For formats whose messages carry no key (DataHub
    Tuple, Lindorm SQL tables).
#}
{% macro join_declared_keys(relation, table_column) -%}
    select
        {{ relation }}.*,
        transform(
            split(coalesce(table_keys.key_columns, topic_keys.key_columns), '[|]'), k -> trim(k)
        ) as declared_key_columns
    from {{ relation }}
    left join {{ ref('cdc_declared_keys') }} as table_keys
        on {{ relation }}.topic = table_keys.topic
        and {{ relation }}.{{ table_column }} = table_keys.source_table
    left join {{ ref('cdc_declared_keys') }} as topic_keys
        on {{ relation }}.topic = topic_keys.topic
        and topic_keys.source_table = '*'
{%- endmacro %}
