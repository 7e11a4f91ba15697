"""Command line of the ingest job: ``python -m ingest --dump PATH [options]``.

Exit codes: 0 done; 2 a problem the user must fix (bad arguments, dump, registry, lake
directory, table / checkpoint mismatch), reported as one ``error: ...`` line on stderr; 1 the
Spark query failed (first line of Spark's message on stderr); 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from cdc_lakehouse.registry import DEFAULT_REGISTRY
from cdc_lakehouse.settings import ConfigError, load_settings

DEFAULT_TABLE = "bronze.kafka_records"
PROG = "python -m ingest"


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one ``error:`` line (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {PROG} --help)\n")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    parser = _Parser(
        prog=PROG,
        description=(
            "Write Kafka records into the bronze table exactly once per (topic, partition, "
            "offset). Reads a recorded topic dump (JSON Lines); records at offsets already in "
            "the checkpoint are skipped, as with Kafka."
        ),
    )
    parser.add_argument(
        "--dump",
        required=True,
        type=Path,
        metavar="PATH",
        help="topic dump: a .jsonl file or a directory (every *.jsonl below it, sorted)",
    )
    parser.add_argument(
        "--registry",
        type=Path,
        default=DEFAULT_REGISTRY,
        metavar="CSV",
        help=f"topic registry (default {DEFAULT_REGISTRY})",
    )
    parser.add_argument(
        "--table", default=DEFAULT_TABLE, help=f"target table (default {DEFAULT_TABLE})"
    )
    parser.add_argument(
        "--checkpoint",
        type=Path,
        metavar="DIR",
        help="Structured Streaming checkpoint (default $CDC_LAKE_DIR/checkpoints/<table>)",
    )
    parser.add_argument(
        "--max-records-per-batch",
        type=_positive_int,
        metavar="N",
        help="at most N records per micro-batch (default: everything in one batch)",
    )
    return parser


def _dump_error_in(text: str) -> str | None:
    """The message of a :class:`~cdc_lakehouse.dump.DumpError` raised inside the streaming
    source (it reaches the driver wrapped in Spark's exception text), or ``None``."""
    marker = "DumpError: "
    for line in text.splitlines():
        if marker in line:
            return line.split(marker, 1)[1].strip()
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the ingest job; return the exit code (see the module docstring)."""
    args = build_parser().parse_args(argv)
    spark = None
    try:
        from cdc_lakehouse.ingest.bronze import check_table_name
        from cdc_lakehouse.ingest.job import IngestOptions, plan_ingest, run_ingest

        settings = load_settings()
        table = check_table_name(args.table)
        checkpoint = args.checkpoint or settings.checkpoint_dir / table
        plan = plan_ingest(
            IngestOptions(
                dump=args.dump,
                registry=args.registry,
                table=table,
                checkpoint=checkpoint.expanduser().resolve(),
                max_records_per_batch=args.max_records_per_batch,
            )
        )
        from cdc_lakehouse.spark_session import get_spark

        spark = get_spark(settings)
        run_ingest(spark, plan, table_format=settings.table_format)
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; rerun to continue from the checkpoint", file=sys.stderr)
        return 130
    except Exception as exc:
        from pyspark.errors import StreamingQueryException

        if not isinstance(exc, StreamingQueryException):
            raise
        dump_error = _dump_error_in(str(exc))
        if dump_error:
            print(f"error: {dump_error}", file=sys.stderr)
            return 2
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        print(f"error: the ingest query failed: {first.strip()}", file=sys.stderr)
        return 1
    finally:
        if spark is not None:
            spark.stop()
    return 0
