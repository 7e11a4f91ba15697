"""DTS Avro (docs/formats.md 4a; seed 003): decoded in Python with fastavro (:mod:`.decoder`;
the record schema :mod:`.avro_schema`; :mod:`.avro_writer` and :mod:`.sample` write the
sample and the tests' records).
"""

from cdc_lakehouse.formats.plugin import Format

FORMATS = (
    Format(
        name="dts_avro",
        staging_folder="dts_avro",
        decoder="decoder",
        decoding_model="stg_dts_avro__records",
        gold_folder="dts_avro",
        type_family="mysql_binlog",
        encoder="encoder_dts_avro",
        value_encoding="avro",
    ),
)
