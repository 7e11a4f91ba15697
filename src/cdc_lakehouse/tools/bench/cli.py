"""``python -m cdc_lakehouse.tools.bench`` (``make bench``): measure the pipeline per format and
stage next to the baselines, and the incremental cost growth; write the report.

Every measurement runs in a worker process of its own (:mod:`.worker`) with a fresh lake
under ``--work-dir``, so one format's JVM, caches and tables never help or slow another.
The defaults (three formats, see :data:`DEFAULT_FORMATS`) took 19 minutes on 2 cores
(``bench/results.md``): about 3 minutes per format and 12 for the cost growth; ``--format all``
measures all nine. ``--part incremental`` adds issue 20's target 3 (:mod:`.incremental_bench`:
an incremental ``dbt build`` on a 200,000-change history against the script's recompute);
``--part ingest`` target 4 (:mod:`.ingest_bench`: the ingest job's records/s on a
1,000,000-record dump, and from the local Kafka broker, the JVM start apart), ``--part tables``
target 5 (:mod:`.tables_bench`: the whole ``dbt build`` with typed gold for 200 source tables
against 10, the same changes).
Results: ``--out`` (default ``bench/``) gets ``results.json``, ``results.md``,
``throughput.png`` and ``cost_growth.png`` (:mod:`.report`).

Exit codes: 0 done (also when a target is missed: the report says so), 1 a step failed
(the worker's log is named), 2 bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NoReturn

from cdc_lakehouse.runtime.cli_types import positive_int
from cdc_lakehouse.runtime.jars import class_path
from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.tools.bench import report
from cdc_lakehouse.tools.bench.ingest_bench import SOURCES, marker_path
from cdc_lakehouse.tools.simulate.encoders import ENCODERS

DEFAULT_FORMATS = ("dataworks_json", "dts_canal_json", "dts_avro")
"""One JSON envelope format with split updates, one multi-row JSON format, one Avro format:
the default run stays near 20 minutes; ``--format all`` measures every format."""
DEFAULT_CHANGES = 20_000
DEFAULT_GROWTH_FORMAT = "dts_canal_json"
DEFAULT_GROWTH_CHANGES = 2_000
DEFAULT_FACTORS = (1, 4, 16)
PARTS = ("formats", "growth", "incremental", "ingest", "tables")
"""The bench's parts: throughput per format, cost growth, incremental against recompute,
ingest records/s (dump and Kafka), cost of source tables."""
DEPLOYMENTS = ("all-formats", "its-format")
"""How the growth and incremental parts deploy the project: every format's models, or only
those of the measured format (var ``cdc_formats``, docs/how-to/choose-formats.md "How to
choose the formats: var `cdc_formats`")."""
DEFAULT_PARTS = ("formats", "growth")
"""The default run (about 20 minutes on 2 cores); ``--part incremental`` adds target 3's run
on a 200,000-change history (several minutes more), ``--part ingest`` target 4's (a
1,000,000-record dump: about 10 minutes more), ``--part tables`` target 5's (10 and 200
source tables, two runs each: about 30 minutes more)."""
DEFAULT_HISTORY_CHANGES = 200_000
DEFAULT_HISTORY_BATCH_CHANGES = 1_000
DEFAULT_INGEST_FORMAT = "dts_canal_json"
DEFAULT_INGEST_RECORDS = 1_000_000
DEFAULT_TABLES = 200
DEFAULT_BASE_TABLES = 10
DEFAULT_TABLES_CHANGES = 20_000
DEFAULT_TABLES_ROUNDS = 2
"""Runs per table count in the tables part (A B B A): one run each put minutes of the
machine's drift into the ratio (1.71x to 2.46x on the same code, 2026-11-28)."""
PROG = "python -m cdc_lakehouse.tools.bench"


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``error:`` line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {PROG} --help)\n")


def tables_order(base: int, tables: int, rounds: int) -> list[int]:
    """The tables part's table counts in the order they run: ``rounds`` runs of each,
    alternating A B B A A B ... (``base`` first), so that a linear drift of the machine's
    speed weighs on both counts alike."""
    order: list[int] = []
    for round_ in range(rounds):
        order += [base, tables] if round_ % 2 == 0 else [tables, base]
    return order


