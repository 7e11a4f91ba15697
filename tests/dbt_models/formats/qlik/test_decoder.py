"""Unit tests of cdc_lakehouse.formats.qlik.decoder and cdc_lakehouse.formats.qlik.avro_writer (no
Spark): framing with and without the atMSG envelope, metadata, masks, images, metadata matching,
Avro, the structural errors (docs/formats.md section 5; seed 004), and real published messages."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from cdc_lakehouse.formats.qlik import decoder as qlik
from cdc_lakehouse.formats.qlik import sample as qlik_samples
from cdc_lakehouse.formats.qlik.avro_writer import (
    QlikColumn,
    QlikTable,
    encode_data,
    encode_metadata,
    envelope,
    mask_bytes,
)

ROOT = Path(__file__).resolve().parents[4]

TABLE = QlikTable(
    "srv",
    "task1",
    "S",
    "T",
    1,
    (
        QlikColumn("ID", "INT4", primary_key_position=1),
        QlikColumn("NAME", "STRING", length=20),
        QlikColumn("AMOUNT", "NUMERIC", precision=10, scale=2),
        QlikColumn("NOTE", "STRING", length=50),
        QlikColumn("BIN", "BYTES", length=8),
    ),
    "2024-01-01T00:00:00",
    "ID-V1",
)
TABLE_V2 = QlikTable(
    "srv",
    "task1",
    "S",
    "T",
    2,
    (*TABLE.columns, QlikColumn("EXTRA", "INT8")),
    "2024-01-02T00:00:00",
    "ID-V2",
)


def entry(table: QlikTable, fmt: str = "qlik_json", topic: str = "t", offset: int = 0) -> dict:
    found = qlik.metadata_entries(
        json.dumps(table.metadata_message()).encode()
        if fmt == "qlik_json"
        else encode_metadata(table),
        fmt,
        topic,
        0,
        offset,
    )
    assert found is not None
    return found


def catalog(*tables: QlikTable, fmt: str = "qlik_json", topic: str = "t") -> qlik.MetadataCatalog:
    return qlik.MetadataCatalog([entry(t, fmt, topic, i) for i, t in enumerate(tables)])


def dt_json(
    operation: str = "INSERT",
    data: dict[str, Any] | None = None,
    *,
    before: dict[str, Any] | None = None,
    envelope_id: str | None = "ID-V1",
    envelope_on: bool = True,
    **headers: Any,
) -> bytes:
    message = {
        "data": {"ID": "1", "NAME": "a", "AMOUNT": "1.50", "NOTE": None, "BIN": "00FF"}
        if data is None
        else data,
        "beforeData": before,
        "headers": {
            "operation": operation,
            "changeSequence": "20240101000000000000000000000000001",
            "timestamp": "2024-01-01T00:00:00.123",
            "streamPosition": "pos",
            "transactionId": "tx",
            "changeMask": "1F",
            "columnMask": "1F",
            "transactionEventCounter": 3,
            "transactionLastEvent": False,
            **headers,
        },
    }
    if not envelope_on:
        return json.dumps(message).encode()
    wrapped = {
        "magic": "atMSG",
        "type": "DT",
        "headers": None,
        "messageSchemaId": envelope_id,
        "messageSchema": None,
        "message": message,
    }
    return json.dumps(wrapped).encode()


def decode(raw: bytes | None, cat: qlik.MetadataCatalog | None = None, **kw: Any) -> dict:
    return qlik.decode_one(raw, catalog=cat if cat is not None else catalog(TABLE), topic="t", **kw)


# --------------------------------------------------------------------------- masks


def test_seed_mask_example_0b_is_columns_1_2_and_4():
    columns = [(i, f"c{i}", "INT4") for i in range(1, 11)]
    assert qlik.mask_columns("0B", columns) == ["c1", "c2", "c4"]


def test_mask_is_the_integer_value_of_the_hex_digits():
    columns = [(i, f"c{i}", "STRING") for i in range(1, 17)]
    assert qlik.mask_columns("008080", columns) == ["c8", "c16"]
    assert qlik.mask_columns("00FFFF", columns) == [f"c{i}" for i in range(1, 17)]
    assert qlik.mask_columns("0100", columns) == ["c9"]
    assert qlik.mask_columns("FF0000", columns) == []  # bits above the last ordinal: ignored


def test_mask_hex_accepts_json_hex_and_avro_bytes():
    assert qlik.mask_hex("0b", "m") == "0B"
    assert qlik.mask_hex(b"\x00\x80\x80", "m") == "008080"
    assert qlik.mask_hex("", "m") is None and qlik.mask_hex(None, "m") is None
    assert mask_bytes(0x0B) == b"\x0b" and mask_bytes(0x8080) == b"\x80\x80"
    assert mask_bytes(0) == b"\x00" and mask_bytes(None) is None


# --------------------------------------------------------------------------- metadata


def test_metadata_message_enveloped_gives_structure_types_and_key():
    message = {
        "magic": "atMSG",
        "type": "MD",
        "headers": None,
        "messageSchemaId": None,
        "messageSchema": None,
        "message": TABLE.metadata_message(),
    }
    row = decode(json.dumps(message).encode())
    assert row["decode_error"] is None
    assert (row["message_type"], row["enveloped"], row["schema_id"]) == ("MD", True, "ID-V1")
    assert (row["qlik_server"], row["qlik_task"], row["source_schema"], row["source_table"]) == (
        "srv",
        "task1",
        "S",
        "T",
    )
    assert row["table_version"] == 1
    assert row["metadata_time_us"] == 1704067200000000
    assert row["column_types"] == [
        ("ID", "INT4"),
        ("NAME", "STRING(20)"),
        ("AMOUNT", "NUMERIC(10,2)"),
        ("NOTE", "STRING(50)"),
        ("BIN", "BYTES(8)"),
    ]
    assert row["key_columns"] == ["ID"]
    assert json.loads(row["data_schema"])["name"] == "DataRecord"
    assert row["operation"] is None and row["after_image"] is None


def test_bare_metadata_orders_columns_by_ordinal_and_key_by_position():
    message = {
        "schemaId": "X",
        "lineage": {
            "server": "s",
            "task": "t",
            "schema": "S",
            "table": "T",
            "tableVersion": 3,
            "timestamp": "2024-01-01 00:00:00",
        },
        "tableStructure": {
            "tableColumns": {
                "B": {"ordinal": 2, "type": "INT4", "primaryKeyPosition": 1},
                "A": {"ordinal": 1, "type": "STRING", "length": 5, "primaryKeyPosition": 2},
                "C": {"ordinal": 3, "type": "DATETIME", "length": 0, "primaryKeyPosition": 0},
            }
        },
        "dataSchema": None,
    }
    row = decode(json.dumps(message).encode())
    assert (row["message_type"], row["enveloped"]) == ("MD", False)
    assert row["column_types"] == [("A", "STRING(5)"), ("B", "INT4"), ("C", "DATETIME")]
    assert row["key_columns"] == ["B", "A"]
    assert row["table_version"] == 3


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("NUMERIC", 0, 10, 2), "NUMERIC(10,2)"),
        (("NUMERIC", 0, 38, 0), "NUMERIC(38,0)"),
        (("NUMERIC", 0, 0, 0), "NUMERIC"),
        (("STRING", 50, 0, 0), "STRING(50)"),
        (("WSTRING", 10, None, None), "WSTRING(10)"),
        (("BYTES", 16, 0, 0), "BYTES(16)"),
        (("INT4", 4, 0, 0), "INT4"),
        (("DATETIME", 0, 0, 6), "DATETIME"),
        (("CLOB", 0, 0, 0), "CLOB"),
    ],
)
def test_column_type_text(args, text):
    assert qlik.column_type_text(*args) == text


# --------------------------------------------------------------------------- data messages


def test_data_message_fields_and_exact_values():
    raw = (
        b'{"magic":"atMSG","type":"DT","headers":null,"messageSchemaId":"ID-V1",'
        b'"messageSchema":null,"message":{"data":{"ID":1,"NAME":"a","AMOUNT":12345678901.50,'
        b'"NOTE":null,"BIN":"00FF"},"beforeData":null,"headers":{"operation":"INSERT",'
        b'"changeSequence":"20240101000000000000000000000000001","timestamp":'
        b'"2024-01-01T00:00:00.123","streamPosition":"pos","transactionId":"tx",'
        b'"changeMask":"1F","columnMask":"1F","transactionEventCounter":3,'
        b'"transactionLastEvent":false}}}'
    )
    row = decode(raw)
    assert row["decode_error"] is None
    assert (row["message_type"], row["operation"], row["metadata_match"]) == (
        "DT",
        "INSERT",
        "schema_id",
    )
    assert row["after_image"] == [
        ("ID", "1"),
        ("NAME", "a"),
        ("AMOUNT", "12345678901.50"),
        ("NOTE", None),
        ("BIN", "00FF"),
    ]
    assert row["before_image"] is None
    assert row["change_sequence"] == "20240101000000000000000000000000001"
    assert row["event_time_us"] == 1704067200123000
    assert (row["stream_position"], row["transaction_id"]) == ("pos", "tx")
    assert (row["transaction_event_counter"], row["transaction_last_event"]) == (3, False)
    assert (row["change_mask"], row["column_mask"]) == ("1F", "1F")
    assert row["changed_columns"] == ["ID", "NAME", "AMOUNT", "NOTE", "BIN"]
    assert row["not_provided_columns"] == [] and row["after_image_is_partial"] is False
    assert row["column_types"][2] == ("AMOUNT", "NUMERIC(10,2)")
    assert (row["key_columns"], row["table_version"], row["qlik_task"]) == (["ID"], 1, "task1")


def test_column_mask_zero_bit_means_not_provided_even_when_json_has_null():
    row = decode(
        dt_json(
            "UPDATE",
            before={"ID": "1", "NAME": "z", "NOTE": None},
            changeMask="02",
            columnMask="07",
        )
    )
    assert row["after_image"] == [("ID", "1"), ("NAME", "a"), ("AMOUNT", "1.50")]
    assert row["before_image"] == [("ID", "1"), ("NAME", "z")]
    assert row["not_provided_columns"] == ["NOTE", "BIN"]
    assert row["changed_columns"] == ["NAME"]
    assert row["after_image_is_partial"] is True


def test_without_column_mask_every_column_is_provided_and_absent_keys_are_partial():
    full = decode(dt_json(columnMask=None))
    assert full["after_image_is_partial"] is False and full["not_provided_columns"] == []
    lob_left_out = decode(dt_json(data={"ID": "1", "NAME": "a"}, columnMask=""))
    assert lob_left_out["after_image_is_partial"] is True


def test_delete_carries_the_deleted_row_in_data_as_the_before_image():
    row = decode(dt_json("DELETE", changeMask="01"))
    assert row["after_image"] is None
    assert dict(row["before_image"])["ID"] == "1"
    assert row["changed_columns"] == ["ID"]
    assert row["after_image_is_partial"] is False


def test_refresh_has_an_empty_change_sequence():
    row = decode(
        dt_json(
            "REFRESH",
            changeSequence="",
            timestamp="",
            changeMask=None,
            transactionEventCounter=None,
            transactionLastEvent=None,
        )
    )
    assert row["decode_error"] is None
    assert (row["change_sequence"], row["event_time_us"], row["changed_columns"]) == (
        "",
        None,
        None,
    )


def test_columns_not_in_the_metadata_are_kept():
    row = decode(dt_json(data={"ID": "1", "tableName": "T"}, columnMask="01"))
    assert row["after_image"] == [("ID", "1"), ("tableName", "T")]


def test_message_given_as_a_json_string_inside_the_envelope():
    message = json.loads(dt_json())
    message["message"] = json.dumps(message["message"])
    assert decode(json.dumps(message).encode())["operation"] == "INSERT"


@pytest.mark.parametrize(
    ("text", "micros"),
    [
        ("2019-05-02T18:17:29.000", 1556821049000000),
        ("2019-05-02 18:17:29", 1556821049000000),
        ("2019-05-02T18:17:29.1234567Z", 1556821049123456),
        ("2019-05-02T20:17:29+02:00", 1556821049000000),
        ("", None),
        (None, None),
    ],
)
def test_timestamps_are_utc_epoch_micros(text, micros):
    assert qlik.timestamp_micros(text, "t") == micros


# --------------------------------------------------------------------------- matching


def test_metadata_found_by_external_schema_id_before_the_envelope_id():
    cat = catalog(TABLE, TABLE_V2)
    row = decode(dt_json(envelope_id="ID-V2", externalSchemaId="ID-V1"), cat)
    assert (row["schema_id"], row["table_version"], row["metadata_match"]) == (
        "ID-V1",
        1,
        "schema_id",
    )
    by_envelope = decode(dt_json(envelope_id="ID-V1"), cat)
    assert by_envelope["table_version"] == 1  # an older version, chosen exactly by its id


def test_metadata_found_by_table_name_takes_the_newest_version():
    message = json.loads(dt_json(envelope_on=False))
    message = {"schema": "S", "table": "T", **message}
    row = decode(json.dumps(message).encode(), catalog(TABLE_V2, TABLE))
    assert (row["metadata_match"], row["table_version"]) == ("table_name", 2)
    assert row["column_types"][-1] == ("EXTRA", "INT8")


def test_metadata_found_by_the_topics_only_table():
    row = decode(dt_json(envelope_on=False))
    assert (row["metadata_match"], row["schema_id"]) == ("topic", "ID-V1")


def test_data_message_without_metadata_is_an_error_not_a_crash():
    other = QlikTable("srv", "task1", "S", "OTHER", 1, TABLE.columns, schema_id="O")
    cat = catalog(TABLE, other)  # two tables on the topic: the topic rule is ambiguous
    for raw in (dt_json(envelope_id="NOPE"), dt_json(envelope_on=False)):
        row = qlik.decode_one(raw, catalog=cat, topic="t")
        assert row["decode_error"] == "missing_table_metadata"
        assert "NOPE" in row["decode_error_detail"] or "not named" in row["decode_error_detail"]
    assert qlik.decode_one(dt_json())["decode_error"] == "missing_table_metadata"


def test_metadata_is_matched_within_the_same_registry_format():
    row = decode(dt_json(), catalog(TABLE, fmt="qlik_avro"))
    assert row["decode_error"] == "missing_table_metadata"


# The shape of a real Qlik Replicate JSON stream (issue 48): one enveloped MD (its schemaId
# RS-X, lineage naming the table), then enveloped full-load DTs (REFRESH, changeSequence "",
# headers.externalSchemaId null) whose envelope messageSchemaId RS-Y no MD carries.
REAL_STREAM_TABLE = QlikTable(
    "srv", "task1", "S", "T", 1, TABLE.columns, "2024-01-01T00:00:00", "RS-X"
)


def real_stream_md(table: QlikTable = REAL_STREAM_TABLE) -> bytes:
    return json.dumps(
        {
            "magic": "atMSG",
            "type": "MD",
            "headers": None,
            "messageSchemaId": None,
            "messageSchema": None,
            "message": table.metadata_message(),
        }
    ).encode()


def real_stream_refresh(id_: str = "1", envelope_id: str | None = "RS-Y") -> bytes:
    return dt_json(
        "REFRESH",
        {"ID": id_, "NAME": "a", "AMOUNT": "1.50", "NOTE": None, "BIN": "00FF"},
        envelope_id=envelope_id,
        changeSequence="",
        timestamp="",
        streamPosition="",
        transactionId="",
        changeMask=None,
        externalSchemaId=None,
        transactionEventCounter=None,
        transactionLastEvent=None,
    )


def batch_catalog(*mds: tuple[bytes, int], fmt: str = "qlik_json") -> qlik.MetadataCatalog:
    """A catalog of MD values, each delivered in the given ingest batch, on topic t."""
    entries = [
        qlik.metadata_entries(raw, fmt, "t", 0, i, batch) for i, (raw, batch) in enumerate(mds)
    ]
    assert all(e is not None for e in entries)
    return qlik.MetadataCatalog(entries)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("md_batch", "dt_batch"),
    [(3, 3), (1, 3), (5, 3)],
    ids=["metadata in the same batch", "in an earlier batch", "in a later batch"],
)
def test_real_stream_refresh_is_decoded_whatever_its_envelope_id(md_batch, dt_batch):
    """The envelope's messageSchemaId RS-Y names no MD: the DT takes its topic's table, as of
    its batch or of the later one that brings the MD (its resolved batch)."""
    row = decode(real_stream_refresh(), batch_catalog((real_stream_md(), md_batch)), batch=dt_batch)
    assert row["decode_error"] is None, row["decode_error_detail"]
    assert (row["operation"], row["change_sequence"], row["external_schema_id"]) == (
        "REFRESH",
        "",
        None,
    )
    assert (row["message_schema_id"], row["schema_id"], row["metadata_match"]) == (
        "RS-Y",
        "RS-X",
        "topic",
    )
    assert (row["source_table"], row["key_columns"]) == ("T", ["ID"])
    assert dict(row["after_image"])["AMOUNT"] == "1.50"
    assert row["resolved_batch_id"] == max(md_batch, dt_batch)


def test_real_stream_refresh_waits_only_while_no_metadata_of_its_topic_is_known():
    row = decode(real_stream_refresh(), batch_catalog((real_stream_md(), 5)))
    assert row["decode_error"] is None  # batch None: every entry counts
    waiting = decode(real_stream_refresh(), qlik.MetadataCatalog(), batch=3)
    assert waiting["decode_error"] == "missing_table_metadata"
    assert "envelope messageSchemaId RS-Y names none" in waiting["decode_error_detail"]


def test_real_stream_refresh_naming_its_table_on_a_topic_of_several_tables():
    other = QlikTable("srv", "task1", "S", "OTHER", 1, TABLE.columns, schema_id="O")
    message = json.loads(real_stream_refresh())
    message["message"] = {"schema": "S", "table": "T", **message["message"]}
    cat = batch_catalog((real_stream_md(), 1), (real_stream_md(other), 1))
    row = decode(json.dumps(message).encode(), cat, batch=1)
    assert (row["decode_error"], row["metadata_match"], row["schema_id"]) == (
        None,
        "table_name",
        "RS-X",
    )


def test_an_envelope_id_known_only_later_does_not_make_a_data_message_wait():
    """The envelope id picks its MD when one carries it as of the batch; an MD of that id
    arriving later does not hold the DT back (its table's newest version as of its batch)."""
    cat = batch_catalog((real_stream_md(TABLE), 1), (real_stream_md(TABLE_V2), 4))
    later = decode(dt_json(envelope_id="ID-V2"), cat, batch=2)
    assert (later["decode_error"], later["table_version"], later["metadata_match"]) == (
        None,
        1,
        "topic",
    )
    assert later["resolved_batch_id"] == 2
    known = decode(dt_json(envelope_id="ID-V1"), cat, batch=5)
    assert (known["table_version"], known["metadata_match"]) == (1, "schema_id")


def test_an_external_schema_id_still_waits_for_exactly_its_metadata():
    cat = batch_catalog((real_stream_md(TABLE), 1), (real_stream_md(TABLE_V2), 4))
    row = decode(dt_json(envelope_id="RS-Y", externalSchemaId="ID-V2"), cat, batch=2)
    assert (row["decode_error"], row["table_version"], row["resolved_batch_id"]) == (None, 2, 4)
    never = decode(dt_json(envelope_id="ID-V1", externalSchemaId="ID-V9"), cat, batch=2)
    assert never["decode_error"] == "missing_table_metadata"
    assert "ID-V9" in never["decode_error_detail"]


# --------------------------------------------------------------------------- Avro


def test_avro_metadata_and_data_by_reference_round_trip():
    cat = catalog(TABLE, fmt="qlik_avro")
    md = qlik.decode_one(encode_metadata(TABLE), source_format="qlik_avro", catalog=cat)
    assert md["decode_error"] is None
    assert md["column_types"][1] == ("NAME", "STRING(20)") and md["key_columns"] == ["ID"]
    raw = encode_data(
        TABLE,
        "UPDATE",
        {"ID": 1, "NAME": "b", "AMOUNT": "1.50", "BIN": b"\x00\xff"},
        before={"ID": 1, "NAME": "a", "AMOUNT": "1.50", "BIN": b"\x00\xff"},
        change_sequence="20240101000000000000000000000000002",
        timestamp="2024-01-01T00:00:01",
        change_mask=0x02,
        column_mask=0x17,  # NOTE (ordinal 4) not provided
        transaction_event_counter=1,
        transaction_last_event=True,
    )
    row = qlik.decode_one(raw, source_format="qlik_avro", catalog=cat, topic="t")
    assert row["decode_error"] is None
    assert (row["message_schema_id"], row["metadata_match"]) == ("ID-V1", "schema_id")
    assert row["after_image"] == [("ID", "1"), ("NAME", "b"), ("AMOUNT", "1.50"), ("BIN", "00FF")]
    assert row["before_image"][1] == ("NAME", "a")
    assert (row["change_mask"], row["column_mask"]) == ("02", "17")
    assert row["changed_columns"] == ["NAME"] and row["not_provided_columns"] == ["NOTE"]
    assert row["after_image_is_partial"] is True
    assert row["transaction_last_event"] is True


def test_avro_self_describing_data_message_matched_by_external_id():
    raw = encode_data(
        TABLE,
        "INSERT",
        {"ID": 7},
        change_sequence="1",
        external_schema_id="ID-V1",
        embed_schema=True,
        column_mask=0x1F,
    )
    row = qlik.decode_one(raw, source_format="qlik_avro", catalog=catalog(TABLE, fmt="qlik_avro"))
    assert (row["decode_error"], row["metadata_match"]) == (None, "schema_id")
    assert row["after_image"] == [
        ("ID", "7"),
        ("NAME", None),
        ("AMOUNT", None),
        ("NOTE", None),
        ("BIN", None),
    ]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (encode_metadata(TABLE)[:-3], "invalid_avro"),
        (encode_metadata(TABLE) + b"\x00", "invalid_avro"),
        (b"\x00\x00\x00\x00\x01\x02", "invalid_avro"),
        (b'{"magic":"atMSG"}', "invalid_avro"),
        (envelope("MD", b"\x01\x02\x03"), "invalid_avro"),
        (envelope("DT", b"\x01", schema_id="UNKNOWN"), "missing_table_metadata"),
        (envelope("DT", b"\x01", schema_text="{not a schema"), "invalid_avro"),
        (b"", "empty_value"),
    ],
)
def test_undecodable_avro(raw, reason):
    row = qlik.decode_one(raw, source_format="qlik_avro", catalog=catalog(TABLE, fmt="qlik_avro"))
    assert row["decode_error"] == reason
    assert row["decode_error_detail"]
    assert row["operation"] is None and row["after_image"] is None


