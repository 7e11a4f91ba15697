"""dbt Python model: the DataWorks / DataHub Blob JSON envelope of every dataworks_json and
datahub_blob record, decoded by cdc_lakehouse.decode.dataworks (docs/formats.md sections 1
and 2). One row per bronze record; structural errors kept as decode_error for
silver.quarantine. Python because Spark's JSON functions turn decimals into doubles
(docs/architecture.md); ops, keys and ordering are SQL in stg_dataworks__events.
"""

from cdc_lakehouse.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(dbt, session, dbt.ref("stg_bronze__kafka_records"), folder="dataworks")