def _factors(text: str) -> tuple[int, ...]:
    try:
        factors = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of whole numbers, e.g. 1,4,16"
        ) from None
    if len(factors) < 2 or any(f < 1 for f in factors) or list(factors) != sorted(set(factors)):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give at least two increasing history sizes of 1 or more, e.g. 1,4,16"
        )
    return factors


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=(
            "Benchmark: events/s per format and stage (dump -> bronze -> silver -> gold, one "
            "incremental batch) against a hand-written PySpark script, DuckDB and the "
            "orjson / fastavro decode floor on the same bytes; and the incremental dbt build "
            "time as history grows against a full build."
        ),
    )
    parser.add_argument(
        "--format",
        action="append",
        metavar="NAME",
        help=(
            "format to measure (repeatable), or 'all' for every simulated format "
            f"(default {', '.join(DEFAULT_FORMATS)})"
        ),
    )
    parser.add_argument(
        "--changes",
        type=positive_int,
        default=DEFAULT_CHANGES,
        help=f"row changes of each format's history (default {DEFAULT_CHANGES:,})",
    )
    parser.add_argument(
        "--batch-changes",
        type=positive_int,
        help="row changes of the incremental batch (default a tenth of --changes)",
    )
    parser.add_argument(
        "--growth-format",
        default=DEFAULT_GROWTH_FORMAT,
        metavar="NAME",
        help=(
            "format of the cost-growth, incremental and tables runs "
            f"(default {DEFAULT_GROWTH_FORMAT})"
        ),
    )
    parser.add_argument(
        "--growth-changes",
        type=positive_int,
        default=DEFAULT_GROWTH_CHANGES,
        help=f"row changes of the 1x history (default {DEFAULT_GROWTH_CHANGES:,})",
    )
    parser.add_argument(
        "--growth-batch-changes",
        type=positive_int,
        help="row changes of the fixed new batch (default a sixteenth of --growth-changes)",
    )
    parser.add_argument(
        "--factors",
        type=_factors,
        default=DEFAULT_FACTORS,
        help="history sizes of the cost growth, in multiples of --growth-changes (default 1,4,16)",
    )
    parser.add_argument(
        "--history-changes",
        type=positive_int,
        default=DEFAULT_HISTORY_CHANGES,
        help=(
            "part incremental: row changes of the history the new batch lands on "
            f"(default {DEFAULT_HISTORY_CHANGES:,}; format --growth-format)"
        ),
    )
    parser.add_argument(
        "--history-batch-changes",
        type=positive_int,
        default=DEFAULT_HISTORY_BATCH_CHANGES,
        help=(
            "part incremental: row changes of the new batch "
            f"(default {DEFAULT_HISTORY_BATCH_CHANGES:,})"
        ),
    )
    parser.add_argument(
        "--deployment",
        choices=DEPLOYMENTS,
        default="all-formats",
        help=(
            "parts growth and incremental: build the project as shipped, every format's models "
            "(all-formats, the default), or as deployed for --growth-format alone "
            "(its-format: var cdc_formats lists that format)"
        ),
    )
    parser.add_argument(
        "--ingest-records",
        type=positive_int,
        default=DEFAULT_INGEST_RECORDS,
        help=(
            "part ingest: records of the dump ingested (and produced to the local broker) "
            f"(default {DEFAULT_INGEST_RECORDS:,})"
        ),
    )
    parser.add_argument(
        "--ingest-format",
        default=DEFAULT_INGEST_FORMAT,
        metavar="NAME",
        help=f"part ingest: format of the records (default {DEFAULT_INGEST_FORMAT})",
    )
    parser.add_argument(
        "--tables",
        type=positive_int,
        default=DEFAULT_TABLES,
        help=(
            "part tables: source tables the changes are spread over, each with a typed gold "
            f"model (default {DEFAULT_TABLES}; format --growth-format)"
        ),
    )
    parser.add_argument(
        "--base-tables",
        type=positive_int,
        default=DEFAULT_BASE_TABLES,
        help=(
            "part tables: the table count --tables is compared with "
            f"(default {DEFAULT_BASE_TABLES})"
        ),
    )
    parser.add_argument(
        "--tables-changes",
        type=positive_int,
        default=DEFAULT_TABLES_CHANGES,
        help=(
            "part tables: row changes of the history at each table count "
            f"(default {DEFAULT_TABLES_CHANGES:,})"
        ),
    )
    parser.add_argument(
        "--tables-batch-changes",
        type=positive_int,
        help="part tables: row changes of the new batch (default a twentieth of --tables-changes)",
    )
    parser.add_argument(
        "--tables-rounds",
        type=positive_int,
        default=DEFAULT_TABLES_ROUNDS,
        help=(
            "part tables: runs per table count, alternating A B B A so that the machine's "
            "drift during the part weighs on both counts; the ratio compares the medians "
            f"(default {DEFAULT_TABLES_ROUNDS})"
        ),
    )
    parser.add_argument(
        "--part",
        choices=PARTS,
        action="append",
        help=(
            "part to run (repeatable): formats (throughput per format against the baselines), "
            "growth (incremental build as history grows), incremental (incremental build on a "
            "large history against the script's recompute), ingest (dump -> bronze and "
            "Kafka -> bronze records/s), tables (whole dbt build with typed gold for --tables "
            f"source tables against --base-tables); default {', '.join(DEFAULT_PARTS)}"
        ),
    )
    parser.add_argument(
        "--skip",
        choices=PARTS,
        action="append",
        default=[],
        help="leave a part out of the selected ones",
    )
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument(
        "--out", type=Path, default=Path("bench"), help="report directory (default ./bench)"
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        help="scratch directory for lakes and logs (default a temporary one, removed after)",
    )
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."), help="the dbt project (default .)"
    )
    return parser