def test_avro_data_with_the_wrong_writer_schema_is_invalid_avro():
    raw = encode_data(
        TABLE_V2, "INSERT", {"ID": 1, "EXTRA": 5}, change_sequence="1", change_mask=0x3F
    )
    # referenced as ID-V1: the bytes were written with version 2's schema
    tampered = envelope("DT", _envelope_message(raw), schema_id="ID-V1")
    row = qlik.decode_one(
        tampered, source_format="qlik_avro", catalog=catalog(TABLE, TABLE_V2, fmt="qlik_avro")
    )
    assert row["decode_error"] == "invalid_avro"


def _envelope_message(raw: bytes) -> bytes:
    import io

    import fastavro

    from cdc_lakehouse.formats.qlik.avro_schema import ENVELOPE_SCHEMA

    return fastavro.schemaless_reader(io.BytesIO(raw), fastavro.parse_schema(ENVELOPE_SCHEMA))[
        "message"
    ]


def real_stream_avro_body() -> bytes:
    """The Avro bytes of a REFRESH of REAL_STREAM_TABLE, written with its dataSchema."""
    raw = encode_data(
        REAL_STREAM_TABLE, "REFRESH", {"ID": 1, "NAME": "a", "AMOUNT": "1.50"}, column_mask=0x1F
    )
    return _envelope_message(raw)


