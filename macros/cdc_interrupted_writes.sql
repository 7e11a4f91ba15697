{#
    Incremental models after a write killed half way (kill -9, OOM, a lost machine); see
    cdc_lakehouse.interrupted_writes for what such a write leaves behind.

    A Parquet insert overwrite commits partition by partition (delete the old directory, move
    the new one in), an append file by file, so a killed write can leave a table with some
    partitions or files new, some old and some missing. An incremental model reads its
    watermark from its own table (held_max), and some read their held rows (int_row_versions, the
    split-update pairing): they would build on the half-written table and never look back.

    So each write of an incremental model into its existing table is bracketed by a table
    property (hooks in dbt_project.yml): mark_write_started sets it right before the write,
    mark_write_finished removes it after. A model whose property is still set when it is
    compiled was interrupted: is_incremental() is false for it, so it is computed as on its
    first run - not from its own rows - and the materialization writes that over the existing
    table (insert overwrite of every partition, the same rows a full refresh gives; a Python
    model appends only the rows its table lacks, cdc_lakehouse.incremental.unheld_rows). The
    property stays set until such a run has finished.

    Delta tables commit atomically: no property there. Neither is there one on the models
    written by generation switches (macros/cdc_generations.sql): a killed generation write
    leaves the table as it was, so the next run can trust it. is_incremental() still reads
    the property of every Parquet incremental model, and mark_write_finished removes it, so a
    table interrupted before it was written by generations converges too.
#}

{% macro write_in_progress_property() -%}
    cdc_lakehouse.write_in_progress
{%- endmacro %}

{#
    is_incremental(), overriding dbt's: also false when the model's last write was interrupted
    (its table still has the property). Read while the model compiles, before its pre-hook.
#}
{% macro is_incremental() %}
    {{ return(
        dbt.is_incremental() and not (tracks_interrupted_writes() and write_in_progress(this))
    ) }}
{% endmacro %}

{# write_in_progress(relation): true when relation has the property (a write was interrupted) #}
{% macro write_in_progress(relation) %}
    {{ return(table_properties(relation).get(write_in_progress_property()) == 'true') }}
{% endmacro %}

{% macro tracks_interrupted_writes() %}
    {{ return(
        execute
        and model.config.materialized == 'incremental'
        and config.get('file_format') != 'delta'
    ) }}
{% endmacro %}

{# pre-hook of every model: on an incremental model's existing table (not written by
   generations), set the property #}
{% macro mark_write_started() %}
    {%- if tracks_interrupted_writes() and not writes_generations()
        and load_relation(this) is not none -%}
        alter table {{ this }} set tblproperties ('{{ write_in_progress_property() }}' = 'true')
    {%- endif -%}
{% endmacro %}

{# post-hook of every model: the write is complete, remove the property #}
{% macro mark_write_finished() %}
    {%- if tracks_interrupted_writes() -%}
        alter table {{ this }} unset tblproperties if exists ('{{ write_in_progress_property() }}')
    {%- endif -%}
{% endmacro %}

{#
    on-run-start: remove what killed writes left in the lake (one dbt command at a time writes
    it), and the generations no partition references since var('cdc_reader_grace_s') seconds;
    not in the sources' tables: they are the ingest job's, which may be writing one right now
#}
{% macro remove_write_leftovers() %}
    {% if execute %}
        {% set sources = [] %}
        {% for node in graph.sources.values() %}
            {% do sources.append(node.schema ~ '.' ~ node.identifier) %}
        {% endfor %}
        {% do adapter.remove_write_leftovers(var('cdc_reader_grace_s'), sources) %}
    {% endif %}
{% endmacro %}
