"""What a format plug-in gives the benchmark's baselines: :class:`Baseline`, one per format.

A format plug-in (``cdc_lakehouse/formats/<staging_folder>/``) holds its baselines in one
module, ``baseline.py``, whose ``BASELINES: dict[str, Baseline]`` maps each format name of the
plug-in's ``FORMATS`` to its :class:`Baseline`: the Python decoder (the floor, and the decode of
the formats that no engine decodes in SQL), the DuckDB SQL and the Spark SQL of its events.
The shared baselines (:mod:`.python_floor`, :mod:`.duckdb_baseline`, :mod:`.pyspark_script`)
find it through the format manifest (:func:`.formats.baseline`) and name no format, so a new
format adds its baselines in its plug-in folder only.

Every part follows the format's ordering rule, written once in its plug-in
(``Format.ordering``): the Python decoder gives the ordering key's parts by name to
``Format.ordering_tuple``; the SQL names its columns as ``Format.ordering_names()`` names them,
the Kafka tail (``partition``, ``offset``, ``row_index`` for a multi-row format, ``topic``)
included, so that changes with equal format fields, partition and offset (one table through
two topics) order by topic name, as in the pipeline (macro ``kafka_ordering_tail``).

What the baselines do not handle, because the benchmark workload has none of it
(:mod:`cdc_lakehouse.tools.bench.workload`): key updates (the before image of an update is not
turned into a delete of the old key), partial updates (a column that a message does not
provide is not carried over from the previous change of the row; the workload's updates
change every non-key column), truncates, DDL / schema versions. Snapshot ranks are kept
because they cost nothing. Keys are given (:data:`.formats.BENCH_KEYS`), as a hand-written job
for known tables would take them.

This module imports nothing of the baselines' runners nor of the plug-ins, so a plug-in's
``baseline`` module may import it and the runners may import the plug-ins' modules. It also
holds the SQL pieces that several plug-ins write their SQL with (:func:`duckdb_literal`,
:data:`DUCKDB_JSON`, :data:`DUCKDB_MAP`, :func:`spark_literal`, :data:`SPARK_ROW`,
:data:`PARSED`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from cdc_lakehouse.formats.plugin import Change, Value

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = [
    "DUCKDB_JSON",
    "DUCKDB_MAP",
    "DUCKDB_ROW",
    "PARSED",
    "SPARK_ROW",
    "Baseline",
    "Change",
    "Decoder",
    "DuckDbEvents",
    "SparkDecoder",
    "Value",
    "duckdb_literal",
    "spark_literal",
]

Decoder: TypeAlias = Callable[[Iterable[Value]], Iterator[Change]]
"""A Python baseline decoder: Kafka records (:data:`~cdc_lakehouse.formats.plugin.Value`, any
order) -> one :data:`~cdc_lakehouse.formats.plugin.Change` per row change, producer-retry
duplicates included; records that carry no row change (tombstones, transaction markers, DDL)
give none."""

SparkDecoder: TypeAlias = "Callable[[DataFrame], Decoder]"
"""Given the bronze rows of the topics (``topic``, ``partition``, ``offset``, ``value``, on the
driver), the :data:`Decoder` that the PySpark script runs in ``mapInArrow`` (e.g. one that
knows the metadata messages, collected on the driver first). Its result is pickled to the
Python workers: a module-level function or a ``functools.partial`` of one."""


# --------------------------------------------------------------------------- DuckDB SQL


def duckdb_literal(text: str) -> str:
    """A DuckDB string literal of ``text`` (quotes doubled)."""
    return "'" + text.replace("'", "''") + "'"


DUCKDB_JSON = '"json"'
"""The type of a row image in a DuckDB ``from_json`` structure (the image kept as ``json``)."""
DUCKDB_MAP = "'\"map(varchar, varchar)\"'"
"""The ``from_json`` structure that reads a ``json`` image as ``map(varchar, varchar)``."""
DUCKDB_ROW = (
    f"case when base is null then from_json(image, {DUCKDB_MAP}) "
    f"else map_concat(from_json(base, {DUCKDB_MAP}), from_json(image, {DUCKDB_MAP})) end"
)
"""The default :attr:`DuckDbEvents.row`: ``image`` as a map, overlaying ``base`` when there is
one."""


@dataclass(frozen=True)
class DuckDbEvents:
    """How DuckDB decodes one JSON format (:mod:`.duckdb_baseline`).

    Attributes:
        events: SQL of the ``events`` view over ``src`` (``topic``, ``partition``,
            ``"offset"``, ``j`` = the value as text) giving ``tbl`` (table lower-case), the
            ordering key's parts named as ``Format.ordering_names()`` names them
            (``partition``, ``"offset"`` and ``topic`` as they are), ``is_delete``, ``image``
            (json: the row image) and ``base`` (json or null: an image the row image
            overlays; the key columns are read from it when present).
        row: SQL of a winner's row map (``map(varchar, varchar)``) from ``image`` and
            ``base``.
    """

    events: str
    row: str = DUCKDB_ROW


# --------------------------------------------------------------------------- Spark SQL


def spark_literal(text: str) -> str:
    """A Spark SQL string literal of ``text`` (backslashes and quotes escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


SPARK_ROW = "map<string,string>"
"""The type of a row image in a Spark ``from_json`` schema: JSON numbers become their text."""
PARSED = "<parsed messages>"
"""The token in a format's :attr:`Baseline.spark_events` that the PySpark script replaces with
the bronze rows of the topics (``topic``, ```partition```, ```offset```) with ``m``, the value
parsed by ``from_json`` with :attr:`Baseline.spark_schema`
(:func:`.pyspark_script.parsed_messages`)."""


# --------------------------------------------------------------------------- the contract


@dataclass(frozen=True)
class Baseline:
    """One format's baselines.

    Attributes:
        changes: the Python decoder (:data:`Decoder`): the floor's (:mod:`.python_floor`), and
            the decode of the DuckDB and PySpark baselines where :attr:`duckdb` /
            :attr:`spark_events` are None.
        duckdb: the DuckDB SQL (:class:`DuckDbEvents`); None: DuckDB decodes with
            :attr:`changes` in Python into an Arrow table and keeps the latest per key in SQL
            (:attr:`python_decode` says why).
        spark_schema: the ``from_json`` schema (Spark DDL) of just the fields the events SQL
            reads, row images as :data:`SPARK_ROW`; None with :attr:`spark_events`.
        spark_events: Spark SQL over :data:`PARSED` giving ``tbl``, the ordering key's parts
            (named as for :attr:`duckdb`), ``is_delete`` and ``row`` (:data:`SPARK_ROW`);
            None: the PySpark script decodes in ``mapInArrow`` with :attr:`spark_changes`,
            else :attr:`changes` (:attr:`python_decode` says why).
        spark_changes: for the ``mapInArrow`` decode, the :data:`SparkDecoder` that gives the
            decoder from the bronze rows; None: :attr:`changes`. Only without
            :attr:`spark_events`.
        python_decode: why a part is None (e.g. no Avro reader in DuckDB); required then.

    Raises:
        ValueError: at construction, when only one of :attr:`spark_schema` and
            :attr:`spark_events` is given, :attr:`spark_changes` is given beside SQL, or a part
            is None without :attr:`python_decode`.
    """

    changes: Decoder
    duckdb: DuckDbEvents | None = None
    spark_schema: str | None = None
    spark_events: str | None = None
    spark_changes: SparkDecoder | None = None
    python_decode: str | None = None

    def __post_init__(self) -> None:
        if (self.spark_schema is None) != (self.spark_events is None):
            raise ValueError("Baseline: give spark_schema and spark_events together, or neither")
        if self.spark_changes is not None and self.spark_events is not None:
            raise ValueError("Baseline: spark_changes is for a format without spark_events")
        if (self.duckdb is None or self.spark_events is None) and not self.python_decode:
            raise ValueError("Baseline: duckdb or spark_events is None; say why in python_decode")

    @property
    def spark_sql(self) -> bool:
        """True when the PySpark script decodes the format in Spark SQL (``from_json``)."""
        return self.spark_events is not None

    def spark_decoder(self, raw: DataFrame) -> Decoder:
        """The decoder of the ``mapInArrow`` decode (:attr:`spark_changes` applied to the
        bronze rows ``raw``, else :attr:`changes`)."""
        return self.changes if self.spark_changes is None else self.spark_changes(raw)
