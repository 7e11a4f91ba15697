"""DataWorks "sync all data to Kafka" JSON and the same envelope in DataHub Blob topics
(docs/formats.md 1 and 2; seeds 000, 002): decoded in SQL by the exact JSON function
(``stg_dataworks__decoded``); split updates paired by ``int_dataworks__events_paired``.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md): sequenceId as a number, then 0 for the UPDATE_BEFOR(E) half
# of a split update else 1
ORDERING = (OrderingPart("sequence_id", 30), OrderingPart("image_rank", 1))

# what the docs' formats tables say of both formats (the same envelope)
ORDERING_TEXT = "sequenceId, update-before half first"
ROW_KEY_TEXT = "schema.primaryKey, else `#alibaba_rds_row_id#`, else all columns"
DECODES_TEXT = "split and one-message updates; DDL and heartbeats"

# both formats' column of docs/formats.md's normalized vocabulary table: what their ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "DataWorks / Blob",
    (
        ("insert", "INSERT"),
        ("snapshot", "-"),
        (
            "update",
            "UPDATE_BEFOR / UPDATE_BEFORE + UPDATE_AFTER, or one UPDATE_AFTER (or UPDATE) with "
            "both images",
        ),
        ("delete", "DELETE"),
        ("truncate", "TRUNCATE (or a QUERY holding one)"),
        ("other DDL", "CREATE, ALTER, ERASE, QUERY, RENAME, CINDEX, DINDEX (with `ddl.text`)"),
        ("transaction marker", "TRANSACTION_BEGIN, TRANSACTION_END, GTID, XACOMMIT, XAROLLBACK"),
        ("heartbeat", "MHEARTBEAT"),
        ("tombstone", "-"),
    ),
)

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
        product="DataWorks (sync to Kafka)",
        docs_section="1",
        ordering_text=ORDERING_TEXT,
        row_key_text=ROW_KEY_TEXT,
        decodes_text=DECODES_TEXT,
        vocabulary=VOCABULARY,
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
        product="DataHub (Blob topics)",
        docs_section="2",
        ordering_text=ORDERING_TEXT,
        row_key_text=ROW_KEY_TEXT,
        decodes_text=DECODES_TEXT,
        vocabulary=VOCABULARY,
        paired_in="int_dataworks__events_paired",
        resolves_later=True,
        ordering=ORDERING,
    ),
)
