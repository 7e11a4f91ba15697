"""``python -m cdc_lakehouse.tools.bench.worker KIND SPEC_JSON RESULT_JSON``: one measurement in a
process of its own (its own JVM and lake, under ``CDC_LAKE_DIR``), started by
:mod:`cdc_lakehouse.tools.bench.cli`. ``KIND`` is ``format`` (:mod:`.format_bench`), ``growth``
(:mod:`.growth_bench`), ``incremental`` (:mod:`.incremental_bench`), ``ingest``
(:mod:`.ingest_bench`) or ``tables`` (:mod:`.tables_bench`); the result document is written to
``RESULT_JSON``.
Exit codes: 0 done, 1 a step failed (the reason on stderr), 2 bad arguments.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cdc_lakehouse.tools.bench import (
    format_bench,
    growth_bench,
    incremental_bench,
    ingest_bench,
    tables_bench,
)

KINDS = {
    "format": format_bench.run,
    "growth": growth_bench.run,
    "incremental": incremental_bench.run,
    "ingest": ingest_bench.run,
    "tables": tables_bench.run,
}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 4 or args[0] not in KINDS:
        print(
            f"usage: python -m cdc_lakehouse.tools.bench.worker {{{'|'.join(KINDS)}}} SPEC_JSON "
            "RESULT_JSON PROJECT_DIR",
            file=sys.stderr,
        )
        return 2
    kind, spec_path, result_path, project_dir = args
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    work_dir = Path(result_path).parent
    result = KINDS[kind](spec, work_dir, Path(project_dir))
    Path(result_path).write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
