"""Lindorm data subscription, Debezium format V2.0 (docs/formats.md 3; seed 001): decoded in
Python (:mod:`.decoder`).
"""

from cdc_lakehouse.formats.plugin import Format

FORMATS = (
    Format(
        name="lindorm_debezium",
        staging_folder="lindorm",
        decoder="decoder",
        decoding_model="stg_lindorm__envelopes",
        gold_folder="lindorm",
        type_family="kafka_connect",
        encoder="encoder_lindorm_debezium",
        value_encoding="json",
    ),
)
