"""dbt Python model: the DTS Avro ``Record`` of every dts_avro record, decoded by
cdc_lakehouse.formats.dts_avro.decoder with fastavro (docs/formats.md section 4a). One row per
bronze record; a record that matches neither schema revision keeps decode_error =
avro_schema_mismatch for silver.quarantine. Python, not Spark's from_avro: measured on the same
bronze, from_avro plus the SQL that gives the same texts cost more CPU and wall time
(docs/formats.md 4a, "Why fastavro and not from_avro"); ops, keys and ordering are SQL in
stg_dts_avro__events."""

from cdc_lakehouse.decode.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(dbt, session, dbt.ref("stg_bronze__kafka_records"), folder="dts_avro")
