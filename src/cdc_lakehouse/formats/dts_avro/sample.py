"""The bundled DTS Avro sample topic ``dts.sample.avro`` (docs/formats.md 4a; seed 003).

Seed 003 has no DTS Avro message, only the pointer to the ``Record`` schema: the sample is
encoded by :mod:`cdc_lakehouse.formats.dts_avro.avro_writer` from that schema. Table
``mydb.t1`` replays
the records printed by a public DTS subscription demo (cloudkdb/demo,
aliyun-dts-subscribe-python/dts_subscribe.py: DDL, insert, update, delete of ``mydb.t1``),
wrapped in BEGIN / COMMIT; table ``shop.all_types`` carries every value type of the image
union, a partial update (EmptyObject NONE), a full-load row (INIT) and a CHECKPOINT; a
HEARTBEAT sits in between. Both schema revisions occur (records without ``bornTimestamp``).

Regenerate the committed file with ``python -m cdc_lakehouse.formats.dts_avro.sample``
(a test checks that the committed file equals :func:`dump_lines`).
"""

from __future__ import annotations

import argparse
import base64
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from cdc_lakehouse.formats.dts_avro import avro_writer as avro

TOPIC = "dts.sample.avro"
DEFAULT_PATH = Path("sample_data") / "dump" / f"{TOPIC}.jsonl"

T1_COLUMNS = [("a", 8), ("b", 253)]  # LONGLONG, VAR_STRING
ALL_TYPES_COLUMNS = [
    ("id", 3),  # LONG
    ("name", 253),  # VAR_STRING, utf8mb4
    ("legacy", 254),  # STRING, latin1
    ("price", 246),  # NEWDECIMAL
    ("ratio", 5),  # DOUBLE
    ("created_at", 17),  # TIMESTAMP2
    ("updated_at", 18),  # DATETIME2
    ("birthday", 10),  # DATE
    ("opens_at", 19),  # TIME2
    ("local_time", 18),  # DATETIME2 (written as TimestampWithTimeZone)
    ("location", 255),  # GEOMETRY (WKB)
    ("area", 255),  # GEOMETRY (WKT)
    ("photo", 252),  # BLOB
    ("attrs", 245),  # JSON
    ("note", 15),  # VARCHAR, NULL
]
WKB_POINT_1_2 = bytes.fromhex("0101000000000000000000f03f0000000000000040")


def _all_types_row(id_: int, name: str) -> dict[str, Any]:
    return {
        "id": id_,
        "name": name,
        "legacy": avro.character("café", charset="latin1"),
        "price": Decimal("12345678901234567890.123450"),
        "ratio": 0.1,
        "created_at": avro.timestamp(1696985000, 123456),
        "updated_at": avro.date_time(2023, 10, 11, 9, 30, 0, 500000),
        "birthday": avro.date_time(1990, 1, 31),
        "opens_at": avro.date_time(hour=8, minute=30, second=0),
        "local_time": avro.timestamp_tz("+08:00", 2023, 10, 11, 17, 30, 0),
        "location": avro.binary_geometry("POINT", WKB_POINT_1_2),
        "area": avro.text_geometry("POLYGON", "POLYGON((0 0,1 0,1 1,0 0))"),
        "photo": b"\x89PNG\r\n",
        "attrs": avro.text_object("JSON", '{"size": 1.50, "tags": ["a"]}'),
        "note": None,
    }


