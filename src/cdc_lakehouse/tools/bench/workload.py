"""The benchmark's workload: simulated topics of one registry format, as a history and one
new batch that continues it.

Built with the change simulator (:mod:`cdc_lakehouse.tools.simulate`) on the features every
baseline's plain latest-per-key-with-deletes can compute: keyed tables (``shop.customers``,
composite-key ``shop.orders``), inserts, full updates, updates to NULL, deletes and
re-inserts, and, for formats that pack them (Canal), multi-row messages. Delivery adds 5 %
producer-retry duplicates across 3 partitions. Left out on purpose: partial updates, key
updates, truncates, snapshots, heartbeats, the keyless table and malformed records - the
pipeline handles them (the tests show it), but a hand-written latest-per-key would not, and
its result must equal the pipeline's gold before its time counts.

The history is delivered as one ingest batch, the new batch as a second one whose offsets
continue the history's. ``tables=N`` spreads the changes over ``N`` keyed tables instead of
the two default ones (``SimulationConfig.tables``; the tables part). :func:`write_records_dump`
writes a dump of an exact number of records (the ingest part).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType

from cdc_lakehouse.tools.simulate.delivery import Delivery, DeliveryConfig, deliver, write_dump
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, combine, generate
from cdc_lakehouse.tools.simulate.history import History
from ingest.dump import DumpRecord

PREFIX = "sim"
"""Topic prefix: the change simulator's topics, already registered in ``seeds/cdc_topics.csv``
(a benchmark lake holds only benchmark data)."""
FEATURES = frozenset({"multi_row_message"})
"""Simulator features the workload may use (each format's own features intersected)."""
DUPLICATE_RATE = 0.05
PARTITIONS = 3


@dataclass(frozen=True)
class Workload:
    """One format's benchmark topics.

    Attributes:
        format: registry format name (``seeds/cdc_topics.csv``).
        encoder: the simulator's encoder module of the format.
        history: the logical history before the new batch (``changes`` row changes).
        batch: the new batch's logical changes, continuing ``history``.
        history_delivery: ``history`` as delivered (one ingest batch).
        batch_delivery: ``batch`` as delivered (one ingest batch, offsets continued).
    """

    format: str
    encoder: ModuleType
    history: History
    batch: History
    history_delivery: Delivery
    batch_delivery: Delivery

    @property
    def topics(self) -> list[str]:
        """The Kafka topics the workload writes to."""
        return self.encoder.topics(self.whole, PREFIX)

    @property
    def whole(self) -> History:
        """History and new batch as one history (for the oracle)."""
        return combine(self.history, self.batch)


def _encoder(format_: str) -> ModuleType:
    if format_ not in ENCODERS:
        raise ValueError(
            f"no simulator encoder for format {format_!r}; choose from {sorted(ENCODERS)}"
        )
    return ENCODERS[format_]


def _config(encoder: ModuleType, changes: int, seed: int, tables: int | None) -> SimulationConfig:
    return SimulationConfig(
        seed=seed,
        changes=changes,
        features=encoder.FEATURES & FEATURES,
        heartbeat_rate=0.0,
        tables=tables,
    )


def _delivery_config(seed: int) -> DeliveryConfig:
    return DeliveryConfig(
        partitions=PARTITIONS, duplicate_rate=DUPLICATE_RATE, batches=1, seed=seed
    )


def build(
    format_: str, changes: int, batch_changes: int, seed: int = 11, tables: int | None = None
) -> Workload:
    """Generate, encode and deliver one format's workload.

    Args:
        format_: a registry format with a simulator encoder.
        changes: row changes of the history (>= 1).
        batch_changes: row changes of the new batch (>= 1).
        seed: seeds the generator and the delivery.
        tables: None for the default tables (customers, orders), or spread the changes
            over this many keyed tables (``shop.t0001`` ..., see ``SimulationConfig.tables``).

    Raises:
        ValueError: unknown format or a size below 1.
    """
    encoder = _encoder(format_)
    if changes < 1 or batch_changes < 1 or (tables is not None and tables < 1):
        raise ValueError(
            f"sizes must be >= 1, got changes={changes}, batch_changes={batch_changes}, "
            f"tables={tables}"
        )
    config = _config(encoder, changes, seed, tables)
    history = generate(config)
    batch = generate(replace(config, changes=batch_changes), after=history)
    last_of_history = max(item.sequence for item in history.items)
    messages = encoder.encode(combine(history, batch), PREFIX)
    delivery_config = _delivery_config(seed)
    history_delivery = deliver(
        [m for m in messages if m.sequence <= last_of_history], delivery_config
    )
    batch_delivery = deliver(
        [m for m in messages if m.sequence > last_of_history],
        delivery_config,
        after=history_delivery,
    )
    return Workload(format_, encoder, history, batch, history_delivery, batch_delivery)


def write(workload: Workload, directory: Path) -> tuple[Path, Path]:
    """Write the workload as two topic dumps: ``directory/history`` and ``directory/batch``.

    Returns:
        The two dump directories (history, batch).
    """
    history_dir = directory / "history"
    batch_dir = directory / "batch"
    write_dump(history_dir, workload.history_delivery.records)
    write_dump(batch_dir, workload.batch_delivery.records)
    return history_dir, batch_dir


SAMPLE_CHANGES = 2_000
"""Row changes of the sample that :func:`write_records_dump` estimates records per change on."""
RECORDS_MARGIN = 1.03
"""Changes generated for a records dump: the estimate times this (the sample's ratio varies)."""


def _history_records(encoder: ModuleType, changes: int, seed: int) -> list[DumpRecord]:
    history = generate(_config(encoder, changes, seed, None))
    return deliver(encoder.encode(history, PREFIX), _delivery_config(seed)).records


def write_records_dump(format_: str, records: int, seed: int, directory: Path) -> int:
    """Write a topic dump of exactly ``records`` records of ``format_`` into ``directory``: a
    history (default tables) delivered like :func:`build`'s, as many changes as it takes
    (estimated on a :data:`SAMPLE_CHANGES` sample, times :data:`RECORDS_MARGIN`; generated
    again with more if short), cut after the first ``records`` records in (topic, partition,
    offset) order, so every partition keeps dense offsets from 0.

    Nothing is kept in memory afterwards. Takes about 2 minutes and 4 GiB of memory for
    1,000,000 Canal records (about 1.15 row changes each).

    Returns:
        The row changes generated.

    Raises:
        ValueError: unknown format or ``records`` below 1.
    """
    encoder = _encoder(format_)
    if records < 1:
        raise ValueError(f"records must be >= 1, got {records}")
    sample = len(_history_records(encoder, SAMPLE_CHANGES, seed))
    changes = math.ceil(records * SAMPLE_CHANGES / sample * RECORDS_MARGIN)
    while True:
        delivered = _history_records(encoder, changes, seed)
        if len(delivered) >= records:
            break
        changes = math.ceil(changes * records / len(delivered) * RECORDS_MARGIN)
        del delivered  # not held while the bigger one is generated
    delivered.sort(key=lambda r: (r.topic, r.partition, r.offset))
    write_dump(directory, delivered[:records])
    return changes