def avro_catalog(*tables: tuple[QlikTable, int]) -> qlik.MetadataCatalog:
    return batch_catalog(*((encode_metadata(t), b) for t, b in tables), fmt="qlik_avro")


def test_avro_data_by_reference_waits_for_the_metadata_its_envelope_id_names():
    """An Avro DT read by reference (no messageSchema) whose messageSchemaId RS-Y names no MD
    is not read with the topic's other MD (RS-X), although its dataSchema reads these bytes to
    the end: Avro binary carries no names, so a schema that reads them need not be theirs."""
    by_y = envelope("DT", real_stream_avro_body(), schema_id="RS-Y")
    cat = avro_catalog((REAL_STREAM_TABLE, 1))
    row = qlik.decode_one(by_y, source_format="qlik_avro", topic="t", catalog=cat, batch=2)
    assert row["decode_error"] == "missing_table_metadata"
    assert "RS-Y" in row["decode_error_detail"]
    by_x = envelope("DT", real_stream_avro_body(), schema_id="RS-X")
    readable = qlik.decode_one(by_x, source_format="qlik_avro", topic="t", catalog=cat, batch=2)
    assert readable["decode_error"] is None  # RS-X's dataSchema does read the bytes
    y_table = QlikTable("srv", "task1", "S", "T", 2, TABLE.columns, schema_id="RS-Y")
    cat = avro_catalog((REAL_STREAM_TABLE, 1), (y_table, 4))
    later = qlik.decode_one(by_y, source_format="qlik_avro", topic="t", catalog=cat, batch=2)
    assert (later["decode_error"], later["schema_id"], later["resolved_batch_id"]) == (
        None,
        "RS-Y",
        4,
    )


