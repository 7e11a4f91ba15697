"""Encoders that render a logical history in each registry format (one module per format).

``ENCODERS``: registry format name -> encoder module (``FORMAT``, ``FEATURES``, ``topics``,
``encode``, ``value_text``, ``source_type``)."""

from __future__ import annotations

from types import ModuleType

from cdc_lakehouse.simulate.encoders import (
    datahub_blob,
    datahub_tuple,
    dataworks_json,
    lindorm_debezium,
)

ENCODERS: dict[str, ModuleType] = {
    dataworks_json.FORMAT: dataworks_json,
    datahub_blob.FORMAT: datahub_blob,
    datahub_tuple.FORMAT: datahub_tuple,
    lindorm_debezium.FORMAT: lindorm_debezium,
}
