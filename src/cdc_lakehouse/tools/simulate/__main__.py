"""``python -m cdc_lakehouse.tools.simulate``: simulate CDC topics of one or more registry formats.

For each ``--format``: generate a seeded history (:mod:`.generate`, with the format's
features), encode it (:mod:`.encoders`), deliver it (:mod:`.delivery`: partitions, duplicates,
malformed records, batches cut out of order) and either

- ``--out DIR``: write ``DIR/batch-<k>/<topic>.jsonl`` (topic dumps, one directory per ingest
  batch) and ``DIR/expected/<format>.json`` (see :func:`expected_document`), or
- ``--bootstrap-servers HOST:PORT``: produce every batch to Kafka, in order (``--out`` then
  only writes ``expected/``). With ``--rate N`` the stream is live: commit times start now and
  follow the wall clock at about N row changes per second, and each record is produced when
  its commit time comes (formats one after another), so a run lasts about changes / N
  seconds per format.

Prints one summary line per format. Exit codes: 0 done, 2 bad arguments (argparse) or an
``error:`` line (Kafka, an encoder that does not fit).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from cdc_lakehouse.runtime.cli_types import positive_float, positive_int
from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.tools.kafka.client import parse_properties
from cdc_lakehouse.tools.simulate.delivery import (
    Delivery,
    DeliveryConfig,
    deliver,
    produce,
    write_dump,
)
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, generate
from cdc_lakehouse.tools.simulate.history import History
from cdc_lakehouse.tools.simulate.oracle import current_state

TOPIC_PREFIX = re.compile(r"[A-Za-z0-9._-]+")


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a rate 0..1") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is outside 0..1; give a share such as 0.05")
    return value


def _prefix(text: str) -> str:
    if not TOPIC_PREFIX.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a valid Kafka topic prefix; use letters, digits, '.', '_', '-'"
        )
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.simulate",
        description=(
            "Generate a seeded CDC history, encode it in registry formats and write topic "
            "dumps (one directory per ingest batch) plus the oracle's expected gold, or "
            "produce to Kafka."
        ),
    )
    parser.add_argument(
        "--format",
        action="append",
        required=True,
        metavar="NAME",
        help="registry format to simulate (repeatable), or 'all' for every registered encoder",
    )
    parser.add_argument(
        "--changes", type=positive_int, default=10_000, help="row changes per format"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--prefix", type=_prefix, default="sim", help="topic name prefix")
    parser.add_argument("--partitions", type=positive_int, default=3, help="partitions per topic")
    parser.add_argument("--duplicate-rate", type=_rate, default=0.0, metavar="RATE")
    parser.add_argument("--malformed-rate", type=_rate, default=0.0, metavar="RATE")
    parser.add_argument("--batches", type=positive_int, default=1, help="ingest batches")
    parser.add_argument("--out", type=Path, metavar="DIR", help="write topic dumps here")
    parser.add_argument("--bootstrap-servers", metavar="HOST:PORT", help="produce to Kafka")
    parser.add_argument("--kafka-property", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument(
        "--rate",
        type=positive_float,
        metavar="CHANGES_PER_S",
        help="with --bootstrap-servers: produce live, about this many row changes per second",
    )
    return parser


AVERAGE_CHANGES_PER_TRANSACTION = 3.5
"""Row changes per transaction of the default ``transaction_size`` (1 to 6), about."""


def live_config(config: SimulationConfig, rate: float) -> SimulationConfig:
    """``config`` with commit times that start in a second and keep pace with the wall clock
    at about ``rate`` row changes per second (the mean commit step is 1/(transactions per
    second))."""
    import dataclasses
    import time

    step_ms = 2 * 1000 * AVERAGE_CHANGES_PER_TRANSACTION / rate - 1
    return dataclasses.replace(
        config,
        start_time_ms=int(time.time() * 1000) + 1000,
        max_commit_step_ms=max(1, round(step_ms)),
    )


def _formats(parser: argparse.ArgumentParser, names: list[str]) -> list[str]:
    known = sorted(ENCODERS)
    if not known:
        parser.error(
            "no encoder is registered yet (cdc_lakehouse/simulate/encoders/__init__.py); "
            "nothing to simulate"
        )
    if "all" in names:
        return known
    unknown = [name for name in names if name not in ENCODERS]
    if unknown:
        parser.error(
            f"unknown --format {', '.join(unknown)}; choose from {', '.join(known)} or 'all'"
        )
    return list(dict.fromkeys(names))


def expected_document(
    encoder: ModuleType, history: History, delivery: Delivery, seed: int
) -> dict[str, Any]:
    """The oracle's gold for ``history`` rendered in ``encoder``'s texts, as written to
    ``expected/<format>.json``::

        {"format": str, "seed": int, "changes": int, "messages": int, "records": int,
         "duplicates": int,
         "malformed": [{"topic": str, "partition": int, "offset": int}, ...],
         "tables": {<table>: {
             "database": str, "schema": str | null, "key_columns": [str],
             "column_types": {column: source type},
             "rows": [{"row_key": str | null, "row_values": {column: text | null}}]}}}

    ``row_key`` is gold.current_rows' canonical key (JSON object of key column -> value text,
    keys sorted, no spaces); null for a table without a key. Rows are sorted by row_key, then
    by their values.
    """
    state = current_state(history)
    tables: dict[str, Any] = {}
    for table in history.tables:
        rows = []
        for row in state[table.name]:
            values = {c.name: encoder.value_text(c, row[c.name]) for c in table.columns}
            row_key = (
                json.dumps(
                    {name: values[name] for name in sorted(table.key_columns)},
                    separators=(",", ":"),
                    ensure_ascii=False,
                )
                if table.key_columns
                else None
            )
            rows.append({"row_key": row_key, "row_values": values})
        rows.sort(key=lambda r: (r["row_key"] or "", json.dumps(r["row_values"], sort_keys=True)))
        tables[table.name] = {
            "database": table.database,
            "schema": table.schema,
            "key_columns": list(table.key_columns),
            "column_types": {c.name: encoder.source_type(c) for c in table.columns},
            "rows": rows,
        }
    return {
        "format": encoder.FORMAT,
        "seed": seed,
        "changes": len(history.row_changes),
        "messages": delivery.messages,
        "records": len(delivery.records),
        "duplicates": len(delivery.duplicates),
        "malformed": [
            {"topic": r.topic, "partition": r.partition, "offset": r.offset}
            for r in delivery.malformed
        ],
        "tables": tables,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the simulator; exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    formats = _formats(parser, args.format)
    if args.out is None and args.bootstrap_servers is None:
        parser.error("give --out DIR (topic dumps) or --bootstrap-servers HOST:PORT (Kafka)")
    if args.rate is not None and args.bootstrap_servers is None:
        parser.error("--rate produces a live stream: give --bootstrap-servers HOST:PORT too")
    if args.out is not None and args.out.exists():
        if not args.out.is_dir():
            parser.error(f"--out {args.out} is a file; give a new or empty directory")
        if any(args.out.iterdir()):
            parser.error(f"--out {args.out} is not empty; give a new or empty directory")
    written_topics: dict[str, str] = {}
    try:
        properties = parse_properties(args.kafka_property)
        for name in formats:
            encoder = ENCODERS[name]
            try:
                config = SimulationConfig(
                    seed=args.seed, changes=args.changes, features=frozenset(encoder.FEATURES)
                )
            except ValueError as exc:
                raise ConfigError(f"encoder {name}: {exc}") from None
            if args.rate is not None:
                config = live_config(config, args.rate)
            history = generate(config)
            messages = encoder.encode(history, args.prefix)
            delivery = deliver(
                messages,
                DeliveryConfig(
                    partitions=args.partitions,
                    duplicate_rate=args.duplicate_rate,
                    malformed_rate=args.malformed_rate,
                    batches=args.batches,
                    seed=args.seed,
                ),
            )
            for message in messages:
                owner = written_topics.setdefault(message.topic, name)
                if owner != name:
                    raise ConfigError(
                        f"formats {owner} and {name} both write topic {message.topic!r}; "
                        "simulate them in separate runs"
                    )
            if args.bootstrap_servers:
                produce(
                    args.bootstrap_servers,
                    delivery.records,
                    args.partitions,
                    properties,
                    paced=args.rate is not None,
                )
            if args.out is not None:
                if not args.bootstrap_servers:
                    for k, batch in enumerate(delivery.batches, start=1):
                        batch_dir = args.out / f"batch-{k}"
                        batch_dir.mkdir(parents=True, exist_ok=True)
                        write_dump(batch_dir, batch)
                expected = args.out / "expected" / f"{name}.json"
                expected.parent.mkdir(parents=True, exist_ok=True)
                document = expected_document(encoder, history, delivery, args.seed)
                expected.write_text(
                    json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
                )
            where = args.bootstrap_servers or str(args.out)
            print(
                f"{name}: changes={len(history.row_changes)} messages={delivery.messages} "
                f"records={len(delivery.records)} duplicates={len(delivery.duplicates)} "
                f"malformed={len(delivery.malformed)} batches={args.batches} -> {where}"
            )
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