def test_avro_self_describing_data_is_matched_like_json_whatever_its_envelope_id():
    raw = envelope(
        "DT",
        real_stream_avro_body(),
        schema_id="RS-Y",
        schema_text=REAL_STREAM_TABLE.data_schema_text(),
    )
    cat = avro_catalog((REAL_STREAM_TABLE, 5))
    row = qlik.decode_one(raw, source_format="qlik_avro", topic="t", catalog=cat, batch=3)
    assert (row["decode_error"], row["metadata_match"], row["schema_id"]) == (None, "topic", "RS-X")
    assert (row["operation"], row["resolved_batch_id"]) == ("REFRESH", 5)
    assert dict(row["after_image"])["AMOUNT"] == "1.50"


def test_avro_data_naming_no_writer_schema_is_invalid_avro():
    raw = envelope("DT", real_stream_avro_body())  # neither messageSchema nor messageSchemaId
    cat = avro_catalog((REAL_STREAM_TABLE, 1))
    row = qlik.decode_one(raw, source_format="qlik_avro", topic="t", catalog=cat, batch=1)
    assert row["decode_error"] == "invalid_avro"
    assert "writer schema" in row["decode_error_detail"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Decimal("1.50"), "1.50"),
        (b"\x00\xab", "00AB"),
        (True, "true"),
        (1.5, "1.5"),
        (12, "12"),
        (None, None),
    ],
)
def test_avro_value_text(value, text):
    assert qlik._avro_text(value) == text


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, "empty_value"),
        (b"", "empty_value"),
        (b"\xff\xfe{}", "invalid_utf8"),
        (b'{"magic":"atMSG","type":"DT","message":{"data"', "invalid_json"),
        (b"NaN", "invalid_json"),
        (b"[1]", "not_an_object"),
        (b'{"magic":"atMSG","type":"DT","message":[1]}', "not_an_object"),
        (b'{"magic":"atMSG","type":"DT","message":"[1]"}', "not_an_object"),
        (b'{"magic":"atMSG","type":"DT","message":"{oops"}', "invalid_json"),
        (b'{"magic":"atMSG","type":"DT"}', "missing_required_field"),
        (b'{"magic":"atMSG","message":{}}', "missing_required_field"),
        (b'{"magic":"ATMSG","type":"DT","message":{}}', "invalid_field_type"),
        (b'{"lineage":{"table":"T"}}', "missing_required_field"),
        (
            b'{"lineage":{"schema":"S"},"tableStructure":{"tableColumns":{}}}',
            "missing_required_field",
        ),
        (
            b'{"lineage":{"table":"T"},"tableStructure":{"tableColumns":{"A":1}}}',
            "invalid_field_type",
        ),
        (
            b'{"lineage":{"table":"T"},"tableStructure":{"tableColumns":{"A":{"ordinal":1}}}}',
            "missing_required_field",
        ),
        (dt_json(changeMask="XYZ"), "invalid_field_type"),
        (dt_json(columnMask=15), "invalid_field_type"),
        (dt_json(changeSequence="2024-01-01"), "invalid_field_type"),
        (dt_json(changeSequence="1" * 36), "invalid_field_type"),
        (dt_json(timestamp="yesterday"), "invalid_field_type"),
        (dt_json(timestamp="2024-02-30T00:00:00"), "invalid_field_type"),
        (dt_json(transactionLastEvent="maybe"), "invalid_field_type"),
        (dt_json(transactionEventCounter="x"), "invalid_field_type"),
        (dt_json(operation=None), "missing_required_field"),
        (dt_json(operation=5), "invalid_field_type"),
        (dt_json(data=[1]), "invalid_field_type"),
    ],
)
def test_structural_errors(raw, reason):
    row = decode(raw)
    assert row["decode_error"] == reason, row["decode_error_detail"]
    assert row["decode_error_detail"]
    assert all(row[k] is None for k in row if not k.startswith("decode_error"))


