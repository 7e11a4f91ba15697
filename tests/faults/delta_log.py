"""A Delta table's committed state read from its ``_delta_log`` alone (no Spark, no metastore):
the tests of tests/faults/ read tables with it while a write is killed, as an independent
check of what a commit holds.

A Delta table directory holds data files and ``_delta_log/<version>.json`` commit files, each a
JSON line per action; ``add`` puts a data file (its ``path`` relative to the table, URL-quoted,
with its ``partitionValues``) into the table, ``remove`` takes it out (Delta protocol,
github.com/delta-io/delta PROTOCOL.md, "Actions"). Replaying the commits in version order gives
the files of the latest version; a file written by a write killed before its commit is in no
``add``. The JSON commits stay beside the checkpoints for ``delta.logRetentionDuration`` (30
days), so replaying them all is enough for the lakes of the tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote


def committed_files(table_dir: Path, *, rows_read: bool = False) -> dict[Path, dict[str, str]]:
    """The data files of the table's latest commit -> their partition values (empty when the
    table has no commit yet). With ``rows_read`` (the caller reads the files' rows), fails on
    a file with a deletion vector: the rows it marks are deleted, which pyarrow cannot see
    (gold's MERGE tables have them once merged into; bronze, read here, has none)."""
    files: dict[Path, dict[str, str]] = {}
    log = table_dir / "_delta_log"
    for commit in sorted(log.glob("[0-9]*.json")) if log.is_dir() else ():
        for line in commit.read_text().splitlines():
            action = json.loads(line)
            if "add" in action:
                added = action["add"]
                # rows a deletion vector marks are deleted: not readable without Delta
                if rows_read:
                    assert not added.get("deletionVector"), f"{table_dir}: a deletion vector"
                files[table_dir / unquote(added["path"])] = added.get("partitionValues") or {}
            elif "remove" in action:
                files.pop(table_dir / unquote(action["remove"]["path"]), None)
    return files


def has_commit(table_dir: Path) -> bool:
    """True once the table's first commit is written."""
    return (table_dir / "_delta_log" / f"{0:020d}.json").is_file()


def uncommitted_files(table_dir: Path) -> set[Path]:
    """The Parquet data files under ``table_dir`` that no commit has added: those of a write in
    progress or killed (never read; VACUUM removes them)."""
    written = {path for path in table_dir.glob("**/*.parquet") if "_delta_log" not in path.parts}
    return written - set(committed_files(table_dir))


def read_table(table_dir: Path, columns: list[str]) -> list[dict[str, Any]]:
    """The rows of the table's latest commit (``columns``; partition columns from the commit's
    partition values, as text), read with pyarrow."""
    import pyarrow.parquet as pq

    rows: list[dict[str, Any]] = []
    for path, partition in sorted(committed_files(table_dir, rows_read=True).items()):
        stored = [c for c in columns if c not in partition]
        for row in pq.read_table(path, columns=stored).to_pylist():
            rows.append({**row, **{c: partition[c] for c in columns if c in partition}})
    return rows
