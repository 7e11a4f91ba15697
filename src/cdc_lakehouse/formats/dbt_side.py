"""Write what the dbt side needs of the format manifest, which it cannot import.

dbt reads Jinja, YAML and CSV, not Python, so four pieces of the project repeat the manifest
(:data:`cdc_lakehouse.formats.MANIFEST`) and its plug-ins. They are written from them, never by
hand:

- ``macros/cdc_format_plugins.sql``: the macro ``cdc_all_staging_event_models()``, one entry
  per staging folder: its events model, its formats, its ``paired_in`` model and
  ``resolves_later`` (read by ``macros/cdc_formats.sql`` and ``macros/cdc_incremental.sql``);
  and ``cdc_format_orderings()``, each staging folder's ordering rule (its parts, widths and
  whether rows carry an index), which macro ``format_ordering_key`` (``macros/cdc_keys.sql``)
  turns into the events model's ordering key.
- ``dbt_project.yml``: each staging folder's ``+enabled`` (built when var ``cdc_formats`` is
  unset or lists one of its formats), between the lines :data:`BEGIN` and :data:`END`.
- ``models/staging/bronze/_bronze__models.yml``: the accepted ``format`` values of the topic
  registry model ``stg_bronze__topics`` (the user's and the example seeds), likewise.
- ``seeds/cdc_type_mappings.csv``: the header, then each plug-in's own source type -> Spark type
  rows (``src/cdc_lakehouse/formats/<folder>/type_mappings.csv``, the type families its formats'
  declared column types belong to, e.g. Canal's ``mysql``, ``postgresql``, ``oracle``,
  ``sqlserver``), plug-ins in manifest order, each file's rows in its order.

``python -m cdc_lakehouse.formats generate`` rewrites them; ``python -m cdc_lakehouse.formats
check`` (``make check-generated``, run by ``make test``) exits 1 naming each stale file.

Errors: :class:`GeneratedFileError` when a file lacks its :data:`BEGIN` / :data:`END` lines,
formats sharing a staging folder disagree on ``paired_in`` / ``resolves_later``, a plug-in
whose formats declare a ``type_family`` has no ``type_mappings.csv`` or one whose header is not
the seed's, or two plug-ins give rows of the same type family.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

from cdc_lakehouse.formats.plugin import Format

BEGIN = "# >>> generated from the format plug-ins: python -m cdc_lakehouse.formats generate"
END = "# <<< generated"
COMMAND = "python -m cdc_lakehouse.formats generate"
MACRO_FILE = Path("macros/cdc_format_plugins.sql")
PROJECT_FILE = Path("dbt_project.yml")
REGISTRY_MODELS_FILE = Path("models/staging/bronze/_bronze__models.yml")
TYPE_MAPPINGS_FILE = Path("seeds/cdc_type_mappings.csv")
PLUGINS_DIR = Path("src/cdc_lakehouse/formats")
"""The plug-in packages' folder, relative to the project directory."""
PLUGIN_TYPE_MAPPINGS = "type_mappings.csv"
"""A plug-in's type-mapping rows: ``<PLUGINS_DIR>/<folder>/type_mappings.csv``."""
TYPE_MAPPINGS_HEADER = (
    "type_family,source_type,spark_type,value_expression,default_precision,default_scale,value_text"
)


class GeneratedFileError(ValueError):
    """A generated piece cannot be written; the message names the file and the fix."""


def _folders(manifest: Sequence[Format]) -> dict[str, list[Format]]:
    """Staging folder -> its formats, folders in manifest order."""
    folders: dict[str, list[Format]] = {}
    for fmt in manifest:
        folders.setdefault(fmt.staging_folder, []).append(fmt)
    for folder, formats in folders.items():
        shared = {
            (fmt.paired_in, fmt.resolves_later, fmt.events_model, fmt.ordering, fmt.row_index)
            for fmt in formats
        }
        if len(shared) != 1:
            raise GeneratedFileError(
                f"the formats of staging folder {folder!r} must agree on paired_in, "
                "resolves_later, ordering and row_index (one events model serves them all)"
            )
    return folders


def macro_text(manifest: Sequence[Format]) -> str:
    """The whole of ``macros/cdc_format_plugins.sql``."""
    folders = _folders(manifest)
    entries = []
    for formats in folders.values():
        first = formats[0]
        names = ", ".join(f"'{fmt.name}'" for fmt in formats)
        entry = f"{{'model': '{first.events_model}', 'formats': [{names}]"
        if first.paired_in:
            entry += f", 'paired_in': '{first.paired_in}'"
        if first.resolves_later:
            entry += ", 'resolves_later': true"
        entries.append(f"        {entry}}},")
    body = "\n".join(entries)
    orderings = []
    for folder, formats in folders.items():
        parts = ", ".join(
            f"['{part.name}', {part.width}, {'true' if part.text else 'false'}]"
            for part in formats[0].ordering
        )
        row_index = "true" if formats[0].row_index else "false"
        orderings.append(f"        '{folder}': {{'parts': [{parts}], 'row_index': {row_index}}},")
    ordering_body = "\n".join(orderings)
    return (
        "{#\n"
        f"    Generated from the format plug-ins (src/cdc_lakehouse/formats/) by `{COMMAND}`;\n"
        "    do not edit. cdc_all_staging_event_models(): one entry per staging folder, its\n"
        "    events model, the registry formats it decodes, 'paired_in' (the intermediate model\n"
        "    that completes its rows across records, which silver reads instead) and\n"
        "    'resolves_later' (a row can become final in a later batch than its own). Read by\n"
        "    macros/cdc_formats.sql and macros/cdc_incremental.sql.\n"
        "#}\n"
        "{% macro cdc_all_staging_event_models() %}\n"
        "    {{ return([\n"
        f"{body}\n"
        "    ]) }}\n"
        "{% endmacro %}\n"
        "\n"
        "{#\n"
        "    cdc_format_orderings(): each staging folder's ordering rule, from its plug-in's\n"
        "    ordering: the parts [name, width, is text] before the Kafka tail, most significant\n"
        "    first, and whether a record's rows carry their index (row_index). Read by macro\n"
        "    format_ordering_key (macros/cdc_keys.sql).\n"
        "#}\n"
        "{% macro cdc_format_orderings() %}\n"
        "    {{ return({\n"
        f"{ordering_body}\n"
        "    }) }}\n"
        "{% endmacro %}\n"
    )


