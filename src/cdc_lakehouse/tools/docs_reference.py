"""Reference pages of the docs site generated from the project's own files.

``docs/reference/tables.md`` lists every model of the dbt project from the ``_*__models.yml``
files under ``models/``: its name, the schema it is built in (``silver`` or ``gold``, the
``+schema`` of its folder in ``dbt_project.yml``), the first paragraph of its description and
its columns with their descriptions (the typed gold models, one per source table, by name and
description only: their columns are the source table's). Regenerate it after changing a
model's YAML::

    python -m cdc_lakehouse.tools.docs_reference tables > docs/reference/tables.md

``tests/unit/test_docs_reference.py`` fails while the committed page differs from what this
prints.

The pages' lists of the formats (README.md's names and formats table, ``docs/index.md``'s names,
``docs/reference/format-registry.md``'s table, ``docs/formats.md``'s numbered sections and
normalized vocabulary table) are generated blocks, written from the format plug-ins by
:mod:`cdc_lakehouse.tools.docs_formats`::

    python -m cdc_lakehouse.tools.docs_reference formats           # rewrite them
    python -m cdc_lakehouse.tools.docs_reference formats --check   # exit 1 when stale

(``make check-generated`` runs the check).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]  # no stubs pinned (types-PyYAML)

from cdc_lakehouse.formats import MANIFEST
from cdc_lakehouse.tools import docs_formats

ROOT = Path(__file__).resolve().parents[3]
"""The repository checkout this package lives in (an editable install)."""

TABLES_COMMAND = "python -m cdc_lakehouse.tools.docs_reference tables > docs/reference/tables.md"
"""The command that regenerates ``docs/reference/tables.md``."""

TYPED_GOLD_FOLDER = ("marts", "current_state", "tables")
"""The folder (under ``models/``) of the generated typed gold models."""

MODEL_PATHS = ("models", "sample_data/models")
"""The model paths (of ``dbt_project.yml``) whose ``_*__models.yml`` files the page lists."""

SECTIONS = (
    ("silver", "Silver: staging, intermediate and change tables"),
    ("gold", "Gold: current state and history"),
)
"""The schemas in the order the page lists them, with their section titles."""


@dataclass(frozen=True)
class Column:
    """One column of a model's YAML."""

    name: str
    data_type: str | None
    description: str


@dataclass(frozen=True)
class Model:
    """One model of a ``_*__models.yml`` file, as the tables page shows it."""

    name: str
    schema: str
    folder: tuple[str, ...]
    """The model's folder under ``models/``, as path parts."""
    description: str
    columns: tuple[Column, ...]
    model_path: str = "models"
    """The dbt model path the folder is in: ``models``, or ``sample_data/models`` for the
    examples' typed gold models."""

    @property
    def typed_gold(self) -> bool:
        """Whether the model is a generated typed gold model (one per source table)."""
        return self.folder[: len(TYPED_GOLD_FOLDER)] == TYPED_GOLD_FOLDER


def first_paragraph(text: str | None) -> str:
    """The first paragraph of a YAML description, on one line (empty for no description)."""
    if not text:
        return ""
    paragraph = text.strip().split("\n\n", 1)[0]
    return " ".join(paragraph.split())


def folder_schemas(project: Mapping[str, Any], project_name: str) -> dict[tuple[str, ...], str]:
    """``+schema`` per folder of ``dbt_project.yml``'s ``models:`` block (inherited downwards)."""
    found: dict[tuple[str, ...], str] = {}

    def walk(node: Mapping[str, Any], path: tuple[str, ...], schema: str | None) -> None:
        schema = node.get("+schema", schema)
        if schema is not None:
            found[path] = str(schema)
        for key, child in node.items():
            if not key.startswith("+") and isinstance(child, Mapping):
                walk(child, (*path, key), schema)

    walk(project.get("models", {}).get(project_name, {}), (), None)
    return found


def schema_of(folder: tuple[str, ...], schemas: Mapping[tuple[str, ...], str]) -> str:
    """The schema of a model folder: that of its nearest configured ancestor folder."""
    for length in range(len(folder), -1, -1):
        if folder[:length] in schemas:
            return schemas[folder[:length]]
    raise ValueError(f"no +schema in dbt_project.yml for models/{'/'.join(folder)}")


def load_models(root: Path = ROOT) -> list[Model]:
    """Every model declared in a ``_*__models.yml`` under ``root``'s :data:`MODEL_PATHS`, sorted
    by name; its schema is its YAML's ``config: schema`` if set, else its folder's."""
    project = yaml.safe_load((root / "dbt_project.yml").read_text(encoding="utf-8"))
    schemas = folder_schemas(project, project["name"])
    models = []
    files = [
        (model_path, path)
        for model_path in MODEL_PATHS
        for path in sorted((root / model_path).rglob("_*__models.yml"))
    ]
    for model_path, path in files:
        folder = path.parent.relative_to(root / model_path).parts
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for entry in document.get("models") or ():
            columns = tuple(
                Column(
                    name=str(column["name"]),
                    data_type=column.get("data_type"),
                    description=first_paragraph(column.get("description")),
                )
                for column in entry.get("columns") or ()
            )
            models.append(
                Model(
                    name=str(entry["name"]),
                    schema=str(
                        (entry.get("config") or {}).get("schema") or schema_of(folder, schemas)
                    ),
                    folder=folder,
                    description=first_paragraph(entry.get("description")),
                    columns=columns,
                    model_path=model_path,
                )
            )
    return sorted(models, key=lambda model: (model.schema, model.name))


