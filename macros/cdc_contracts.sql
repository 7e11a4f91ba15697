{#
    Model contracts (docs/how-to/contracts.md "How to change a public model: contracts and
    access"): the public models declare every column's name and data_type in their YAML, with
    `contract: {enforced: true}`. dbt checks a contract with two schema-only queries
    (`where false limit 0`: Spark plans them, reads no data): the model's SQL, and
    `cast(null as <data_type>)` per declared column; a column missing, added, renamed or of
    another type fails the model with dbt's "This model has an enforced contract that failed."
    and a table of the differences.

    dbt-spark checks it where it creates a table (create table as) or a view; not on an
    incremental run, which writes the model's SQL through a temporary view into the existing
    table, and on --full-refresh only after it dropped the table. check_contract_before_write
    covers both.
#}

{#
    check_contract_before_write(): pre-hook of every model (dbt_project.yml): for a SQL table
    or incremental model with an enforced contract whose table exists (an incremental run, a
    --full-refresh, a table rebuilt), dbt's contract check of the SQL the run is about to
    write (the incremental SQL on an incremental run), before the other hooks and before
    anything is written or dropped. Renders nothing. (dbt-spark checks the contract again
    where it creates the table; a view checks its own, macros/cdc_view_materialization.sql.)
#}
{% macro check_contract_before_write() %}
    {%- if execute and model.language == 'sql'
        and model.config.materialized in ['table', 'incremental']
        and config.get('contract').enforced
        and load_relation(this) is not none -%}
        {%- do get_assert_columns_equivalent(model.compiled_code) -%}
    {%- endif -%}
{% endmacro %}

{#
    tested_model_columns(): the YAML columns of the model a generic data test is attached to
    (name -> column entry, with data_type), or none. Called from a test's macro, where `model`
    is the test node (the test's own `model` argument is the relation it reads).
#}
{% macro tested_model_columns() %}
    {% set node_id = model.get('attached_node') if model is mapping else none %}
    {% set node = graph.nodes.get(node_id) if node_id else none %}
    {{ return(node.columns if node is not none else none) }}
{% endmacro %}
