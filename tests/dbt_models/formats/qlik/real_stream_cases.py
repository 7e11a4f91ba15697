"""The shape of a real Qlik Replicate JSON stream (issue 48, point 4), delivered in batches.

A real task with a topic per table writes one enveloped metadata (MD) message - its
``message.schemaId`` X, ``lineage`` naming the table - then the table's full load: enveloped
data (DT) messages, ``"type": "DT"``, operation ``REFRESH``, ``changeSequence`` empty,
``headers.externalSchemaId`` null, and an envelope ``messageSchemaId`` Y that no MD carries.
Before issue 48 every such DT waited in quarantine (``missing_table_metadata``) for ever: the
decoder required an MD whose schemaId is the envelope's id. Seed 004 links a DT to its MD by
``headers.externalSchemaId`` only; Qlik's envelope page calls ``messageSchemaId`` a reference
"which can be used to deserialize the bytes in the message field", which JSON does not need.
So a DT without ``externalSchemaId`` is matched by its topic's table (docs/formats.md 5a).

Topics (task ``real_task``, schema ``REAL``), one table each:

- ``qlik.real.same`` (table ``SAME``): MD and two REFRESH DTs in batch A (the session's
  first build): decoded at once.
- ``qlik.real.earlier`` (``EARLIER``): MD in batch A, two REFRESH DTs in increment 1: decoded
  with the MD of the earlier batch.
- ``qlik.real.later`` (``LATER``): two REFRESH DTs in batch A, their MD in increment 2: they
  wait in quarantine through increment 1 (in which other metadata arrives: the late cases'
  MDs) and reach gold in increment 2's run.
- ``qlik.real.avro`` (qlik_avro, ``AVRO``): in batch A a self-describing REFRESH DT (the
  envelope embeds its writer schema in ``messageSchema``, id Y) and a REFRESH DT read by
  reference (no ``messageSchema``, id Y); the MD (schemaId X) and another self-describing DT
  in increment 1. The self-describing DTs reach gold (matched by topic, the first one when
  the MD arrives); the DT by reference stays in quarantine (``missing_table_metadata``): its
  writer schema is the ``dataSchema`` of the MD whose schemaId is Y, which never comes, and
  X's dataSchema, which would read its bytes to the end, is not taken in its place.

Incremental runs must equal ``dbt build --full-refresh`` (these topics' gold rows and
quarantine here, the whole lake in test_simulated_gold.py).
"""

from __future__ import annotations

import json

from cdc_lakehouse.formats.qlik.avro_writer import (
    QlikColumn,
    QlikTable,
    encode_data,
    encode_metadata,
)
from tests.dbt_models.helpers import DumpLine, dump_line

SAME_TOPIC = "qlik.real.same"
EARLIER_TOPIC = "qlik.real.earlier"
LATER_TOPIC = "qlik.real.later"
AVRO_TOPIC = "qlik.real.avro"
TOPICS = (SAME_TOPIC, EARLIER_TOPIC, LATER_TOPIC, AVRO_TOPIC)
TASK = "real_task"
SCHEMA = "REAL"

_COLUMNS = (
    QlikColumn("ID", "INT4", primary_key_position=1, nullable=False),
    QlikColumn("NAME", "STRING", length=20),
    QlikColumn("PRICE", "NUMERIC", precision=10, scale=2),
)


def table(name: str) -> QlikTable:
    """Table ``name`` as its one MD message describes it (schemaId ``<name>-X``)."""
    return QlikTable(
        "real-server", TASK, SCHEMA, name, 1, _COLUMNS, "2024-04-01T08:00:00.000", f"{name}-X"
    )


SAME = table("SAME")
EARLIER = table("EARLIER")
LATER = table("LATER")
AVRO = table("AVRO")


def envelope_id(table_: QlikTable) -> str:
    """The DTs' envelope messageSchemaId: an id no MD carries."""
    return f"{table_.table}-Y"


def md(table_: QlikTable) -> str:
    return json.dumps(
        {
            "magic": "atMSG",
            "type": "MD",
            "headers": None,
            "messageSchemaId": None,
            "messageSchema": None,
            "message": table_.metadata_message(),
        }
    )


def refresh(table_: QlikTable, id_: int, name: str, price: str) -> str:
    """A full-load DT as the real stream sends it (see module doc)."""
    return json.dumps(
        {
            "magic": "atMSG",
            "type": "DT",
            "headers": None,
            "messageSchemaId": envelope_id(table_),
            "messageSchema": None,
            "message": {
                "data": {"ID": id_, "NAME": name, "PRICE": price},
                "beforeData": None,
                "headers": {
                    "operation": "REFRESH",
                    "changeSequence": "",
                    "timestamp": "",
                    "streamPosition": "",
                    "transactionId": "",
                    "changeMask": None,
                    "columnMask": None,
                    "externalSchemaId": None,
                    "transactionEventCounter": None,
                    "transactionLastEvent": None,
                },
            },
        }
    )


