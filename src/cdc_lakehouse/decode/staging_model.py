"""The one factory of the decoding dbt Python models (``models/staging/<folder>/*.py``).

Each decoding model is a few lines::

    def model(dbt, session):
        dbt.config(materialized="incremental", incremental_strategy="append")
        return decode_records(dbt, session, dbt.ref("stg_bronze__kafka_records"), folder="lindorm")

``dbt.config(...)`` and ``dbt.ref(...)`` stay in the model file because dbt reads them from the
file's source without running it; the factory gets the referenced bronze relation as an
argument. What the model decodes comes from the format manifest (:mod:`cdc_lakehouse.formats`):
the formats whose staging folder is ``folder``, and their decoder module
``cdc_lakehouse.decode.<decoder>``.

What :func:`decode_records` does for every format:

1. selects the bronze records of the folder's formats (:data:`BRONZE_COLUMNS`), of the ingest
   batches the model has not decoded yet
   (:func:`cdc_lakehouse.decode.incremental.new_bronze_records`:
   all on a full refresh, the newer ones on an incremental run);
2. spreads them over every core (:func:`cdc_lakehouse.runtime.parallelism.spread_over_cores`);
3. decodes them with ``mapInArrow(decoder.decode_batches, decoder.output_schema_ddl(...))``
   (Arrow batches, no row-at-a-time UDF): the input columns, then the decoder's fields, with
   structural errors kept as ``decode_error`` / ``decode_error_detail`` for silver.quarantine;
   the raw ``value`` is not even sent back from the decoder, unless ``keep_value``
   (silver.quarantine takes the bytes of a quarantined record from bronze; keeping them would
   write every message again, for a multi-row message once per row, and a 400 KB message of
   10,000 rows made 4 GB, more than one Arrow batch holds).

An incremental run with no new record of the folder's formats decodes nothing: the model
returns an empty DataFrame of its output schema (one cheap check of bronze) and says so to the
incremental materialization (:func:`cdc_lakehouse.decode.incremental.report_nothing_new`), which
then writes nothing (result "nothing new"), so a build after a batch of one format costs the other
formats' decoding models little.

Options for the formats that need more (see :func:`decode_records`): ``late_metadata`` (Qlik:
data messages decoded against metadata messages of any batch, and decoded again when their
metadata arrives late) and ``keep_value``. A format decoded in SQL (DTS Canal JSON, by the
exact JSON function of macros/cdc_exact_json.sql) has no Python model.
"""

from __future__ import annotations

import functools
import importlib
from types import ModuleType
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_lakehouse import formats
from cdc_lakehouse.decode.incremental import (
    RECORD_KEY,
    new_bronze_records,
    newest_batch_id,
    report_nothing_new,
)
from cdc_lakehouse.runtime.parallelism import spread_over_cores

