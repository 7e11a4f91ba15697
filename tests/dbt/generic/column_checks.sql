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

{#-
    measures: [expression over the model's rows, its alias, how per-key values add up (sum or
    min)]; rule_rows: one stack() entry per rule (check_name, column_name, count, example)
-#}
{%- set measures = [] -%}
{%- set rule_rows = [] -%}
{%- for column_name in not_null -%}
    {%- do measures.append(
        ['count_if(`' ~ column_name ~ '` is null)', 'not_null__' ~ column_name, 'sum']
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
    {%- do measures.append(['count_if(' ~ outside ~ ')', 'accepted__' ~ column_name, 'sum']) -%}
    {%- do measures.append([
        'min(case when ' ~ outside ~ ' then cast(`' ~ column_name ~ '` as string) end)',
        'accepted_example__' ~ column_name,
        'min',
    ]) -%}
    {%- do rule_rows.append(
        "'accepted values', '" ~ column_name ~ "', `accepted__" ~ column_name
        ~ "`, `accepted_example__" ~ column_name ~ "`"
    ) -%}
{%- endfor -%}
{#- counts: the measures over the rows; totals: over the first unique key's groups -#}
{%- set counts = [] -%}
{%- set totals = [] -%}
{%- for expression, alias, add_up in measures -%}
    {%- do counts.append(expression ~ ' as `' ~ alias ~ '`') -%}
    {%- do totals.append(
        ('coalesce(sum(`' ~ alias ~ '`), 0)' if add_up == 'sum' else 'min(`' ~ alias ~ '`)')
        ~ ' as `' ~ alias ~ '`'
    ) -%}
{%- endfor -%}
{#-
    per unique key: its columns, and its duplicated keys and an example over its groups; the
    first key is counted in the column rules' aggregate, any further key by itself
-#}
{%- set keys = [] -%}
{%- set rules = ['select * from column_rules'] -%}
{%- for key in unique -%}
    {%- set key_columns = '`' ~ key | join('`, `') ~ '`' -%}
    {%- set failing = 'count_if(key_rows > 1)' -%}
    {%- set example = 'min(case when key_rows > 1 then to_json(struct(' ~ key_columns ~ ')) end)' -%}
    {%- do keys.append([key_columns, key | join(', '), failing, example]) -%}
    {%- if loop.first -%}
        {%- do totals.append(failing ~ ' as `unique__1`') -%}
        {%- do totals.append(example ~ ' as `unique_example__1`') -%}
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
{% for key_columns, key_name, failing, example in keys %}
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
        '{{ key_name }}' as column_name,
        {{ failing }} as failing_rows,
        {{ example }} as example
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