class WorkerFailed(RuntimeError):
    """A worker process failed; the message names its log."""


def run_worker(kind: str, spec: dict[str, Any], work_dir: Path, project_dir: Path) -> dict:
    """Run one :mod:`.worker` in ``work_dir`` (its lake: ``work_dir/lake``); its output goes to
    ``work_dir/worker.log``.

    A format worker's session also loads the jars of class path ``autocdc`` (the AutoCDC
    baseline's target catalog, ``CDC_SPARK_EXTRA_JARS``).

    Raises:
        WorkerFailed: the worker exited non-zero.
        cdc_lakehouse.runtime.jars.JarsMissingError: a format worker, and the ``autocdc`` jars are
            not installed (``make install``).
    """
    work_dir.mkdir(parents=True, exist_ok=True)
    spec_path = work_dir / "spec.json"
    result_path = work_dir / "result.json"
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    # the worker process's environment: its settings (cdc_lakehouse.runtime.settings) come from it
    env = {
        **os.environ,
        "CDC_LAKE_DIR": str(work_dir / "lake"),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        # every job, stage and task, for the per-stage profile of each dbt command
        # (spark_stages; the history server of the pyspark wheel opens the same files)
        "CDC_SPARK_EVENT_LOG_DIR": str(work_dir / "spark-events"),
    }
    if kind == "format":  # the AutoCDC baseline's target catalog (bench.baselines.autocdc)
        env["CDC_SPARK_EXTRA_JARS"] = ",".join(str(jar) for jar in class_path("autocdc"))
    log_path = work_dir / "worker.log"
    command = [
        sys.executable,
        "-m",
        "cdc_lakehouse.tools.bench.worker",
        kind,
        str(spec_path),
        str(result_path),
        str(project_dir),
    ]
    with log_path.open("w", encoding="utf-8") as log:
        completed = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    if completed.returncode != 0:
        tail = log_path.read_text(encoding="utf-8", errors="replace").splitlines()[-15:]
        raise WorkerFailed(
            f"{kind} worker {spec} failed (exit {completed.returncode}); log {log_path}:\n"
            + "\n".join(tail)
        )
    return json.loads(result_path.read_text(encoding="utf-8"))


