"""The bad-input matrix of the reliability tests (issue 19): every kind of broken record a
topic can carry, for all nine formats, each beside good records of the same topic and batch.

Each format has its own registered topic ``faults.<format>`` (``seeds/cdc_topics.csv``) with
one table ``faults.<format>`` keyed by ``id``. Its records, in offset order on partition 0:
the good changes of :data:`GOOD_ROWS` (one of them with a 60-digit number and ``1.50``, one
with a value of 1.5 MB), for the JSON formats also one per JSON number form of
:data:`NUMBER_FORMS` (``-0``, ``-0E+0``, ``1E400``, a 4,301-digit integer, ...), for Canal
also one INSERT of :data:`WIDE_ROWS` rows (:func:`wide_canal_message`: its size times its row
count passes 2 GiB), and between them the bad inputs of each format, each with the
quarantine reason it must get and a piece of the detail. What a user must see:

- every bad input is one ``silver.quarantine`` row with that reason and its raw bytes;
- every good record reaches ``gold.current_rows`` with its values exactly as sent
  (:data:`EXPECTED_GOLD`);
- the build succeeds: no single record can fail it.

``UNREGISTERED_TOPIC`` holds one record of a topic missing from the registry (ingested with a
registry that has it, as when a topic is removed from ``cdc_topics.csv`` after ingest): it is
quarantined as ``unregistered_topic``.
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_lakehouse import formats
from cdc_lakehouse.decode.json_text import MAX_JSON_DEPTH
from cdc_lakehouse.formats.dts_avro import avro_writer as dts
from cdc_lakehouse.formats.qlik import avro_writer as qlik
from tests.dbt_models import debezium_cases

PREFIX = "faults"
UNREGISTERED_TOPIC = "faults.unregistered"
SIXTY_DIGITS = "1234567890" * 6
HUGE = "x" * 1_500_000  # 1.5 MB of text in one column value
T_MS = 1_700_000_000_000  # event times (ms), 2023-11-14


@dataclass(frozen=True)
class Fault:
    """One bad input: its name, the raw value (None = a Kafka NULL value), the quarantine
    reason it must get and a text its detail must contain (None: any detail)."""

    name: str
    value: bytes | None
    reason: str
    detail: str | None = None


def topic(format_: str) -> str:
    return f"{PREFIX}.{format_}"


def _text(value: Any) -> bytes:
    """JSON text of ``value``; the placeholder ``"__RAW__x__"`` becomes the bare ``x``."""
    text = json.dumps(value, separators=(",", ":"))
    while "__RAW__" in text:
        start = text.index('"__RAW__')
        end = text.index('__"', start + 8)
        text = text[:start] + text[start + 8 : end] + text[end + 3 :]
    return text.encode()


def raw(number_text: str) -> str:
    """A JSON number written with exactly this text."""
    return f"__RAW__{number_text}__"


def deep(levels: int) -> Any:
    """A JSON value nested ``levels`` deep (arrays)."""
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


# the row values of the good records of every format: id -> column -> value as sent
GOOD_ROWS: dict[int, dict[str, Any]] = {
    1: {"id": 1, "note": "plain", "amount": raw("1.50")},
    2: {"id": 2, "note": "sixty digits", "amount": raw(SIXTY_DIGITS)},
    3: {"id": 3, "note": HUGE, "amount": raw("3")},
}


NUMBER_FORMS = (
    "-0",
    "-0.0",
    "-0.000",
    "-0E+0",
    "-0e-0",
    "-0E0",
    "0e0",
    "0E-0",
    "0.0",
    "1E400",
    "-1E400",
    "1e-400",
    "1E+03",
    "-1",
    "-" + SIXTY_DIGITS,
    "1" * 4301,  # longer than Python's int conversion limit (4,300 digits)
    "-" + "9" * 4301,
)
"""JSON number forms whose text a value must keep exactly as sent (``-0`` is an integer that
a parser reads as ``0``; ``1E400`` overflows a double; 4,301 digits pass Python's limit)."""

NUMBER_ROWS: dict[int, dict[str, Any]] = {
    100 + index: {"id": 100 + index, "note": f"number form {index}", "amount": raw(form)}
    for index, form in enumerate(NUMBER_FORMS)
}
"""The good rows of the JSON formats that carry :data:`NUMBER_FORMS` (one form each)."""

WIDE_ROWS = 10_000
"""Rows of the one wide Canal INSERT (:func:`wide_canal_message`)."""
WIDE_FIRST_ID = 1_000_000


def wide_rows() -> dict[int, dict[str, Any]]:
    """The rows of the wide Canal INSERT: id -> column -> value (about 40 bytes each)."""
    return {
        id_: {"id": id_, "note": "w", "amount": str(id_ % 7)}
        for id_ in range(WIDE_FIRST_ID, WIDE_FIRST_ID + WIDE_ROWS)
    }


def _texts(row: dict[str, Any]) -> dict[str, str]:
    """The value texts gold must hold for ``row`` (numbers as their exact JSON text)."""
    out = {}
    for name, value in row.items():
        text = str(value)
        out[name] = text[len("__RAW__") : -2] if text.startswith("__RAW__") else text
    return out


# --------------------------------------------------------------------------- JSON formats


def _generic(good: Callable[..., bytes]) -> list[Fault]:
    """The bad inputs every JSON format gets: framing, parsing and nesting."""
    whole = good(1, {"id": 1, "note": "cut", "amount": raw("1.50")})
    return [
        Fault("Kafka NULL value", None, "empty_value"),
        Fault("zero bytes", b"", "empty_value"),
        Fault("binary bytes", b"\x00\x01\xfe\xff\x80binary", "invalid_utf8"),
        Fault("invalid UTF-8 in a string", b'{"a":"\xc3\x28"}', "invalid_utf8"),
        Fault("truncated message", whole[: len(whole) // 2], "invalid_json"),
        Fault("top level is an array", b"[1,2,3]", "not_an_object"),
        Fault("top level is a string", b'"just text"', "not_an_object"),
        Fault(
            "message nested 1,000 levels",
            b'{"a":' * 1000 + b"1" + b"}" * 1000,
            "invalid_json",
            f"nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        Fault(
            "one column value nested 200 levels",
            good(1, {"id": 1, "note": deep(200), "amount": raw("1.50")}),
            "invalid_json",
            f"nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        Fault(
            "NaN as a column value",
            good(1, {"id": 1, "note": "nan", "amount": raw("NaN")}),
            "invalid_json",
            "NaN",
        ),
        Fault(
            "a column named twice",
            good(1, {"id": 1, "note": "a", "amount": raw("1"), DUP: "dup"}),
            "duplicate_key",
            "appears twice",
        ),
    ]


DUP = "__dup__"


def _duplicate_column(text: bytes, column: str = "note") -> bytes:
    """``text`` with the placeholder column :data:`DUP` (any case) renamed to ``column``."""
    for placeholder in (DUP, DUP.upper()):
        text = text.replace(f'"{placeholder}":"dup"'.encode(), f'"{column}":"b"'.encode())
    return text


def _dataworks(format_: str) -> tuple[Callable[..., bytes], list[Fault]]:
    def envelope(
        seq: Any, row: dict[str, Any] | None, *, op: str = "INSERT", **payload: Any
    ) -> bytes:
        message = {
            "schema": {
                "dataColumn": [
                    {"name": "id", "type": "LONG"},
                    {"name": "note", "type": "STRING"},
                    {"name": "amount", "type": "DOUBLE"},
                ],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": PREFIX, "tableName": format_},
            },
            "payload": {
                "before": None,
                "after": {"dataColumn": row} if row is not None else None,
                "sequenceId": str(seq),
                "op": op,
                "timestamp": {"eventTime": T_MS + int(seq), "systemTime": T_MS + int(seq)},
                "ddl": None,
                **payload,
            },
            "version": "1.0.0",
        }
        return _duplicate_column(_text(message))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return envelope(seq, row)

    faults = [
        Fault("unknown op", envelope(9, GOOD_ROWS[1], op="UPSERT"), "unknown_op", "UPSERT"),
        Fault(
            "key column missing",
            envelope(9, {"note": "no id", "amount": raw("1")}),
            "missing_key_column",
            "id",
        ),
        # a number is read as its text (the exact JSON function's string fields): 7 is no op
        Fault(
            "op is a number",
            envelope(9, GOOD_ROWS[1], op=7),  # type: ignore[arg-type]
            "unknown_op",
            "payload.op 7",
        ),
        Fault(
            "event time of 60 digits",
            envelope(9, GOOD_ROWS[1], timestamp={"eventTime": raw(SIXTY_DIGITS)}),
            "invalid_field_value",
            "eventTime",
        ),
        Fault(
            "sequenceId of 60 digits",
            envelope(SIXTY_DIGITS, GOOD_ROWS[1], timestamp={"eventTime": T_MS}),
            "invalid_field_type",
            "sequenceId",
        ),
        Fault(
            "the payload named twice",
            envelope(9, GOOD_ROWS[1]).replace(b'"version"', b'"payload":{},"version"'),
            "duplicate_key",
            "'payload'",
        ),
    ]
    return good, faults


def _datahub_tuple(format_: str) -> tuple[Callable[..., bytes], list[Fault]]:
    def record(seq: Any, row: dict[str, Any], *, op: Any = "I", **meta: Any) -> bytes:
        message = {
            "_sequence_id_": str(seq),
            "_operation_type_": op,
            "_excute_time_": T_MS,
            "_source_table_": format_,
            "_before_image_": "N",
            "_after_image_": "Y",
            **meta,
            **row,
        }
        return _duplicate_column(_text(message))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return record(seq, row)

    faults = [
        Fault("unknown op", record(9, GOOD_ROWS[1], op="X"), "unknown_op", "X"),
        Fault(
            "key column missing",
            record(9, {"note": "no id", "amount": raw("1")}),
            "missing_key_column",
            "id",
        ),
        Fault("op is a number", record(9, GOOD_ROWS[1], op=5), "invalid_field_type"),
        Fault(
            "execute time of 60 digits",
            record(9, GOOD_ROWS[1], _excute_time_=raw(SIXTY_DIGITS)),
            "invalid_field_value",
            "_excute_time_",
        ),
        Fault(
            "sequence id of 60 digits",
            record(SIXTY_DIGITS, GOOD_ROWS[1]),
            "invalid_field_type",
            "_sequence_id_",
        ),
    ]
    return good, faults


def _lindorm(format_: str) -> tuple[Callable[..., bytes], list[Fault]]:
    def message(ts: Any, row: dict[str, Any] | None, *, op: Any = "c", **source: Any) -> bytes:
        payload = {
            "op": op,
            "ts_ms": T_MS + 5,
            "before": None,
            "after": row,
            "source": {
                "version": "v1.0",
                "db": PREFIX,
                "namespace": PREFIX,
                "table": format_,
                "ts_ms": ts,
                **source,
            },
        }
        return _duplicate_column(_text({"schema": {}, "payload": payload}))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(T_MS + seq, row)

    faults = [
        Fault("unknown op", message(T_MS + 9, GOOD_ROWS[1], op="x"), "unknown_op", "x"),
        Fault(
            "key column missing",
            message(T_MS + 9, {"note": "no id", "amount": raw("1")}),
            "missing_key_column",
            "id",
        ),
        Fault("op is a number", message(T_MS + 9, GOOD_ROWS[1], op=1), "invalid_field_type"),
        Fault(
            "source time of 60 digits",
            message(raw(SIXTY_DIGITS), GOOD_ROWS[1]),
            "invalid_field_value",
            "ts_ms",
        ),
        Fault(
            "source time is text",
            message("yesterday", GOOD_ROWS[1]),
            "invalid_field_type",
            "ts_ms",
        ),
    ]
    return good, faults


def _shareplex(format_: str) -> tuple[Callable[..., bytes], list[Fault]]:
    def message(scn: Any, row: dict[str, Any] | None, *, op: Any = "ins", **meta: Any) -> bytes:
        body = {
            "time": "2023-11-14T22:13:20",
            "userid": 84,
            "op": op,
            "scn": str(scn),
            "trans": "7.0.1",
            "seq": 1,
            "size": 1,
            "table": f"{PREFIX.upper()}.{format_.upper()}",
            "idx": "1/1",
            **meta,
        }
        out: dict[str, Any] = {"meta": body}
        if row is not None:
            out["data"] = {k.upper(): v for k, v in row.items()}
            if op in ("upd", "del"):
                out["key"] = {"ID": row.get("id")}
        return _duplicate_column(_text(out), "NOTE")

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(1000 + seq, row)

    # an ins carries no key: the table's key is learned from an upd / del (docs/formats.md 4b)
    teach_key = message(1100, {"id": 1, "note": "plain"}, op="upd")
    faults = [
        Fault("unknown op", message(1009, GOOD_ROWS[1], op="merge"), "unknown_op", "merge"),
        Fault("op is a number", message(1009, GOOD_ROWS[1], op=3), "invalid_field_type"),
        Fault(
            "event time is not a time",
            message(1009, GOOD_ROWS[1], time="yesterday"),
            "invalid_field_type",
            "meta.time",
        ),
        Fault(
            "scn of 60 digits",
            message(SIXTY_DIGITS, GOOD_ROWS[1]),
            "invalid_field_type",
            "scn",
        ),
    ]
    return good, faults, [], [teach_key]


def _canal(
    format_: str,
) -> tuple[Callable[..., bytes], list[Fault], list[bytes], list[bytes]]:
    def message(es: Any, rows: list[dict[str, Any]] | None, *, type_: Any = "INSERT") -> bytes:
        out = {
            "data": [{k: _canal_text(v) for k, v in r.items()} for r in rows]
            if rows is not None
            else None,
            "database": PREFIX,
            "es": es,
            "id": 1,
            "isDdl": False,
            "mysqlType": {"id": "bigint", "note": "text", "amount": "decimal(65,2)"},
            "old": None,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": None,
            "table": format_,
            "ts": T_MS + 100,
            "type": type_,
        }
        return _duplicate_column(_text(out))

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return message(T_MS + seq, [row])

    faults = [
        Fault("unknown type", message(T_MS + 9, [GOOD_ROWS[1]], type_="UPSERT"), "unknown_op"),
        Fault(
            "key column missing",
            message(T_MS + 9, [{"note": "no id", "amount": raw("1")}]),
            "missing_key_column",
            "id",
        ),
        Fault(
            "one bad row quarantines the whole message",
            message(T_MS + 9, [GOOD_ROWS[1], {"note": "no id"}]),
            "missing_key_column",
        ),
        # a number is read as its text (the exact JSON function's string fields): 4 is no DML type
        Fault("type is a number", message(T_MS + 9, [GOOD_ROWS[1]], type_=4), "unknown_op"),
        Fault(
            "es of 60 digits",
            message(raw(SIXTY_DIGITS), [GOOD_ROWS[1]]),
            "invalid_field_value",
            "es",
        ),
        Fault(
            "es of 18 digits (after the year 9999)",
            message(raw("999999999999999999"), [GOOD_ROWS[1]]),
            "invalid_field_value",
            "es",
        ),
        Fault(
            "data is an object",
            _text({"data": {"id": "1"}, "type": "INSERT", "es": T_MS, "table": format_}),
            "invalid_field_type",
            "data",
        ),
    ]
    # one valid INSERT of WIDE_ROWS rows (about 400 KB): repeating its bytes for each of its
    # rows makes 4 GB, past what one Arrow array holds (2 GiB); it stopped every build
    wide = message(T_MS + 5, list(wide_rows().values()))
    return good, faults, [], [wide]


def wide_canal_message() -> bytes:
    """The wide Canal INSERT of the matrix: :data:`WIDE_ROWS` rows of
    :func:`wide_rows` in one message of topic ``faults.dts_canal_json``."""
    return _built("dts_canal_json")[3][0]


def _canal_text(value: Any) -> Any:
    """Canal sends every value as a JSON string: an int becomes its text. A raw number
    placeholder stays a number (so exact JSON digits are checked too), and nested values stay
    nested."""
    return str(value) if isinstance(value, int) else value


def _qlik_json(format_: str) -> tuple[Callable[..., bytes], list[Fault], list[bytes]]:
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
                "data": {k.upper(): _canal_text(v) for k, v in (row or {}).items()},
                "beforeData": None,
                "headers": headers,
            },
        }
        return _duplicate_column(_text(message), "NOTE")

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return dt(seq, row)

    table = _qlik_table(format_)
    md = _text(
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
        Fault("unknown operation", dt(9, GOOD_ROWS[1], op="UPSERT"), "unknown_op", "UPSERT"),
        Fault(
            "key column not provided (columnMask)",
            dt(9, GOOD_ROWS[1], headers={"columnMask": "06"}),
            "missing_key_column",
            "ID",
        ),
        Fault("operation is a number", dt(9, GOOD_ROWS[1], op=2), "invalid_field_type"),
        Fault(
            "changeSequence of 60 digits",
            dt(SIXTY_DIGITS, GOOD_ROWS[1]),
            "invalid_field_type",
            "changeSequence",
        ),
        Fault(
            # its externalSchemaId names the one metadata message it may take (docs/formats.md
            # 5); an envelope messageSchemaId alone would not hold it back: the topic's table
            "data message whose metadata message never came",
            dt(9, GOOD_ROWS[1], headers={"externalSchemaId": "NO-SUCH-SCHEMA"}),
            "missing_table_metadata",
            "NO-SUCH-SCHEMA",
        ),
        Fault(
            "metadata message nested 1,000 levels",
            b'{"magic":"atMSG","type":"MD","message":' + b"[" * 1000 + b"]" * 1000 + b"}",
            "invalid_json",
            f"nested deeper than {MAX_JSON_DEPTH} levels",
        ),
        Fault(
            "envelope message as a string with a repeated key",
            _text(
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
    return good, faults, [md]


def _qlik_table(format_: str) -> qlik.QlikTable:
    return qlik.QlikTable(
        "faults-server",
        PREFIX,
        PREFIX.upper(),
        format_.upper(),
        1,
        (
            qlik.QlikColumn("ID", "STRING", length=20, primary_key_position=1, nullable=False),
            qlik.QlikColumn("NOTE", "STRING", length=2_000_000),
            qlik.QlikColumn("AMOUNT", "STRING", length=100),
        ),
        "2023-11-14T00:00:00",
        f"{format_}-V1",
    )


# --------------------------------------------------------------------------- Avro formats


def _dts_avro(format_: str) -> tuple[Callable[..., bytes], list[Fault]]:
    columns = [("id", 8), ("note", 252), ("amount", 246)]

    def record(rid: int, row: dict[str, Any] | None, op: str = "INSERT", **kw: Any) -> bytes:
        values = None
        if row is not None:
            values = {
                name: (
                    dts.decimal(str(value)[len("__RAW__") : -2])
                    if str(value).startswith("__RAW__")
                    else value
                )
                for name, value in row.items()
            }
        args: dict[str, Any] = {
            "object_name": f"{PREFIX}.{format_}",
            "columns": columns,
            "primary_key": ["id"],
            "after": values,
        }
        args.update(kw)
        return dts.encode(
            dts.make_record(op, record_id=rid, source_timestamp=1_700_000_000 + rid, **args)
        )

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return record(seq, row)

    whole = record(9, GOOD_ROWS[1])
    faults = [
        Fault("Kafka NULL value", None, "empty_value"),
        Fault("zero bytes", b"", "empty_value"),
        Fault("garbage bytes", b"\x13\x37not avro at all\xff" * 4, "avro_schema_mismatch"),
        Fault("truncated record", whole[: len(whole) // 2], "avro_schema_mismatch"),
        Fault(
            "a string claiming 2^62 bytes",
            b"\x00\xfe\xff\xff\xff\xff\xff\xff\xff\x7f" + b"x" * 16,
            "avro_schema_mismatch",
        ),
        Fault("JSON instead of Avro", b'{"id":1}', "avro_schema_mismatch"),
        Fault(
            "key column missing from the image",
            record(9, {"id": dts.NONE, "note": "no id", "amount": raw("1")}),
            "missing_key_column",
            "id",
        ),
        Fault(
            "sourceTimestamp after the year 9999",
            dts.encode(
                dts.make_record(
                    "INSERT",
                    record_id=9,
                    source_timestamp=2**62,
                    object_name=f"{PREFIX}.{format_}",
                    columns=columns,
                    primary_key=["id"],
                    after={"id": 9, "note": "x", "amount": dts.decimal("1")},
                )
            ),
            "invalid_field_value",
            "sourceTimestamp",
        ),
        Fault(
            "readerThroughoutTime of 60 digits",
            record(9, GOOD_ROWS[1], tags={"readerThroughoutTime": SIXTY_DIGITS}),
            "invalid_field_value",
            "readerThroughoutTime",
        ),
        Fault(
            "pk_uk_info nested 1,000 levels",
            record(9, GOOD_ROWS[1], primary_key=None, tags={"pk_uk_info": "[" * 1000 + "]" * 1000}),
            "invalid_field_value",
            "pk_uk_info",
        ),
    ]
    return good, faults


def _qlik_avro(format_: str) -> tuple[Callable[..., bytes], list[Fault], list[bytes]]:
    table = _qlik_table(format_)

    def dt(counter: int, row: dict[str, Any], **kw: Any) -> bytes:
        return qlik.encode_data(
            table,
            kw.pop("operation", "INSERT"),
            {k.upper(): v for k, v in _texts(row).items()},
            change_sequence=f"2023111422132000{counter:019d}",
            timestamp="2023-11-14T22:13:20.000",
            change_mask=7,
            column_mask=7,
            **kw,
        )

    def good(seq: int, row: dict[str, Any]) -> bytes:
        return dt(seq, row)

    ghost = qlik.QlikTable(
        "faults-server", PREFIX, PREFIX.upper(), "GHOST", 1, table.columns, schema_id="GHOST"
    )
    whole = dt(9, GOOD_ROWS[1])
    faults = [
        Fault("Kafka NULL value", None, "empty_value"),
        Fault("garbage bytes", b"\x13\x37not avro\xff" * 4, "invalid_avro"),
        Fault("truncated envelope", whole[: len(whole) // 2], "invalid_avro"),
        Fault("JSON instead of Avro", b'{"magic":"atMSG"}', "invalid_avro"),
        Fault(
            "data message whose metadata never came",
            qlik.encode_data(
                ghost,
                "INSERT",
                {"ID": "9", "NOTE": "x", "AMOUNT": "1"},
                change_sequence=f"2023111422132000{9:019d}",
            ),
            "missing_table_metadata",
            "GHOST",
        ),
    ]
    return good, faults, [qlik.encode_metadata(table)]


# --------------------------------------------------------------------------- the matrix


BUILDERS: dict[str, Callable[[str], tuple[Any, ...]]] = {
    "dataworks_json": _dataworks,
    "datahub_blob": _dataworks,
    "datahub_tuple": _datahub_tuple,
    "lindorm_debezium": _lindorm,
    "dts_shareplex_json": _shareplex,
    "dts_canal_json": _canal,
    "qlik_json": _qlik_json,
    "dts_avro": _dts_avro,
    "qlik_avro": _qlik_avro,
    "debezium_json": debezium_cases.fault_builder,
}
"""format -> its builder: ``build(format) -> (good, faults[, first records[, last records]])``
with ``good(seq, row) -> bytes`` a valid message of table ``faults.<format>`` carrying
``row`` (numbers written with :func:`raw` keep their text)."""


@functools.cache
def _built(format_: str) -> tuple[Any, ...]:
    """What ``format_``'s builder returns (built once)."""
    return BUILDERS[format_](format_)


def good_message(format_: str, seq: int, row: dict[str, Any]) -> bytes:
    """A valid message of ``format_`` (topic ``faults.<format>``) that inserts ``row``."""
    return _built(format_)[0](seq, row)


def _good_rows(format_: str) -> dict[int, dict[str, Any]]:
    """The rows of the good records of ``format_`` made from row dicts: :data:`GOOD_ROWS`,
    and :data:`NUMBER_ROWS` for the JSON formats."""
    if formats.get(format_).value_encoding != "json":
        return GOOD_ROWS
    return {**GOOD_ROWS, **NUMBER_ROWS}


TOMBSTONE_FORMATS = frozenset({"debezium_json"})
"""Formats whose Kafka NULL value is a tombstone (a control event), not an empty_value fault."""
RECORD_KEYS: dict[str, str] = {"debezium_json": debezium_cases.FAULT_KEY}
"""format -> the Kafka key of its topic's records (others: none)."""


def _matrix() -> dict[str, tuple[list[bytes], list[Fault], list[bytes]]]:
    """format -> (good records, faults, records that must come first: Qlik metadata). Good
    records a builder adds after the rows of :func:`_good_rows` end the list."""
    out: dict[str, tuple[list[bytes], list[Fault], list[bytes]]] = {}
    for format_ in BUILDERS:
        built = _built(format_)
        good, faults = built[0], built[1]
        first = built[2] if len(built) > 2 else []
        last = built[3] if len(built) > 3 else []
        if formats.get(format_).value_encoding == "json":
            generic = _generic(good)
            if format_ in TOMBSTONE_FORMATS:  # a Kafka NULL value is a tombstone, no fault
                generic = [fault for fault in generic if fault.value is not None]
            faults = generic + faults
        goods = [good(seq, row) for seq, row in _good_rows(format_).items()] + last
        out[format_] = (goods, faults, first)
    return out


MATRIX = _matrix()
FORMATS = sorted(MATRIX)


def faults() -> list[tuple[str, int, Fault]]:
    """Every bad input as (topic, offset, fault)."""
    return [(topic, offset, fault) for topic, offset, fault, _good in _placed() if fault]


def _placed() -> list[tuple[str, int, Fault | None, bytes | None]]:
    """Every record of the matrix in offset order: (topic, offset, fault or None, good value
    or None). Good records are spread between the bad ones."""
    placed: list[tuple[str, int, Fault | None, bytes | None]] = []
    for format_ in FORMATS:
        goods, bad, first = MATRIX[format_]
        records: list[tuple[Fault | None, bytes | None]] = [(None, value) for value in first]
        step = max(len(bad) // len(goods), 1)
        pending = list(goods)
        for index, fault in enumerate(bad):
            if index % step == 0 and pending:
                records.append((None, pending.pop(0)))
            records.append((fault, None))
        records.extend((None, value) for value in pending)
        placed.extend(
            (topic(format_), offset, fault, value) for offset, (fault, value) in enumerate(records)
        )
    return placed


def expected_gold(format_: str) -> dict[str, dict[str, str]]:
    """gold.current_rows of table ``faults.<format>``: row_key -> row_values."""
    upper = format_.startswith(("qlik", "dts_shareplex"))
    rows = _good_rows(format_)
    if format_ == "dts_canal_json":
        rows = {**rows, **wide_rows()}
    out = {}
    for id_, row in rows.items():
        values = _texts(row)
        if upper:
            values = {k.upper(): v for k, v in values.items()}
        key = "ID" if upper else "id"
        out[json.dumps({key: str(id_)}, separators=(",", ":"))] = values
    return out


def _line(topic_: str, offset: int, value: bytes | None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "topic": topic_,
        "partition": 0,
        "offset": offset,
        "timestamp": T_MS,
        "key": RECORD_KEYS.get(topic_.removeprefix(f"{PREFIX}.")),
    }
    if value is None:
        line["value"] = None
    else:
        line["value_base64"] = base64.b64encode(value).decode("ascii")
    return line


def write_dump(path: Path) -> Path:
    """Write every matrix record as a topic dump file at ``path``; return it."""
    lines = [
        _line(topic_, offset, fault.value if fault else good)
        for topic_, offset, fault, good in _placed()
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def write_unregistered_dump(path: Path) -> tuple[Path, str]:
    """One valid Canal record on :data:`UNREGISTERED_TOPIC`: the dump and its topic (the
    caller ingests it with a registry that has the topic as ``dts_canal_json``)."""
    good = _canal("unregistered")[0]
    line = _line(UNREGISTERED_TOPIC, 0, good(1, GOOD_ROWS[1]))
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return path, UNREGISTERED_TOPIC
