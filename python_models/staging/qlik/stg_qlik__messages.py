"""dbt Python model: decode every Qlik Replicate / Talend Data Integration message.

Reads the bronze records of topics whose registry format is qlik_json or qlik_avro and
applies cdc_lakehouse.decode.qlik in two passes (formats.md section 5; seed 004):

1. the metadata (MD) messages - few, one per table version - are decoded with mapInArrow and
   collected to the driver as catalog entries (schema id, lineage, columns by ordinal, key,
   Avro dataSchema);
2. every record is decoded with mapInArrow by a function that closes over those entries, so
   a data (DT) message finds its table's metadata wherever and whenever it was delivered
   (masks need the column ordinals, Avro needs the writer schema). A DT message without
   metadata gets decode_error = missing_table_metadata, never a failure.

One output row per input record; structural errors are kept as decode_error /
decode_error_detail for silver.quarantine. Ops, keys and ordering are SQL in stg_qlik__events.
"""

import functools

from pyspark.sql import functions as F

from cdc_lakehouse.decode import qlik
from cdc_lakehouse.incremental import new_bronze_records, unheld_rows
from cdc_lakehouse.parallelism import spread_over_cores

INPUT_DDL = (
    "source_format string, topic string, partition int, offset bigint, "
    "timestamp timestamp, value binary, ingest_batch_id bigint, "
    "qlik_input struct<source_format:string,topic:string,value:binary>"
)


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="append",
    )
    records = dbt.ref("stg_bronze__kafka_records")
    selected = records.where(records.source_format.isin(*qlik.FORMATS)).select(
        "source_format", "topic", "partition", "offset", "timestamp", "value", "ingest_batch_id"
    )
    entries = [
        row["entry"]
        for row in selected.select("source_format", "topic", "partition", "offset", "value")
        .mapInArrow(qlik.metadata_batches, qlik.METADATA_ENTRY_DDL)
        .collect()
    ]
    # metadata from every batch (a DT message may follow its MD by several batches), data
    # messages from the new batches only
    new_records = spread_over_cores(new_bronze_records(dbt, session, selected))
    with_input = new_records.withColumn(
        qlik.INPUT_COLUMN, F.struct("source_format", "topic", "value")
    )
    decoded = with_input.mapInArrow(
        functools.partial(qlik.decode_batches, entries=entries),
        qlik.output_schema_ddl(INPUT_DDL),
    )
    decoded = decoded.drop(qlik.INPUT_COLUMN)
    return unheld_rows(dbt, session, decoded)
