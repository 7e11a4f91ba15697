"""The format manifest (``cdc_lakehouse.formats``: the plug-ins found under
``src/cdc_lakehouse/formats/``) against the dbt side, which cannot import it: the staging and
typed-gold folders under ``models/``, the models in them, the topic registry and type-mapping
seeds, and the pieces generated from the manifest (``macros/cdc_format_plugins.sql``, the
``+enabled`` lines of ``dbt_project.yml``, the registry seed's accepted formats) (no Spark)."""

from __future__ import annotations

import csv
import importlib
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_lakehouse import formats
from cdc_lakehouse.codegen.cli import EXAMPLES_OUT
from cdc_lakehouse.codegen.gold_tables import folder_of
from cdc_lakehouse.codegen.type_mapping import FORMAT_FAMILIES
from cdc_lakehouse.decode.staging_model import FactoryError, decode_records
from cdc_lakehouse.formats import dbt_side
from cdc_lakehouse.formats.registry import EXAMPLE_REGISTRY, FORMATS
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, generate

PROJECT = Path(__file__).resolve().parents[2]
STAGING = PROJECT / "models" / "staging"
PYTHON_STAGING = PROJECT / "python_models" / "staging"  # the dbt Python models, same folders
GOLD_TABLES = PROJECT / "models" / "marts" / "current_state" / "tables"
# the typed gold models of the examples (the bundled sample's and the tests' tables)
EXAMPLE_GOLD_TABLES = PROJECT / EXAMPLES_OUT
FOLDERS = formats.staging_folders()
NOT_A_FORMAT_FOLDER = {"bronze"}  # the bronze records view and the bronze source


def subfolders(path: Path) -> list[Path]:
    """The folders in ``path``, sorted, without hidden ones and ``__pycache__``."""
    return sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def yaml_models(path: Path) -> dict[str, dict[str, Any]]:
    """Model (or seed) name -> its entry in a dbt properties YAML file."""
    entries = yaml.safe_load(path.read_text("utf-8"))
    return {entry["name"]: entry for entry in entries.get("models", entries.get("seeds", []))}


def accepted_values(model: dict[str, Any], column: str) -> list[str]:
    """The accepted values of ``column`` in a model's ``column_checks`` data test ([] when
    none; tests/dbt/generic/column_checks.sql)."""
    for test in model.get("data_tests", []):
        if isinstance(test, dict) and "column_checks" in test:
            checked = test["column_checks"]["arguments"].get("accepted_values", {})
            return list(checked.get(column, []))
    return []


# --------------------------------------------------------------------------- the manifest


def test_the_manifest_lists_each_format_once_and_the_registry_reads_it():
    assert len(set(formats.NAMES)) == len(formats.MANIFEST)
    # every plug-in package under src/cdc_lakehouse/formats/ is found, none listed by hand
    plugins = {p.name for p in subfolders(Path(formats.__file__).parent) if p.name != "__pycache__"}
    assert {fmt.staging_folder for fmt in formats.MANIFEST} == plugins
    assert FORMATS == formats.NAMES
    assert formats.get("datahub_blob").staging_folder == "dataworks"
    with pytest.raises(formats.UnknownFormatError, match="unknown format 'nope'"):
        formats.get("nope")
    with pytest.raises(formats.UnknownFormatError, match="no format has staging folder"):
        formats.in_staging_folder("nope")


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_formats_of_a_staging_folder_share_one_decoder_and_decoding_model(folder):
    folder_formats = formats.in_staging_folder(folder)
    assert len({fmt.decoder for fmt in folder_formats}) == 1
    assert len({fmt.decoding_model for fmt in folder_formats}) == 1
    assert folder_formats[0].decoding_model.startswith(f"stg_{folder}__")
    if folder_formats[0].decoder is None:  # decoded in SQL (by the events model or its input)
        assert folder_formats[0].decoder_module is None
    else:
        assert folder_formats[0].decoding_model != folder_formats[0].events_model


