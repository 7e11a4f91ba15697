"""Hand-written Qlik messages for the pipeline tests, and the state they must produce.

JSON messages go to ``qlik.cases.json`` (changes on partitions 1 and 2, broken records on
partition 3), Avro messages to ``qlik.cases.avro`` (changes on partition 1, broken on 3).
Tables of task ``edge_task`` (source_database), schema ``EDGE``:

- ``ORDERS`` version 1 (schema id ``ORD-V1``: ID pk, STATUS, AMOUNT NUMERIC(12,2), NOTE) and
  version 2 (``ORD-V2``: a fifth column CHANNEL) - a tableVersion change;
- ``NOKEY`` (``NOKEY-V1``, no primary key: all columns identify the row), sent as a *bare*
  MD message; its DT messages are bare too and name their table (``schema`` / ``table``).

Each case says in a comment what a reader of docs/formats.md section 5 expects.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from cdc_lakehouse.decode.json_text import MAX_JSON_DEPTH
from cdc_lakehouse.formats.qlik import decoder as qlik_decoder
from cdc_lakehouse.formats.qlik.avro_writer import (
    QlikColumn,
    QlikTable,
    encode_data,
    encode_metadata,
)
from tests.dbt_models import conformance
from tests.dbt_models import cross_topic_cases as xt
from tests.dbt_models import fault_matrix_cases as fm
from tests.dbt_models import schema_evolution_cases as evolution
from tests.dbt_models.helpers import DumpLine, Offsets, dump_line

JSON_TOPIC = "qlik.cases.json"
AVRO_TOPIC = "qlik.cases.avro"
TASK = "edge_task"

_ORDER_COLUMNS = (
    QlikColumn("ID", "INT4", primary_key_position=1, nullable=False),
    QlikColumn("STATUS", "STRING", length=20),
    QlikColumn("AMOUNT", "NUMERIC", precision=12, scale=2),
    QlikColumn("NOTE", "STRING", length=100),
)
ORDERS_V1 = QlikTable(
    "edge-server", TASK, "EDGE", "ORDERS", 1, _ORDER_COLUMNS, "2024-02-01T00:00:00", "ORD-V1"
)
ORDERS_V2 = QlikTable(
    "edge-server",
    TASK,
    "EDGE",
    "ORDERS",
    2,
    (*_ORDER_COLUMNS, QlikColumn("CHANNEL", "STRING", length=10)),
    "2024-02-02T00:00:00",
    "ORD-V2",
)
NOKEY = QlikTable(
    "edge-server",
    TASK,
    "EDGE",
    "NOKEY",
    1,
    (QlikColumn("A", "INT4"), QlikColumn("B", "STRING", length=5)),
    "2024-02-01T00:00:00",
    "NOKEY-V1",
)


def raw(number_text: str) -> str:
    """A JSON number to be written with exactly this text (json.dumps would go through float)."""
    return f"__RAW__{number_text}__"


def _dumps(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text


def seq(counter: int) -> str:
    """A 35-character changeSequence of 2024-02-03 with this change counter."""
    return f"2024020312000000{counter:019d}"


def dt(
    operation: str,
    data: dict[str, Any] | None,
    *,
    counter: int | None = None,
    before: dict[str, Any] | None = None,
    change_mask: str | None = "0F",
    column_mask: str | None = "0F",
    schema_id: str | None = "ORD-V1",
    envelope: bool = True,
    names: tuple[str, str] | None = None,
    **headers: Any,
) -> str:
    """A JSON DT message; ``counter`` None = REFRESH style (changeSequence "")."""
    message: dict[str, Any] = {
        "data": data,
        "beforeData": before,
        "headers": {
            "operation": operation,
            "changeSequence": seq(counter) if counter is not None else "",
            "timestamp": "2024-02-03T12:00:00.000" if counter is not None else "",
            "streamPosition": f"pos-{counter}" if counter is not None else "",
            "transactionId": f"tx-{counter}" if counter is not None else "",
            "changeMask": change_mask,
            "columnMask": column_mask,
            "transactionEventCounter": 1 if counter is not None else None,
            "transactionLastEvent": True if counter is not None else None,
            **headers,
        },
    }
    if names is not None:
        message = {"schema": names[0], "table": names[1], **message}
    if not envelope:
        return _dumps(message)
    return _dumps(
        {
            "magic": "atMSG",
            "type": "DT",
            "headers": None,
            "messageSchemaId": schema_id,
            "messageSchema": None,
            "message": message,
        }
    )


def md(table: QlikTable, *, envelope: bool = True) -> str:
    message = table.metadata_message()
    if not envelope:
        return _dumps(message)
    return _dumps(
        {
            "magic": "atMSG",
            "type": "MD",
            "headers": None,
            "messageSchemaId": None,
            "messageSchema": None,
            "message": message,
        }
    )


def order(id_: int, status: str, amount: Any = "1.00", note: Any = "n") -> dict[str, Any]:
    return {"ID": str(id_), "STATUS": status, "AMOUNT": amount, "NOTE": note}


# (partition, JSON value) in offset order per partition.
CHANGES: list[tuple[int, str]] = [
    # A DT delivered before its MD in Kafka order (the MDs are on partition 2, later):
    # ID 1 is still decoded with ORDERS v1's ordinals and key.
    (1, dt("INSERT", order(1, "new", amount=raw("12345678901.50"), note=None), counter=10)),
    # duplicates: the same INSERT twice -> one row.
    (1, dt("INSERT", order(1, "new", amount=raw("12345678901.50"), note=None), counter=10)),
    (2, md(ORDERS_V1)),
    (2, md(ORDERS_V2)),
    (2, md(NOKEY, envelope=False)),
    # masks: an UPDATE of ID 1 whose columnMask 07 leaves out NOTE (ordinal 4) although the
    # JSON carries "NOTE": null -> NOTE is not provided (absent), the after image is partial,
    # gold keeps NOTE from the insert (NULL); changeMask 02 = STATUS changed.
    (
        1,
        dt(
            "UPDATE",
            order(1, "paid", amount=raw("12345678901.50"), note=None),
            before=order(1, "new", amount=raw("12345678901.50"), note=None),
            counter=11,
            change_mask="02",
            column_mask="07",
        ),
    ),
    # REFRESH then CDC: ID 2's UPDATE (partition 1) is delivered before its REFRESH
    # (partition 2); REFRESH orders lowest -> the update wins. ID 3: REFRESH only.
    (1, dt("UPDATE", order(2, "updated"), before=order(2, "loaded"), counter=20)),
    (2, dt("REFRESH", order(2, "loaded"), change_mask=None)),
    (2, dt("REFRESH", order(3, "loaded"), change_mask=None)),
    # out of order: ID 4's newer UPDATE (partition 2) arrives before its INSERT (partition 1).
    (2, dt("UPDATE", order(4, "shipped"), before=order(4, "new"), counter=31)),
    (1, dt("INSERT", order(4, "new"), counter=30)),
    # key update: ID 5 -> 50 (changeMask 03: ID and STATUS) -> only ID 50 remains.
    (1, dt("INSERT", order(5, "new"), counter=40)),
    (1, dt("UPDATE", order(50, "moved"), before=order(5, "new"), counter=41, change_mask="03")),
    # delete: ID 6 inserted, deleted (data = the deleted row, changeMask 01 = key only), then
    # an older update delivered late on the other partition -> gone.
    (1, dt("INSERT", order(6, "new"), counter=50)),
    (1, dt("DELETE", order(6, "new"), counter=52, change_mask="01")),
    (2, dt("UPDATE", order(6, "late"), before=order(6, "new"), counter=51)),
    # tableVersion change: ID 7 inserted under version 2 (schema id ORD-V2, five columns,
    # CHANNEL = ordinal 5) matched by headers.externalSchemaId.
    (
        1,
        dt(
            "INSERT",
            {**order(7, "new"), "CHANNEL": "web"},
            counter=60,
            change_mask="1F",
            column_mask="1F",
            schema_id=None,
            externalSchemaId="ORD-V2",
        ),
    ),
    # bare DT messages of NOKEY naming their table: all columns are the key.
    (
        1,
        dt(
            "INSERT",
            {"A": "1", "B": "x"},
            counter=70,
            envelope=False,
            names=("EDGE", "NOKEY"),
            change_mask="03",
            column_mask="03",
        ),
    ),
    (
        1,
        dt(
            "DELETE",
            {"A": "1", "B": "x"},
            counter=71,
            envelope=False,
            names=("EDGE", "NOKEY"),
            change_mask="03",
            column_mask="03",
        ),
    ),
    (
        1,
        dt(
            "INSERT",
            {"A": "2", "B": "y"},
            counter=72,
            envelope=False,
            names=("EDGE", "NOKEY"),
            change_mask="03",
            column_mask="03",
        ),
    ),
]

# (value or None for a Kafka NULL value, value_base64 or None, expected reason)
BROKEN: list[tuple[str | None, str | None, str]] = [
    ('{"magic":"atMSG","type":"DT","message":{"data"', None, "invalid_json"),
    ("[1, 2]", None, "not_an_object"),
    (None, None, "empty_value"),
    (None, base64.b64encode(b"\xff\xfe{}").decode(), "invalid_utf8"),
    # DT without any metadata: unknown schema id, no table name, and the topic carries
    # several tables -> quarantined, not a crash.
    (
        dt("INSERT", order(90, "x"), counter=90, schema_id="NO-SUCH-SCHEMA"),
        None,
        "missing_table_metadata",
    ),
    (dt("UPSERT", order(91, "x"), counter=91), None, "unknown_op"),
    (
        _dumps(
            {
                "magic": "atMSG",
                "type": "XX",
                "headers": None,
                "messageSchemaId": None,
                "messageSchema": None,
                "message": {},
            }
        ),
        None,
        "unknown_op",
    ),
    (dt("INSERT", order(92, "x"), counter=None), None, "missing_required_field"),
    (dt("INSERT", None, counter=93), None, "missing_required_field"),
    # columnMask 0E leaves out the key column ID -> the row cannot be identified.
    (dt("INSERT", order(94, "x"), counter=94, column_mask="0E"), None, "missing_key_column"),
    (dt("INSERT", order(95, "x"), counter=95, change_mask="ZZ"), None, "invalid_field_type"),
    (
        dt("INSERT", order(96, "x"), counter=96, changeSequence="2024-02-03 12:00"),
        None,
        "invalid_field_type",
    ),
    ('{"magic":"atSMG","type":"DT","message":{}}', None, "invalid_field_type"),
]

AVRO_CHANGES: list[bytes] = [
    encode_metadata(ORDERS_V1),
    encode_data(
        ORDERS_V1,
        "INSERT",
        {"ID": 1, "STATUS": "new", "AMOUNT": "10.00", "NOTE": "a"},
        change_sequence=seq(100),
        timestamp="2024-02-03T12:00:00",
        change_mask=0x0F,
        column_mask=0x0F,
    ),
    # columnMask 0B: AMOUNT (ordinal 3) not provided -> kept from the insert.
    encode_data(
        ORDERS_V1,
        "UPDATE",
        {"ID": 1, "STATUS": "paid", "NOTE": "b"},
        change_sequence=seq(101),
        timestamp="2024-02-03T12:00:01",
        change_mask=0x0A,
        column_mask=0x0B,
    ),
]
AVRO_BROKEN: list[tuple[bytes, str]] = [
    # references a schema id no MD defines: its writer schema is unknown.
    (
        encode_data(
            QlikTable("edge-server", TASK, "EDGE", "GHOST", 1, _ORDER_COLUMNS, schema_id="GHOST"),
            "INSERT",
            {"ID": 1},
            change_sequence=seq(102),
        ),
        "missing_table_metadata",
    ),
    (encode_metadata(ORDERS_V1)[:-7], "invalid_avro"),
    (b"\x00\x00\x00\x00\x07" + b"confluent framing", "invalid_avro"),
]

EXPECTED_ORDERS = {
    '{"ID":"1"}': {"ID": "1", "STATUS": "paid", "AMOUNT": "12345678901.50", "NOTE": None},
    '{"ID":"2"}': {"ID": "2", "STATUS": "updated", "AMOUNT": "1.00", "NOTE": "n"},
    '{"ID":"3"}': {"ID": "3", "STATUS": "loaded", "AMOUNT": "1.00", "NOTE": "n"},
    '{"ID":"4"}': {"ID": "4", "STATUS": "shipped", "AMOUNT": "1.00", "NOTE": "n"},
    '{"ID":"50"}': {"ID": "50", "STATUS": "moved", "AMOUNT": "1.00", "NOTE": "n"},
    '{"ID":"7"}': {"ID": "7", "STATUS": "new", "AMOUNT": "1.00", "NOTE": "n", "CHANNEL": "web"},
}
EXPECTED_NOKEY = {'{"A":"2","B":"y"}': {"A": "2", "B": "y"}}
EXPECTED_AVRO_ORDERS = {
    '{"ID":"1"}': {"ID": "1", "STATUS": "paid", "AMOUNT": "10.00", "NOTE": "b"},
}


def _record(topic: str, partition: int, offset: int, value: str | bytes | None) -> DumpLine:
    return dump_line(topic, partition, offset, value, timestamp=1706961600000)


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines."""
    offsets = Offsets()
    lines = [
        _record(JSON_TOPIC, partition, offsets(JSON_TOPIC, partition), value)
        for partition, value in CHANGES
    ]
    for offset, (value, value_b64, _reason) in enumerate(BROKEN):
        line = dump_line(
            JSON_TOPIC, 3, offset, value, timestamp=1706961600000, value_base64=value_b64
        )
        lines.append(line)
    for offset, value in enumerate(AVRO_CHANGES):
        lines.append(_record(AVRO_TOPIC, 1, offset, value))
    for offset, (value, _reason) in enumerate(AVRO_BROKEN):
        lines.append(_record(AVRO_TOPIC, 3, offset, value))
    return lines


