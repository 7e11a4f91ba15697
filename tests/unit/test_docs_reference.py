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
from cdc_lakehouse.formats.plugin import VocabularyColumn
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
        assert fmt.vocabulary.label.strip(), f"{fmt.name}: empty vocabulary label"


def test_docs_list_the_formats_in_the_order_of_their_sections():
    ordered = [fmt.name for fmt in docs_formats.in_docs_order(MANIFEST)]
    assert sorted(ordered) == sorted(fmt.name for fmt in MANIFEST)
    # these keep the README's order; a format added later goes where its section puts it
    readme_order = [
        "dataworks_json",
        "datahub_blob",
        "datahub_tuple",
        "lindorm_debezium",
        "dts_avro",
        "dts_shareplex_json",
        "dts_canal_json",
        "qlik_json",
        "qlik_avro",
    ]
    assert [name for name in ordered if name in readme_order] == readme_order
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


def test_vocabulary_table_has_a_column_per_staging_folder_and_the_shared_rows():
    table = docs_formats.vocabulary_table(MANIFEST)
    folders = {fmt.staging_folder for fmt in MANIFEST}
    assert table[0].startswith(
        "| normalized | DataWorks / Blob (1) | Tuple (2) | Lindorm (3) | DTS Avro (4a) | "
        "Shareplex (4b) | Canal (4c) | Qlik (5) |"
    )
    assert table[0].count(" | ") == len(folders)
    assert table[1] == "|---" * (len(folders) + 1) + "|"
    assert [row.split(" | ")[0] for row in table[2:]] == [
        f"| {first}" for first in docs_formats.VOCABULARY_ROWS.values()
    ]
    page = (ROOT / "docs/formats.md").read_text(encoding="utf-8")
    block = "\n".join(table)
    assert (
        f"{docs_formats.begin(docs_formats.VOCABULARY_BLOCK)}\n\n{block}\n\n{docs_formats.END}"
        in page
    )
    assert page.index("## Normalized vocabulary") < page.index(block)


def test_check_names_a_stale_vocabulary_table_and_write_makes_it_fresh(tmp_path, capsys):
    _copy_pages(tmp_path)
    page = tmp_path / "docs/formats.md"
    page.write_text(page.read_text(encoding="utf-8").replace("| Qlik (5) |", "| Qlik |"))
    args = ["formats", "--root", str(tmp_path)]
    assert docs_reference.main([*args, "--check"]) == 1
    assert f"docs/formats.md is stale: run `{docs_formats.COMMAND}`" in capsys.readouterr().err
    assert docs_reference.main(args) == 0
    assert docs_reference.main([*args, "--check"]) == 0
    assert page.read_text(encoding="utf-8") == (ROOT / "docs/formats.md").read_text(
        encoding="utf-8"
    )


def _with_vocabulary(folder: str, ops: tuple[tuple[str, str], ...]) -> list:
    return [
        dataclasses.replace(fmt, vocabulary=VocabularyColumn(fmt.vocabulary.label, ops))
        if fmt.staging_folder == folder
        else fmt
        for fmt in MANIFEST
    ]


def test_a_vocabulary_column_missing_a_row_is_an_error_naming_the_plugin():
    lindorm = next(fmt for fmt in MANIFEST if fmt.staging_folder == "lindorm")
    ops = tuple(op for op in lindorm.vocabulary.ops if op[0] != "heartbeat")
    with pytest.raises(
        docs_formats.DocsBlockError,
        match=r"format plug-in cdc_lakehouse\.formats\.lindorm: its vocabulary lacks row\(s\) "
        r"'heartbeat'",
    ):
        docs_formats.vocabulary_table(_with_vocabulary("lindorm", ops))


def test_a_vocabulary_column_naming_an_unknown_row_is_an_error_naming_the_plugin():
    canal = next(fmt for fmt in MANIFEST if fmt.staging_folder == "dts_canal")
    ops = (*canal.vocabulary.ops, ("schema change", "-"))
    with pytest.raises(
        docs_formats.DocsBlockError,
        match=r"format plug-in cdc_lakehouse\.formats\.dts_canal: its vocabulary names row\(s\) "
        r"'schema change' that docs/formats\.md's normalized vocabulary table does not have",
    ):
        docs_formats.vocabulary_table(_with_vocabulary("dts_canal", ops))
    renamed = tuple(
        ("snapshot (full-load row)", text) if name == "snapshot" else (name, text)
        for name, text in canal.vocabulary.ops
    )
    with pytest.raises(docs_formats.DocsBlockError, match=r"names row\(s\) 'snapshot \("):
        docs_formats.vocabulary_table(_with_vocabulary("dts_canal", renamed))


def test_a_vocabulary_column_twice_empty_or_not_shared_is_an_error_naming_the_plugin():
    canal = next(fmt for fmt in MANIFEST if fmt.staging_folder == "dts_canal")
    ops = canal.vocabulary.ops
    with pytest.raises(
        docs_formats.DocsBlockError, match=r"dts_canal: its vocabulary names row\(s\) 'insert' more"
    ):
        docs_formats.vocabulary_table(_with_vocabulary("dts_canal", (*ops, ("insert", "c"))))
    blank = tuple((name, "" if name == "tombstone" else text) for name, text in ops)
    with pytest.raises(docs_formats.DocsBlockError, match=r"dts_canal: .*'tombstone' no text"):
        docs_formats.vocabulary_table(_with_vocabulary("dts_canal", blank))
    qlik_json, qlik_avro = (fmt for fmt in MANIFEST if fmt.staging_folder == "qlik")
    apart = dataclasses.replace(
        qlik_avro, vocabulary=VocabularyColumn("Qlik Avro", qlik_avro.vocabulary.ops)
    )
    with pytest.raises(
        docs_formats.DocsBlockError,
        match=r"format plug-in cdc_lakehouse\.formats\.qlik: formats qlik_json and qlik_avro "
        "declare different vocabulary columns",
    ):
        docs_formats.vocabulary_table([qlik_json, apart])


def test_a_broken_vocabulary_column_fails_the_check_command(tmp_path, capsys, monkeypatch):
    _copy_pages(tmp_path)
    tuple_fmt = next(fmt for fmt in MANIFEST if fmt.staging_folder == "datahub_tuple")
    ops = tuple(op for op in tuple_fmt.vocabulary.ops if op[0] != "delete")
    monkeypatch.setattr(docs_reference, "MANIFEST", tuple(_with_vocabulary("datahub_tuple", ops)))
    assert docs_reference.main(["formats", "--root", str(tmp_path), "--check"]) == 2
    assert (
        "format plug-in cdc_lakehouse.formats.datahub_tuple: its vocabulary lacks row(s) "
        "'delete'" in capsys.readouterr().err
    )
