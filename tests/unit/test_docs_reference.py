"""The generated reference pages of the docs site are up to date with what they are made from
(``cdc_lakehouse.tools.docs_reference``): ``docs/reference/tables.md`` from the models' YAML,
the formats' blocks of README.md and docs/ from the format plug-ins
(``cdc_lakehouse.tools.docs_formats``)."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from cdc_lakehouse.formats import MANIFEST
from cdc_lakehouse.tools import docs_formats, docs_reference

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


def test_format_pages_are_up_to_date():
    assert docs_formats.stale(ROOT, MANIFEST) == [], (
        f"the formats' generated blocks are stale: rewrite them with\n    {docs_formats.COMMAND}"
    )


def test_every_format_describes_itself_for_the_docs():
    for fmt in MANIFEST:
        for field in ("product", "ordering_text", "row_key_text", "decodes_text"):
            assert getattr(fmt, field).strip(), f"{fmt.name}: empty {field}"
        docs_formats.section_key(fmt.docs_section)


def test_docs_list_the_formats_in_the_order_of_their_sections():
    assert [fmt.name for fmt in docs_formats.in_docs_order(MANIFEST)] == [
        "dataworks_json",
        "datahub_blob",
        "datahub_tuple",
        "lindorm_debezium",
        "dts_avro",
        "dts_shareplex_json",
        "dts_canal_json",
        "qlik_json",
        "qlik_avro",
        "debezium_json",
    ]
    assert docs_formats.section_key("10") > docs_formats.section_key("9")
    assert docs_formats.section_key("4a") < docs_formats.section_key("4b")


def test_registry_table_joins_the_formats_of_a_folder_that_say_the_same():
    table = docs_formats.registry_table(MANIFEST)
    assert any(
        row.startswith("| `qlik_json`, `qlik_avro` | `qlik` | `qlik_json`, `qlik_avro` |")
        for row in table
    )
    fmts = [fmt for fmt in MANIFEST if fmt.staging_folder == "qlik"]
    apart = [fmts[0], dataclasses.replace(fmts[1], row_key_text="another key")]
    rows = docs_formats.registry_table(apart)[2:]
    assert [row.split(" | ")[0] for row in rows] == ["| `qlik_json`", "| `qlik_avro`"]


def _copy_pages(root: Path) -> None:
    for page in docs_formats.PAGES:
        (root / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / page, root / page)
    for fmt in MANIFEST:
        folder = docs_formats.PLUGINS_DIR / fmt.staging_folder
        (root / folder).mkdir(parents=True, exist_ok=True)
        if (ROOT / folder / docs_formats.SECTIONS_FILE).is_file():
            shutil.copy(ROOT / folder / docs_formats.SECTIONS_FILE, root / folder)


def test_check_names_a_stale_page_and_write_makes_it_fresh(tmp_path, capsys):
    _copy_pages(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8").replace("| `dts_avro` |", "| x |"))
    args = ["formats", "--root", str(tmp_path)]
    assert docs_reference.main([*args, "--check"]) == 1
    assert f"README.md is stale: run `{docs_formats.COMMAND}`" in capsys.readouterr().err
    assert docs_reference.main(args) == 0
    assert docs_reference.main([*args, "--check"]) == 0
    assert readme.read_text(encoding="utf-8") == (ROOT / "README.md").read_text(encoding="utf-8")


def test_a_page_without_its_block_is_an_error(tmp_path, capsys):
    _copy_pages(tmp_path)
    index = tmp_path / "docs/index.md"
    index.write_text(index.read_text(encoding="utf-8").replace(docs_formats.END, ""))
    assert docs_reference.main(["formats", "--root", str(tmp_path), "--check"]) == 2
    assert "restore it from git" in capsys.readouterr().err


def test_a_section_out_of_order_or_missing_is_an_error(tmp_path):
    _copy_pages(tmp_path)
    with pytest.raises(docs_formats.DocsBlockError, match="increasing order"):
        docs_formats.formats_sections(
            tmp_path,
            [
                dataclasses.replace(fmt, docs_section="9") if fmt.name == "dts_avro" else fmt
                for fmt in MANIFEST
            ],
        )
    (tmp_path / docs_formats.PLUGINS_DIR / "lindorm" / docs_formats.SECTIONS_FILE).unlink()
    with pytest.raises(docs_formats.DocsBlockError, match=r"lindorm/FORMAT\.md: missing"):
        docs_formats.formats_sections(tmp_path, MANIFEST)


def test_formats_page_is_its_sections_between_the_preamble_and_the_vocabulary():
    page = (ROOT / "docs/formats.md").read_text(encoding="utf-8")
    sections = "\n".join(docs_formats.formats_sections(ROOT, MANIFEST))
    assert (
        f"{docs_formats.begin(docs_formats.SECTIONS_BLOCK)}\n\n{sections}\n\n{docs_formats.END}"
        in page
    )
    assert page.index("## Terms") < page.index("## 1. ") < page.index("## Normalized vocabulary")