def test_unknown_operation_and_type_are_passed_through_for_sql():
    assert decode(dt_json("UPSERT"))["operation"] == "UPSERT"
    odd = b'{"magic":"atMSG","type":"XX","message":{}}'
    assert decode(odd)["message_type"] == "XX" and decode(odd)["decode_error"] is None


# --------------------------------------------------------------------------- batches


def test_decode_batches_and_metadata_batches_over_arrow():
    md_raw = json.dumps(TABLE.metadata_message()).encode()
    values = [md_raw, dt_json(), b"junk"]
    batch = pa.RecordBatch.from_pydict(
        {
            "source_format": ["qlik_json"] * 3,
            "topic": ["t"] * 3,
            "partition": pa.array([0, 0, 0], pa.int32()),
            "offset": pa.array([0, 1, 2], pa.int64()),
            "value": pa.array(values, pa.binary()),
        }
    )
    entries = [
        row["entry"] for out in qlik.metadata_batches(iter([batch])) for row in out.to_pylist()
    ]
    assert len(entries) == 1 and json.loads(entries[0])["schema_id"] == "ID-V1"
    with_input = batch.append_column(
        qlik.INPUT_COLUMN,
        pa.StructArray.from_arrays(
            [batch.column("source_format"), batch.column("topic"), batch.column("value")],
            names=["source_format", "topic", "value"],
        ),
    )
    out = next(qlik.decode_batches(iter([with_input]), entries=entries))
    assert out.num_rows == 3
    assert out.schema.names[-len(qlik.QLIK_FIELDS) :] == [f.name for f in qlik.QLIK_FIELDS]
    rows = out.to_pylist()
    assert [r["message_type"] for r in rows] == ["MD", "DT", None]
    assert rows[1]["after_image"][0] == ("ID", "1")
    assert rows[2]["decode_error"] == "invalid_json"
    ddl = qlik.output_schema_ddl("value binary")
    assert ddl.startswith("value binary, decode_error string") and "map<string,string>" in ddl


