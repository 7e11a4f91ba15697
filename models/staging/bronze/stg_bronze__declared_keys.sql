{#
    The declared keys every model reads (macro join_declared_keys): the user's seed
    cdc_declared_keys (seeds/cdc_declared_keys.csv) and, when CDC_EXAMPLES is true
    (macros/cdc_examples.sql), the example seed cdc_example_declared_keys
    (sample_data/seeds/cdc_example_declared_keys.csv). A topic and table in both: the user's
    row wins. A pair listed twice in one seed stays twice (the unique check of the YAML fails).
#}

with

key_rows as (
    select
        topic,
        source_table,
        key_columns,
        description,
        0 as registry_rank
    from {{ ref('cdc_declared_keys') }}
    {%- if cdc_examples_enabled() %}

    union all

    select
        topic,
        source_table,
        key_columns,
        description,
        1 as registry_rank
    from {{ ref('cdc_example_declared_keys') }}
    {%- endif %}
),

ranked as (
    select
        *,
        min(registry_rank) over (partition by topic, source_table) as first_rank
    from key_rows
),

final as (
    select
        topic,
        source_table,
        key_columns,
        description,
        registry_rank = 1 as is_example
    from ranked
    where registry_rank = first_rank
)

select * from final
