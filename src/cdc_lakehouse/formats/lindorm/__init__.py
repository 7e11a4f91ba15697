"""Lindorm data subscription, Debezium format V2.0 (docs/formats.md 3; seed 001): decoded in
Python (:mod:`.decoder`).
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md): source.ts_ms, then payload.ts_ms (0 when absent), epoch ms
ORDERING = (OrderingPart("source_ts_ms", 20), OrderingPart("payload_ts_ms", 20))

# the format's column of docs/formats.md's normalized vocabulary table: what its ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "Lindorm",
    (
        ("insert", "c"),
        ("snapshot", "r"),
        ("update", "u"),
        ("delete", "d"),
        ("truncate", "-"),
        ("other DDL", "-"),
        ("transaction marker", "-"),
        ("heartbeat", "-"),
        ("tombstone", "-"),
    ),
)

FORMATS = (
    Format(
        name="lindorm_debezium",
        staging_folder="lindorm",
        decoder="decoder",
        decoding_model="stg_lindorm__decoded",
        gold_folder="lindorm",
        type_family="kafka_connect",
        encoder="encoder_lindorm_debezium",
        value_encoding="json",
        product="Lindorm (Debezium V2.0)",
        docs_section="3",
        ordering_text="source.ts_ms, ts_ms",
        row_key_text="HBase `ROW`; SQL tables: declared key, else all columns",
        decodes_text=(
            "c/u/d/r; HBase base64 decoded to text when it is UTF-8 text; a column missing "
            "from `after` is NULL"
        ),
        vocabulary=VOCABULARY,
        ordering=ORDERING,
    ),
)