def test_metadata_candidate_prefilter():
    assert qlik.is_metadata_candidate(encode_metadata(TABLE), "qlik_avro")
    assert not qlik.is_metadata_candidate(encode_data(TABLE, "INSERT", {"ID": 1}), "qlik_avro")
    assert qlik.is_metadata_candidate(json.dumps(TABLE.metadata_message()).encode(), "qlik_json")
    assert not qlik.is_metadata_candidate(dt_json(), "qlik_json")
    assert qlik.metadata_entries(dt_json(), "qlik_json", "t", 0, 0) is None


# --------------------------------------------------------------------------- samples


def test_committed_samples_equal_the_encoders_output():
    # sample_data/dump/qlik.sample.*.jsonl are generated by
    # `python -m cdc_lakehouse.formats.qlik.sample`; regenerate after changing the encoder.
    for name, content in qlik_samples.sample_files().items():
        assert (ROOT / "sample_data" / "dump" / name).read_text(encoding="utf-8") == content


def test_samples_cover_every_documented_message_shape():
    values = [json.loads(v) for v in qlik_samples.json_values()]
    kinds = [(v.get("type", "bare"), v.get("message", v).get("headers", {}) or {}) for v in values]
    assert [k for k, _h in kinds] == ["MD", "DT", "DT", "DT", "DT", "DT", "DT", "bare"]
    ops = [h.get("operation") for _k, h in kinds[1:]]
    assert ops == ["REFRESH", "REFRESH", "INSERT", "UPDATE", "UPDATE", "DELETE", "INSERT"]
    assert kinds[4][1]["changeMask"] == "0B"  # the seed's worked example
    assert all(len(h["changeSequence"]) == 35 for _k, h in kinds[3:])