def test_gold_folders_are_unique_and_codegen_uses_them():
    gold = [fmt.gold_folder for fmt in formats.MANIFEST]
    assert len(set(gold)) == len(gold)
    assert {fmt.name: folder_of(fmt.name) for fmt in formats.MANIFEST} == {
        fmt.name: fmt.gold_folder for fmt in formats.MANIFEST
    }
    # the answer to "dataworks in staging, datahub_blob in gold": both, on purpose
    assert formats.get("datahub_blob").gold_folder == "datahub_blob"


def test_decoders_and_encoders_exist_and_agree():
    for fmt in formats.MANIFEST:
        if fmt.decoder_module is not None:  # None: decoded in SQL, no Python decoder
            decoder = importlib.import_module(fmt.decoder_module)
            assert callable(decoder.decode_batches) and callable(decoder.output_schema_ddl)
        encoder = ENCODERS[fmt.name]
        assert (encoder.__name__, encoder.FORMAT) == (fmt.encoder_module, fmt.name)
    assert tuple(ENCODERS) == formats.NAMES


@pytest.mark.parametrize("fmt", formats.MANIFEST, ids=lambda f: f.name)
def test_value_encoding_is_what_the_encoder_writes(fmt):
    encoder = ENCODERS[fmt.name]
    history = generate(SimulationConfig(changes=20, features=encoder.FEATURES))
    values = [m.value for m in encoder.encode(history, "t") if m.value is not None]
    assert values

    def is_json_text(value: bytes) -> bool:
        try:
            json.loads(value)
        except ValueError:  # also UnicodeDecodeError
            return False
        return True

    if fmt.value_encoding == "json":
        assert all(is_json_text(v) for v in values)
    else:
        assert not any(is_json_text(v) for v in values)


# --------------------------------------------------------------------------- the dbt side


def test_every_staging_folder_belongs_to_a_format():
    on_disk = {path.name for path in subfolders(STAGING)}
    assert on_disk - NOT_A_FORMAT_FOLDER == set(FOLDERS)
    project = yaml.safe_load((PROJECT / "dbt_project.yml").read_text("utf-8"))
    # sample_data/models: the examples' typed gold models (no staging folder)
    assert project["model-paths"] == ["models", "python_models", "sample_data/models"]
    assert [p.name for p in subfolders(PROJECT / "sample_data" / "models")] == ["marts"]
    assert {path.name for path in subfolders(PYTHON_STAGING)} <= set(FOLDERS)
    assert not list((PROJECT / "models").rglob("*.py")), "dbt Python models go in python_models/"


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_staging_folder_holds_its_formats_models_and_one_yaml(folder):
    folder_formats = formats.in_staging_folder(folder)
    decoding, events = folder_formats[0].decoding_model, folder_formats[0].events_model
    # one noun: a decoding model of its own is stg_<folder>__decoded
    assert decoding in (events, f"stg_{folder}__decoded")
    path = STAGING / folder
    assert sorted(p.name for p in path.glob("*.yml")) == [f"_{folder}__models.yml"]
    python_path = PYTHON_STAGING / folder
    python_models = {p.stem for p in python_path.glob("*.py")} if python_path.is_dir() else set()
    models = {p.stem for p in path.glob("*.sql")} | python_models
    documented = yaml_models(path / f"_{folder}__models.yml")
    assert set(documented) == models
    events_sql = (path / f"{events}.sql").read_text("utf-8")
    if folder_formats[0].decoder is None:
        # decoded in SQL: the decoding model (the events model itself, or the model it reads)
        # reads bronze; no Python model
        assert models == {decoding, events}
        assert not python_models
        decoding_sql = (path / f"{decoding}.sql").read_text("utf-8")
        assert "ref('stg_bronze__kafka_records')" in decoding_sql
        for name in formats.names(folder_formats):
            assert f"'{name}'" in decoding_sql
        if decoding != events:
            assert f"ref('{decoding}')" in events_sql
        return
    assert models == {decoding, events}
    assert python_models == {decoding} and (path / f"{events}.sql").is_file()
    assert set(accepted_values(documented[decoding], "source_format")) == set(
        formats.names(folder_formats)
    )
    # the decoding model calls the factory for its own folder, and the events model reads it
    source = (python_path / f"{decoding}.py").read_text("utf-8")
    assert re.search(rf'decode_records\(.*folder="{folder}"', source, re.DOTALL)
    assert 'dbt.ref("stg_bronze__kafka_records")' in source
    assert f"ref('{decoding}')" in events_sql


