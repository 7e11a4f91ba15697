{#
    overlay_image(base, top): the image `base` with every column of `top` replacing or adding
    to it (top wins), as SQL. NULL when both are NULL; the other one when one is NULL. Keeps
    the three states: a column absent from both stays absent. (map_concat alone fails on a
    duplicate key under Spark's default map key dedup policy.)
#}
{% macro overlay_image(base, top) -%}
    case
        when {{ base }} is null then {{ top }}
        when {{ top }} is null then {{ base }}
        else map_concat(
            map_filter({{ base }}, (k, v) -> not array_contains(map_keys({{ top }}), k)),
            {{ top }}
        )
    end
{%- endmacro %}
