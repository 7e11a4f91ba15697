"""DTS / open-source Canal JSON (docs/formats.md 4c; seed 003): decoded in SQL by the exact JSON
function in ``stg_dts_canal__events``.
"""

from cdc_lakehouse.formats.plugin import Format

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
    ),
)
