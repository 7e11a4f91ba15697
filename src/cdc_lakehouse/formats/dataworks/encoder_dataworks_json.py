"""Encoder of the DataWorks "sync all data to Kafka" JSON (docs/formats.md section 1; seed 000).

One topic, ``<prefix>.dataworks_json``, for every table of the history (one database per
topic). The envelope, values and ops are described in :mod:`._dataworks_envelope`; this
producer writes absent envelope fields as JSON null (seed 000's examples), splits each update
into UPDATE_BEFOR + UPDATE_AFTER (the task default; ``one_message_updates=True`` is the
"one Kafka record per source update" option) and sends rows of tables without a primary key
with an empty Kafka key (DataWorks Kafka data source: "support tables without a primary key").
"""

from __future__ import annotations

from cdc_lakehouse.formats.dataworks.encoder_envelope import (
    EnvelopeOptions,
    encode_envelopes,
    source_type,
    value_text,
)
from cdc_lakehouse.tools.simulate.history import History
from cdc_lakehouse.tools.simulate.messages import Message

FORMAT = "dataworks_json"
FEATURES: frozenset[str] = frozenset({"truncate", "heartbeat", "key_update", "keyless_table"})

__all__ = ["FEATURES", "FORMAT", "encode", "source_type", "topics", "value_text"]


def topics(history: History, prefix: str) -> list[str]:
    """The one topic of the whole history."""
    return [f"{prefix}.{FORMAT}"]


def encode(
    history: History,
    prefix: str,
    *,
    one_message_updates: bool = False,
    update_before_op: str = "UPDATE_BEFOR",
    row_id_column: bool = False,
) -> list[Message]:
    """Every message in production order. Options: ``one_message_updates`` (one UPDATE_AFTER
    with both images), ``update_before_op`` (``UPDATE_BEFOR`` as documented or
    ``UPDATE_BEFORE``), ``row_id_column`` (add ``#alibaba_rds_row_id#`` to keyless tables)."""
    options = EnvelopeOptions(
        one_message_updates=one_message_updates,
        update_before_op="UPDATE_BEFORE" if update_before_op == "UPDATE_BEFORE" else "UPDATE_BEFOR",
        write_null_fields=True,
        keyless_key=None,
        row_id_column=row_id_column,
    )
    return encode_envelopes(history, topics(history, prefix)[0], options)