def test_the_dbt_side_is_generated_fresh_from_the_plug_ins(tmp_path):
    """macros/cdc_format_plugins.sql, dbt_project.yml's +enabled lines, the registry seed's
    accepted formats and seeds/cdc_type_mappings.csv are what `python -m cdc_lakehouse.formats
    generate` writes."""
    stale = dbt_side.stale(PROJECT, formats.MANIFEST)
    assert not stale, f"stale: {stale}; run `{dbt_side.COMMAND}`"
    # and the check names a file that a hand edit made stale, with the command
    plugin_mappings = sorted(
        path.relative_to(PROJECT)
        for path in (PROJECT / dbt_side.PLUGINS_DIR).glob(f"*/{dbt_side.PLUGIN_TYPE_MAPPINGS}")
    )
    copied = (dbt_side.PROJECT_FILE, dbt_side.REGISTRY_MODELS_FILE, dbt_side.MACRO_FILE)
    for path in (*copied, dbt_side.TYPE_MAPPINGS_FILE, *plugin_mappings):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text((PROJECT / path).read_text("utf-8"), "utf-8")
    edited = (tmp_path / dbt_side.PROJECT_FILE).read_text("utf-8")
    (tmp_path / dbt_side.PROJECT_FILE).write_text(edited.replace("'qlik_avro' in", "'x' in"))
    assert dbt_side.stale(tmp_path, formats.MANIFEST) == [dbt_side.PROJECT_FILE]
    assert dbt_side.generate(tmp_path, formats.MANIFEST) == [dbt_side.PROJECT_FILE]
    assert dbt_side.stale(tmp_path, formats.MANIFEST) == []
    # a plug-in's new type-mapping row reaches the seed, which the check then calls stale
    typed = [fmt for fmt in formats.MANIFEST if fmt.type_family]
    assert typed
    family, folder = typed[0].type_family, typed[0].staging_folder
    mappings = tmp_path / dbt_side.PLUGINS_DIR / folder / dbt_side.PLUGIN_TYPE_MAPPINGS
    row = f'{family},io.example.Money,"decimal(38,4)",,,,a test row'
    with mappings.open("a", encoding="utf-8") as handle:
        handle.write(row + "\n")
    assert dbt_side.stale(tmp_path, formats.MANIFEST) == [dbt_side.TYPE_MAPPINGS_FILE]
    dbt_side.generate(tmp_path, formats.MANIFEST)
    assert row in (tmp_path / dbt_side.TYPE_MAPPINGS_FILE).read_text("utf-8").splitlines()


def test_the_type_mapping_seed_refuses_a_family_in_two_plug_ins_and_a_missing_file(tmp_path):
    by_folder = {fmt.staging_folder: fmt for fmt in formats.MANIFEST if fmt.type_family}
    first, second, *others = by_folder.values()
    for fmt in (first, second):
        path = tmp_path / dbt_side.PLUGINS_DIR / fmt.staging_folder / dbt_side.PLUGIN_TYPE_MAPPINGS
        path.parent.mkdir(parents=True)
        row = f"{first.type_family},int32,int,,,,"
        path.write_text(f"{dbt_side.TYPE_MAPPINGS_HEADER}\n{row}\n", "utf-8")
    # a plug-in with a type family and no file (only two were written under tmp_path)
    with pytest.raises(dbt_side.GeneratedFileError, match="missing; the plug-in's formats"):
        dbt_side.type_mappings_text(tmp_path, [*others[:1], first])
    with pytest.raises(
        dbt_side.GeneratedFileError, match=f"'{first.type_family}' has rows in plug-in"
    ):
        dbt_side.type_mappings_text(tmp_path, [first, second])


