"""``python -m cdc_lakehouse.tools.dbt_loop DBT_ARG ...``: one dbt command run again and again in
one long-lived process, so every run after the first finds the JVM, its SparkSession and the JIT
compiler's work warm.

Each line read on standard input runs the command once (``dbt.cli.main.dbtRunner``, in this
process); when it is done, one line ``cdc-dbt-loop-result {"request": ..., "ok": ...,
"seconds": ...}`` (JSON; ``request`` is the line read, ``seconds`` the run's wall time) follows
dbt's own output on standard output, with ``"error"`` when dbt could not run the command at all
(bad arguments, no project). The loop ends at the end of its input.

Why (bench/HISTORY.md, 2026-11-26): a query's first run in a JVM costs about three times its
later runs, the JIT compiler's warm-up. On a 200,000-change Canal lake a whole ``dbt build``
with nothing new took 69.8 s as a ``dbt`` process of its own, and 41.4 and 36.1 s as the second
and third run in one process. ``make demo-live`` schedules its builds through this loop.

Exit codes: 0 its input ended; 2 no dbt arguments.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable, Sequence
from typing import TextIO

RESULT_PREFIX = "cdc-dbt-loop-result "
"""The start of the line that ends each run's output."""


def run_loop(dbt_args: Sequence[str], requests: Iterable[str], out: TextIO) -> None:
    """Run ``dbt dbt_args`` once per line of ``requests``; after each run write its result line
    (:data:`RESULT_PREFIX` + JSON) to ``out``."""
    from dbt.cli.main import dbtRunner

    for line in requests:
        started = time.monotonic()
        result = dbtRunner().invoke(list(dbt_args))
        document: dict[str, object] = {
            "request": line.strip(),
            "ok": bool(result.success),
            "seconds": round(time.monotonic() - started, 3),
        }
        if result.exception is not None:  # dbt could not run the command (e.g. bad arguments)
            document["error"] = f"{type(result.exception).__name__}: {result.exception}"
            out.write(f"error: {document['error']}\n")
        out.write(RESULT_PREFIX + json.dumps(document) + "\n")
        out.flush()


def parse_result(line: str) -> dict[str, object] | None:
    """The result document of a line of the loop's output, or ``None`` for dbt's own lines."""
    if not line.startswith(RESULT_PREFIX):
        return None
    document: dict[str, object] = json.loads(line[len(RESULT_PREFIX) :])
    return document


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(
            "error: give the dbt command to repeat, e.g. python -m cdc_lakehouse.tools.dbt_loop "
            "build --project-dir . --profiles-dir .",
            file=sys.stderr,
        )
        return 2
    run_loop(args, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
