"""dbt Python model: decode the Shareplex JSON message of every dts_shareplex_json record.

Reads the bronze records of topics whose registry format is dts_shareplex_json and applies
cdc_lakehouse.decode.dts_shareplex.decode_batches with mapInArrow (Arrow batches, no
row-at-a-time UDF). One output row per input record; structural errors are kept as
decode_error / decode_error_detail for silver.quarantine. Python because Spark's JSON
functions would turn decimal numbers into doubles (architecture.md); the op vocabulary, keys
and ordering are SQL in stg_dts_shareplex__events.
"""

from cdc_lakehouse.decode import dts_shareplex
from cdc_lakehouse.incremental import new_bronze_records, unheld_rows
from cdc_lakehouse.parallelism import spread_over_cores

FORMATS = ("dts_shareplex_json",)
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
    decoded = selected.mapInArrow(
        dts_shareplex.decode_batches, dts_shareplex.output_schema_ddl(INPUT_DDL)
    )
    return unheld_rows(dbt, session, decoded)
