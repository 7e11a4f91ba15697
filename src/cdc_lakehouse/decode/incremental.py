"""Incremental reading for the decoding dbt Python models.

Each decoding model is materialized ``incremental`` (strategy ``append``): a run decodes
only the bronze records of ingest batches newer than the newest batch the model already
holds, and appends them, so its cost follows the new data. (``insert_overwrite`` by batch
would need a partitioned table, which dbt-spark's Python table writer does not create.) A full
refresh (``dbt build --full-refresh``, or the first run) decodes every batch. Bronze batch ids
are Structured Streaming batch ids of one checkpoint, so they only grow. An append is one Delta
commit: killed, it leaves the table as it was, so the newest batch held is the truth.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F


def newest_batch_id(session: SparkSession, relation: str) -> int | None:
    """The largest ``ingest_batch_id`` in ``relation`` (None when it holds no rows)."""
    row = session.table(relation).agg(F.max("ingest_batch_id").alias("batch")).first()
    return None if row is None else row["batch"]


def new_bronze_records(dbt: Any, session: SparkSession, records: DataFrame) -> DataFrame:
    """``records`` (with ``ingest_batch_id``) limited to the batches the model has not decoded:
    all of them on a full run, those newer than the model's newest batch on an incremental
    run."""
    if not dbt.is_incremental:
        return records
    newest = newest_batch_id(session, str(dbt.this))
    if newest is None:
        return records
    return records.where(F.col("ingest_batch_id") > F.lit(newest))


NOTHING_NEW_CONF = "cdc_lakehouse.nothing_new"
"""Prefix of the session configuration key by which a decoding model tells the incremental
materialization (``macros/cdc_incremental_materialization.sql``, macro
``python_found_nothing_new``) whether its run found new records: key
``cdc_lakehouse.nothing_new.<schema>.<table>``, value ``"true"`` or ``"false"``."""


def report_nothing_new(session: SparkSession, relation: str, nothing_new: bool) -> None:
    """Tell the materialization of ``relation`` (``"<schema>.<table>"``, the model's
    ``dbt.this``) whether this run found nothing new to append: with ``True`` it appends
    nothing and skips the write bracket. Set on every run, so a value never outlives its run."""
    session.conf.set(f"{NOTHING_NEW_CONF}.{relation}", "true" if nothing_new else "false")


RECORD_KEY = ("topic", "partition", "offset")
"""The columns that identify a decoding Python model's row: one per Kafka record."""
