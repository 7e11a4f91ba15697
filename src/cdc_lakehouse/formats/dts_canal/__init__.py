"""DTS / open-source Canal JSON (docs/formats.md 4c; seed 003): decoded in SQL by the exact JSON
function in ``stg_dts_canal__events``.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md): es (ms), then 0 for a full-load INIT row else 1; a message's
# rows by their index in data
ORDERING = (OrderingPart("es_ms", 20), OrderingPart("snapshot_rank", 1))

# the format's column of docs/formats.md's normalized vocabulary table: what its ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "Canal",
    (
        ("insert", "INSERT"),
        ("snapshot", "INIT"),
        ("update", "UPDATE"),
        ("delete", "DELETE"),
        ("truncate", "isDdl holding a TRUNCATE"),
        ("other DDL", "isDdl"),
        ("transaction marker", "-"),
        ("heartbeat", "-"),
        ("tombstone", "-"),
    ),
)

FORMATS = (
    Format(
        name="dts_canal_json",
        staging_folder="dts_canal",
        decoder=None,
        decoding_model="stg_dts_canal__events",
        gold_folder="dts_canal",
        type_family="mysql",
        encoder="encoder_dts_canal_json",
        value_encoding="json",
        product="DTS (Canal JSON)",
        docs_section="4c",
        ordering_text="es (ms), then row index",
        row_key_text="pkNames, else all columns",
        decodes_text=(
            "one change per `data` element; `old` overlays the before image; legacy data/old "
            "swap per topic (`canal_legacy_swap`)"
        ),
        vocabulary=VOCABULARY,
        ordering=ORDERING,
        row_index=True,
    ),
)