BRONZE_COLUMN_TYPES: tuple[tuple[str, str], ...] = (
    ("source_format", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("offset", "bigint"),
    ("timestamp", "timestamp"),
    ("value", "binary"),
    ("ingest_batch_id", "bigint"),
)
"""The columns of ``stg_bronze__kafka_records`` a decoding model passes to its decoder (and
through to its output, ``value`` only with ``keep_value`` or ``late_metadata``), with their
Spark types."""
BRONZE_COLUMNS = tuple(name for name, _ in BRONZE_COLUMN_TYPES)
QLIK_INPUT_TYPE = "struct<source_format:string,topic:string,value:binary,ingest_batch_id:bigint>"
"""Spark type of the struct column a ``late_metadata`` decoder reads."""
WAITING = "missing_table_metadata"
"""``decode_error`` of a record whose metadata message has not arrived (``late_metadata``)."""


class FactoryError(ValueError):
    """A decoding model calls :func:`decode_records` with options that do not fit together."""


def schema_ddl(columns: tuple[tuple[str, str], ...]) -> str:
    """Spark DDL of (name, type) ``columns``: ``"topic string, partition int, ..."``."""
    return ", ".join(f"{name} {kind}" for name, kind in columns)


def decoder_of(folder: str) -> tuple[tuple[str, ...], ModuleType]:
    """The format names of staging folder ``folder`` and their (shared) decoder module.

    Returns:
        (format names in manifest order, the imported ``cdc_lakehouse.decode.<decoder>``).

    Raises:
        cdc_lakehouse.formats.UnknownFormatError: no format has that staging folder.
        FactoryError: the folder's formats name different decoders, or none (a folder
            decoded in SQL; a manifest error).
    """
    folder_formats = formats.in_staging_folder(folder)
    modules = {fmt.decoder_module for fmt in folder_formats}
    if len(modules) != 1 or None in modules:
        raise FactoryError(
            f"staging folder {folder!r}: its formats name several decoders "
            f"({', '.join(sorted(str(m) for m in modules))}); one folder has one Python decoder"
        )
    module = modules.pop()
    assert module is not None  # checked above
    return formats.names(folder_formats), importlib.import_module(module)


def decode_records(
    dbt: Any,
    session: SparkSession,
    records: DataFrame,
    *,
    folder: str,
    late_metadata: bool = False,
    keep_value: bool = False,
) -> DataFrame:
    """The rows a decoding dbt Python model appends on this run (see module doc).

    Args:
        dbt: the model's ``dbt`` object (``is_incremental``, ``this``).
        session: the model's SparkSession.
        records: ``dbt.ref("stg_bronze__kafka_records")``: every bronze record with its
            registry ``source_format``.
        folder: the model's staging folder; it decodes the manifest's formats of that folder.
        late_metadata: Qlik: the metadata (MD) messages of every batch are decoded first
            (``decoder.metadata_batches``) and collected to the driver; records are decoded
            against them (``decoder.decode_batches(batches, entries=...)`` over the struct
            column ``decoder.INPUT_COLUMN``); when a run brings new metadata, the held records
            still waiting for theirs (``decode_error = missing_table_metadata``) are decoded
            again and appended when they no longer wait. A record's rows are then identified
            by topic, partition, offset and ``resolved_batch_id``. Keeps ``value`` (a waiting
            record is decoded again from its held row).
        keep_value: keep the raw ``value`` column (a format whose SQL model reads the message
            text, e.g. Shareplex's DROP COLUMN statement).

    Returns:
        A DataFrame: :data:`BRONZE_COLUMNS` (without ``value`` unless ``keep_value`` or
        ``late_metadata``), then the decoder's fields; one row per new bronze record (per
        decoding with ``late_metadata``).

    Raises:
        cdc_lakehouse.formats.UnknownFormatError: ``folder`` is no format's staging folder.
        FactoryError: the folder's formats name several decoders, or none.
    """
    format_names, decoder = decoder_of(folder)
    selected = records.where(records.source_format.isin(*format_names))
    new = new_bronze_records(dbt, session, selected)
    nothing_new = dbt.is_incremental and new.isEmpty()
    report_nothing_new(session, str(dbt.this), nothing_new)
    if nothing_new:
        # nothing new for this folder's formats: the same plan over no input (the
        # materialization, told so, does not even append it)
        selected = new = selected.limit(0)
    if late_metadata:
        return _decode_with_metadata(dbt, session, selected.select(*BRONZE_COLUMNS), decoder)
    selected = spread_over_cores(new.select(*BRONZE_COLUMNS))
    schema = decoder.output_schema_ddl(schema_ddl(BRONZE_COLUMN_TYPES), keep_value=keep_value)
    decode = functools.partial(decoder.decode_batches, keep_value=keep_value)
    return selected.mapInArrow(decode, schema)


def waiting_records(session: SparkSession, this: str) -> DataFrame:
    """The held records of table ``this`` whose every decoding so far is
    ``missing_table_metadata``: :data:`BRONZE_COLUMNS`, one row per (topic, partition,
    offset)."""
    held = session.table(this)
    decoded = held.where(F.col("decode_error").isNull() | (F.col("decode_error") != WAITING))
    return (
        held.where(F.col("decode_error") == WAITING)
        .join(decoded, list(RECORD_KEY), "left_anti")
        .select(*BRONZE_COLUMNS)
        .dropDuplicates(list(RECORD_KEY))
    )


def _decode_with_metadata(
    dbt: Any, session: SparkSession, selected: DataFrame, decoder: ModuleType
) -> DataFrame:
    """``late_metadata`` of :func:`decode_records` over ``selected`` (every batch's records of
    the folder's formats, :data:`BRONZE_COLUMNS`).

    A data message is matched as of its own ingest batch, or of the first later batch whose
    metadata matches it (``resolved_batch_id``), so the table is a log of decodings: per record
    the row with the highest ``resolved_batch_id`` is the current one, and it equals what a
    full refresh decodes.
    """
    metadata = (
        selected.select("source_format", "topic", "partition", "offset", "ingest_batch_id", "value")
        .mapInArrow(decoder.metadata_batches, decoder.METADATA_ENTRY_DDL)
        .collect()
    )
    entries = [row["entry"] for row in metadata]
    # metadata from every batch (a data message may follow its metadata by several batches, or
    # precede it); data messages from the new batches only, plus the held ones waiting for
    # metadata when new metadata arrived
    to_decode = new_bronze_records(dbt, session, selected)
    newest = newest_batch_id(session, str(dbt.this)) if dbt.is_incremental else None
    new_metadata = newest is not None and any(
        row["ingest_batch_id"] is not None and row["ingest_batch_id"] > newest for row in metadata
    )
    if new_metadata:
        to_decode = to_decode.unionByName(waiting_records(session, str(dbt.this)))
    to_decode = spread_over_cores(to_decode)
    input_column = decoder.INPUT_COLUMN
    with_input = to_decode.withColumn(
        input_column, F.struct("source_format", "topic", "value", "ingest_batch_id")
    )
    input_ddl = schema_ddl((*BRONZE_COLUMN_TYPES, (input_column, QLIK_INPUT_TYPE)))
    decoded = with_input.mapInArrow(  # the decoder leaves out input_column, keeps value
        functools.partial(decoder.decode_batches, entries=entries),
        decoder.output_schema_ddl(input_ddl),
    )
    if new_metadata:  # a waiting record is appended again only when it no longer waits
        decoded = decoded.where(
            (F.col("ingest_batch_id") > F.lit(newest))
            | F.col("decode_error").isNull()
            | (F.col("decode_error") != WAITING)
        )
    return decoded