# --------------------------------------------------------------------------- real messages

# A captured Qlik Replicate UPDATE of a 16-column table, published in the GitHub repository
# cantodimo/globant_tests_dataflow (itd-saptm-apachebeam_v2/publisher_simulate_messages.py)
# as the base message of a Kafka producer test; Python literals None / True written as JSON.
REAL_16_COLUMNS = (
    '{"magic": "atMSG", "type": "DT", "headers": null, "messageSchemaId": null, '
    '"messageSchema": null, "message": {"data": {"item_no": "AAL614", "mfg_div_cd": "C", '
    '"phys_loc_cd": "M", "plnr_cd": "H", "inv_class_cd": "D", "use_um_cd": "EA", "byr_cd": "H", '
    '"item_desc": "RIVET 3/16 POPR FENDER", "itm_aut_ord_fct": "1", "itm_ord_mod_cd": "", '
    '"itm_whs_ctl_cd": "", "itm_aut_ord_cd": "N", "gnr_pt_no_ind": "", "div_adr_no": "", '
    '"ems_rel_cd": "U", "load_date_time": "2023-03-21 14:34:21.000000"}, "beforeData": '
    '{"item_no": "AAL614", "mfg_div_cd": "C", "phys_loc_cd": "M", "plnr_cd": "H", '
    '"inv_class_cd": "D", "use_um_cd": "EA", "byr_cd": "H", "item_desc": '
    '"KAFKA UPD FOR TESTING", "itm_aut_ord_fct": "1", "itm_ord_mod_cd": "", "itm_whs_ctl_cd": '
    '"", "itm_aut_ord_cd": "N", "gnr_pt_no_ind": "", "div_adr_no": "", "ems_rel_cd": "U", '
    '"load_date_time": null}, "headers": {"operation": "UPDATE", "changeSequence": '
    '"20230321213416580000000000000000017", "timestamp": "2023-03-21T21:34:19.511", '
    '"streamPosition": "1015;638150312565803470;20221211140008252023B|0000000003A90202DB790001",'
    ' "transactionId": "0000000066DA0202A903000000000000", "changeMask": "008080", '
    '"columnMask": "00FFFF", "transactionEventCounter": 1, "transactionLastEvent": true}}}'
)

