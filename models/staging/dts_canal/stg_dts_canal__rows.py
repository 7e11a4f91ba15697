"""dbt Python model: every dts_canal_json record decoded by cdc_lakehouse.decode.dts_canal
(docs/formats.md section 4c) into one row per element of its ``data`` array (row_index), or
one row for a DDL, row-less or undecodable message. Topics whose registry row sets
canal_legacy_swap (DTS instances created before 2022-03-20) are decoded with data / old
swapped. Python because Spark's JSON functions turn decimals into doubles
(docs/architecture.md); ops, keys, quarantine and ordering are SQL in stg_dts_canal__events.
"""

from cdc_lakehouse.staging_model import decode_records


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    return decode_records(
        dbt,
        session,
        dbt.ref("stg_bronze__kafka_records"),
        folder="dts_canal",
        legacy_swap=True,
        multi_row=True,
    )
