"""The format manifest: every registry message format and where its pieces live.

One :class:`Format` per format a topic of ``seeds/cdc_topics.csv`` may name. The registry
(:data:`cdc_lakehouse.registry.FORMATS`), the dbt Python models' factory
(:mod:`cdc_lakehouse.staging_model`), the typed gold generator (:mod:`cdc_lakehouse.codegen`),
the benchmark (:mod:`cdc_lakehouse.bench`), the simulator's encoders
(:data:`cdc_lakehouse.simulate.encoders.ENCODERS`) and the tests read it; the dbt side (folders
under ``models/``, ``macros/cdc_formats.sql``, the seeds) cannot import Python and is checked
against it by ``tests/unit/test_format_manifest.py``.

Two folders per format, on purpose different:

- ``staging_folder`` (``models/staging/<folder>/``) belongs to a *decoder*: formats that share
  one wire layout share one folder, one decoding dbt Python model and one ``*_events`` model
  (``dataworks_json`` and ``datahub_blob`` are the same DataWorks envelope, ``dataworks``;
  ``qlik_json`` and ``qlik_avro`` the same Qlik messages, ``qlik``).
- ``gold_folder`` (``models/gold/tables/<folder>/``) belongs to the *format*: it starts the
  name of every typed gold table of the format (``<gold_folder>__<database>__<schema>__<table>``),
  so a table's name says which format it came through, and one source table replicated through
  two formats gives two tables that do not clash. Gold folders are unique across formats; they
  are the staging folder where that folder has one format, and otherwise the format name, except
  ``dataworks_json``, whose typed tables have always been ``dataworks__...`` (renaming would
  rename users' tables).

Formats, their ordering keys and images: ``docs/formats.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

ValueEncoding = Literal["json", "avro"]


@dataclass(frozen=True)
class Format:
    """One registry message format.

    Attributes:
        name: the registry format name (``format`` column of ``seeds/cdc_topics.csv``).
        staging_folder: ``models/staging/<staging_folder>/``: the format's decoding dbt Python
            model and its SQL ``stg_<staging_folder>__events`` model (shared with the other
            formats of the same decoder).
        decoder: module of ``cdc_lakehouse.decode`` that decodes the Kafka values; None for
            a format decoded in the JVM by a SQL model (``dts_canal_json``, ``dataworks_json``
            and ``datahub_blob``: the exact JSON function, macros/cdc_exact_json.sql), which
            has no Python decoder.
        decoding_model: the model in the staging folder that decodes the Kafka values
            (``silver.<decoding_model>``): the dbt Python model that applies ``decoder``, or
            for a format decoded in SQL its SQL model that reads bronze (the events model
            itself for Canal, ``stg_dataworks__envelopes`` for DataWorks).
        gold_folder: ``models/gold/tables/<gold_folder>/``, and the first part of the format's
            typed gold model (and table) names.
        type_family: the ``type_family`` of ``seeds/cdc_type_mappings.csv`` that the format's
            declared column types belong to (refined per table by
            :func:`cdc_lakehouse.codegen.type_mapping.type_family`); None when the format
            declares no column types.
        encoder: module of ``cdc_lakehouse.simulate.encoders`` that renders simulated histories
            in this format.
        value_encoding: how a Kafka value is encoded, ``json`` (UTF-8 JSON text) or ``avro``
            (Avro binary).
    """

    name: str
    staging_folder: str
    decoder: str | None
    decoding_model: str
    gold_folder: str
    type_family: str | None
    encoder: str
    value_encoding: ValueEncoding

    @property
    def events_model(self) -> str:
        """The SQL staging model that maps the decoded records to the normalized vocabulary:
        ``stg_<staging_folder>__events``."""
        return f"stg_{self.staging_folder}__events"

    @property
    def decoder_module(self) -> str | None:
        """Dotted name of :attr:`decoder`, e.g. ``cdc_lakehouse.decode.lindorm``; None for a
        format decoded in SQL."""
        return None if self.decoder is None else f"cdc_lakehouse.decode.{self.decoder}"

    @property
    def encoder_module(self) -> str:
        """Dotted name of :attr:`encoder`, e.g. ``cdc_lakehouse.simulate.encoders.dts_avro``."""
        return f"cdc_lakehouse.simulate.encoders.{self.encoder}"


MANIFEST: tuple[Format, ...] = (
    Format(
        name="dataworks_json",
        staging_folder="dataworks",
        decoder=None,
        decoding_model="stg_dataworks__envelopes",
        gold_folder="dataworks",
        type_family="dataworks",
        encoder="dataworks_json",
        value_encoding="json",
    ),
    Format(
        name="datahub_blob",
        staging_folder="dataworks",
        decoder=None,
        decoding_model="stg_dataworks__envelopes",
        gold_folder="datahub_blob",
        type_family="dataworks",
        encoder="datahub_blob",
        value_encoding="json",
    ),
    Format(
        name="datahub_tuple",
        staging_folder="datahub_tuple",
        decoder="datahub_tuple",
        decoding_model="stg_datahub_tuple__records",
        gold_folder="datahub_tuple",
        type_family=None,
        encoder="datahub_tuple",
        value_encoding="json",
    ),
    Format(
        name="lindorm_debezium",
        staging_folder="lindorm",
        decoder="lindorm",
        decoding_model="stg_lindorm__envelopes",
        gold_folder="lindorm",
        type_family="kafka_connect",
        encoder="lindorm_debezium",
        value_encoding="json",
    ),
    Format(
        name="dts_avro",
        staging_folder="dts_avro",
        decoder="dts_avro",
        decoding_model="stg_dts_avro__records",
        gold_folder="dts_avro",
        type_family="mysql_binlog",
        encoder="dts_avro",
        value_encoding="avro",
    ),
    Format(
        name="dts_shareplex_json",
        staging_folder="dts_shareplex",
        decoder="dts_shareplex",
        decoding_model="stg_dts_shareplex__messages",
        gold_folder="dts_shareplex",
        type_family=None,
        encoder="dts_shareplex_json",
        value_encoding="json",
    ),
    Format(
        name="dts_canal_json",
        staging_folder="dts_canal",
        decoder=None,
        decoding_model="stg_dts_canal__events",
        gold_folder="dts_canal",
        type_family="mysql",
        encoder="dts_canal_json",
        value_encoding="json",
    ),
    Format(
        name="qlik_json",
        staging_folder="qlik",
        decoder="qlik",
        decoding_model="stg_qlik__messages",
        gold_folder="qlik_json",
        type_family="qlik",
        encoder="qlik_json",
        value_encoding="json",
    ),
    Format(
        name="qlik_avro",
        staging_folder="qlik",
        decoder="qlik",
        decoding_model="stg_qlik__messages",
        gold_folder="qlik_avro",
        type_family="qlik",
        encoder="qlik_avro",
        value_encoding="avro",
    ),
    Format(
        name="debezium_json",
        staging_folder="debezium",
        decoder=None,
        decoding_model="stg_debezium__events",
        gold_folder="debezium",
        type_family="debezium",
        encoder="debezium_json",
        value_encoding="json",
    ),
)
"""Every registry format, in the registry's order."""

