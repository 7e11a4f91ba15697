{#
    The Canal-specific SQL of stg_dts_canal__events (docs/formats.md section 4c, seed 003),
    over the fields the exact JSON function reads (each a value's text as sent, or NULL).
#}

{#
    canal_millis_problem(field): NULL, or the struct(reason, detail) of a message whose es / ts
    (`field`, its text) is not a JSON integer or a string of digits (invalid_field_type), or
    is not epoch milliseconds in the years 1-9999, what a Spark timestamp holds
    (invalid_field_value).
#}
{% macro canal_millis_problem(field) -%}
    case
        when {{ field }} is null then null
        when not trim({{ field }}) rlike '^[0-9]+$'
            then named_struct(
                'reason', 'invalid_field_type',
                'detail', '{{ field }} must be a non-negative integer'
            )
        when coalesce(try_cast(trim({{ field }}) as bigint) > 253402300799999, true)
            then named_struct(
                'reason', 'invalid_field_value',
                'detail', concat(
                    '{{ field }} = ', regexp_replace(trim({{ field }}), '^0+(?=.)', ''),
                    ' is not a time in the years 1-9999 (epoch ms)'
                )
            )
    end
{%- endmacro %}

{#
    canal_row_element_problem(rows): NULL, or the struct(reason, detail) naming the first
    element of `rows` (data or old, array of maps) that is JSON null instead of a row object.
#}
{% macro canal_row_element_problem(rows) -%}
    case
        when exists({{ rows }}, r -> r is null) then named_struct(
            'reason', 'invalid_field_type',
            'detail', concat(
                '{{ rows }}[',
                cast(array_position(transform({{ rows }}, r -> r is null), true) - 1 as string),
                '] must be a row object, not null'
            )
        )
    end
{%- endmacro %}

{#
    canal_overlay(base, changes): the map `base` overlaid with `changes` (maps column -> value
    text): the values of changes win, JSON null included; columns only in changes are
    appended; message order kept.
#}
{% macro canal_overlay(base, changes) -%}
    map_from_entries(concat(
        transform(
            map_entries({{ base }}),
            e -> named_struct(
                'key', e.key,
                'value', if(map_contains_key({{ changes }}, e.key), {{ changes }}[e.key], e.value)
            )
        ),
        filter(map_entries({{ changes }}), e -> not map_contains_key({{ base }}, e.key))
    ))
{%- endmacro %}
