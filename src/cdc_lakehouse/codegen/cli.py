"""``python -m cdc_lakehouse.codegen gold-tables``: generate or refresh the typed gold models.

Usage::

    python -m cdc_lakehouse.codegen gold-tables [--format F ...] [--table T ...]
        [--out models/marts/current_state/tables] [--check] [--force]

The examples' typed models (the bundled sample's and the tests' tables, enabled with
``CDC_EXAMPLES=true``) live in ``sample_data/models/marts/current_state/tables/examples``:
``--out`` that directory refreshes them. The build warns about a typed model whose table has a
newer schema version than the one it was generated from (the singular data test
``assert_typed_gold_matches_the_newest_schema``), naming this command.

Reads ``silver.table_schemas``, ``silver.change_events`` and the seed
``bronze.cdc_type_mappings`` from the lake at ``CDC_LAKE_DIR`` (run ingest and ``dbt build``
first; the Derby metastore admits one process at a time), and writes per source table
``<out>/<format folder>/<model>.sql`` and per folder ``<out>/<folder>/_<folder>__models.yml``
(:mod:`cdc_lakehouse.codegen.gold_tables`).

- ``--format`` / ``--table`` (repeatable) restrict the tables; a table is named by its model
  name, ``table``, ``database.table``, ``schema.table`` or ``database.schema.table``.
- A file the command generated and nobody changed since is refreshed; a file edited by hand
  (its checksum no longer matches) or written by hand (no generated header) is left alone and
  reported, unless ``--force``. Files of tables no longer in silver are not deleted.
- ``--check`` writes nothing and exits 1 when a refresh would create or change a file (CI).
- A refresh writes all its files or none (:func:`write_files`): a file the system refuses
  stops the command with one line naming it, and the files are as they were.

Exit codes: 0 done / no drift, 1 drift found by ``--check``, 2 bad arguments, an empty silver,
a missing table, or a file that cannot be written.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from cdc_lakehouse.codegen import silver
from cdc_lakehouse.codegen.gold_tables import (
    FileAction,
    SelectionError,
    SilverTable,
    generate_files,
    plan_models,
    plan_writes,
    select_models,
    shown,
)
from cdc_lakehouse.codegen.type_mapping import TypeMapping
from cdc_lakehouse.formats.registry import FORMATS

# modules, not names: the tests replace their functions
from cdc_lakehouse.runtime import spark_session
from cdc_lakehouse.runtime.settings import ConfigError

DEFAULT_OUT = Path("models") / "marts" / "current_state" / "tables"
EXAMPLES_OUT = Path("sample_data") / "models" / "marts" / "current_state" / "tables" / "examples"
"""Where the examples' typed gold models live (the bundled sample's and the tests' tables,
enabled with ``CDC_EXAMPLES=true``): refresh them with ``--out`` this directory."""
NAME_MAX_BYTES = 255
"""Bytes of one file name at most (Linux file systems, APFS, NTFS)."""
STAGING_PREFIX = ".gold-tables-staging-"
"""Name start of the directory under ``--out`` where a refresh writes its files first; they end
in ``.partial`` there, which dbt does not read (a killed refresh leaves nothing dbt parses)."""


class WriteError(OSError):
    """A generated file that cannot be written; nothing was written."""


def parser() -> argparse.ArgumentParser:
    """The command-line parser."""
    top = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.codegen",
        description="Generate dbt model files from what silver knows.",
    )
    commands = top.add_subparsers(dest="command", required=True)
    gold = commands.add_parser(
        "gold-tables",
        help="one typed gold model per source table found in silver",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    gold.add_argument(
        "--format",
        action="append",
        choices=FORMATS,
        metavar="F",
        help=f"only tables of this registry format (repeatable): {', '.join(FORMATS)}",
    )
    gold.add_argument(
        "--table",
        action="append",
        metavar="T",
        help="only this table: model name, table, database.table, schema.table or "
        "database.schema.table (repeatable)",
    )
    gold.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help=f"output directory (default {DEFAULT_OUT})",
    )
    gold.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 when a refresh would create or change a file",
    )
    gold.add_argument(
        "--force",
        action="store_true",
        help="also overwrite files edited or written by hand",
    )
    return top


def existing_files(out: Path) -> dict[str, str]:
    """Texts of the ``.sql`` / ``.yml`` files under ``out``, by path relative to it."""
    if not out.is_dir():
        return {}
    return {
        path.relative_to(out).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.suffix in (".sql", ".yml")
    }


def refresh(
    tables: Sequence[SilverTable],
    mappings: Mapping[tuple[str, str], TypeMapping],
    out: Path,
    *,
    formats: Sequence[str] | None = None,
    table_names: Sequence[str] | None = None,
    check: bool = False,
    force: bool = False,
    stdout: TextIO = sys.stdout,
) -> int:
    """Generate the selected tables' files into ``out`` (or only compare with ``check``);
    return the exit code (see module doc).

    Raises:
        SelectionError: a selection that names nothing, or an empty silver.
        WriteError: a file cannot be written (:func:`write_files`: then none is).
    """
    models = plan_models(tables, mappings)
    selected = select_models(models, formats, table_names)
    existing = existing_files(out)
    actions = plan_writes(generate_files(models, selected, existing), existing, force=force)
    drift = [a for a in actions if a.writes]
    if not check:
        write_files(out, drift, existing)
    for action in actions:
        where = out / action.path
        if action.status == "kept_edited":
            print(f"kept      {where} (edited by hand; --force overwrites it)", file=stdout)
        elif action.status == "kept_manual":
            print(f"kept      {where} (no generated header; --force overwrites it)", file=stdout)
        elif action.writes:
            verb = "would " + action.status if check else action.status
            print(f"{verb:<9} {where}", file=stdout)
    skipped = [m for m in selected if m.skipped is not None]
    for model in skipped:
        print(f"skipped   {shown(model.table.qualified_name)}: {model.skipped}", file=stdout)
    unchanged = sum(a.status == "unchanged" for a in actions)
    print(
        f"{len(selected)} table(s){f' ({len(skipped)} skipped)' if skipped else ''}: "
        f"{len(drift)} file(s) {'differ' if check else 'written'}, {unchanged} unchanged",
        file=stdout,
    )
    return 1 if check and drift else 0


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit code."""
    args = parser().parse_args(argv)
    try:
        try:
            spark = spark_session.get_spark()
            tables, mappings = silver.read_tables(spark), silver.read_mappings(spark)
        except (ConfigError, silver.MissingTableError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return refresh(
            tables,
            mappings,
            args.out,
            formats=args.format,
            table_names=args.table,
            check=args.check,
            force=args.force,
        )
    except (SelectionError, WriteError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def write_files(
    out: Path, actions: Sequence[FileAction], existing: Mapping[str, str] | None = None
) -> None:
    """Write the texts of ``actions`` (paths relative to ``out``), all of them or none.

    A path part of more than :data:`NAME_MAX_BYTES` bytes stops it before it writes. Every
    text is then written under a staging directory in ``out`` (same file system), as
    ``<its path>.partial``: the same folders and a longer name, so a name or folder the system
    refuses (too long, a file where a folder belongs, no permission, a full disk) fails there,
    before any file of ``out`` changes. Then each file is moved into place (a rename); should
    one move fail (a folder where the file belongs), the files already moved get back their
    text of ``existing`` (path -> text before the refresh; absent = no file) or are removed.
    Folders the refresh created are removed again on a failure.

    Raises:
        WriteError: one line naming the file that cannot be written and why; the files under
            ``out`` are as they were.
    """
    if not actions:
        return
    before = dict(existing or {})
    for action in actions:
        for part in Path(action.path).parts:
            size = len(part.encode("utf-8", "surrogatepass"))
            if size > NAME_MAX_BYTES:
                raise WriteError(
                    f"cannot write {out / action.path}: its name {part[:40]}... is {size} "
                    f"bytes, a file name holds {NAME_MAX_BYTES}; nothing was written"
                )
    created: list[Path] = []  # folders this refresh made, deepest last
    moved: list[str] = []
    staging: Path | None = None
    current = out
    try:
        _make_dirs(out, created)
        staging = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
        for action in actions:
            current = out / action.path
            staged = staging / f"{action.path}.partial"
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_text(action.text, encoding="utf-8")
        for action in actions:
            current = out / action.path
            _make_dirs(current.parent, created)
            os.replace(staging / f"{action.path}.partial", current)
            moved.append(action.path)
    except OSError as exc:
        _undo(out, moved, before, staging, created)
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise WriteError(f"cannot write {current}: {reason}; nothing was written") from exc
    shutil.rmtree(staging, ignore_errors=True)


def _undo(
    out: Path,
    moved: list[str],
    before: Mapping[str, str],
    staging: Path | None,
    created: list[Path],
) -> None:
    """Put back what a failed :func:`write_files` changed: the moved files' old texts (or no
    file), no staging directory, none of the folders it created."""
    for path in reversed(moved):
        target = out / path
        with contextlib.suppress(OSError):
            if path in before:
                target.write_text(before[path], encoding="utf-8")
            else:
                target.unlink(missing_ok=True)
    if staging is not None:
        shutil.rmtree(staging, ignore_errors=True)
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _make_dirs(folder: Path, created: list[Path]) -> None:
    """``folder`` and its missing parents (like ``mkdir -p``), each one made appended to
    ``created`` (parents first)."""
    missing = []
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            break
        missing.append(candidate)
    for candidate in reversed(missing):
        candidate.mkdir()
        created.append(candidate)
