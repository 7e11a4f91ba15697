"""dbt Python model: the Shareplex JSON message of every dts_shareplex_json record, decoded by
cdc_lakehouse.formats.dts_shareplex.decoder (docs/formats.md section 4b). One row per bronze record,
with its raw value (the text of a DROP COLUMN message is its ddl_text); structural errors
kept as decode_error for silver.quarantine. Python because Spark's JSON
functions turn decimals into doubles (docs/architecture.md); ops, keys and ordering are SQL in
stg_dts_shareplex__events.
"""

from cdc_lakehouse.decode.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(
        dbt,
        session,
        dbt.ref("stg_bronze__kafka_records"),
        folder="dts_shareplex",
        keep_value=True,  # a DROP COLUMN's ddl_text is the message text
    )