# From the Qlik support article "Qlik Replicate and Kafka target: How to add table's name in
# Kafka messages" (community.qlik.com, ta-p/2115290): an UPDATE of a 3-column table.
REAL_QLIK_ARTICLE = (
    '{ "magic": "atMSG", "type": "DT", "headers": null, "messageSchemaId": null, '
    '"messageSchema": null, "message": { "data": { "ID": "2", "NAME": "test Kafka", '
    '"tableName": "kit" }, "beforeData": { "ID": "2", "NAME": "ok", "tableName": "kit" }, '
    '"headers": { "operation": "UPDATE", "changeSequence": '
    '"20230911032325000000000000000000005", "timestamp": "2023-09-11T03:23:25.000", '
    '"streamPosition": "00000000.00bb2531.00000001.0000.02.0000:154.6963.16", "transactionId": '
    '"00000000000000000000000000060008", "changeMask": "02", "columnMask": "07", '
    '"transactionEventCounter": 1, "transactionLastEvent": true } } }'
)


def _md_for(names: list[str], key: str, table: str) -> QlikTable:
    return QlikTable(
        "srv",
        "task",
        "dbo",
        table,
        1,
        tuple(
            QlikColumn(n, "STRING", length=20, primary_key_position=1 if n == key else 0)
            for n in names
        ),
    )


def test_real_message_with_a_multi_byte_change_mask():
    names = list(json.loads(REAL_16_COLUMNS)["message"]["data"])
    cat = qlik.MetadataCatalog([entry(_md_for(names, "item_no", "ITEMS"), topic="items")])
    row = qlik.decode_one(REAL_16_COLUMNS.encode(), catalog=cat, topic="items")
    assert row["decode_error"] is None and row["metadata_match"] == "topic"
    # 008080: bits 7 and 15 = ordinals 8 and 16 - exactly the two columns that differ
    assert row["changed_columns"] == ["item_desc", "load_date_time"]
    assert row["not_provided_columns"] == [] and row["after_image_is_partial"] is False
    before, after = dict(row["before_image"]), dict(row["after_image"])
    assert {k for k in after if after[k] != before[k]} == {"item_desc", "load_date_time"}
    assert before["load_date_time"] is None and after["itm_ord_mod_cd"] == ""
    assert row["event_time_us"] == 1679434459511000
    assert row["change_sequence"] == "20230321213416580000000000000000017"


def test_real_message_from_the_qlik_support_article():
    cat = qlik.MetadataCatalog([entry(_md_for(["ID", "NAME", "tableName"], "ID", "kit"))])
    row = qlik.decode_one(REAL_QLIK_ARTICLE.encode(), catalog=cat, topic="t")
    assert row["decode_error"] is None
    assert row["changed_columns"] == ["NAME"]
    assert row["after_image"] == [("ID", "2"), ("NAME", "test Kafka"), ("tableName", "kit")]
    assert row["before_image"][1] == ("NAME", "ok")
    assert (row["transaction_event_counter"], row["transaction_last_event"]) == (1, True)