BY_NAME: dict[str, Format] = {fmt.name: fmt for fmt in MANIFEST}
"""Registry format name -> :class:`Format`."""

NAMES: tuple[str, ...] = tuple(BY_NAME)
"""Every registry format name, in manifest order."""


class UnknownFormatError(LookupError):
    """A format name or staging folder the manifest does not list."""


def get(name: str) -> Format:
    """The :class:`Format` named ``name``.

    Raises:
        UnknownFormatError: no format of that name; the message lists the known ones.
    """
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownFormatError(
            f"unknown format {name!r}; the manifest lists {', '.join(NAMES)}"
        ) from None


def in_staging_folder(folder: str) -> tuple[Format, ...]:
    """The formats whose staging folder is ``folder``, in manifest order (e.g. ``dataworks``
    -> ``(dataworks_json, datahub_blob)``).

    Raises:
        UnknownFormatError: no format has that staging folder.
    """
    found = tuple(fmt for fmt in MANIFEST if fmt.staging_folder == folder)
    if not found:
        known = ", ".join(staging_folders())
        raise UnknownFormatError(f"no format has staging folder {folder!r}; known: {known}")
    return found


def staging_folders() -> tuple[str, ...]:
    """Every staging folder once, in manifest order of its first format."""
    return tuple(dict.fromkeys(fmt.staging_folder for fmt in MANIFEST))


def names(formats: Iterable[Format]) -> tuple[str, ...]:
    """The names of ``formats``, in their order."""
    return tuple(fmt.name for fmt in formats)


def with_value_encoding(encoding: ValueEncoding) -> frozenset[str]:
    """Names of the formats whose Kafka values are ``encoding`` (``json`` or ``avro``)."""
    return frozenset(fmt.name for fmt in MANIFEST if fmt.value_encoding == encoding)
