{#
    cdc_examples_enabled(): true when the environment variable CDC_EXAMPLES is true (any case),
    false when it is unset, empty or false; any other value stops the build. The examples are
    the bundled sample's and the tests' topics, declared keys (sample_data/seeds/) and typed
    gold models (sample_data/models/marts/current_state/tables/examples/): `make demo` and `make test` set it,
    a deployment leaves it unset. dbt_project.yml enables the example seeds and models with the
    same test (a macro cannot run there); stg_bronze__topics and stg_bronze__declared_keys add
    the example rows to the user's seeds when it is true.
#}
{% macro cdc_examples_enabled() -%}
    {%- set text = env_var('CDC_EXAMPLES', 'false') | trim | lower -%}
    {%- if text not in ('', 'true', 'false') -%}
        {{ exceptions.raise_compiler_error(
            "CDC_EXAMPLES must be true or false, not '" ~ env_var('CDC_EXAMPLES') ~ "'"
        ) }}
    {%- endif -%}
    {{ return(text == 'true') }}
{%- endmacro %}