def test_dbt_project_enables_each_staging_folder_by_its_manifest_formats():
    """var cdc_formats: dbt_project.yml enables a staging folder when the var is unset or
    lists one of the folder's formats, the rule of cdc_staging_event_models()."""
    project = yaml.safe_load((PROJECT / "dbt_project.yml").read_text("utf-8"))
    staging = project["models"]["cdc_lakehouse"]["staging"]
    for folder in FOLDERS:
        listed = " or ".join(
            f"'{fmt.name}' in var('cdc_formats')" for fmt in formats.in_staging_folder(folder)
        )
        expected = f"{{{{ var('cdc_formats', none) is none or {listed} }}}}"
        assert staging.get(folder, {}).get("+enabled") == expected, folder
    # a format's intermediate model int_<folder>__... follows its staging folder (silver's
    # and gold's own, int_schema_versions_by_batch and int_row_versions, have no folder part)
    intermediates = sorted((PROJECT / "models" / "intermediate").glob("int_*__*.sql"))
    assert intermediates
    for path in intermediates:
        folder = path.stem.removeprefix("int_").split("__")[0]
        assert folder in FOLDERS, path.name
        assert f"config(enabled=cdc_folder_enabled('{folder}'))" in path.read_text("utf-8")
    paired = {fmt.paired_in for fmt in formats.MANIFEST if fmt.paired_in}
    assert paired == {path.stem for path in intermediates}


def test_typed_gold_folders_follow_the_manifest():
    by_folder = {fmt.gold_folder: fmt for fmt in formats.MANIFEST}
    assert subfolders(EXAMPLE_GOLD_TABLES), "the examples' typed gold models"
    for path in [*subfolders(GOLD_TABLES), *subfolders(EXAMPLE_GOLD_TABLES)]:
        assert path.name in by_folder, f"{path} is no format's gold_folder"
        assert (path / f"_{path.name}__models.yml").is_file()
        for sql in path.glob("*.sql"):
            assert sql.stem.startswith(f"{path.name}__"), sql
            made_for = re.search(r"Typed current state of (\w+) table", sql.read_text("utf-8"))
            if made_for:  # generated files name their format
                assert formats.get(made_for.group(1)).gold_folder == path.name, sql


def test_registry_topics_use_manifest_formats_and_every_format_has_a_topic():
    used = set()
    for registry in (PROJECT / "seeds" / "cdc_topics.csv", PROJECT / EXAMPLE_REGISTRY):
        with registry.open(newline="", encoding="utf-8") as handle:
            used |= {row["format"] for row in csv.DictReader(handle)}
    assert used == set(formats.NAMES)
    # dbt's test: on the union of the user's and the example seeds
    union = yaml_models(PROJECT / dbt_side.REGISTRY_MODELS_FILE)["stg_bronze__topics"]
    assert accepted_values(union, "format") == list(formats.NAMES)


def test_type_families_are_in_the_seed_and_codegen_reads_them():
    path = PROJECT / "seeds" / "cdc_type_mappings.csv"
    with path.open(newline="", encoding="utf-8") as handle:
        families = {row["type_family"] for row in csv.DictReader(handle)}
    for fmt in formats.MANIFEST:
        assert fmt.type_family is None or fmt.type_family in families, fmt.name
        assert FORMAT_FAMILIES[fmt.name] == fmt.type_family


# --------------------------------------------------------------------------- the factory


def test_the_factory_refuses_an_unknown_folder_and_a_folder_decoded_in_sql():
    nothing: Any = None  # checked before the factory touches dbt, Spark or the records
    with pytest.raises(formats.UnknownFormatError, match="no format has staging folder"):
        decode_records(nothing, nothing, nothing, folder="nope")
    # DTS Canal JSON is decoded by its SQL events model: no Python decoder to apply
    assert formats.get("dts_canal_json").decoder is None
    with pytest.raises(FactoryError, match="one folder has one Python decoder"):
        decode_records(nothing, nothing, nothing, folder="dts_canal")
