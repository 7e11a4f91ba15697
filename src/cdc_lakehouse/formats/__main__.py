"""``python -m cdc_lakehouse.formats generate | check [--project-dir DIR]``: write, or check
fresh, the dbt side's copy of the format manifest (:mod:`cdc_lakehouse.formats.dbt_side`).

Exit status: 0 done / fresh; 1 ``check`` found stale files (each named, with the command
that regenerates them); 2 a bad argument or a file without its generated block.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from cdc_lakehouse.formats import MANIFEST, dbt_side


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m cdc_lakehouse.formats", description=__doc__)
    parser.add_argument("action", choices=["generate", "check"])
    parser.add_argument("--project-dir", type=Path, default=Path("."))
    args = parser.parse_args(argv)
    root: Path = args.project_dir
    if not (root / dbt_side.PROJECT_FILE).is_file():
        parser.error(f"--project-dir {root}: no dbt_project.yml there")
    try:
        if args.action == "generate":
            for path in dbt_side.generate(root, MANIFEST):
                print(f"wrote {path}")
            return 0
        stale = dbt_side.stale(root, MANIFEST)
    except dbt_side.GeneratedFileError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for path in stale:
        print(f"{path} is stale: run `{dbt_side.COMMAND}`", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
