"""Qlik data messages whose metadata (MD) message arrives in a later ingest batch (issue 19).

Real Qlik topics deliver MD messages on their own schedule, so a data (DT) message can be
ingested batches before the MD it needs (docs/formats.md section 5: the masks need the column
ordinals, an Avro DT needs the MD's dataSchema). Topics ``qlik.late.json`` (qlik_json) and
``qlik.late.avro`` (qlik_avro), task ``late_task``, schema ``LATE``:

- batch A (the session's first build, ``dump_lines``): DTs of table ``EARLY`` (its MD in the
  same batch: decoded at once); DTs of ``WAITS`` (schema id ``WAITS-V1``) and bare DTs naming
  ``NAMED`` (no schema id) with no MD yet; ``VERSIONS`` v1's MD and a v1 DT, then a DT of
  ``VERSIONS`` v2 (``externalSchemaId`` ``VERSIONS-V2``, a fifth column) whose MD is not there
  yet (v1 is, but a DT that names a schema id needs exactly that one); an Avro DT of ``AVRO``
  (no embedded schema, so its writer schema is unknown) without its MD.
- increment 1 (``increment_dump_lines(0)``): the MDs of ``WAITS`` and ``NAMED``.
- increment 2 (``increment_dump_lines(1)``): the MDs of ``VERSIONS`` v2 and ``AVRO``,
  and a DT of ``NEVER`` whose MD never comes.

What a user must see: after batch A the waiting DTs are in ``silver.quarantine``
(``missing_table_metadata``); each leaves it in the incremental run whose batch delivers its
MD and its row reaches gold, decoded with that MD; ``NEVER`` stays in quarantine; and every
staging, silver and gold table equals ``dbt build --full-refresh`` (test_simulated_gold.py).
"""

from __future__ import annotations

import json
from typing import Any

from cdc_lakehouse.formats.qlik.avro_writer import (
    QlikColumn,
    QlikTable,
    encode_data,
    encode_metadata,
)
from tests.dbt_models.helpers import DumpLine, dump_line

JSON_TOPIC = "qlik.late.json"
AVRO_TOPIC = "qlik.late.avro"
TASK = "late_task"
SCHEMA = "LATE"

_COLUMNS = (
    QlikColumn("ID", "STRING", length=10, primary_key_position=1, nullable=False),
    QlikColumn("NOTE", "STRING", length=20),
)


def table(name: str, version: int = 1, extra: tuple[QlikColumn, ...] = ()) -> QlikTable:
    return QlikTable(
        "late-server",
        TASK,
        SCHEMA,
        name,
        version,
        (*_COLUMNS, *extra),
        "2024-03-01T00:00:00",
        f"{name}-V{version}",
    )


EARLY = table("EARLY")
WAITS = table("WAITS")
NAMED = table("NAMED")
VERSIONS_V1 = table("VERSIONS")
VERSIONS_V2 = table("VERSIONS", 2, (QlikColumn("CHANNEL", "STRING", length=10),))
AVRO = table("AVRO")
NEVER = table("NEVER")


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


def dt(
    table_: QlikTable,
    counter: int,
    data: dict[str, str],
    *,
    mask: str = "03",
    schema_id: str | None = "",
    names: bool = False,
    **headers: Any,
) -> str:
    """A JSON DT of ``table_`` (enveloped, naming its MD's schema id, unless ``names``: then a
    bare DT naming its table and no schema id)."""
    message: dict[str, Any] = {
        "data": data,
        "beforeData": None,
        "headers": {
            "operation": "INSERT",
            "changeSequence": f"2024030112000000{counter:019d}",
            "timestamp": "2024-03-01T12:00:00.000",
            "streamPosition": f"pos-{counter}",
            "transactionId": f"tx-{counter}",
            "changeMask": mask,
            "columnMask": mask,
            **headers,
        },
    }
    if names:
        return json.dumps({"schema": SCHEMA, "table": table_.table, **message})
    return json.dumps(
        {
            "magic": "atMSG",
            "type": "DT",
            "headers": None,
            "messageSchemaId": table_.id if schema_id == "" else schema_id,
            "messageSchema": None,
            "message": message,
        }
    )


