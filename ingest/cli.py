"""Command line of the ingest job: ``python -m ingest (--dump PATH | --bootstrap-servers
HOST:PORT) [options]``.

Exit codes: 0 done (in continuous mode: stopped by SIGINT / SIGTERM after committing the batch
in progress); 2 any error, reported as one ``error: ...`` line on stderr: a problem the user must
fix (bad arguments, a ``CDC_SPARK_*`` setting Spark would refuse, a ``spark://`` master that
does not answer, dump, registry, lake directory, metastore in use by another process, table /
checkpoint mismatch, broker unreachable, unknown topic, offsets deleted by retention), or a
failed Spark query or unexpected error, whose line gives the first line of the message and
names a log file under ``$CDC_LAKE_DIR/logs/`` with the full text and traceback; 130
interrupted (Ctrl-C in batch mode).
"""

from __future__ import annotations

import argparse
import re
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, NoReturn

from cdc_lakehouse.formats.registry import DEFAULT_REGISTRY, EXAMPLE_REGISTRY
from cdc_lakehouse.runtime.cli_types import positive_float
from cdc_lakehouse.runtime.settings import (
    EXAMPLES_ENV,
    ConfigError,
    lake_dir_setting,
    load_settings,
)
from cdc_lakehouse.runtime.spark_master import check_master
from cdc_lakehouse.runtime.spark_session import get_spark
from cdc_lakehouse.tools.kafka.client import parse_properties

if TYPE_CHECKING:
    from ingest.job import IngestOptions

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


def _topic_list(text: str) -> tuple[str, ...]:
    topics = tuple(t.strip() for t in text.split(",") if t.strip())
    if not topics:
        raise argparse.ArgumentTypeError("give at least one topic: --topics a,b")
    return topics


def build_parser() -> argparse.ArgumentParser:
    """The argument parser."""
    parser = _Parser(
        prog=PROG,
        description=(
            "Write Kafka records into the bronze table exactly once per (topic, partition, "
            "offset). Reads Kafka or a recorded topic dump (JSON Lines); records at offsets "
            "already in the checkpoint are skipped."
        ),
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--dump",
        type=Path,
        metavar="PATH",
        help="topic dump: a .jsonl file or a directory (every *.jsonl below it, sorted)",
    )
    source.add_argument(
        "--bootstrap-servers",
        metavar="HOST:PORT",
        help="read Kafka: bootstrap servers, comma-separated",
    )
    kafka = parser.add_argument_group("Kafka (with --bootstrap-servers)")
    kafka.add_argument(
        "--topics",
        type=_topic_list,
        metavar="A,B",
        help="read only these registry topics (default: every topic of the registry)",
    )
    kafka.add_argument(
        "--kafka-property",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Kafka client property, repeatable (security.protocol, sasl.*, ssl.*): Spark's "
        "Kafka source gets each as kafka.KEY (Java client names), the preflight and lag "
        "client (librdkafka) the names it has",
    )
    kafka.add_argument(
        "--starting-offsets",
        choices=("earliest", "latest"),
        default="earliest",
        help="where the partitions start when there is no checkpoint yet (default earliest; "
        "partitions added later start at their earliest offset)",
    )
    kafka.add_argument(
        "--on-missing-offsets",
        choices=("fail", "skip"),
        default="fail",
        help="offsets to read deleted by retention: stop (default) or skip to the first "
        "offset still there, printing how many were skipped (Spark's failOnDataLoss)",
    )
    kafka.add_argument(
        "--mode",
        choices=("batch", "continuous"),
        default="batch",
        help="batch: read up to the end, then stop (default); continuous: a micro-batch every "
        "--trigger-interval seconds until SIGINT / SIGTERM",
    )
    kafka.add_argument(
        "--trigger-interval",
        type=positive_float,
        default=10.0,
        metavar="SECONDS",
        help="seconds between micro-batches in continuous mode (default 10)",
    )
    parser.add_argument(
        "--registry",
        type=Path,
        default=DEFAULT_REGISTRY,
        metavar="CSV",
        help=f"topic registry (default {DEFAULT_REGISTRY}); with {EXAMPLES_ENV}=true a "
        f"project's seeds/cdc_topics.csv gets the example topics of its {EXAMPLE_REGISTRY} "
        "too (a topic in both: the registry's row); another file is read alone",
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
        help="at most N records per micro-batch (default: everything in one batch; Kafka: "
        "Spark's maxOffsetsPerTrigger, shared out among the partitions by their backlog)",
    )
    return parser


def _dump_error_in(text: str) -> str | None:
    """The message of a :class:`~ingest.dump.DumpError` raised inside the streaming
    source (it reaches the driver wrapped in Spark's exception text), or ``None``."""
    marker = "DumpError: "
    for line in text.splitlines():
        if marker in line:
            return line.split(marker, 1)[1].strip()
    return None


_DATA_LOSS = re.compile(
    r"(?:\[KAFKA_DATA_LOSS\.[A-Z_]+\] )?Some data may have been lost because they "
    r"are not available in Kafka any more"
)
_REASON_END = re.compile(r"\s*(?:SQLSTATE:|=== Streaming Query ===|\n\s*at |$)")