def enabled_lines(manifest: Sequence[Format]) -> list[str]:
    """The ``+enabled`` lines of ``dbt_project.yml``'s ``models: cdc_lakehouse: staging:``."""
    lines = []
    for folder, formats in _folders(manifest).items():
        listed = " or ".join(f"'{fmt.name}' in var('cdc_formats')" for fmt in formats)
        rule = f"{{{{ var('cdc_formats', none) is none or {listed} }}}}"
        lines += [f"{folder}:", f'  +enabled: "{rule}"']
    return lines


def accepted_formats_lines(manifest: Sequence[Format]) -> list[str]:
    """The ``format:`` accepted values line of ``stg_bronze__topics``' ``column_checks``."""
    return [f"format: [{', '.join(fmt.name for fmt in manifest)}]"]


def replace_block(
    text: str, lines: Sequence[str], path: Path, begin: str = BEGIN, end: str = END
) -> str:
    """``text`` with the lines between its ``begin`` and the next ``end`` line (by default
    :data:`BEGIN` and :data:`END`; the docs' generated blocks pass their HTML comments)
    replaced by ``lines``, indented as the ``begin`` line is.

    Raises:
        GeneratedFileError: ``text`` lacks either line.
    """
    rows = text.split("\n")
    try:
        start = next(i for i, row in enumerate(rows) if row.strip() == begin)
        stop = next(i for i in range(start, len(rows)) if rows[i].strip() == end)
    except StopIteration:
        raise GeneratedFileError(
            f"{path}: no '{begin}' ... '{end}' block; restore it from git"
        ) from None
    indent = rows[start][: len(rows[start]) - len(rows[start].lstrip())]
    return "\n".join(rows[: start + 1] + [indent + line for line in lines] + rows[stop:])


def type_mappings_text(root: Path, manifest: Sequence[Format]) -> str:
    """``seeds/cdc_type_mappings.csv``: :data:`TYPE_MAPPINGS_HEADER`, then the rows of each
    plug-in's ``type_mappings.csv`` (folders in manifest order, a missing file is no rows unless
    the plug-in's formats declare a ``type_family``).

    Raises:
        GeneratedFileError: a plug-in whose formats declare a type family has no file, a
            file's first line is not the header, or a type family has rows in two plug-ins.
    """
    lines = [TYPE_MAPPINGS_HEADER]
    owner: dict[str, str] = {}
    for folder, formats in _folders(manifest).items():
        path = PLUGINS_DIR / folder / PLUGIN_TYPE_MAPPINGS
        if not (root / path).is_file():
            declared = sorted({fmt.type_family for fmt in formats if fmt.type_family})
            if declared:
                raise GeneratedFileError(
                    f"{path}: missing; the plug-in's formats declare type family "
                    f"{', '.join(declared)}: add its rows (header: {TYPE_MAPPINGS_HEADER})"
                )
            continue
        rows = (root / path).read_text("utf-8").splitlines()
        if not rows or rows[0] != TYPE_MAPPINGS_HEADER:
            raise GeneratedFileError(f"{path}: the first line must be {TYPE_MAPPINGS_HEADER}")
        for record in csv.reader(row for row in rows[1:] if row):
            family = record[0]
            if owner.setdefault(family, folder) != folder:
                raise GeneratedFileError(
                    f"{path}: type family {family!r} has rows in plug-in {owner[family]!r} "
                    "too; a family belongs to one plug-in"
                )
        lines += [row for row in rows[1:] if row]
    return "\n".join(lines) + "\n"


def expected(root: Path, manifest: Sequence[Format]) -> dict[Path, str]:
    """Path (relative to the project ``root``) -> the text it must have."""
    return {
        MACRO_FILE: macro_text(manifest),
        PROJECT_FILE: replace_block(
            (root / PROJECT_FILE).read_text("utf-8"), enabled_lines(manifest), PROJECT_FILE
        ),
        REGISTRY_MODELS_FILE: replace_block(
            (root / REGISTRY_MODELS_FILE).read_text("utf-8"),
            accepted_formats_lines(manifest),
            REGISTRY_MODELS_FILE,
        ),
        TYPE_MAPPINGS_FILE: type_mappings_text(root, manifest),
    }


def stale(root: Path, manifest: Sequence[Format]) -> list[Path]:
    """The generated files under ``root`` whose text differs from :func:`expected`."""
    return [
        path
        for path, text in expected(root, manifest).items()
        if not (root / path).is_file() or (root / path).read_text("utf-8") != text
    ]


def generate(root: Path, manifest: Sequence[Format]) -> list[Path]:
    """Write every stale generated file under ``root``; returns the files written."""
    written = []
    for path, text in expected(root, manifest).items():
        target = root / path
        if not target.is_file() or target.read_text("utf-8") != text:
            target.write_text(text, "utf-8")
            written.append(path)
    return written