# --------------------------------------------------------------------------- conformance
# What the tests shared by all formats ask of this file (tests/dbt_models/conformance.py).

_XTOPIC_COLUMNS = (
    QlikColumn("ID", "INT4", primary_key_position=1, nullable=False),
    QlikColumn("NAME", "STRING", length=20),
)
XTOPIC_JSON_TABLE = QlikTable(
    "xtopic-server", xt.DB, xt.DB.upper(), xt.TABLE.upper(), 1, _XTOPIC_COLUMNS, schema_id="XTJ-V1"
)
XTOPIC_AVRO_TABLE = QlikTable(
    "xtopic-server", xt.DB, xt.DB.upper(), xt.TABLE.upper(), 1, _XTOPIC_COLUMNS, schema_id="XTA-V1"
)


def cross_topic_case(format_name: str) -> xt.Case:
    """A metadata message first; Qlik names the table and its columns upper case."""
    messages = {"qlik_json": _cross_topic_json, "qlik_avro": _cross_topic_avro}[format_name]
    return xt.Case(messages, xt.TABLE.upper(), "ID", "NAME", 2)


def _cross_topic_json(side: str) -> list[str | bytes]:
    inserted, updated = {"ID": "1", "NAME": f"{side}-insert"}, {"ID": "1", "NAME": f"{side}-update"}
    masks = {"change_mask": "03", "column_mask": "03", "schema_id": XTOPIC_JSON_TABLE.id}
    return [
        md(XTOPIC_JSON_TABLE),
        dt("INSERT", inserted, counter=1, **masks),
        dt("UPDATE", updated, counter=2, before=inserted, **masks),
    ]


