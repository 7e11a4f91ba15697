"""What a build's tables are a function of besides bronze, as one md5 (``project_state``).

``macros/cdc_test_scope.sql`` records it with every successful whole-project build
(``silver.cdc_tested_batches.built_state``); a later `dbt run` or `dbt build` with the same
state and no bronze record since that build is up to date: its models write nothing and its
data tests check nothing (macro ``build_up_to_date``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

PROJECT_FILE = "dbt_project.yml"


def project_files(root: Path, folders: Iterable[str]) -> list[Path]:
    """``dbt_project.yml`` and every file under ``folders`` (paths relative to ``root``;
    missing ones skipped), sorted; hidden files and ``__pycache__`` left out."""
    found = [root / PROJECT_FILE] if (root / PROJECT_FILE).is_file() else []
    for folder in folders:
        base = root / folder
        if base.is_dir():
            found.extend(
                path
                for path in base.rglob("*")
                if path.is_file()
                and "__pycache__" not in path.parts
                and not any(part.startswith(".") for part in path.relative_to(root).parts)
            )
    return sorted(set(found))


def digest(
    root: Path,
    folders: Iterable[str],
    package_dir: Path,
    cli_vars: Mapping[str, Any],
    schema: str,
) -> str:
    """The md5 (hex) of the project's files (:func:`project_files`: name and bytes), the
    ``*.py`` files of ``package_dir`` (the decoders and DDL translation the Python models
    call), the command line's ``--vars`` (as sorted JSON) and the target's ``schema``."""
    md5 = hashlib.md5(usedforsecurity=False)
    package_files = sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)
    for base, paths in ((root, project_files(root, folders)), (package_dir, package_files)):
        for path in paths:
            md5.update(str(path.relative_to(base)).encode() + b"\0")
            md5.update(path.read_bytes() + b"\0")
    md5.update(json.dumps(dict(cli_vars), sort_keys=True, default=str).encode() + b"\0")
    md5.update(schema.encode())
    return md5.hexdigest()
