"""dbt Python model: every qlik_json / qlik_avro message decoded by
cdc_lakehouse.formats.qlik.decoder (docs/formats.md section 5) in two passes: the metadata (MD)
messages of every batch first, then each record against them (masks need the column ordinals,
Avro the writer schema). A data message whose metadata has not arrived keeps decode_error =
missing_table_metadata and is decoded again, and appended with a later resolved_batch_id, when a
run brings new metadata: per record, the row with the highest resolved_batch_id is the current
decoding (the one stg_qlik__events reads), equal to what a full refresh decodes."""

from cdc_lakehouse.decode.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(
        dbt, session, dbt.ref("stg_bronze__kafka_records"), folder="qlik", late_metadata=True
    )
