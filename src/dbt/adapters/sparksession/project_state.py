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
        if (root / folder).is_dir():
            found.extend(_code_files(root / folder))
    return sorted(set(found))


def digest(
    root: Path,
    folders: Iterable[str],
    code_dirs: Iterable[Path],
    cli_vars: Mapping[str, Any],
    schema: str,
) -> str:
    """The md5 (hex) of the project's files (:func:`project_files`: name and bytes), the files
    of ``code_dirs`` (the code the models run: the ``cdc_lakehouse`` package, whose decoders
    and DDL translation the Python models call, and the sources of the project's JVM
    functions, e.g. the exact JSON function that decodes DTS Canal JSON; ``__pycache__`` and
    hidden files left out), the command line's ``--vars`` (as sorted JSON) and the target's
    ``schema``."""
    md5 = hashlib.md5(usedforsecurity=False)
    trees = [(root, project_files(root, folders))]
    trees += [(code_dir, _code_files(code_dir)) for code_dir in code_dirs]
    for base, paths in trees:
        for path in paths:
            md5.update(str(path.relative_to(base)).encode() + b"\0")
            md5.update(path.read_bytes() + b"\0")
    md5.update(json.dumps(dict(cli_vars), sort_keys=True, default=str).encode() + b"\0")
    md5.update(schema.encode())
    return md5.hexdigest()


def _code_files(code_dir: Path) -> list[Path]:
    """Every file under ``code_dir``, sorted; hidden files and ``__pycache__`` left out."""
    return sorted(
        path
        for path in code_dir.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and not any(part.startswith(".") for part in path.relative_to(code_dir).parts)
    )
