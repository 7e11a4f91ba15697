"""dbt Python model: every datahub_tuple record (one flat JSON object of the table's columns and the
meta columns), decoded by cdc_lakehouse.formats.datahub_tuple.decoder (docs/formats.md section
2). One row per bronze record; structural errors kept as decode_error for silver.quarantine.
Python because Spark's JSON functions turn decimals into doubles (docs/architecture.md) and the
data columns are not known in advance; ops, keys and ordering are SQL in
stg_datahub_tuple__events."""

from cdc_lakehouse.decode.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(
        dbt, session, dbt.ref("stg_bronze__kafka_records"), folder="datahub_tuple"
    )
