"""The generated reference pages of the docs site are up to date with what they are made from
(``cdc_lakehouse.tools.docs_reference``): ``docs/reference/tables.md`` from the models' YAML."""

from __future__ import annotations

from pathlib import Path

from cdc_lakehouse.tools import docs_reference

ROOT = Path(__file__).resolve().parents[2]


def test_tables_page_is_up_to_date():
    committed = (ROOT / "docs/reference/tables.md").read_text(encoding="utf-8")
    generated = docs_reference.render_tables(docs_reference.load_models(ROOT))
    assert committed == generated, (
        "docs/reference/tables.md is stale: regenerate it with\n    "
        + docs_reference.TABLES_COMMAND
    )


def test_every_model_is_listed_with_its_schema():
    models = docs_reference.load_models(ROOT)
    by_name = {model.name: model for model in models}
    assert by_name["current_rows"].schema == "gold"
    assert by_name["int_row_versions"].schema == "gold"
    assert by_name["change_events"].schema == "silver"
    assert by_name["stg_bronze__kafka_records"].schema == "silver"
    page = docs_reference.render_tables(models)
    for model in models:
        assert f"`{model.schema}.{model.name}`" in page


def test_first_paragraph_joins_the_lines_of_the_first_paragraph_only():
    text = "One row per\nlive row.\n\nMore detail."
    assert docs_reference.first_paragraph(text) == "One row per live row."
    assert docs_reference.first_paragraph(None) == ""


def test_schema_comes_from_the_nearest_configured_folder():
    schemas = docs_reference.folder_schemas(
        {
            "models": {
                "p": {
                    "staging": {"+schema": "silver", "x": {}},
                    "marts": {"current_state": {"+schema": "gold"}},
                }
            }
        },
        "p",
    )
    assert docs_reference.schema_of(("staging", "x"), schemas) == "silver"
    assert (
        docs_reference.schema_of(("marts", "current_state", "tables", "dts_canal"), schemas)
        == "gold"
    )
