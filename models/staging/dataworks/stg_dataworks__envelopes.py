"""dbt Python model: decode the DataWorks / DataHub Blob JSON envelope of every record.

Reads the bronze records of topics whose registry format is dataworks_json or datahub_blob and
applies cdc_lakehouse.decode.dataworks.decode_batches with mapInArrow (Arrow batches, no
row-at-a-time UDF). One output row per input record; structural errors are kept as
decode_error / decode_error_detail for silver.quarantine. Python because Spark's JSON functions
would turn decimal numbers into doubles (architecture.md); the op vocabulary, keys and ordering
are SQL in stg_dataworks__events.
"""

from cdc_lakehouse.decode import dataworks
from cdc_lakehouse.incremental import new_bronze_records, unheld_rows
from cdc_lakehouse.parallelism import spread_over_cores

FORMATS = ("dataworks_json", "datahub_blob")
INPUT_DDL = (
    "source_format string, topic string, partition int, offset bigint, "
    "timestamp timestamp, value binary, ingest_batch_id bigint"
)


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="append",
    )
    records = new_bronze_records(dbt, session, dbt.ref("stg_bronze__kafka_records"))
    selected = records.where(records.source_format.isin(*FORMATS)).select(
        "source_format", "topic", "partition", "offset", "timestamp", "value", "ingest_batch_id"
    )
    selected = spread_over_cores(selected)
    decoded = selected.mapInArrow(dataworks.decode_batches, dataworks.output_schema_ddl(INPUT_DDL))
    return unheld_rows(dbt, session, decoded)
