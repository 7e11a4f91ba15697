"""Qlik Replicate / Qlik Talend Data Integration Kafka target, JSON and Avro (docs/formats.md 5;
seed 004): decoded in Python (:mod:`.decoder`; Avro schemas :mod:`.avro_schema`,
:mod:`.avro_writer` and :mod:`.sample` for the sample and the tests); a data message waits for
its metadata message.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart

# the ordering rule (docs/formats.md 5): 0 for a metadata (MD) message, ordered by its
# tableVersion, 1 for a full-load REFRESH, 2 for a change, ordered by headers.changeSequence as
# text (35 characters)
ORDERING = (OrderingPart("load_rank", 1), OrderingPart("change_sequence", 35, text=True))

FORMATS = (
    Format(
        name="qlik_json",
        staging_folder="qlik",
        decoder="decoder",
        decoding_model="stg_qlik__decoded",
        gold_folder="qlik_json",
        type_family="qlik",
        encoder="encoder_qlik_json",
        value_encoding="json",
        resolves_later=True,
        ordering=ORDERING,
    ),
    Format(
        name="qlik_avro",
        staging_folder="qlik",
        decoder="decoder",
        decoding_model="stg_qlik__decoded",
        gold_folder="qlik_avro",
        type_family="qlik",
        encoder="encoder_qlik_avro",
        value_encoding="avro",
        resolves_later=True,
        ordering=ORDERING,
    ),
)
