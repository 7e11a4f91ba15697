{#
    The Canal-specific SQL of stg_dts_canal__events (docs/formats.md section 4c, seed 003),
    over the fields the exact JSON function reads (each a value's text as sent, or NULL).
#}

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

{#
    canal_before_image(data_row, old_row) / canal_after_image(data_row, old_row): the row
    before / after the change of one row of a message (docs/formats.md 4c), from its data and
    old elements (maps, NULL when not sent), the message's type_code and its topic's
    canal_legacy_swap. Open-source meaning: INSERT / INIT after = data; UPDATE after = data,
    before = data overlaid with old (or data when old is not sent); DELETE before = data.
    Legacy meaning: INSERT / INIT after = old, else data; UPDATE before = data, after = data
    overlaid with old (NULL without both); DELETE before = old, else data. Other types: NULL.
#}
{% macro canal_before_image(data_row, old_row) -%}
    case
        when canal_legacy_swap then case type_code
            when 'UPDATE' then {{ data_row }}
            when 'DELETE' then coalesce({{ old_row }}, {{ data_row }})
        end
        when type_code = 'UPDATE' then case
            when {{ old_row }} is null then {{ data_row }}
            when {{ data_row }} is not null then {{ canal_overlay(data_row, old_row) }}
        end
        when type_code = 'DELETE' then {{ data_row }}
    end
{%- endmacro %}

{% macro canal_after_image(data_row, old_row) -%}
    case
        when canal_legacy_swap then case
            when type_code in ('INSERT', 'INIT') then coalesce({{ old_row }}, {{ data_row }})
            when type_code = 'UPDATE' and {{ data_row }} is not null and {{ old_row }} is not null
                then {{ canal_overlay(data_row, old_row) }}
        end
        when type_code in ('INSERT', 'INIT', 'UPDATE') then {{ data_row }}
    end
{%- endmacro %}

{#
    canal_state_image(row): the image that says which row a row of a message is about (the
    before image of a DELETE, else the after image); row is a struct with both.
#}
{% macro canal_state_image(row) -%}
    case when type_code = 'DELETE' then {{ row }}.before_image else {{ row }}.after_image end
{%- endmacro %}
