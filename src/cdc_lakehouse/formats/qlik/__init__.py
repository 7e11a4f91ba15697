"""Qlik Replicate / Qlik Talend Data Integration Kafka target, JSON and Avro (docs/formats.md 5;
seed 004): decoded in Python (:mod:`.decoder`; Avro schemas :mod:`.avro_schema`,
:mod:`.avro_writer` and :mod:`.sample` for the sample and the tests); a data message waits for
its metadata message.
"""

from cdc_lakehouse.formats.plugin import Format

FORMATS = (
    Format(
        name="qlik_json",
        staging_folder="qlik",
        decoder="decoder",
        decoding_model="stg_qlik__messages",
        gold_folder="qlik_json",
        type_family="qlik",
        encoder="encoder_qlik_json",
        value_encoding="json",
        resolves_later=True,
    ),
    Format(
        name="qlik_avro",
        staging_folder="qlik",
        decoder="decoder",
        decoding_model="stg_qlik__messages",
        gold_folder="qlik_avro",
        type_family="qlik",
        encoder="encoder_qlik_avro",
        value_encoding="avro",
        resolves_later=True,
    ),
)
