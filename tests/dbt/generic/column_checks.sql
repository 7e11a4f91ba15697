{#
    Generic data test: a model's column rules, checked by one query and one dbt node.

    Arguments (each optional, at least one given):
    - not_null: columns that never hold a NULL.
    - accepted_values: column -> the values it may hold (a NULL passes, as in dbt's
      accepted_values; values compare as given, e.g. strings).
    - unique: column combinations, each a list, that name one row (NULLs compare equal, as in
      a GROUP BY); a one-column key is a list of one.

    Why one node: a dbt test node costs about 0.2-0.3 s of fixed dbt and Spark time whatever it
    reads, and the models' column rules were most of a build's nodes (one per accepted-values
    column, per unique key, per model's not-null columns). On an incremental build the model's
    rows are those the build added (macros/cdc_test_scope.sql), as for every generic test.

    Fails with one row per broken rule: check_name ('not null', 'accepted values' or
    'unique'), column_name (a combination as 'a, b'), failing_rows (rows holding NULL or a value
    not accepted; key combinations held by more than one row) and example (one value not
    accepted, or one duplicated key as JSON; NULL for 'not null').
#}
{% test column_checks(model, not_null=[], accepted_values={}, unique=[]) %}

{%- if not (not_null or accepted_values or unique) -%}
    {{ exceptions.raise_compiler_error(
        'column_checks on ' ~ model ~ ': give not_null, accepted_values or unique'
    ) }}
{%- endif -%}

{#- the counts of the column rules (one aggregate), and one stack() entry per rule -#}
{%- set counts = [] -%}
{%- set rule_rows = [] -%}
{%- for column_name in not_null -%}
    {%- do counts.append(
        'count_if(`' ~ column_name ~ '` is null) as `not_null__' ~ column_name ~ '`'
    ) -%}
    {%- do rule_rows.append(
        "'not null', '" ~ column_name ~ "', `not_null__" ~ column_name ~ "`, cast(null as string)"
    ) -%}
{%- endfor -%}
{%- for column_name, values in accepted_values.items() -%}
    {%- set literals = [] -%}
    {%- for value in values -%}
        {%- do literals.append("'" ~ value ~ "'" if value is string else value | string) -%}
    {%- endfor -%}
    {%- set outside = '`' ~ column_name ~ '` not in (' ~ literals | join(', ') ~ ')' -%}
    {%- do counts.append(
        'count_if(' ~ outside ~ ') as `accepted__' ~ column_name ~ '`'
    ) -%}
    {%- do counts.append(
        'min(case when ' ~ outside ~ ' then cast(`' ~ column_name ~ '` as string) end)'
        ~ ' as `accepted_example__' ~ column_name ~ '`'
    ) -%}
    {%- do rule_rows.append(
        "'accepted values', '" ~ column_name ~ "', `accepted__" ~ column_name
        ~ "`, `accepted_example__" ~ column_name ~ "`"
    ) -%}
{%- endfor -%}
{%- set rules = ['select * from column_rules'] if rule_rows else [] -%}
{%- for key in unique -%}
    {%- do rules.append('select * from unique_rule_' ~ loop.index) -%}
{%- endfor %}

with

checked as (
    select * from {{ model }}
),
{% if rule_rows %}
column_counts as (
    select
        {{ counts | join(',\n        ') }}
    from checked
),

column_rules as (
    select
        stack(
            {{ rule_rows | length }},
            {{ rule_rows | join(',\n            ') }}
        ) as (check_name, column_name, failing_rows, example)
    from column_counts
),
{% endif %}
{% for key in unique %}
{% set key_columns = '`' ~ key | join('`, `') ~ '`' %}
rows_per_key_{{ loop.index }} as (
    select
        {{ key_columns }},
        count(*) as key_rows
    from checked
    group by {{ key_columns }}
),

unique_rule_{{ loop.index }} as (
    select
        'unique' as check_name,
        '{{ key | join(", ") }}' as column_name,
        count_if(key_rows > 1) as failing_rows,
        min(case when key_rows > 1 then to_json(struct({{ key_columns }})) end) as example
    from rows_per_key_{{ loop.index }}
),
{% endfor %}
rules as (
    {{ rules | join('\n    union all\n    ') }}
),

final as (
    select * from rules
    where failing_rows > 0
)

select * from final

{% endtest %}
