"""DTS Avro (docs/formats.md 4a; seed 003): decoded in Python with fastavro (:mod:`.decoder`;
the record schema :mod:`.avro_schema`; :mod:`.avro_writer` and :mod:`.sample` write the
sample and the tests' records).
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md): 0 for a full-load INIT / FILL record else 1, then
# sourceTimestamp (s), then id
ORDERING = (
    OrderingPart("load_rank", 1),
    OrderingPart("source_timestamp", 20),
    OrderingPart("record_id", 20),
)

# the format's column of docs/formats.md's normalized vocabulary table: what its ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "DTS Avro",
    (
        ("insert", "INSERT"),
        ("snapshot", "INIT, FILL"),
        ("update", "UPDATE"),
        ("delete", "DELETE"),
        ("truncate", "DDL holding a TRUNCATE"),
        ("other DDL", "DDL"),
        ("transaction marker", "BEGIN, COMMIT, ROLLBACK, ABORT"),
        ("heartbeat", "HEARTBEAT, CHECKPOINT"),
        ("tombstone", "-"),
    ),
)

FORMATS = (
    Format(
        name="dts_avro",
        staging_folder="dts_avro",
        decoder="decoder",
        decoding_model="stg_dts_avro__decoded",
        gold_folder="dts_avro",
        type_family="mysql_binlog",
        encoder="encoder_dts_avro",
        value_encoding="avro",
        product="DTS (Avro)",
        docs_section="4a",
        ordering_text="INIT/FILL first, sourceTimestamp (s), id",
        row_key_text="`tags.pk_uk_info` (PRIMARY, else first unique key)",
        decodes_text=(
            "both schema revisions; every value type; EmptyObject NONE = not provided "
            "(partial image)"
        ),
        vocabulary=VOCABULARY,
        ordering=ORDERING,
    ),
)
