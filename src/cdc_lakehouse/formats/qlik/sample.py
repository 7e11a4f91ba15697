"""The bundled Qlik sample topics, JSON and Avro, from one scenario; regenerate with
``python -m cdc_lakehouse.formats.qlik.sample [dump_dir]``.

Seed 004 documents the metadata (MD) and data (DT) messages as field tables, with one worked
example (the mask ``0B`` = columns 1, 2 and 4). The scenario below has one message per
documented shape, in the seed's order (metadata first, then data messages: REFRESH during full
load, then INSERT / UPDATE / DELETE during CDC), for the table ``SALES.CUSTOMERS`` of task
``sales_to_kafka``:

- offset 0: MD, table version 1, primary key ``ID``.
- 1, 2: REFRESH of ID 1 and 2 (``changeSequence`` and ``timestamp`` empty: full load).
- 3: INSERT of ID 3 (``changeMask`` = ``columnMask`` = ``3F``, every column).
- 4: UPDATE of ID 1 with the seed's ``changeMask`` ``0B``: ordinals 1, 2 and 4 changed, i.e.
  ID (1 -> 10: a primary-key update), NAME and STATUS; ``beforeData`` carries the old row.
- 5: UPDATE of ID 2 in the same transaction (event 2, the last): ``columnMask`` ``2F`` leaves
  out ordinal 5 (PHOTO, e.g. Oracle without full supplemental logging): not provided.
- 6: DELETE of ID 3 (``changeMask`` ``01``: key columns only).
- 7: JSON - an INSERT of ID 4 without the envelope and without any schema id (matched to the
  topic's only table). Avro - the same INSERT as a self-describing envelope (data schema
  embedded in ``messageSchema``) that names its metadata by ``externalSchemaId``.

``qlik.sample.json`` carries them as JSON (the envelope of docs/formats.md, values as strings like
real Replicate output, binary as hex digits); ``qlik.sample.avro`` as Avro encoded by
:mod:`cdc_lakehouse.formats.qlik.avro_writer` (ID as int, PHOTO as bytes, the rest strings).
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

from cdc_lakehouse.formats.qlik.avro_writer import (
    QlikColumn,
    QlikTable,
    encode_data,
    encode_metadata,
)

JSON_TOPIC = "qlik.sample.json"
AVRO_TOPIC = "qlik.sample.avro"

CUSTOMERS = QlikTable(
    server="qlik-replicate-01",
    task="sales_to_kafka",
    schema="SALES",
    table="CUSTOMERS",
    version=1,
    timestamp="2024-01-15T10:00:00.000",
    schema_id="6E3F2A7C5B1D4E8F9A0B1C2D3E4F5A6B",
    columns=(
        QlikColumn("ID", "INT4", length=4, primary_key_position=1, nullable=False),
        QlikColumn("NAME", "STRING", length=50),
        QlikColumn("BALANCE", "NUMERIC", precision=10, scale=2),
        QlikColumn("STATUS", "STRING", length=10),
        QlikColumn("PHOTO", "BYTES", length=16),
        QlikColumn("UPDATED_AT", "DATETIME"),
    ),
)
BASE_MS = 1705312800000  # 2024-01-15T10:00:00Z


def _seq(hundredths: str, counter: int) -> str:
    """A 35-character changeSequence: YYYYMMDDHHmmSShh + 19-digit counter."""
    return f"{hundredths}{counter:019d}"


def _row(id_: int, name: str, balance: str, status: str, photo: str, updated: str) -> dict:
    return {
        "ID": id_,
        "NAME": name,
        "BALANCE": balance,
        "STATUS": status,
        "PHOTO": photo,
        "UPDATED_AT": updated,
    }


# (operation, data, beforeData, headers) of the data messages, offsets 1..7.
ROW_1 = _row(1, "Alice", "1500.00", "active", "89504E47", "2024-01-10 09:00:00.000000")
ROW_2 = _row(2, "Bob", "20.50", "active", "FFD8FF", "2024-01-11 09:00:00.000000")
ROW_3 = _row(3, "Carol", "0.00", "new", None, "2024-01-15 10:30:00.000000")  # type: ignore[arg-type]
ROW_10 = {**ROW_1, "ID": 10, "NAME": "Alice Smith", "STATUS": "vip"}
ROW_2_PARTIAL = {**ROW_2, "BALANCE": "75.25", "PHOTO": None}
ROW_4 = _row(4, "Dan", "12345678.90", "new", "00FF", "2024-01-15 10:45:00.000000")

DATA_MESSAGES: list[dict[str, Any]] = [
    {"operation": "REFRESH", "data": ROW_1},
    {"operation": "REFRESH", "data": ROW_2},
    {
        "operation": "INSERT",
        "data": ROW_3,
        "change_sequence": _seq("2024011510300012", 101),
        "timestamp": "2024-01-15T10:30:00.120",
        "stream_position": "00000000.01ab5068.00000001.0000.02.0000:88.67945.16",
        "transaction_id": "00000000000000000000000000120001",
        "change_mask": 0x3F,
        "column_mask": 0x3F,
        "transaction_event_counter": 1,
        "transaction_last_event": True,
    },
    {
        "operation": "UPDATE",
        "data": ROW_10,
        "before": ROW_1,
        "change_sequence": _seq("2024011510350045", 102),
        "timestamp": "2024-01-15T10:35:00.450",
        "stream_position": "00000000.01ab5070.00000001.0000.02.0000:88.67950.16",
        "transaction_id": "00000000000000000000000000120002",
        "change_mask": 0x0B,
        "column_mask": 0x3F,
        "transaction_event_counter": 1,
        "transaction_last_event": False,
    },
    {
        "operation": "UPDATE",
        "data": ROW_2_PARTIAL,
        "before": {**ROW_2, "PHOTO": None},
        "change_sequence": _seq("2024011510350045", 103),
        "timestamp": "2024-01-15T10:35:00.450",
        "stream_position": "00000000.01ab5070.00000001.0000.02.0000:88.67951.16",
        "transaction_id": "00000000000000000000000000120002",
        "change_mask": 0x04,
        "column_mask": 0x2F,
        "transaction_event_counter": 2,
        "transaction_last_event": True,
    },
    {
        "operation": "DELETE",
        "data": ROW_3,
        "change_sequence": _seq("2024011510400000", 104),
        "timestamp": "2024-01-15T10:40:00.000",
        "stream_position": "00000000.01ab5080.00000001.0000.02.0000:88.67960.16",
        "transaction_id": "00000000000000000000000000120003",
        "change_mask": 0x01,
        "column_mask": 0x3F,
        "transaction_event_counter": 1,
        "transaction_last_event": True,
    },
    {
        "operation": "INSERT",
        "data": ROW_4,
        "change_sequence": _seq("2024011510450000", 105),
        "timestamp": "2024-01-15T10:45:00.000",
        "stream_position": "00000000.01ab5090.00000001.0000.02.0000:88.67970.16",
        "transaction_id": "00000000000000000000000000120004",
        "change_mask": 0x3F,
        "column_mask": 0x3F,
        "transaction_event_counter": 1,
        "transaction_last_event": True,
        "bare": True,
    },
]


def _hex(mask: int | None) -> str | None:
    if mask is None:
        return None
    return format(mask, "X").zfill(2 * max(1, (mask.bit_length() + 7) // 8))


def _json_row(values: dict[str, Any] | None) -> dict[str, Any] | None:
    if values is None:
        return None
    return {k: (str(v) if v is not None else None) for k, v in values.items()}


def json_data_message(table: QlikTable, spec: dict[str, Any]) -> dict[str, Any]:
    """A DT message (JSON shape) of ``spec`` (a :data:`DATA_MESSAGES` item)."""
    refresh = spec["operation"] == "REFRESH"
    headers: dict[str, Any] = {
        "operation": spec["operation"],
        "changeSequence": spec.get("change_sequence", ""),
        "timestamp": spec.get("timestamp", ""),
        "streamPosition": spec.get("stream_position", ""),
        "transactionId": spec.get("transaction_id", ""),
        "changeMask": _hex(spec.get("change_mask")) if not refresh else None,
        "columnMask": _hex(spec.get("column_mask", 0x3F)),
        "transactionEventCounter": spec.get("transaction_event_counter"),
        "transactionLastEvent": spec.get("transaction_last_event"),
    }
    return {
        "data": _json_row(spec["data"]),
        "beforeData": _json_row(spec.get("before")),
        "headers": headers,
    }


def json_envelope(message_type: str, message: dict[str, Any], schema_id: str | None) -> dict:
    """The JSON ``atMSG`` envelope of docs/formats.md section 5."""
    return {
        "magic": "atMSG",
        "type": message_type,
        "headers": None,
        "messageSchemaId": schema_id,
        "messageSchema": None,
        "message": message,
    }


def json_values(table: QlikTable = CUSTOMERS) -> list[str]:
    """The Kafka values of the JSON sample topic, in offset order."""
    values = [json_envelope("MD", table.metadata_message(), None)]
    for spec in DATA_MESSAGES:
        message = json_data_message(table, spec)
        values.append(message if spec.get("bare") else json_envelope("DT", message, table.id))
    return [json.dumps(v, separators=(",", ":")) for v in values]


def _avro_row(values: dict[str, Any] | None) -> dict[str, Any] | None:
    if values is None:
        return None
    row = dict(values)
    if row.get("PHOTO") is not None:
        row["PHOTO"] = bytes.fromhex(row["PHOTO"])
    return row


def avro_values(table: QlikTable = CUSTOMERS) -> list[bytes]:
    """The Kafka values of the Avro sample topic, in offset order."""
    values = [encode_metadata(table)]
    for spec in DATA_MESSAGES:
        refresh = spec["operation"] == "REFRESH"
        bare = bool(spec.get("bare"))
        values.append(
            encode_data(
                table,
                spec["operation"],
                _avro_row(spec["data"]),
                before=_avro_row(spec.get("before")),
                change_sequence=spec.get("change_sequence", ""),
                timestamp=spec.get("timestamp", ""),
                stream_position=spec.get("stream_position", ""),
                transaction_id=spec.get("transaction_id", ""),
                change_mask=None if refresh else spec.get("change_mask"),
                column_mask=spec.get("column_mask", 0x3F),
                external_schema_id=table.id if bare else None,
                transaction_event_counter=spec.get("transaction_event_counter"),
                transaction_last_event=spec.get("transaction_last_event"),
                embed_schema=bare,
            )
        )
    return values


def dump_lines(topic: str, values: list[str] | list[bytes]) -> str:
    """Topic dump JSON Lines (docs/architecture.md) of ``values`` on partition 0."""
    lines = []
    for offset, value in enumerate(values):
        record: dict[str, Any] = {
            "topic": topic,
            "partition": 0,
            "offset": offset,
            "timestamp": BASE_MS + offset * 1000,
            "key": None,
        }
        if isinstance(value, bytes):
            record["value_base64"] = base64.b64encode(value).decode("ascii")
        else:
            record["value"] = value
        lines.append(json.dumps(record) + "\n")
    return "".join(lines)


def sample_files() -> dict[str, str]:
    """File name -> content of both sample dumps."""
    return {
        f"{JSON_TOPIC}.jsonl": dump_lines(JSON_TOPIC, json_values()),
        f"{AVRO_TOPIC}.jsonl": dump_lines(AVRO_TOPIC, avro_values()),
    }


def main(argv: list[str] | None = None) -> None:
    """Write both sample dumps into the dump directory (default ``sample_data/dump``)."""
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0]) if args else Path("sample_data") / "dump"
    for name, content in sample_files().items():
        (directory / name).write_text(content, encoding="utf-8")
        print(f"wrote {directory / name}")


if __name__ == "__main__":
    main()
