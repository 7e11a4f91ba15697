{#
    Generic data test: a model's column rules, checked by one query and one dbt node.

    Arguments (each optional, at least one given):
    - not_null: columns that never hold a NULL.
    - accepted_values: column -> the values it may hold (a NULL passes, as in dbt's
      accepted_values; values compare as given, e.g. strings).
    - unique: column combinations, each a list, that name one row (NULLs compare equal, as in
      a GROUP BY); a one-column key is a list of one.

    The column rules and the first unique key take one pass over the model: the rules are
    counted in that key's groups, then summed (a typed gold view's key test at 200 tables is
    as cheap as one group by); each further key is one more pass.

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
{%- set totals = [] -%}
{%- set rule_rows = [] -%}
{%- for column_name in not_null -%}
    {%- do counts.append(
        'count_if(`' ~ column_name ~ '` is null) as `not_null__' ~ column_name ~ '`'
    ) -%}
    {%- do totals.append(
        'coalesce(sum(`not_null__' ~ column_name ~ '`), 0) as `not_null__' ~ column_name ~ '`'
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
    {%- do totals.append(
        'coalesce(sum(`accepted__' ~ column_name ~ '`), 0) as `accepted__' ~ column_name ~ '`'
    ) -%}
    {%- do totals.append(
        'min(`accepted_example__' ~ column_name ~ '`) as `accepted_example__' ~ column_name ~ '`'
    ) -%}
    {%- do rule_rows.append(
        "'accepted values', '" ~ column_name ~ "', `accepted__" ~ column_name
        ~ "`, `accepted_example__" ~ column_name ~ "`"
    ) -%}
{%- endfor -%}
{#- the first unique key is counted in the same aggregate; any further key by itself -#}
{%- set rules = ['select * from column_rules'] -%}
{%- for key in unique -%}
    {%- set key_columns = '`' ~ key | join('`, `') ~ '`' -%}
    {%- if loop.first -%}
        {%- do totals.append('count_if(key_rows > 1) as `unique__1`') -%}
        {%- do totals.append(
            'min(case when key_rows > 1 then to_json(struct(' ~ key_columns ~ ')) end)'
            ~ ' as `unique_example__1`'
        ) -%}
        {%- do rule_rows.append(
            "'unique', '" ~ key | join(', ') ~ "', `unique__1`, `unique_example__1`"
        ) -%}
    {%- else -%}
        {%- do rules.append('select * from unique_rule_' ~ loop.index) -%}
    {%- endif -%}
{%- endfor %}

with

checked as (
    select * from {{ model }}
),
{% for key in unique %}
{% set key_columns = '`' ~ key | join('`, `') ~ '`' %}
{#- the first key's groups also count the column rules: one pass over the model -#}
{% set per_key = [key_columns] + (counts if loop.first else []) + ['count(*) as key_rows'] %}
rows_per_key_{{ loop.index }} as (
    select
        {{ per_key | join(',\n        ') }}
    from checked
    group by {{ key_columns }}
),
{% if not loop.first %}
unique_rule_{{ loop.index }} as (
    select
        'unique' as check_name,
        '{{ key | join(", ") }}' as column_name,
        count_if(key_rows > 1) as failing_rows,
        min(case when key_rows > 1 then to_json(struct({{ key_columns }})) end) as example
    from rows_per_key_{{ loop.index }}
),
{% endif %}
{% endfor %}
column_counts as (
    select
        {{ (totals if unique else counts) | join(',\n        ') }}
    from {{ 'rows_per_key_1' if unique else 'checked' }}
),

column_rules as (
    select
        stack(
            {{ rule_rows | length }},
            {{ rule_rows | join(',\n            ') }}
        ) as (check_name, column_name, failing_rows, example)
    from column_counts
),

rules as (
    {{ rules | join('\n    union all\n    ') }}
),

final as (
    select * from rules
    where failing_rows > 0
)

select * from final

{% endtest %}
