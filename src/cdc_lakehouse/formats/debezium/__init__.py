"""Plain Debezium JSON, as the open-source MySQL and PostgreSQL connectors write it through
Kafka Connect's JsonConverter (docs/formats.md 6): decoded in SQL by the exact JSON function in
``stg_debezium__events`` (decimals of a schema-enabled message by the JVM function
``ConnectDecimal``); :mod:`.encoder_debezium_json` simulates it, :mod:`.baseline` decodes it
for the benchmark's baselines.
"""

from cdc_lakehouse.formats.plugin import Format, OrderingPart, VocabularyColumn

# the ordering rule (docs/formats.md 6): the change's place in the source's log - PostgreSQL:
# source.lsn, then 0, 0; MySQL: the binlog file's number (source.file after its last '.'),
# source.pos, source.row (the row within a multi-row binlog event)
ORDERING = (
    OrderingPart("log_position", 20),
    OrderingPart("log_offset", 20),
    OrderingPart("log_row", 10),
)

# the format's column of docs/formats.md's normalized vocabulary table: what its ops become
# ("-": none)
VOCABULARY = VocabularyColumn(
    "Debezium",
    (
        ("insert", "c"),
        ("snapshot", "r"),
        ("update", "u"),
        ("delete", "d"),
        ("truncate", "t"),
        ("other DDL", "-"),
        ("transaction marker", "-"),
        ("heartbeat", "-"),
        ("tombstone", "NULL Kafka value (after a `d`)"),
    ),
)

FORMATS = (
    Format(
        name="debezium_json",
        staging_folder="debezium",
        decoder=None,
        decoding_model="stg_debezium__events",
        gold_folder="debezium",
        type_family="debezium",
        encoder="encoder_debezium_json",
        value_encoding="json",
        product=(
            "Debezium (open-source MySQL / PostgreSQL connectors, JSON with or without schemas)"
        ),
        docs_section="6",
        ordering_text="PostgreSQL source.lsn; MySQL binlog file number, pos, row",
        row_key_text="the Kafka key's fields (with or without its schema), else all columns",
        decodes_text=(
            'c/u/d/r/t; `{"schema", "payload"}` and schemaless values; Decimal (base64, scale '
            "from the schema) decoded to its exact text in the JVM; a NULL value (tombstone) is a "
            "control event; `t` a truncate"
        ),
        vocabulary=VOCABULARY,
        ordering=ORDERING,
    ),
)
