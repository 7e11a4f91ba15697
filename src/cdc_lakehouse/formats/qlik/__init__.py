"""Qlik Replicate / Qlik Talend Data Integration Kafka target, JSON and Avro (docs/formats.md 5;
seed 004): decoded in Python (:mod:`.decoder`; Avro schemas :mod:`.avro_schema`,
:mod:`.avro_writer` and :mod:`.sample` for the sample and the tests); a data message waits for
its metadata message.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md 5): 0 for a metadata (MD) message, ordered by its
# tableVersion, 1 for a full-load REFRESH, 2 for a change, ordered by headers.changeSequence as
# text (35 characters)
ORDERING = (OrderingPart("load_rank", 1), OrderingPart("change_sequence", 35, text=True))

# what the docs' formats tables say of both formats (the same messages)
ORDERING_TEXT = "REFRESH first, changeSequence"
ROW_KEY_TEXT = "primaryKeyPosition of the metadata message"
DECODES_TEXT = (
    "metadata (MD) messages kept per tableVersion; a data message takes the MD its "
    "`headers.externalSchemaId` names (exactly; an Avro one read by reference, the MD its "
    "envelope `messageSchemaId` names), else the MD that carries its envelope "
    "`messageSchemaId` if one does, else its table's or topic's newest, as of its ingest "
    "batch, and waits in quarantine for an MD not yet arrived (rules and sources: "
    "docs/formats.md 5a); changeMask / columnMask decoded against column ordinals (0 bit = "
    "not provided); Avro data read with the MD's dataSchema"
)

# both formats' column of docs/formats.md's normalized vocabulary table: what their ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "Qlik",
    (
        ("insert", "INSERT"),
        ("snapshot", "REFRESH"),
        ("update", "UPDATE"),
        ("delete", "DELETE"),
        ("truncate", "-"),
        ("other DDL", "new MD message (`tableVersion`)"),
        ("transaction marker", "(`transactionLastEvent` on changes)"),
        ("heartbeat", "-"),
        ("tombstone", "-"),
    ),
)

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
        product="Qlik Replicate (JSON)",
        docs_section="5",
        ordering_text=ORDERING_TEXT,
        row_key_text=ROW_KEY_TEXT,
        decodes_text=DECODES_TEXT,
        vocabulary=VOCABULARY,
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
        product="Qlik Replicate (Avro)",
        docs_section="5",
        ordering_text=ORDERING_TEXT,
        row_key_text=ROW_KEY_TEXT,
        decodes_text=DECODES_TEXT,
        vocabulary=VOCABULARY,
        resolves_later=True,
        ordering=ORDERING,
    ),
)
