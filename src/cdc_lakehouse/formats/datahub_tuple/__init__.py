"""DataHub Tuple records (docs/formats.md 2; seed 002): decoded in Python (:mod:`.decoder`);
the two halves of an update paired by ``int_datahub_tuple__events_paired``.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md): _sequence_id_ as a number, then 0 when _before_image_ = Y
# else 1
ORDERING = (OrderingPart("sequence_id", 30), OrderingPart("image_rank", 1))

# the format's column of docs/formats.md's normalized vocabulary table: what its ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "Tuple",
    (
        ("insert", "I"),
        ("snapshot", "-"),
        ("update", "U (Y/N then N/Y)"),
        ("delete", "D"),
        ("truncate", "-"),
        ("other DDL", "-"),
        ("transaction marker", "-"),
        ("heartbeat", "-"),
        ("tombstone", "-"),
    ),
)

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
        product="DataHub (Tuple topics)",
        docs_section="2",
        ordering_text="`_sequence_id_`, before image first",
        row_key_text=(
            "declared key (seed `cdc_declared_keys`, via `stg_bronze__declared_keys`), "
            "else all columns"
        ),
        decodes_text="`_excute_time_` and `_execute_time_`; Y/N image flags checked",
        vocabulary=VOCABULARY,
        paired_in="int_datahub_tuple__events_paired",
        resolves_later=True,
        ordering=ORDERING,
    ),
)