def avro_refresh(id_: int, name: str, price: str, *, embed_schema: bool) -> bytes:
    """An Avro full-load DT of AVRO with envelope id ``AVRO-Y``: self-describing, or read by
    reference."""
    return encode_data(
        AVRO,
        "REFRESH",
        {"ID": id_, "NAME": name, "PRICE": price},
        column_mask=0x07,
        embed_schema=embed_schema,
        message_schema_id=envelope_id(AVRO),
    )


BATCH_A: dict[str, list[str | bytes]] = {
    SAME_TOPIC: [
        md(SAME),
        refresh(SAME, 1, "same one", "1.50"),
        refresh(SAME, 2, "same two", "20.00"),
    ],
    EARLIER_TOPIC: [md(EARLIER)],
    LATER_TOPIC: [refresh(LATER, 1, "later one", "3.10"), refresh(LATER, 2, "later two", "4.00")],
    AVRO_TOPIC: [
        avro_refresh(1, "avro one", "5.50", embed_schema=True),
        avro_refresh(2, "avro two", "6.00", embed_schema=False),
    ],
}
INCREMENTS: list[dict[str, list[str | bytes]]] = [
    {
        EARLIER_TOPIC: [
            refresh(EARLIER, 1, "earlier one", "7.25"),
            refresh(EARLIER, 2, "earlier two", "8.00"),
        ],
        AVRO_TOPIC: [
            encode_metadata(AVRO),
            avro_refresh(3, "avro three", "9.90", embed_schema=True),
        ],
    },
    {LATER_TOPIC: [md(LATER)]},
]


def _row(id_: int, name: str, price: str) -> dict[str, str]:
    return {"ID": str(id_), "NAME": name, "PRICE": price}


EXPECTED = {
    "SAME": {'{"ID":"1"}': _row(1, "same one", "1.50"), '{"ID":"2"}': _row(2, "same two", "20.00")},
    "EARLIER": {
        '{"ID":"1"}': _row(1, "earlier one", "7.25"),
        '{"ID":"2"}': _row(2, "earlier two", "8.00"),
    },
    "LATER": {
        '{"ID":"1"}': _row(1, "later one", "3.10"),
        '{"ID":"2"}': _row(2, "later two", "4.00"),
    },
    "AVRO": {
        '{"ID":"1"}': _row(1, "avro one", "5.50"),
        '{"ID":"3"}': _row(3, "avro three", "9.90"),
    },
}
"""gold.current_rows per table after both increments: row_key -> row_values."""

EXPECTED_AFTER_BATCH_A = {"SAME": EXPECTED["SAME"]}
"""gold.current_rows per table after batch A (the other tables have none yet)."""

WAITING_AFTER_BATCH_A = {(LATER_TOPIC, 0), (LATER_TOPIC, 1), (AVRO_TOPIC, 0), (AVRO_TOPIC, 1)}
"""(topic, offset) of the DTs in quarantine (missing_table_metadata) after batch A."""

WAITING_AT_THE_END = {(AVRO_TOPIC, 1)}
"""The Avro DT read by reference: no MD carries its envelope id AVRO-Y."""

RESOLVED_LATER = {("LATER", '{"ID":"1"}'), ("LATER", '{"ID":"2"}'), ("AVRO", '{"ID":"1"}')}
"""The changes decoded in a later batch than their own (resolved_batch_id > ingest_batch_id)."""


def _offsets(topic: str, batch: int | None) -> int:
    """The first offset of ``topic`` in increment ``batch`` (None: batch A)."""
    if batch is None:
        return 0
    earlier = [BATCH_A, *INCREMENTS[:batch]]
    return sum(len(b.get(topic, [])) for b in earlier)


def _lines(records: dict[str, list[str | bytes]], batch: int | None) -> list[DumpLine]:
    return [
        dump_line(topic, 0, _offsets(topic, batch) + index, value)
        for topic, values in records.items()
        for index, value in enumerate(values)
    ]


def dump_lines() -> list[DumpLine]:
    """Batch A as topic dump lines."""
    return _lines(BATCH_A, None)


def increment_dump_lines(batch: int) -> list[DumpLine] | None:
    """Increment ``batch`` (0 or 1) as topic dump lines, at the offsets after the earlier
    ones."""
    if batch >= len(INCREMENTS):
        return None
    return _lines(INCREMENTS[batch], batch)