def _cross_topic_avro(side: str) -> list[str | bytes]:
    inserted, updated = {"ID": 1, "NAME": f"{side}-insert"}, {"ID": 1, "NAME": f"{side}-update"}
    masks = {"change_mask": 0x03, "column_mask": 0x03}
    return [
        encode_metadata(XTOPIC_AVRO_TABLE),
        encode_data(
            XTOPIC_AVRO_TABLE,
            "INSERT",
            inserted,
            change_sequence=seq(1),
            timestamp="2024-02-03T12:00:00",
            **masks,
        ),
        encode_data(
            XTOPIC_AVRO_TABLE,
            "UPDATE",
            updated,
            before=inserted,
            change_sequence=seq(2),
            timestamp="2024-02-03T12:00:01",
            **masks,
        ),
    ]


def fault_matrix(format_: str) -> fm.FaultMatrix:
    """Both formats of the folder; a metadata message first."""
    return {"qlik_json": _fault_matrix_json, "qlik_avro": _fault_matrix_avro}[format_](format_)


def _fault_matrix_json(format_: str) -> fm.FaultMatrix:
    schema_id = f"{format_}-V1"

    def dt(counter: Any, row: dict[str, Any] | None, *, op: Any = "INSERT", **kw: Any) -> bytes:
        headers = {
            "operation": op,
            "changeSequence": f"2023111422132000{int(counter):019d}"
            if str(counter).isdigit() and len(str(counter)) < 19
            else str(counter),
            "timestamp": "2023-11-14T22:13:20.000",
            "streamPosition": "p",
            "transactionId": "t",
            "changeMask": "07",
            "columnMask": "07",
            **kw.pop("headers", {}),
        }
        message = {
            "magic": "atMSG",
            "type": "DT",
            "headers": None,
            "messageSchemaId": kw.pop("schema_id", schema_id),
            "messageSchema": None,
            "message": {
                "data": {k.upper(): fm.canal_text(v) for k, v in (row or {}).items()},
                "beforeData": None,
                "headers": headers,
            },
        }
        return fm.duplicate_column(fm.json_bytes(message), "NOTE")

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return dt(seq, row)

    table = _fault_table(format_)
    md = fm.json_bytes(
        {
            "magic": "atMSG",
            "type": "MD",
            "headers": None,
            "messageSchemaId": None,
            "messageSchema": None,
            "message": table.metadata_message(),
        }
    )
    faults = [
        fm.Fault("unknown operation", dt(9, fm.GOOD_ROWS[1], op="UPSERT"), "unknown_op", "UPSERT"),
        fm.Fault(
            "key column not provided (columnMask)",
            dt(9, fm.GOOD_ROWS[1], headers={"columnMask": "06"}),
            "missing_key_column",
            "ID",
        ),
        fm.Fault("operation is a number", dt(9, fm.GOOD_ROWS[1], op=2), "invalid_field_type"),
        fm.Fault(
            "changeSequence of 60 digits",
            dt(fm.SIXTY_DIGITS, fm.GOOD_ROWS[1]),
            "invalid_field_type",
            "changeSequence",
        ),
        fm.Fault(
            # its externalSchemaId names the one metadata message it may take (docs/formats.md
            # 5); an envelope messageSchemaId alone would not hold it back: the topic's table
            "data message whose metadata message never came",
            dt(9, fm.GOOD_ROWS[1], headers={"externalSchemaId": "NO-SUCH-SCHEMA"}),
            "missing_table_metadata",
            "NO-SUCH-SCHEMA",
        ),
        fm.Fault(
            "metadata message nested 1,000 levels",
            b'{"magic":"atMSG","type":"MD","message":' + b"[" * 1000 + b"]" * 1000 + b"}",
            "invalid_json",
            f"nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        fm.Fault(
            "envelope message as a string with a repeated key",
            fm.json_bytes(
                {
                    "magic": "atMSG",
                    "type": "DT",
                    "messageSchemaId": schema_id,
                    "message": '{"data":{"ID":"1"},"data":{"ID":"2"}}',
                }
            ),
            "duplicate_key",
            "'data'",
        ),
    ]
    return fm.FaultMatrix(good, faults, first=[md], upper_case=True)


