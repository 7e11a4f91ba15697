"""DTS Shareplex JSON (docs/formats.md 4b; seed 003): decoded in Python (:mod:`.decoder`); keys
learned across records by ``int_dts_shareplex__events_keyed``.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md): meta.scn as a number, meta.seq (0 when absent), then 0 for an
# UPDATE BEFORE half else 1
ORDERING = (
    OrderingPart("scn", 30),
    OrderingPart("seq", 10),
    OrderingPart("image_rank", 1),
)

# the format's column of docs/formats.md's normalized vocabulary table: what its ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "Shareplex",
    (
        ("insert", "ins, INSERT"),
        ("snapshot", "-"),
        ("update", "upd, UPDATE, UPDATE BEFORE + UPDATE AFTER"),
        ("delete", "del, DELETE"),
        ("truncate", "TRUNCATE"),
        ("other DDL", "DROP COLUMN"),
        ("transaction marker", "-"),
        ("heartbeat", "-"),
        ("tombstone", "-"),
    ),
)

FORMATS = (
    Format(
        name="dts_shareplex_json",
        staging_folder="dts_shareplex",
        decoder="decoder",
        decoding_model="stg_dts_shareplex__decoded",
        gold_folder="dts_shareplex",
        type_family=None,
        encoder="encoder_dts_shareplex_json",
        value_encoding="json",
        product="DTS (Shareplex JSON)",
        docs_section="4b",
        ordering_text="scn, seq",
        row_key_text=(
            "columns of `key`; an `ins` (no key) takes its table's key as the latest upd / del "
            "sent it, all columns until one has"
        ),
        decodes_text=(
            "`upd` is a partial update; TRUNCATE / DROP COLUMN to schema_changes; trans, "
            "seq/size kept"
        ),
        vocabulary=VOCABULARY,
        paired_in="int_dts_shareplex__events_keyed",
        resolves_later=True,
        ordering=ORDERING,
    ),
)
