{#
    The topic registry every model reads: the user's seed cdc_topics (seeds/cdc_topics.csv)
    and, when CDC_EXAMPLES is true (macros/cdc_examples.sql), the example seed
    cdc_example_topics (sample_data/seeds/cdc_example_topics.csv: the bundled sample's and the
    tests' topics). A topic in both: the user's row wins. A topic listed twice in one seed
    stays twice (the unique check of the YAML fails).
#}

with

registry_rows as (
    select
        topic,
        format,
        source_dialect,
        canal_legacy_swap,
        description,
        0 as registry_rank
    from {{ ref('cdc_topics') }}
    {%- if cdc_examples_enabled() %}

    union all

    select
        topic,
        format,
        source_dialect,
        canal_legacy_swap,
        description,
        1 as registry_rank
    from {{ ref('cdc_example_topics') }}
    {%- endif %}
),

ranked as (
    select
        *,
        min(registry_rank) over (partition by topic) as first_rank
    from registry_rows
),

final as (
    select
        topic,
        format,
        source_dialect,
        canal_legacy_swap,
        description,
        registry_rank = 1 as is_example
    from ranked
    where registry_rank = first_rank
)

select * from final
