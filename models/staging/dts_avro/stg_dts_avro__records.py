"""dbt Python model: decode the DTS Avro ``Record`` of every dts_avro record.

Reads the bronze records of topics whose registry format is dts_avro and applies
cdc_lakehouse.decode.dts_avro.decode_batches with mapInArrow (Arrow batches, fastavro, no
row-at-a-time UDF). One output row per input record; records that match neither schema
revision keep decode_error = avro_schema_mismatch for silver.quarantine. Python because
spark-avro's SQL functions cannot be installed offline (architecture.md); the op vocabulary,
keys and ordering are SQL in stg_dts_avro__events.
"""

from cdc_lakehouse.decode import dts_avro
from cdc_lakehouse.incremental import new_bronze_records, unheld_rows
from cdc_lakehouse.parallelism import spread_over_cores

FORMATS = ("dts_avro",)
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
    decoded = selected.mapInArrow(dts_avro.decode_batches, dts_avro.output_schema_ddl(INPUT_DDL))
    return unheld_rows(dbt, session, decoded)