def row(id_: int, note: str, **extra: str) -> dict[str, str]:
    return {"ID": str(id_), "NOTE": note, **extra}


BATCH_A_JSON: list[str] = [
    md(EARLY),
    dt(EARLY, 1, row(1, "early")),
    dt(WAITS, 2, row(1, "waits")),
    dt(WAITS, 3, row(2, "waits too")),
    dt(NAMED, 4, row(1, "named"), names=True),
    md(VERSIONS_V1),
    dt(VERSIONS_V1, 5, row(1, "v1")),
    dt(
        VERSIONS_V2,
        6,
        row(2, "v2", CHANNEL="web"),
        mask="07",
        schema_id=None,
        externalSchemaId=VERSIONS_V2.id,
    ),
]
BATCH_A_AVRO: list[bytes] = [
    encode_data(
        AVRO,
        "INSERT",
        row(1, "avro"),
        change_sequence="2024030112000000" + f"{7:019d}",
        timestamp="2024-03-01T12:00:00",
        change_mask=3,
        column_mask=3,
    ),
]
INCREMENT_JSON: list[list[str]] = [
    [md(WAITS), md(NAMED)],
    [md(VERSIONS_V2), dt(NEVER, 8, row(1, "never"))],
]
INCREMENT_AVRO: list[list[bytes]] = [[], [encode_metadata(AVRO)]]

WAITING_AFTER_BATCH_A = {
    (JSON_TOPIC, 2),  # WAITS id 1
    (JSON_TOPIC, 3),  # WAITS id 2
    (JSON_TOPIC, 4),  # NAMED
    (JSON_TOPIC, 7),  # VERSIONS v2
    (AVRO_TOPIC, 0),  # AVRO
}
"""(topic, offset) of the DTs in quarantine (missing_table_metadata) after batch A."""

WAITING_AT_THE_END = {(JSON_TOPIC, len(BATCH_A_JSON) + 3)}
"""The NEVER DT: its MD never comes (the last JSON record)."""

EXPECTED = {
    "EARLY": {'{"ID":"1"}': {"ID": "1", "NOTE": "early"}},
    "WAITS": {
        '{"ID":"1"}': {"ID": "1", "NOTE": "waits"},
        '{"ID":"2"}': {"ID": "2", "NOTE": "waits too"},
    },
    "NAMED": {'{"ID":"1"}': {"ID": "1", "NOTE": "named"}},
    "VERSIONS": {
        '{"ID":"1"}': {"ID": "1", "NOTE": "v1"},
        '{"ID":"2"}': {"ID": "2", "NOTE": "v2", "CHANNEL": "web"},
    },
    "AVRO": {'{"ID":"1"}': {"ID": "1", "NOTE": "avro"}},
}
"""gold.current_rows per table after both increments: row_key -> row_values."""


def _line(topic: str, offset: int, value: str | bytes) -> DumpLine:
    return dump_line(topic, 0, offset, value)


def dump_lines() -> list[DumpLine]:
    """Batch A as topic dump lines."""
    return [_line(JSON_TOPIC, i, v) for i, v in enumerate(BATCH_A_JSON)] + [
        _line(AVRO_TOPIC, i, v) for i, v in enumerate(BATCH_A_AVRO)
    ]


def increment_dump_lines(batch: int) -> list[DumpLine] | None:
    """Increment ``batch`` (0 or 1) as topic dump lines, at the offsets after the earlier
    ones."""
    if batch >= len(INCREMENT_JSON):
        return None
    json_offset = len(BATCH_A_JSON) + sum(len(b) for b in INCREMENT_JSON[:batch])
    avro_offset = len(BATCH_A_AVRO) + sum(len(b) for b in INCREMENT_AVRO[:batch])
    return [_line(JSON_TOPIC, json_offset + i, v) for i, v in enumerate(INCREMENT_JSON[batch])] + [
        _line(AVRO_TOPIC, avro_offset + i, v) for i, v in enumerate(INCREMENT_AVRO[batch])
    ]