def _text(text: str) -> str:
    """Description text for Markdown: ``<`` outside code spans escaped, so that a placeholder
    such as ``<meta.table>`` shows as written instead of being read as an HTML tag."""
    parts = text.split("`")
    return "`".join(part if i % 2 else part.replace("<", "&lt;") for i, part in enumerate(parts))


def _cell(text: str) -> str:
    """Description text for a Markdown table cell (pipes escaped too)."""
    return _text(text).replace("|", "\\|")


def _model_lines(model: Model) -> Iterable[str]:
    yield f"### `{model.schema}.{model.name}`"
    yield ""
    yield f"Folder: `{model.model_path}/{'/'.join(model.folder)}/`."
    if model.description:
        yield ""
        yield _text(model.description)
    if model.columns:
        yield ""
        yield "| column | type | description |"
        yield "|---|---|---|"
        for column in model.columns:
            data_type = f"`{column.data_type}`" if column.data_type else ""
            yield f"| `{column.name}` | {data_type} | {_cell(column.description)} |"
    yield ""


def render_tables(models: Sequence[Model]) -> str:
    """The Markdown of ``docs/reference/tables.md`` for ``models``."""
    lines = [
        "# Tables and models",
        "",
        "<!-- Generated from the models' YAML: do not edit. Regenerate with",
        f"     {TABLES_COMMAND} -->",
        "",
        "Every model of the dbt project, by schema, as its `_<folder>__models.yml` describes it:",
        "the first paragraph of its description and its columns (with the Spark type where the",
        "YAML declares one, as the public models' enforced contracts do). Bronze's",
        "`bronze.kafka_records` is the ingest job's table, a dbt source",
        "(`models/staging/bronze/_bronze__sources.yml`); `bronze.cdc_topics` and the other",
        "seeds are described in `seeds/` and `sample_data/seeds/`.",
        "",
    ]
    for schema, title in SECTIONS:
        chosen = [m for m in models if m.schema == schema and not m.typed_gold]
        lines += [f"## {title}", ""]
        for model in chosen:
            lines += list(_model_lines(model))
    typed = [m for m in models if m.typed_gold]
    if typed:
        lines += [
            "## Typed gold: one view per source table",
            "",
            "Generated by `python -m cdc_lakehouse.codegen gold-tables` from what silver knows",
            "(see the typed gold how-to); their columns are the source table's, described in",
            "each folder's `_<folder>__models.yml`. Those of the bundled sample's and the tests'",
            "tables are in `sample_data/models/` (enabled with `CDC_EXAMPLES=true`).",
            "",
            "| model | folder | description |",
            "|---|---|---|",
        ]
        for model in typed:
            folder = "/".join(model.folder)
            description = _cell(model.description)
            lines.append(
                f"| `gold.{model.name}` | `{model.model_path}/{folder}/` | {description} |"
            )
        lines.append("")
    others = sorted({m.schema for m in models} - {schema for schema, _ in SECTIONS})
    if others:
        raise ValueError(f"models in schemas the page does not list: {', '.join(others)}")
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Print a generated reference page (``tables``) on standard output, or rewrite (check
    with ``--check``) the formats' generated blocks (``formats``,
    :mod:`cdc_lakehouse.tools.docs_formats`).

    Exit status: 0 done / fresh; 1 ``formats --check`` found stale pages (each named, with the
    command that rewrites them); 2 a bad argument or a page without its generated block.
    """
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.docs_reference",
        description="Print a generated reference page of the docs site, or rewrite the "
        "formats' generated blocks of README.md and docs/.",
    )
    parser.add_argument(
        "page",
        choices=["tables", "formats"],
        help="tables: print docs/reference/tables.md; formats: rewrite the blocks of "
        + ", ".join(docs_formats.PAGES)
        + " from the format plug-ins",
    )
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository checkout")
    parser.add_argument(
        "--check",
        action="store_true",
        help="formats: write nothing; exit 1 naming each stale page",
    )
    args = parser.parse_args(argv)
    if args.page == "tables":
        if args.check:
            parser.error(
                "--check: only for formats (tests/unit/test_docs_reference.py checks tables)"
            )
        sys.stdout.write(render_tables(load_models(args.root)))
        return 0
    try:
        if not args.check:
            for path in docs_formats.write(args.root, MANIFEST):
                print(f"wrote {path}")
            return 0
        stale = docs_formats.stale(args.root, MANIFEST)
    except docs_formats.DocsBlockError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in stale:
        print(f"{path} is stale: run `{docs_formats.COMMAND}`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
