"""What a format plug-in declares: :class:`Format`, one per registry format it decodes.

A plug-in is a package ``cdc_lakehouse/formats/<staging_folder>/`` whose ``__init__`` defines
``FORMATS: tuple[Format, ...]`` (:mod:`cdc_lakehouse.formats` finds it). This module imports
nothing of the project, so a plug-in's ``__init__`` may import it while the formats package is
still being imported.

The docs' lists of the formats (README.md, ``docs/index.md``, the format registry page) and
``docs/formats.md``'s normalized vocabulary table are written from the :class:`Format` fields,
and ``docs/formats.md``'s numbered sections from each plug-in's ``FORMAT.md``, by
``python -m cdc_lakehouse.tools.docs_reference formats``
(:mod:`cdc_lakehouse.tools.docs_formats`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

ValueEncoding = Literal["json", "avro"]

Value: TypeAlias = tuple[str, int, int, bytes | None]
"""One Kafka record as a baseline decoder takes it: (topic, partition, offset, value bytes;
None for a tombstone)."""
Change: TypeAlias = tuple[str, tuple[Any, ...], bool, dict[str, Any]]
"""One row change as a baseline decoder yields it: (table lower-case, ordering key tuple
(:meth:`Format.ordering_tuple`), is a delete, row image column -> value as decoded: JSON values
from orjson, texts for DTS Avro, Avro values for Qlik Avro)."""

KAFKA_TAIL = ("partition", "offset")
"""The Kafka part that follows a format's own ordering parts in every ordering key: partition
(10 digits), offset (20 digits); then ``row_index`` (10 digits) for a format with multi-row
messages, then the topic name (macro ``kafka_ordering_tail``, macros/cdc_keys.sql)."""


@dataclass(frozen=True)
class OrderingPart:
    """One part of a format's ordering key, before the Kafka tail.

    Attributes:
        name: the part's name: the column (or SQL expression) the events model passes for it
            (macro ``format_ordering_key``) and the value a baseline gives for it.
        width: characters the part is left-padded to with ``0`` in the key's text, so that
            text order is the part's order; a longer value makes the key NULL.
        text: False for a non-negative integer (compared as a number), True for a text
            compared character by character once padded (Qlik's ``changeSequence``).
    """

    name: str
    width: int
    text: bool = False


@dataclass(frozen=True)
class VocabularyColumn:
    """A staging folder's column of ``docs/formats.md``'s "Normalized vocabulary" table: what
    its formats' ops become in silver.

    Attributes:
        label: the column's header before its section number, e.g. ``DataWorks / Blob`` (the
            header reads ``DataWorks / Blob (1)``, the number being the first ``docs_section``
            of the folder's formats).
        ops: (normalized row, the format's ops that become it) for every row of the table, in
            any order; ``-`` when none. The rows' names and order are the table's, not the
            plug-in's (``cdc_lakehouse.tools.docs_formats.VOCABULARY_ROWS``: ``insert``,
            ``snapshot``, ``update``, ``delete``, ``truncate``, ``other DDL``,
            ``transaction marker``, ``heartbeat``, ``tombstone``).
    """

    label: str
    ops: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Format:
    """One registry message format.

    Attributes:
        name: the registry format name (``format`` column of ``seeds/cdc_topics.csv``).
        staging_folder: ``models/staging/<staging_folder>/``: the format's decoding dbt Python
            model and its SQL ``stg_<staging_folder>__events`` model (shared with the other
            formats of the same decoder).
        decoder: module of the format's plug-in package that decodes the Kafka values
            (``decoder``: ``cdc_lakehouse.formats.<staging_folder>.decoder``); None for a
            format decoded in the JVM by a SQL model (``dts_canal_json``, ``dataworks_json``
            and ``datahub_blob``: the exact JSON function, macros/cdc_exact_json.sql), which
            has no Python decoder.
        decoding_model: the model in the staging folder that decodes the Kafka values
            (``silver.<decoding_model>``): the dbt Python model that applies ``decoder``, or
            for a format decoded in SQL its SQL model that reads bronze (the events model
            itself for Canal, ``stg_dataworks__decoded`` for DataWorks).
        gold_folder: ``models/marts/current_state/tables/<gold_folder>/``, and the first part of
            the format's typed gold model (and table) names.
        type_family: the ``type_family`` of ``seeds/cdc_type_mappings.csv`` (rows kept in the
            plug-in's ``type_mappings.csv``) that the format's declared column types belong to
            (refined per table by
            :func:`cdc_lakehouse.codegen.type_mapping.type_family`); None when the format
            declares no column types.
        encoder: module of the format's plug-in package that renders simulated histories in
            this format (:class:`cdc_lakehouse.tools.simulate.encoders.Encoder`), e.g.
            ``encoder_dts_canal_json``.
        value_encoding: how a Kafka value is encoded, ``json`` (UTF-8 JSON text) or ``avro``
            (Avro binary).
        product: the product (and flavour) that writes the format, as the README's formats
            table names it, e.g. ``DataHub (Tuple topics)``.
        docs_section: the numbered section of ``docs/formats.md`` that describes the format
            (``1``, ``4a``; a plug-in's ``FORMAT.md`` holds its sections); the generated docs
            list the staging folders in the order of their formats' first sections, and a
            folder's formats in ``FORMATS`` order.
        ordering_text: the ordering key in words, before the Kafka tail (a cell of the formats
            tables), e.g. ``scn, seq``; :attr:`ordering` is its rule.
        row_key_text: what identifies a row of the format, in words (a cell of the formats
            tables), e.g. ``pkNames, else all columns``.
        decodes_text: what the decoding handles beyond the common shape, in words: ops, images,
            DDL, control records, quirks (the ``notes`` cell of the format registry page).
        vocabulary: the staging folder's column of ``docs/formats.md``'s normalized vocabulary
            table (:class:`VocabularyColumn`); the formats of one staging folder share it (one
            declaration, as ``dataworks_json`` and ``datahub_blob`` share column ``(1)``).
        paired_in: the intermediate model (``int_<staging_folder>__...``, silver) that completes
            the events model's rows across records (a split update's halves paired, a key
            learned), which silver reads instead of the events model; None when silver reads
            the events model itself.
        resolves_later: True when a row of the format can become final in a later ingest batch
            than its own (``resolved_batch_id > ingest_batch_id``: a half paired, a key learned,
            a Qlik data message decoded when its metadata arrives); False lets incremental
            silver read only the partitions after a batch (macros/cdc_incremental.sql).
        ordering: the format's ordering rule, written once: the parts that decide which of two
            changes of a row is the later one, most significant first (docs/formats.md gives
            each format's), before the Kafka tail (:data:`KAFKA_TAIL`, ``row_index`` when
            :attr:`row_index`, the topic). The events model's ordering key (macro
            ``format_ordering_key``, generated from this by ``python -m cdc_lakehouse.formats
            generate``) and the benchmark's baselines (:meth:`ordering_names`,
            :meth:`ordering_tuple`) follow it.
        row_index: True when one Kafka record carries several row changes (Canal's ``data``
            array), ordered by their index after the offset.
    """

    name: str
    staging_folder: str
    decoder: str | None
    decoding_model: str
    gold_folder: str
    type_family: str | None
    encoder: str
    value_encoding: ValueEncoding
    product: str
    docs_section: str
    ordering_text: str
    row_key_text: str
    decodes_text: str
    vocabulary: VocabularyColumn
    paired_in: str | None = None
    resolves_later: bool = False
    ordering: tuple[OrderingPart, ...] = ()
    row_index: bool = False

    @property
    def events_model(self) -> str:
        """The SQL staging model that maps the decoded records to the normalized vocabulary:
        ``stg_<staging_folder>__events``."""
        return f"stg_{self.staging_folder}__events"

    @property
    def decoder_module(self) -> str | None:
        """Dotted name of :attr:`decoder`, e.g. ``cdc_lakehouse.formats.lindorm.decoder``; None
        for a format decoded in SQL."""
        return None if self.decoder is None else f"{self.package}.{self.decoder}"

    @property
    def encoder_module(self) -> str:
        """Dotted name of :attr:`encoder`, e.g.
        ``cdc_lakehouse.formats.dts_avro.encoder_dts_avro``."""
        return f"{self.package}.{self.encoder}"

    @property
    def package(self) -> str:
        """The format's plug-in package, ``cdc_lakehouse.formats.<staging_folder>``."""
        return f"cdc_lakehouse.formats.{self.staging_folder}"

    def ordering_names(self) -> tuple[str, ...]:
        """Every part of the ordering key in order: :attr:`ordering`'s names, ``partition``,
        ``offset``, ``row_index`` when :attr:`row_index`, ``topic``."""
        names = tuple(part.name for part in self.ordering) + KAFKA_TAIL
        return (*names, "row_index", "topic") if self.row_index else (*names, "topic")

    def ordering_tuple(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The ordering key of a change as a tuple that compares like the key's text:
        ``values`` (part name -> value: integers, the text parts as text, ``topic`` text) in
        :meth:`ordering_names` order.

        Raises:
            KeyError: ``values`` lacks a part; the message names it and the format.
        """
        try:
            return tuple(values[name] for name in self.ordering_names())
        except KeyError as error:
            raise KeyError(f"ordering key of {self.name}: no value for {error.args[0]!r}") from None

    def ordering_kinds(self) -> tuple[Literal["int", "text"], ...]:
        """``int`` or ``text`` per part of :meth:`ordering_names` (the topic is text)."""
        kinds: list[Literal["int", "text"]] = [
            "text" if part.text else "int" for part in self.ordering
        ]
        kinds += ["int"] * (len(KAFKA_TAIL) + self.row_index)
        return (*kinds, "text")
