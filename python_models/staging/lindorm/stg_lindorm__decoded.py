"""dbt Python model: the Debezium V2.0 envelope of every lindorm_debezium record, decoded by
cdc_lakehouse.formats.lindorm.decoder (docs/formats.md section 3). One row per bronze record;
structural errors kept as decode_error for silver.quarantine. Python because Spark's JSON
functions turn decimals into doubles (docs/architecture.md) and HBase values need base64 /
UTF-8 decoding; ops, keys and ordering are SQL in stg_lindorm__events.
"""

from cdc_lakehouse.decode.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(dbt, session, dbt.ref("stg_bronze__kafka_records"), folder="lindorm")