def _fault_table(format_: str) -> QlikTable:
    return QlikTable(
        "faults-server",
        fm.PREFIX,
        fm.PREFIX.upper(),
        format_.upper(),
        1,
        (
            QlikColumn("ID", "STRING", length=20, primary_key_position=1, nullable=False),
            QlikColumn("NOTE", "STRING", length=2_000_000),
            QlikColumn("AMOUNT", "STRING", length=100),
        ),
        "2023-11-14T00:00:00",
        f"{format_}-V1",
    )


def _fault_matrix_avro(format_: str) -> fm.FaultMatrix:
    table = _fault_table(format_)

    def dt(counter: int, row: dict[str, Any], **kw: Any) -> bytes:
        return encode_data(
            table,
            kw.pop("operation", "INSERT"),
            {k.upper(): v for k, v in fm.texts(row).items()},
            change_sequence=f"2023111422132000{counter:019d}",
            timestamp="2023-11-14T22:13:20.000",
            change_mask=7,
            column_mask=7,
            **kw,
        )

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return dt(seq, row)

    ghost = QlikTable(
        "faults-server", fm.PREFIX, fm.PREFIX.upper(), "GHOST", 1, table.columns, schema_id="GHOST"
    )
    whole = dt(9, fm.GOOD_ROWS[1])
    faults = [
        fm.Fault("Kafka NULL value", None, "empty_value"),
        fm.Fault("garbage bytes", b"\x13\x37not avro\xff" * 4, "invalid_avro"),
        fm.Fault("truncated envelope", whole[: len(whole) // 2], "invalid_avro"),
        fm.Fault("JSON instead of Avro", b'{"magic":"atMSG"}', "invalid_avro"),
        fm.Fault(
            "data message whose metadata never came",
            encode_data(
                ghost,
                "INSERT",
                {"ID": "9", "NOTE": "x", "AMOUNT": "1"},
                change_sequence=f"2023111422132000{9:019d}",
            ),
            "missing_table_metadata",
            "GHOST",
        ),
    ]
    return fm.FaultMatrix(good, faults, first=[encode_metadata(table)], upper_case=True)


def number_form_image(format_name: str, raw: bytes) -> dict[str, str | None]:
    """The row values the decoder reads from one insert of Qlik JSON (column names lower
    case), with the metadata message of the format's fault matrix in the catalog."""
    topic = fm.topic(format_name)
    metadata = fm.built(format_name).first[0]
    entry = qlik_decoder.metadata_entries(metadata, format_name, topic, 0, 0)
    row = qlik_decoder.decode_one(raw, catalog=qlik_decoder.MetadataCatalog([entry]), topic=topic)
    assert row["decode_error"] is None, row["decode_error_detail"]
    return {name.lower(): text for name, text in row["after_image"]}


def schema_changes(format_name: str) -> evolution.SchemaChanges:
    """The first metadata message declares the table; each DDL brings a new one."""
    return evolution.SchemaChanges(
        [evolution.CREATE_TABLE, evolution.ADD_STOCK, evolution.RENAME],
        [evolution.WIDEN, evolution.DROP_NOTE],
        typed=True,
    )


def broken_records(format_name: str) -> conformance.BrokenRecords:
    """BROKEN (JSON topic, partition 3, after the changes) or AVRO_BROKEN (Avro topic,
    partition 3, the last lines of the dump); nothing else of the topic is quarantined."""
    lines = dump_lines()
    if format_name == "qlik_json":
        lines = lines[: len(CHANGES) + len(BROKEN)]
        return conformance.broken_at_end(f"kafka_topic = '{JSON_TOPIC}'", lines, BROKEN)
    return conformance.broken_at_end(f"kafka_topic = '{AVRO_TOPIC}'", lines, AVRO_BROKEN)


# No truncate: Qlik's Kafka target sends no data message for one (its encoders refuse a
# truncate: test_encoder.py).
truncates = None
