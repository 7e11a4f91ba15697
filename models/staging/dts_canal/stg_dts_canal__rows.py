"""dbt Python model: decode every DTS Canal JSON record into one row per changed row.

Reads the bronze records of topics whose registry format is dts_canal_json and applies
cdc_lakehouse.decode.dts_canal with mapInArrow (Arrow batches, no row-at-a-time UDF). A Canal
message carries an array of rows: the output has one row per array element (row_index), or
one row for a DDL, row-less or undecodable message. Topics whose registry row sets
canal_legacy_swap (DTS instances created before 2022-03-20: data / old swapped) are decoded
with the legacy meaning, the others with the open-source one; the two halves are unioned.
Python because Spark's JSON functions would turn decimal numbers into doubles
(architecture.md); the op vocabulary, keys, quarantine and ordering are SQL in
stg_dts_canal__events.
"""

from cdc_lakehouse.decode import dts_canal
from cdc_lakehouse.incremental import new_bronze_records, unheld_rows
from cdc_lakehouse.parallelism import spread_over_cores

FORMATS = ("dts_canal_json",)
INPUT_DDL = (
    "source_format string, canal_legacy_swap boolean, topic string, partition int, "
    "offset bigint, timestamp timestamp, value binary, ingest_batch_id bigint"
)


def model(dbt, session):
    dbt.config(
        materialized="incremental",
        incremental_strategy="append",
    )
    records = new_bronze_records(dbt, session, dbt.ref("stg_bronze__kafka_records"))
    selected = records.where(records.source_format.isin(*FORMATS)).selectExpr(
        "source_format",
        "coalesce(canal_legacy_swap, false) as canal_legacy_swap",
        "topic",
        "partition",
        "offset",
        "timestamp",
        "value",
        "ingest_batch_id",
    )
    selected = spread_over_cores(selected)
    schema = dts_canal.output_schema_ddl(INPUT_DDL)
    normal = selected.where("not canal_legacy_swap").mapInArrow(dts_canal.decode_batches, schema)
    legacy = selected.where("canal_legacy_swap").mapInArrow(dts_canal.decode_batches_legacy, schema)
    decoded = normal.unionByName(legacy)
    return unheld_rows(dbt, session, decoded, keys=("topic", "partition", "offset", "row_index"))
