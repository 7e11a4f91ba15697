"""Python baseline decoder of plain Debezium JSON (registry format ``debezium_json``), the
open-source PostgreSQL and MySQL connectors' change events as Kafka Connect's JsonConverter
writes them (with schemas: ``{"schema": ..., "payload": ...}``; schemaless: the payload
itself). Same contract as the decoders of :mod:`.formats` (``lindorm_changes``).

- Table ``payload.source.table`` (lower-case), op ``payload.op``: ``c`` / ``u`` / ``r`` give
  ``payload.after``, ``d`` gives ``payload.before`` as a delete. Tombstones (NULL values, the
  record after each delete) and truncates (``t``) are skipped.
- Row values as orjson decodes them, except decimals declared by the schema
  (``org.apache.kafka.connect.data.Decimal``, sent as base64 of the two's-complement unscaled
  integer), which become their plain text with ``scale`` fraction digits (``-12.50``), as the
  project's decoder yields them. Schemaless decimals are already text
  (``decimal.handling.mode=string``).
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.debezium.ORDERING`,
  :meth:`~cdc_lakehouse.formats.plugin.Format.ordering_tuple`), one shape for both connectors:
  PostgreSQL (``source.lsn``, 0, 0, ...); MySQL (number of ``source.file`` after its last
  ``.``, ``source.pos``, ``source.row``, ...), then partition, offset, topic.

Like the other baselines, a table without a key is not handled specially: the before image of
its ``u`` (the identity the update removes) is not turned into a delete.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Iterator
from typing import Any

import orjson

from cdc_lakehouse.formats.debezium import FORMATS
from cdc_lakehouse.formats.debezium.encoder_debezium_json import plain_decimal
from cdc_lakehouse.formats.plugin import Change, Value

_ORDERING = FORMATS[0].ordering_tuple

DECIMAL = "org.apache.kafka.connect.data.Decimal"


def decimal_text(encoded: str, scale: int) -> str:
    """Plain text (Java ``BigDecimal.toPlainString``) of a Kafka Connect Decimal sent as base64
    of its two's-complement big-endian unscaled integer."""
    return plain_decimal(int.from_bytes(base64.b64decode(encoded), "big", signed=True), scale)


def decimal_scales(schema: Any, image: str) -> dict[str, int]:
    """Column -> scale of the Decimal fields of the value schema's ``image`` struct (``before``
    / ``after``); empty without a schema."""
    if not isinstance(schema, dict):
        return {}
    for field in schema.get("fields") or ():
        if field.get("field") == image:
            return {
                column["field"]: int(column["parameters"]["scale"])
                for column in field.get("fields") or ()
                if column.get("name") == DECIMAL
            }
    return {}


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """One :data:`~cdc_lakehouse.formats.plugin.Change` per ``c`` / ``u`` / ``r`` / ``d`` event
    (module doc)."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue  # tombstone
        message = loads(raw)
        schema = None
        if "payload" in message and "op" not in message:
            schema, message = message.get("schema"), message["payload"]
        op = message["op"]
        if op == "d":
            name, deleted = "before", True
        elif op in ("c", "u", "r"):
            name, deleted = "after", False
        else:
            continue  # t (truncate)
        image = message[name]
        scales = decimal_scales(schema, name)
        if scales:
            image = {
                column: decimal_text(value, scales[column])
                if column in scales and value is not None
                else value
                for column, value in image.items()
            }
        source = message["source"]
        if source["connector"] == "mysql":
            position = int(source["file"].rpartition(".")[2])
            log_offset, log_row = source["pos"], source.get("row") or 0
        else:
            position, log_offset, log_row = source["lsn"], 0, 0
        order = _ORDERING(
            {
                "log_position": position,
                "log_offset": log_offset,
                "log_row": log_row,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield source["table"].lower(), order, deleted, image
