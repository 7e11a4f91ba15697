"""Encoders of the change simulator: one module per registry format (see each module's doc).

``ENCODERS`` maps the registry format name to its encoder module."""

from __future__ import annotations

from types import ModuleType

from cdc_lakehouse.simulate.encoders import dts_avro, dts_canal_json, dts_shareplex_json

ENCODERS: dict[str, ModuleType] = {
    dts_avro.FORMAT: dts_avro,
    dts_shareplex_json.FORMAT: dts_shareplex_json,
    dts_canal_json.FORMAT: dts_canal_json,
}