def _kafka_error_in(text: str) -> str | None:
    """A one-line message for Spark's Kafka source failing on records that are no longer on
    the broker (its ``KAFKA_DATA_LOSS`` errors, ``failOnDataLoss``: retention deleted them, or
    a topic or partition was deleted, while ``--on-missing-offsets fail``), or ``None``."""
    match = _DATA_LOSS.search(text)
    if match is None:
        return None
    _, _, rest = text[match.end() :].partition("Reason:")
    end = _REASON_END.search(rest)
    reason = " ".join(rest[: end.start() if end else None].split()).rstrip(".")
    return (
        f"Spark's Kafka source stopped: {reason or 'data lost'}: records to ingest are no "
        "longer on the broker (deleted by retention, or their topic or partition was "
        "deleted). Rerun with --on-missing-offsets skip to go on from the first offset still "
        "there, or drop the table and its checkpoint to ingest from scratch."
    )


@contextmanager
def _stop_on_signals(enabled: bool) -> Iterator[threading.Event]:
    """An event set by SIGINT / SIGTERM while the block runs (if ``enabled``)."""
    stop = threading.Event()
    if not enabled:
        yield stop
        return

    def handler(signum: int, _frame: FrameType | None) -> None:
        if not stop.is_set():
            name = signal.Signals(signum).name
            print(f"{name}: stopping after the batch in progress", file=sys.stderr, flush=True)
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _options(args: argparse.Namespace, table: str, checkpoint: Path) -> IngestOptions:
    # local: pyarrow and pyspark, not loaded for --help or a bad argument
    from ingest.job import IngestOptions
    from ingest.kafka_stream import KafkaOptions

    kafka = None
    if args.bootstrap_servers is not None:
        kafka = KafkaOptions(
            bootstrap_servers=args.bootstrap_servers,
            topics=args.topics,
            properties=parse_properties(args.kafka_property),
            starting_offsets=args.starting_offsets,
            on_missing_offsets=args.on_missing_offsets,
        )
    elif args.topics or args.kafka_property or args.mode != "batch":
        raise ConfigError(
            "--topics, --kafka-property and --mode continuous need --bootstrap-servers."
        )
    return IngestOptions(
        dump=args.dump,
        registry=args.registry,
        table=table,
        checkpoint=checkpoint.expanduser().resolve(),
        max_records_per_batch=args.max_records_per_batch,
        kafka=kafka,
        mode=args.mode,
        trigger_interval_s=args.trigger_interval,
    )


def _first_line(exc: BaseException) -> str:
    """The first non-blank line of ``exc``'s message, or its type name if it has none."""
    lines = (line.strip() for line in str(exc).splitlines() if line.strip())
    return next(lines, type(exc).__name__)


def _write_error_log(exc: BaseException) -> Path | None:
    """Write ``exc``'s traceback (for a Spark error also its full message, with the JVM stack
    trace) to ``$CDC_LAKE_DIR/logs/ingest-error-<UTC time>-<random>.log``; return its path.

    Falls back to the system temporary directory when the lake's ``logs`` directory cannot be
    written; returns ``None`` when neither can. Raises nothing.
    """
    text = f"{PROG} {' '.join(sys.argv[1:])}\n\n" + "".join(traceback.format_exception(exc))
    jvm_stack = getattr(exc, "_stackTrace", None)  # pyspark's CapturedException
    if isinstance(jvm_stack, str) and jvm_stack not in text:
        text += f"\nJVM stacktrace:\n{jvm_stack}\n"
    prefix = f"ingest-error-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-"
    directories: list[str | None] = [None]  # None: the system temporary directory
    try:
        logs = lake_dir_setting() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        directories.insert(0, str(logs))
    except (OSError, ConfigError):
        pass
    for directory in directories:
        try:
            with tempfile.NamedTemporaryFile(
                "w", dir=directory, prefix=prefix, suffix=".log", delete=False
            ) as log:
                log.write(text)
            return Path(log.name)
        except OSError:
            continue
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the ingest job; return the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.dump is None and args.bootstrap_servers is None:
        parser.error("the following arguments are required: --dump or --bootstrap-servers")
    spark = None
    try:
        # local: pyarrow and pyspark, not loaded for --help or a bad argument
        from ingest.bronze import check_table_name
        from ingest.job import plan_ingest, run_ingest

        settings = load_settings()  # every setting, before the dump is scanned or the broker asked
        check_master(settings.spark.master)
        table = check_table_name(args.table)
        options = _options(args, table, args.checkpoint or settings.checkpoint_dir / table)
        plan = plan_ingest(options)
        spark = get_spark(settings)
        with _stop_on_signals(options.mode == "continuous") as stop:
            run_ingest(spark, plan, stop=stop)
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; rerun to continue from the checkpoint", file=sys.stderr)
        return 130
    except Exception as exc:
        from pyspark.errors import StreamingQueryException

        query_failed = isinstance(exc, StreamingQueryException)
        user_error = query_failed and (_dump_error_in(str(exc)) or _kafka_error_in(str(exc)))
        if user_error:
            print(f"error: {user_error}", file=sys.stderr)
            return 2
        what = "the ingest query failed" if query_failed else f"unexpected {type(exc).__name__}"
        log = _write_error_log(exc)
        details = f"details in {log}" if log else "no log: the lake and temp dirs are read-only"
        print(f"error: {what}: {_first_line(exc)} ({details})", file=sys.stderr)
        return 2
    finally:
        if spark is not None:
            spark.stop()
    return 0
