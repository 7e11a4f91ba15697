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
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote


def committed_files(table_dir: Path, *, rows_read: bool = False) -> dict[Path, dict[str, str]]:
    """The data files of the table's latest commit -> their partition values (empty when the
    table has no commit yet). With ``rows_read`` (the caller reads the files' rows), fails on
    a file with a deletion vector: the rows it marks are deleted, which pyarrow cannot see
    (gold's MERGE tables have them once merged into; bronze, read here, has none)."""
    files: dict[Path, dict[str, str]] = {}
    for action in actions(table_dir):
        if "add" in action:
            added = action["add"]
            # rows a deletion vector marks are deleted: not readable without Delta
            if rows_read:
                assert not added.get("deletionVector"), f"{table_dir}: a deletion vector"
            files[table_dir / unquote(added["path"])] = added.get("partitionValues") or {}
        elif "remove" in action:
            files.pop(table_dir / unquote(action["remove"]["path"]), None)
    return files


def actions(table_dir: Path) -> Iterator[dict[str, Any]]:
    """Every action of the table's commits, in commit order (none before the first commit)."""
    for commit in sorted((table_dir / "_delta_log").glob("[0-9]*.json")):
        for line in commit.read_text().splitlines():
            yield json.loads(line)


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


def latest_version(table_dir: Path) -> int:
    """The table's newest commit version (-1 before its first commit)."""
    log = table_dir / "_delta_log"
    versions = [int(p.stem) for p in log.glob("[0-9]*.json")] if log.is_dir() else []
    return max(versions, default=-1)


def commit_operations(table_dir: Path) -> list[str]:
    """The operation of each commit (its ``commitInfo``), oldest first."""
    return [
        action["commitInfo"].get("operation", "")
        for action in actions(table_dir)
        if "commitInfo" in action
    ]


def live_row_count(table_dir: Path) -> int:
    """The rows of the table's latest commit, from the log alone: each added file's
    ``numRecords`` statistic less the rows its deletion vector marks deleted (``cardinality``).
    Fails on a file without statistics."""
    added: dict[tuple[str, str], dict[str, Any]] = {}
    for action in actions(table_dir):
        if "add" in action:
            added[_file_id(action["add"])] = action["add"]
        elif "remove" in action:
            added.pop(_file_id(action["remove"]), None)
    count = 0
    for (path, _vector), add in added.items():
        assert add.get("stats"), f"{table_dir}: no statistics for {path}"
        vector = add.get("deletionVector") or {}
        count += json.loads(add["stats"])["numRecords"] - int(vector.get("cardinality", 0))
    return count


def _file_id(action: dict[str, Any]) -> tuple[str, str]:
    """A file action's identity: its path and deletion vector (Delta protocol, "Deletion
    Vectors": a file whose deletion vector changes is removed with the old one and added with
    the new one)."""
    vector = action.get("deletionVector") or {}
    unique = f"{vector.get('storageType', '')}{vector.get('pathOrInlineDv', '')}"
    return action["path"], f"{unique}@{vector.get('offset', '')}"
