{#
    Incremental helpers for the staging *_events and silver models.

    Those models are materialized incremental with incremental_strategy='insert_overwrite'
    and partition_by=['ingest_batch_id'] (the ingest batch of the record itself): a run
    rewrites whole batch partitions - the new batches, plus any older batch whose rows a new
    record completes (the after half of a split update whose before half arrives later). Each
    rewritten partition is computed exactly as a full build computes it, so an incremental run
    gives the same rows as `dbt build --full-refresh`, and its cost follows the new data.
#}

{#
    held_max(column, relation): the largest value of column in relation (default: the model's
    own table, {{ this }}), -1 when it holds no rows. Read once at run time with run_query, so
    it reaches the SQL as a literal and Spark prunes partitions and parquet row groups with it.
    Of an up-to-date model's own table (macro up_to_date, macros/cdc_test_scope.sql): -1
    without a query (the model writes nothing then).
#}
{% macro held_max(column, relation=none) %}
    {% if not execute or (relation is none and up_to_date()) %}
        {{ return(-1) }}
    {% endif %}
    {% set relation = relation if relation is not none else this %}
    {% set result = run_query(
        'select coalesce(max(' ~ column ~ '), -1) as held from ' ~ relation
    ) %}
    {{ return(result.columns[0].values()[0] | int) }}
{% endmacro %}

{#
    read_through(column): the newest ingest batch a model has read, for a model whose own rows
    can lag behind it (silver.quarantine: a batch with no undecodable record leaves no row):
    the larger of held_max(column) and the bronze batch the last recorded whole-project build
    pinned (recorded_batch, macros/cdc_test_scope.sql; that build ran every model on every
    record up to that batch and succeeded). Without the second, each run read again every
    batch since the model's newest row: with no quarantined record in a 200,000-change history,
    silver.quarantine read all of bronze and every staging table on every incremental build.
    -1 when neither is known (a table rebuilt by hand to an older version than the recorded
    build needs --full-refresh, as any model whose inputs were rewritten under it).
#}
{% macro read_through(column) %}
    {% set held = held_max(column) %}
    {% set recorded = recorded_batch() %}
    {{ return(held if recorded is none else [held, recorded] | max) }}
{% endmacro %}

{#
    batch_partitioned_config(): the config of a model whose table is partitioned by
    ingest_batch_id and rewritten batch partition by batch partition (see the header).
#}
{% macro batch_partitioned_config() %}
    {{ config(
        materialized='incremental',
        incremental_strategy='insert_overwrite',
        partition_by=['ingest_batch_id'],
        on_schema_change='fail',
    ) }}
{% endmacro %}

{#
    resolved_batches(record_kind, watermark): the ingest batches (a list of ints) that hold a
    staging row of that record_kind resolved after watermark: the batch partitions a silver
    model rewrites in an incremental run. Read with run_query, so the model's filter is a
    literal list and Spark prunes the staging tables' partitions with it.
#}
{% macro resolved_batches(record_kind, watermark) %}
    {{ return(staging_batches_resolved_after(record_kind, watermark)) }}
{% endmacro %}

{#
    staging_batches_resolved_after(record_kind, watermark, late=false): the ingest batches (a
    sorted list of ints) of the staging rows of every chosen format (its 'paired_in' table
    where it has one; record_kind none: every kind) resolved after watermark; with late, only
    the batches up to watermark. Read with run_query. A table whose rows are final in their
    own batch (no 'resolves_later' in cdc_all_staging_event_models) is read from its batch
    partitions after watermark only, and not at all with late: none of its rows is. None for
    an up-to-date model (macro up_to_date, macros/cdc_test_scope.sql), without a query.
#}
{% macro staging_batches_resolved_after(record_kind, watermark, late=false) %}
    {% if not execute or up_to_date() %}
        {{ return([]) }}
    {% endif %}
    {% set branches = [] %}
    {% for staging in cdc_staging_event_models() %}
        {% set conditions = ['resolved_batch_id > ' ~ watermark] %}
        {% if record_kind is not none %}
            {% do conditions.append("record_kind = '" ~ record_kind ~ "'") %}
        {% endif %}
        {% if late %}
            {% do conditions.append('ingest_batch_id <= ' ~ watermark) %}
        {% elif not staging.get('resolves_later') %}
            {% do conditions.append('ingest_batch_id > ' ~ watermark) %}
        {% endif %}
        {% if staging.get('resolves_later') or not late %}
            {% do branches.append(
                'select ingest_batch_id from ' ~ ref(staging.get('paired_in', staging.model))
                ~ ' where ' ~ conditions | join(' and ')
            ) %}
        {% endif %}
    {% endfor %}
    {% if not branches %}
        {{ return([]) }}
    {% endif %}
    {% set result = run_query(
        'select distinct ingest_batch_id from (' ~ branches | join(' union all ') ~ ') order by 1'
    ) %}
    {{ return(result.columns[0].values() | map('int') | list) }}
{% endmacro %}

{#
    batches_resolved_after(relation, watermark): the ingest batches (a list of ints) of the
    rows of relation (with ingest_batch_id and resolved_batch_id, NULL = its own batch)
    resolved after watermark. Read with run_query, like resolved_batches (none for an up-to-date
    model, without a query).
#}
{% macro batches_resolved_after(relation, watermark) %}
    {% if not execute or up_to_date() %}
        {{ return([]) }}
    {% endif %}
    {% set result = run_query(
        'select distinct ingest_batch_id from ' ~ relation
        ~ ' where coalesce(resolved_batch_id, ingest_batch_id) > ' ~ watermark ~ ' order by 1'
    ) %}
    {{ return(result.columns[0].values() | map('int') | list) }}
{% endmacro %}

{#
    late_resolved_batches(watermark): the ingest batches up to watermark that hold a staging
    row of any record_kind resolved after it - batches whose records changed their verdict
    since (e.g. a Qlik data message that left quarantine when its metadata arrived).
#}
{% macro late_resolved_batches(watermark) %}
    {{ return(staging_batches_resolved_after(none, watermark, late=true)) }}
{% endmacro %}

{#
    replace_where(predicate): in the SQL of a model with incremental_strategy replace_where
    (macros/cdc_incremental_materialization.sql), the predicate of the rows its incremental run
    replaces, as a comment the materialization reads (Spark ignores it). Renders nothing on a
    full build, which creates the table.
#}
{% macro replace_where(predicate) -%}
    {%- if execute and is_incremental() -%}
        /* cdc_lakehouse: replace where {{ predicate }} */
    {%- endif -%}
{%- endmacro %}

{% macro replace_where_pattern() -%}
    /\* cdc_lakehouse: replace where (.+?) \*/
{%- endmacro %}

{# batch_filter(batches): a where-clause condition keeping the rows of those batches #}
{% macro batch_filter(batches, column='ingest_batch_id') -%}
    {%- if batches | length > 0 -%}
        {{ column }} in ({{ batches | join(', ') }})
    {%- else -%}
        false
    {%- endif -%}
{%- endmacro %}

{#
    has_rows(relation, condition): true when relation holds a row where condition (Spark SQL)
    is true. Read at run time with run_query (a single exists query, which reads only the
    columns condition names), so a model can leave out SQL that would find nothing. True
    while parsing and when the relation does not exist yet (dbt compile on an empty lake):
    then the model keeps the SQL that handles such rows.
#}
{% macro has_rows(relation, condition) %}
    {% if not execute or load_relation(relation) is none %}
        {{ return(true) }}
    {% endif %}
    {% set result = run_query(
        'select exists(select 1 from ' ~ relation ~ ' where ' ~ condition ~ ') as found'
    ) %}
    {{ return(result.columns[0].values()[0] | string | lower == 'true') }}
{% endmacro %}

{#
    nothing_new(decoded, held_batch): true on an incremental run when decoded (the table of a
    decoding dbt Python model, which gets a format's new bronze batches first) holds no row of
    an ingest batch after held_batch, the newest batch the model holds: a model whose every
    input comes from decoded then has nothing to compute, and its query is no_new_rows()
    (no scan, no shuffle, no partition written). False on a full build and while parsing.
#}
{% macro nothing_new(decoded, held_batch) %}
    {{ return(nothing_new_in([(decoded, 'ingest_batch_id > ' ~ held_batch)])) }}
{% endmacro %}

{#
    nothing_new_in(inputs): true on an incremental run when no input holds a new row: inputs is
    a list of (relation, condition) pairs, condition (Spark SQL) true for a row the model has
    not applied yet. One query for all of them (`select exists(...) or exists(...)`, each
    reading only the columns its condition names). False on a full build, while parsing and
    when an input does not exist yet, so the model keeps its whole query then. A model whose
    every input is listed uses it to skip its work: its query is then no_new_rows() (the gold
    MERGE models: a MERGE of no rows took 2-6 s on the bundled sample's no-op build). True
    without a query for an up-to-date model (macro up_to_date, macros/cdc_test_scope.sql).
#}
{% macro nothing_new_in(inputs) %}
    {% if not execute or not is_incremental() %}
        {{ return(false) }}
    {% endif %}
    {% if up_to_date() %}
        {{ return(true) }}
    {% endif %}
    {% set checks = [] %}
    {% for relation, condition in inputs %}
        {% if load_relation(relation) is none %}
            {{ return(false) }}
        {% endif %}
        {% do checks.append('exists(select 1 from ' ~ relation ~ ' where ' ~ condition ~ ')') %}
    {% endfor %}
    {% set result = run_query('select ' ~ checks | join(' or ') ~ ' as found') %}
    {{ return(result.columns[0].values()[0] | string | lower != 'true') }}
{% endmacro %}

{#
    no_new_rows(): the whole query of an incremental model when nothing_new() is true: no row,
    with the columns of the model's own table ({{ this }}). The result is the one the model's
    own query ending in `where false` gives, but Spark analyses this in milliseconds: a large
    model's query took 0.3-0.9 s to analyse (twice: its temporary view, then the insert) only
    to find it empty, which an incremental build paid for every format without new records.
    Its comment (nothing_new_marker) tells the incremental materialization
    (macros/cdc_incremental_materialization.sql) that there is nothing to write: it then
    writes nothing at all (no temporary view, no insert, no Delta commit).
#}
{% macro no_new_rows() -%}
    select * from {{ this }} where false {{ nothing_new_marker() }}
{%- endmacro %}

{#
    nothing_new_marker(): the comment that says so. A model with an enforced contract puts it
    beside its whole query instead of using no_new_rows(): the materialization still checks the
    contract on that query (a column dropped or retyped fails the run even with nothing new;
    Spark only plans it) and then writes nothing.
#}
{% macro nothing_new_marker() -%}
    /* cdc_lakehouse: nothing new */
{%- endmacro %}

{#
    computed_once(enabled=true): a condition that keeps every row (`rand() >= 0`: rand() is in
    [0, 1)) and makes the CTE whose query it is in computed once, however many places of the
    model's query name that CTE. Spark inlines every deterministic CTE at each place that names
    it (its optimizer rule InlineCTE), so a CTE named in several places is computed again at
    each, with everything it reads - a recursive one runs its whole recursion again; a CTE with
    a non-deterministic expression is kept as one relation that its places read through one
    reused shuffle (rule ReplaceCTERefWithRepartition). Measured on gold.int_row_versions'
    incremental query (7,000 new events on a 40,000-event lake, 2 cores): 126-143 s -> 38-49 s,
    the recursion of its key moves run once instead of 17 times. With enabled false, or while
    parsing (`execute` false: dbt parse, sqlfluff), it is `true`.
#}
{% macro computed_once(enabled=true) -%}
    {{ 'rand() >= 0' if enabled and execute else 'true' }}
{%- endmacro %}
