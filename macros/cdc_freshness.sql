{#
    Freshness: how long since each source was last seen alive (silver.source_freshness, and
    `dbt source freshness` on bronze.kafka_records).

    "Now" is var cdc_freshness_now: unset, current_timestamp() (evaluated when the query runs);
    set to a UTC timestamp ('2024-06-01 12:00:30', '2024-06-01T12:00:30Z'), every freshness
    check measures against it instead - tests, whose fixture event times are old, and
    backfills, which ask how fresh the sources were at a past moment.
#}

{# the "now" of the freshness checks, as Spark SQL (see the header) #}
{% macro cdc_freshness_now() -%}
    {%- set pinned = var('cdc_freshness_now', none) -%}
    {%- if pinned is none or (pinned | string | trim) == '' -%}
        current_timestamp()
    {%- else -%}
        {#- a YAML timestamp (unquoted in --vars) arrives as a datetime: its str() is the same
            text. Checked here: Spark (ANSI off) would turn a malformed one into NULL. -#}
        {%- set text = pinned | string | trim -%}
        {%- set pattern = '[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]{1,6})?)?)?(Z|[+-][0-9]{2}:?[0-9]{2})?' -%}
        {%- if not modules.re.fullmatch(pattern, text) -%}
            {{ exceptions.raise_compiler_error(
                "var cdc_freshness_now must be a UTC timestamp such as '2024-06-01 12:00:30'"
                ~ " (or unset: current_timestamp()), got: " ~ text
            ) }}
        {%- endif -%}
        cast('{{ text }}' as timestamp)
    {%- endif -%}
{%- endmacro %}

{#
    freshness_threshold(name): var `name` as a number of seconds, or none when it is unset or
    null (that level is off). Anything else stops the run: a threshold that silently reads as
    "off" would hide a stale source.
#}
{% macro freshness_threshold(name) %}
    {% set value = var(name, none) %}
    {% if value is none or (value | string | trim) in ['', 'none', 'None', 'null'] %}
        {{ return(none) }}
    {% endif %}
    {% if value is number and value is not boolean and value >= 0 %}
        {{ return(value) }}
    {% endif %}
    {% if value is string and modules.re.fullmatch('[0-9]+([.][0-9]+)?', value | trim) %}
        {{ return(value | trim | float) }}
    {% endif %}
    {{ exceptions.raise_compiler_error(
        'var ' ~ name ~ ' must be a number of seconds >= 0 (or null: off), got: ' ~ value
    ) }}
{% endmacro %}

{#
    dbt's collect_freshness (`dbt source freshness` with loaded_at_field), overridden for
    Spark only to measure against cdc_freshness_now(): the same query as dbt's default.
#}
{% macro spark__collect_freshness(source, loaded_at_field, filter) %}
    {% call statement('collect_freshness', fetch_result=True, auto_begin=False) -%}
        select
            max({{ loaded_at_field }}) as max_loaded_at,
            {{ cdc_freshness_now() }} as snapshotted_at
        from {{ source }}
        {% if filter %}
        where {{ filter }}
        {% endif %}
    {%- endcall %}
    {{ return(load_result('collect_freshness')) }}
{% endmacro %}
