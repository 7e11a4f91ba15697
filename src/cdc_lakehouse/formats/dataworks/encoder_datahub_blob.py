"""Encoder of DataHub Blob topics read through DataHub's Kafka interface (docs/formats.md section 2;
seed 002): each record is the DataWorks JSON of section 1 as UTF-8 bytes.

One topic, ``<prefix>.datahub_blob``, for the whole database (seed 002: one database, many
tables, per Blob topic), carrying DML, TRUNCATE, ALTER (schema changes) and heartbeats. The
envelope, values and ops are described in :mod:`._dataworks_envelope`; this producer leaves
absent envelope fields out (seed 002's examples, fastjson's default), splits updates into
UPDATE_BEFOR + UPDATE_AFTER (seed 002's examples) and shards rows of tables without a primary
key by table name (seed 002 sharding table), so their Kafka key is the table name.
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

FORMAT = "datahub_blob"
FEATURES: frozenset[str] = frozenset({"truncate", "heartbeat", "key_update", "keyless_table"})

__all__ = ["FEATURES", "FORMAT", "encode", "source_type", "topics", "value_text"]


def topics(history: History, prefix: str) -> list[str]:
    """The one topic of the whole history."""
    return [f"{prefix}.{FORMAT}"]


def encode(history: History, prefix: str, *, row_id_column: bool = False) -> list[Message]:
    """Every message in production order. ``row_id_column``: add ``#alibaba_rds_row_id#`` to
    tables without a key (RDS MySQL implicit primary key)."""
    options = EnvelopeOptions(
        one_message_updates=False,
        update_before_op="UPDATE_BEFOR",
        write_null_fields=False,
        keyless_key="table",
        row_id_column=row_id_column,
    )
    return encode_envelopes(history, topics(history, prefix)[0], options)