def ingest_part(
    format_: str, records: int, seed: int, scratch: Path, project_dir: Path
) -> list[dict[str, Any]]:
    """Part ingest: one worker per source (:data:`.ingest_bench.SOURCES`) on one shared dump
    of ``records`` records (removed at the end). A failed Kafka worker does not stop the
    bench: its entry is ``{"source": "kafka", "format", "records", "error": <the last line of
    its log>, "log": <the log's path>}`` and the report says so.

    Raises:
        WorkerFailed: the dump worker failed.
    """
    dump = scratch / "records-dump"  # beside the workers' ingest-<source> directories
    results = []
    try:
        for source in SOURCES:
            spec = {
                "source": source,
                "format": format_,
                "records": records,
                "seed": seed,
                "dump": str(dump),
            }
            work_dir = scratch / f"ingest-{source}"
            try:
                result = run_worker("ingest", spec, work_dir, project_dir)
            except WorkerFailed as exc:
                if source == "dump":
                    raise
                result = {
                    "source": source,
                    "format": format_,
                    "records": records,
                    "error": str(exc).strip().splitlines()[-1].strip(),
                    "log": str(work_dir / "worker.log"),
                }
            results.append(result)
            print(report.ingest_line(result), flush=True)
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        marker_path(dump).unlink(missing_ok=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    known = sorted(ENCODERS)
    formats = list(DEFAULT_FORMATS) if not args.format else args.format
    if "all" in formats:
        formats = known
    unknown = sorted(
        {f for f in [*formats, args.growth_format, args.ingest_format] if f not in ENCODERS}
    )
    if unknown:
        parser.error(f"unknown format {', '.join(unknown)}; choose from {', '.join(known)}")
    project_dir = args.project_dir.resolve()
    if not (project_dir / "dbt_project.yml").is_file():
        parser.error(
            f"{project_dir} holds no dbt_project.yml; run from the project or give --project-dir"
        )
    parts = [p for p in (args.part or DEFAULT_PARTS) if p not in args.skip]
    if "tables" in parts and args.tables <= args.base_tables:
        parser.error(
            f"--tables {args.tables} must be above --base-tables {args.base_tables} "
            "(the table count it is compared with)"
        )
    tables_batch = args.tables_batch_changes or max(args.tables_changes // 20, 1)
    batch_changes = args.batch_changes or max(args.changes // 10, 1)
    growth_batch = args.growth_batch_changes or max(args.growth_changes // 16, 1)
    scratch = args.work_dir or Path(tempfile.mkdtemp(prefix="cdc-bench-"))
    deployed = [args.growth_format] if args.deployment == "its-format" else []
    started = time.monotonic()
    document: dict[str, Any] = {
        "machine": report.machine(),
        "config": {
            "parts": parts,
            "formats": formats if "formats" in parts else [],
            "changes": args.changes,
            "batch_changes": batch_changes,
            "growth_format": args.growth_format,
            "growth_changes": args.growth_changes,
            "growth_batch_changes": growth_batch,
            "factors": list(args.factors) if "growth" in parts else [],
            "history_changes": args.history_changes,
            "history_batch_changes": args.history_batch_changes,
            "deployment": args.deployment,
            "ingest_format": args.ingest_format,
            "ingest_records": args.ingest_records,
            "tables": [args.base_tables, args.tables] if "tables" in parts else [],
            "tables_rounds": args.tables_rounds,
            "tables_changes": args.tables_changes,
            "tables_batch_changes": tables_batch,
            "seed": args.seed,
        },
        "formats": [],
        "growth": [],
        "incremental": [],
        "ingest": [],
        "tables": [],
    }
    try:
        if "formats" in parts:
            for format_ in formats:
                spec = {
                    "format": format_,
                    "changes": args.changes,
                    "batch_changes": batch_changes,
                    "seed": args.seed,
                }
                result = run_worker("format", spec, scratch / f"format-{format_}", project_dir)
                document["formats"].append(result)
                print(report.format_line(result), flush=True)
        if "growth" in parts:
            for factor in args.factors:
                spec = {
                    "format": args.growth_format,
                    "changes": args.growth_changes,
                    "factor": factor,
                    "batch_changes": growth_batch,
                    "seed": args.seed,
                    "cdc_formats": deployed,
                }
                result = run_worker("growth", spec, scratch / f"growth-{factor}x", project_dir)
                document["growth"].append(result)
                print(report.growth_line(result), flush=True)
        if "incremental" in parts:
            spec = {
                "format": args.growth_format,
                "changes": args.history_changes,
                "batch_changes": args.history_batch_changes,
                "seed": args.seed,
                "cdc_formats": deployed,
            }
            result = run_worker("incremental", spec, scratch / "incremental", project_dir)
            document["incremental"].append(result)
            print(report.incremental_line(result), flush=True)
        if "ingest" in parts:
            document["ingest"] = ingest_part(
                args.ingest_format, args.ingest_records, args.seed, scratch, project_dir
            )
        if "tables" in parts:
            for order, tables in enumerate(
                tables_order(args.base_tables, args.tables, args.tables_rounds), start=1
            ):
                spec = {
                    "format": args.growth_format,
                    "tables": tables,
                    "changes": args.tables_changes,
                    "batch_changes": tables_batch,
                    "seed": args.seed,
                }
                result = run_worker(
                    "tables", spec, scratch / f"tables-{order}-{tables}", project_dir
                )
                document["tables"].append(result)
                print(report.tables_line(result), flush=True)
    except (WorkerFailed, ConfigError) as exc:  # ConfigError: the autocdc jars missing
        print(f"error: {exc}", file=sys.stderr)
        return 1
    document["wall_s"] = round(time.monotonic() - started, 1)
    paths = report.write(document, args.out)
    print(f"bench: {document['wall_s']:.0f} s; wrote {', '.join(str(p) for p in paths)}")
    if args.work_dir is None:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0
