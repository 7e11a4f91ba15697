"""dbt Python model: decode every Qlik Replicate / Talend Data Integration message.

Reads the bronze records of topics whose registry format is qlik_json or qlik_avro and
applies cdc_lakehouse.decode.qlik in two passes (formats.md section 5; seed 004):

1. the metadata (MD) messages - few, one per table version - are decoded with mapInArrow and
   collected to the driver as catalog entries (schema id, lineage, columns by ordinal, key,
   Avro dataSchema, and the ingest batch that delivered them);
2. records are decoded with mapInArrow by a function that closes over those entries, so a
   data (DT) message finds its table's metadata wherever and whenever it was delivered (masks
   need the column ordinals, Avro needs the writer schema). A DT is matched as of its own
   ingest batch, or of the first later batch whose metadata matches it (resolved_batch_id).
   A DT without metadata gets decode_error = missing_table_metadata, never a failure.

Incremental (append): a run decodes the records of the new batches, and decodes again the
held records still waiting for their metadata when new metadata arrived; a waiting record
that now decodes is appended again with its later resolved_batch_id. So the table is a log of
decodings: per record (topic, partition, offset) the row with the highest resolved_batch_id
is the current one (stg_qlik__events reads only that one), and it equals what a full refresh
decodes.

One output row per input record and decoding; structural errors are kept as decode_error /
decode_error_detail for silver.quarantine. Ops, keys and ordering are SQL in stg_qlik__events.
"""

import functools

from pyspark.sql import functions as F

from cdc_lakehouse.decode import qlik
from cdc_lakehouse.incremental import (
    RECORD_KEY,
    new_bronze_records,
    newest_batch_id,
    unheld_rows,
)
from cdc_lakehouse.parallelism import spread_over_cores

COLUMNS = ("source_format", "topic", "partition", "offset", "timestamp", "value", "ingest_batch_id")
INPUT_DDL = (
    "source_format string, topic string, partition int, offset bigint, "
    "timestamp timestamp, value binary, ingest_batch_id bigint, "
    "qlik_input struct<source_format:string,topic:string,value:binary,ingest_batch_id:bigint>"
)
WAITING = "missing_table_metadata"


def waiting_records(session, this):
    """The held records whose every decoding so far is missing_table_metadata."""
    held = session.table(this)
    decoded = held.where(F.col("decode_error").isNull() | (F.col("decode_error") != WAITING))
    return (
        held.where(F.col("decode_error") == WAITING)
        .join(decoded, ["topic", "partition", "offset"], "left_anti")
        .select(*COLUMNS)
        .dropDuplicates(["topic", "partition", "offset"])
    )


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="append",
    )
    records = dbt.ref("stg_bronze__kafka_records")
    selected = records.where(records.source_format.isin(*qlik.FORMATS)).select(*COLUMNS)
    metadata = (
        selected.select("source_format", "topic", "partition", "offset", "ingest_batch_id", "value")
        .mapInArrow(qlik.metadata_batches, qlik.METADATA_ENTRY_DDL)
        .collect()
    )
    entries = [row["entry"] for row in metadata]
    # metadata from every batch (a DT may follow its MD by several batches, or precede it);
    # data messages from the new batches only, plus the held ones waiting for metadata when
    # new metadata arrived
    to_decode = new_bronze_records(dbt, session, selected)
    newest = newest_batch_id(session, str(dbt.this)) if dbt.is_incremental else None
    new_metadata = newest is not None and any(
        row["ingest_batch_id"] is not None and row["ingest_batch_id"] > newest for row in metadata
    )
    if new_metadata:
        to_decode = to_decode.unionByName(waiting_records(session, str(dbt.this)))
    to_decode = spread_over_cores(to_decode)
    with_input = to_decode.withColumn(
        qlik.INPUT_COLUMN, F.struct("source_format", "topic", "value", "ingest_batch_id")
    )
    decoded = with_input.mapInArrow(
        functools.partial(qlik.decode_batches, entries=entries),
        qlik.output_schema_ddl(INPUT_DDL),
    ).drop(qlik.INPUT_COLUMN)
    if new_metadata:  # a waiting record is appended again only when it no longer waits
        decoded = decoded.where(
            (F.col("ingest_batch_id") > F.lit(newest))
            | F.col("decode_error").isNull()
            | (F.col("decode_error") != WAITING)
        )
    # after an interrupted append: only the decodings the table lacks (a record decoded again
    # since it waited has a new resolved_batch_id)
    return unheld_rows(dbt, session, decoded, keys=(*RECORD_KEY, "resolved_batch_id"))
