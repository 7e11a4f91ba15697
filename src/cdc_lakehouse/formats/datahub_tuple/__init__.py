"""DataHub Tuple records (docs/formats.md 2; seed 002): decoded in Python (:mod:`.decoder`);
the two halves of an update paired by ``int_datahub_tuple__events_paired``.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart

# the ordering rule (docs/formats.md): _sequence_id_ as a number, then 0 when _before_image_ = Y
# else 1
ORDERING = (OrderingPart("sequence_id", 30), OrderingPart("image_rank", 1))

FORMATS = (
    Format(
        name="datahub_tuple",
        staging_folder="datahub_tuple",
        decoder="decoder",
        decoding_model="stg_datahub_tuple__decoded",
        gold_folder="datahub_tuple",
        type_family=None,
        encoder="encoder_datahub_tuple",
        value_encoding="json",
        paired_in="int_datahub_tuple__events_paired",
        resolves_later=True,
        ordering=ORDERING,
    ),
)
