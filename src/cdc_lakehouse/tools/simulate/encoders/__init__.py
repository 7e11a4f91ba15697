"""Encoders: render a logical :class:`~cdc_lakehouse.tools.simulate.history.History` as the Kafka
messages of one registry format, exactly as that format's producers write them (docs/formats.md).

One module per format, ``encoders/<format>.py``, implementing :class:`Encoder` at module level
(constants and functions, no class needed), named by the format manifest's ``encoder``
(:mod:`cdc_lakehouse.formats`). :data:`ENCODERS` maps the registry format name (``FORMAT``) to
the module; ``python -m cdc_lakehouse.tools.simulate --format <name>`` looks it up.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Protocol

from cdc_lakehouse import formats
from cdc_lakehouse.tools.simulate.history import Column, History, Value
from cdc_lakehouse.tools.simulate.messages import Message


class Encoder(Protocol):
    """What an encoder module provides (module-level names).

    - ``FORMAT``: the registry format name (``seeds/cdc_topics.csv``), e.g. ``dts_canal_json``.
    - ``FEATURES``: what the format can express, a subset of
      ``generate.ALL_FEATURES`` (snapshot, truncate, heartbeat, key_update, keyless_table,
      partial_update, multi_row_message); the generator is given these.
    """

    FORMAT: str
    FEATURES: frozenset[str]

    def topics(self, history: History, prefix: str) -> list[str]:
        """Every topic :meth:`encode` writes to, e.g. ``[f"{prefix}.{FORMAT}"]`` or one topic per
        table for per-table formats."""
        ...

    def encode(self, history: History, prefix: str) -> list[Message]:
        """Every message, in production order. Kafka key: the row's key text (one row's changes
        share a partition); None for messages not tied to a row."""
        ...

    def value_text(self, column: Column, value: Value) -> str | None:
        """The exact text the project's decoder yields for ``value`` in ``before_image`` /
        ``after_image`` (None for SQL NULL)."""
        ...

    def source_type(self, column: Column) -> str:
        """The source type text the format declares for ``column`` (lands in
        ``column_types``), e.g. MySQL ``decimal(12,2)``."""
        ...


# Encoder modules, imported after ``Encoder`` so that they may import it: the one of each
# format of the manifest (cdc_lakehouse.formats, ``encoder``).
ENCODERS: dict[str, ModuleType] = {
    fmt.name: importlib.import_module(fmt.encoder_module) for fmt in formats.MANIFEST
}
"""Registry format name -> encoder module (each module's ``FORMAT`` is that name)."""
