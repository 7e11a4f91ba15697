"""Encoders that render a simulated history in each registry format (issue 5).

``ENCODERS``: registry format name -> encoder module (``FORMAT``, ``FEATURES``, ``topics``,
``encode``, ``value_text``, ``source_type``; see the simulator brief).
"""

from __future__ import annotations

from types import ModuleType

from cdc_lakehouse.simulate.encoders import qlik_avro, qlik_json

ENCODERS: dict[str, ModuleType] = {
    qlik_json.FORMAT: qlik_json,
    qlik_avro.FORMAT: qlik_avro,
}
