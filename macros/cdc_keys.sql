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
    kafka_ordering_tail(row_index=none): the Kafka part that ends every ordering key, as the
    last arguments of the key's concat_ws('.', ...): the record's partition (10 digits) and
    offset (20 digits), for a multi-row message the row's index in it (`row_index`, an
    expression, 10 digits: Canal), then the topic name. Reads the bronze columns partition,
    offset and topic.

    Every part before the topic is fixed width, so an ordering key compares as the tuple
    (format ordering fields, partition, offset[, row index], topic name): changes with equal
    format ordering fields order by partition, offset, then topic name (compared as text, byte
    by byte, like the whole key), and two different changes never tie - equal keys are the
    same Kafka record (and row). Without the topic, two topics carrying one source table (a
    re-created replication task, a migration between topics) gave different changes the same
    key.
#}
{% macro kafka_ordering_tail(row_index=none) -%}
    {%- set parts = [padded_number('partition', 10), padded_number('offset', 20)] -%}
    {%- if row_index is not none -%}
        {%- do parts.append(padded_number(row_index, 10)) -%}
    {%- endif -%}
    {{ (parts + ['topic']) | join(', ') }}
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
    left join {{ ref('stg_bronze__declared_keys') }} as table_keys
        on {{ relation }}.topic = table_keys.topic
        and {{ relation }}.{{ table_column }} = table_keys.source_table
    left join {{ ref('stg_bronze__declared_keys') }} as topic_keys
        on {{ relation }}.topic = topic_keys.topic
        and topic_keys.source_table = '*'
{%- endmacro %}

{#
    format_ordering_key(folder, values, row_index=none): the ordering key of a change of the
    formats of staging folder `folder`, by their plug-in's ordering rule (cdc_format_orderings(),
    macros/cdc_format_plugins.sql, generated from src/cdc_lakehouse/formats/<folder>/): each part
    of the rule, most significant first, is its value (`values`: part name -> SQL expression)
    left-padded with '0' to the part's width, then kafka_ordering_tail(row_index) (`row_index`:
    the row's index in its record, given exactly when the rule has row_index), dot-separated.
    NULL when a part is NULL or longer than its width.

    Raises a compilation error when `values` does not name exactly the rule's parts, or
    row_index is given against the rule.
#}
{% macro format_ordering_key(folder, values, row_index=none) -%}
    {%- set rule = cdc_format_orderings()[folder] -%}
    {%- set names = [] -%}
    {%- for part in rule.parts -%}
        {%- do names.append(part[0]) -%}
    {%- endfor -%}
    {%- if names | sort != values.keys() | list | sort or rule.row_index != (row_index is not none) -%}
        {%- do exceptions.raise_compiler_error(
            "format_ordering_key('" ~ folder ~ "'): give the parts " ~ names | join(', ')
            ~ (" and row_index" if rule.row_index else "") ~ " of the format's ordering rule; got "
            ~ values.keys() | list | join(', ') ~ (" and row_index" if row_index is not none else "")
        ) -%}
    {%- endif -%}
    case
        when {% for part in rule.parts -%}
            {%- if not loop.first %} and {% endif -%}
            length(cast({{ values[part[0]] }} as string)) <= {{ part[1] }}
        {%- endfor %} then concat_ws(
            '.',
            {% for part in rule.parts -%}
                lpad(cast({{ values[part[0]] }} as string), {{ part[1] }}, '0'),
            {% endfor -%}
            {{ kafka_ordering_tail(row_index) }}
        )
    end
{%- endmacro %}
