"""``python -m cdc_lakehouse.codegen gold-tables``: generate or refresh the typed gold models.

Usage::

    python -m cdc_lakehouse.codegen gold-tables [--format F ...] [--table T ...]
        [--out models/gold/tables] [--check] [--force]

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

Exit codes: 0 done / no drift, 1 drift found by ``--check``, 2 bad arguments, an empty silver,
or a missing table.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from cdc_lakehouse.codegen.gold_tables import (
    SelectionError,
    SilverTable,
    generate_files,
    plan_models,
    plan_writes,
    select_models,
)
from cdc_lakehouse.codegen.type_mapping import TypeMapping
from cdc_lakehouse.registry import FORMATS

DEFAULT_OUT = Path("models") / "gold" / "tables"


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
    return the exit code (see module doc). Raises :class:`SelectionError` for a selection that
    names nothing or an empty silver."""
    models = plan_models(tables, mappings)
    selected = select_models(models, formats, table_names)
    existing = existing_files(out)
    actions = plan_writes(generate_files(models, selected, existing), existing, force=force)
    drift = [a for a in actions if a.writes]
    for action in actions:
        shown = out / action.path
        if action.status == "kept_edited":
            print(f"kept      {shown} (edited by hand; --force overwrites it)", file=stdout)
        elif action.status == "kept_manual":
            print(f"kept      {shown} (no generated header; --force overwrites it)", file=stdout)
        elif action.writes:
            verb = "would " + action.status if check else action.status
            print(f"{verb:<9} {shown}", file=stdout)
            if not check:
                shown.parent.mkdir(parents=True, exist_ok=True)
                shown.write_text(action.text, encoding="utf-8")
    unchanged = sum(a.status == "unchanged" for a in actions)
    print(
        f"{len(selected)} table(s): {len(drift)} file(s) {'differ' if check else 'written'}, "
        f"{unchanged} unchanged",
        file=stdout,
    )
    return 1 if check and drift else 0


def main(argv: list[str] | None = None) -> int:
    """Run the command; return the exit code."""
    args = parser().parse_args(argv)
    try:
        from cdc_lakehouse.codegen.silver import MissingTableError, read_mappings, read_tables
        from cdc_lakehouse.settings import ConfigError
        from cdc_lakehouse.spark_session import get_spark

        try:
            spark = get_spark()
            tables, mappings = read_tables(spark), read_mappings(spark)
        except (ConfigError, MissingTableError, ValueError) as exc:
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
    except SelectionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