def sample_records() -> list[dict[str, Any]]:
    """The sample's ``Record`` dicts in Kafka offset order (see module doc)."""
    t1: dict[str, Any] = {"object_name": "mydb.t1", "columns": T1_COLUMNS, "primary_key": ["a"]}
    shop: dict[str, Any] = {
        "object_name": "shop.all_types",
        "columns": ALL_TYPES_COLUMNS,
        "primary_key": ["id"],
    }
    ins = {"a": 123456789, "b": "test insert statement."}
    upd = {"a": 123456789, "b": "test update statement."}
    row1 = _all_types_row(1, "中文 name")
    return [
        avro.make_record(
            "DDL",
            record_id=1700104,
            source_timestamp=1696984152,
            object_name="mydb",
            after="create table t1(a bigint primary key, b varchar(100))",
            source_position="67008@78",
            tags={"readerThroughoutTime": "1696984152751"},
            born_timestamp=1696984152,
        ),
        avro.make_record(
            "BEGIN",
            record_id=1700381,
            source_timestamp=1696984408,
            source_position="72347@78",
            source_txid="9001",
            born_timestamp=1696984408,
        ),
        avro.make_record(
            "INSERT",
            record_id=1700382,
            source_timestamp=1696984408,
            after=ins,
            source_position="72469@78",
            safe_source_position="72347@78",
            source_txid="9001",
            tags={"readerThroughoutTime": "1696984408050", "thread_id": "163931"},
            born_timestamp=1696984408,
            **t1,
        ),
        avro.make_record(
            "COMMIT",
            record_id=1700383,
            source_timestamp=1696984408,
            source_position="72500@78",
            source_txid="9001",
            born_timestamp=1696984408,
        ),
        # the older schema revision: no bornTimestamp
        avro.make_record(
            "UPDATE",
            record_id=1700504,
            source_timestamp=1696984517,
            before=ins,
            after=upd,
            source_position="75259@78",
            safe_source_position="75103@78",
            tags={"readerThroughoutTime": "1696984517078"},
            born_timestamp=None,
            **t1,
        ),
        avro.make_record(
            "HEARTBEAT",
            record_id=1700510,
            source_timestamp=1696984530,
            source_position="75300@78",
            born_timestamp=None,
        ),
        avro.make_record(
            "DELETE",
            record_id=1700553,
            source_timestamp=1696984560,
            before=upd,
            source_position="76176@78",
            safe_source_position="76054@78",
            tags={"readerThroughoutTime": "1696984560421"},
            born_timestamp=1696984560,
            **t1,
        ),
        avro.make_record(
            "DDL",
            record_id=1700590,
            source_timestamp=1696984990,
            object_name="shop",
            after=(
                "CREATE TABLE all_types (id int PRIMARY KEY, name varchar(32), "
                "legacy char(8) CHARACTER SET latin1, price decimal(26,6), ratio double, "
                "created_at timestamp(6), updated_at datetime(6), birthday date, opens_at time, "
                "local_time datetime, location point, area polygon, photo blob, attrs json, "
                "note varchar(10))"
            ),
            source_position="80000@78",
            born_timestamp=1696984990,
        ),
        avro.make_record(
            "INSERT",
            record_id=1700600,
            source_timestamp=1696985000,
            after=row1,
            source_position="81000@78",
            source_txid="9002",
            born_timestamp=1696985000,
            **shop,
        ),
        # a partial update: only id and ratio provided, every other column NONE
        avro.make_record(
            "UPDATE",
            record_id=1700650,
            source_timestamp=1696985100,
            before={"id": 1, "ratio": 0.1},
            after={"id": 1, "ratio": 2.5},
            source_position="82000@78",
            source_txid="9003",
            born_timestamp=None,
            **shop,
        ),
        # a full-load row: orders before every change of its key whatever its timestamp
        avro.make_record(
            "INIT",
            record_id=1700700,
            source_timestamp=1696985200,
            after=_all_types_row(2, "snapshot row"),
            source_position="0@0",
            born_timestamp=1696985200,
            **shop,
        ),
        avro.make_record(
            "CHECKPOINT",
            record_id=1700710,
            source_timestamp=1696985210,
            source_position="83000@78",
            born_timestamp=1696985210,
        ),
    ]


def dump_lines() -> list[str]:
    """The topic dump lines (JSON, ``value_base64``) of :func:`sample_records`, partition 0."""
    lines = []
    for offset, record in enumerate(sample_records()):
        line = {
            "topic": TOPIC,
            "partition": 0,
            "offset": offset,
            "timestamp": record["sourceTimestamp"] * 1000 + 900,
            "key": None,
            "value_base64": base64.b64encode(avro.encode(record)).decode("ascii"),
        }
        lines.append(json.dumps(line))
    return lines


def dump_text() -> str:
    """The whole dump file text."""
    return "".join(line + "\n" for line in dump_lines())


def main(argv: list[str] | None = None) -> None:
    """Write the sample dump (default ``sample_data/dump/dts.sample.avro.jsonl``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_PATH)
    args = parser.parse_args(argv)
    args.out.write_text(dump_text(), encoding="utf-8")
    print(f"wrote {len(dump_lines())} records to {args.out}")


if __name__ == "__main__":
    main()
