"""DataWorks "sync all data to Kafka" JSON and the same envelope in DataHub Blob topics
(docs/formats.md 1 and 2; seeds 000, 002): decoded in SQL by the exact JSON function
(``stg_dataworks__decoded``); split updates paired by ``int_dataworks__events_paired``.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart

# the ordering rule (docs/formats.md): sequenceId as a number, then 0 for the UPDATE_BEFOR(E) half
# of a split update else 1
ORDERING = (OrderingPart("sequence_id", 30), OrderingPart("image_rank", 1))

FORMATS = (
    Format(
        name="dataworks_json",
        staging_folder="dataworks",
        decoder=None,
        decoding_model="stg_dataworks__decoded",
        gold_folder="dataworks",
        type_family="dataworks",
        encoder="encoder_dataworks_json",
        value_encoding="json",
        paired_in="int_dataworks__events_paired",
        resolves_later=True,
        ordering=ORDERING,
    ),
    Format(
        name="datahub_blob",
        staging_folder="dataworks",
        decoder=None,
        decoding_model="stg_dataworks__decoded",
        gold_folder="datahub_blob",
        type_family="dataworks",
        encoder="encoder_datahub_blob",
        value_encoding="json",
        paired_in="int_dataworks__events_paired",
        resolves_later=True,
        ordering=ORDERING,
    ),
)
