"""Messages whose declared column types cover the typed gold mappings, for the pipeline tests.

Three registered topics (seeds/cdc_topics.csv), database ``typed_cases``:

- ``typed.cases.dataworks``: DataWorks JSON (docs/formats.md 1) table ``dw_types`` with every
  DataWorks type: LONG, BOOLEAN, DOUBLE (as a number and as the string producers send),
  DATE (epoch ms), BYTES (base64), STRING.
- ``typed.cases.canal``: DTS Canal JSON (docs/formats.md 4c) table ``canal_types`` with MySQL types:
  bigint unsigned, decimal(30,6), decimal(65,30) (too wide for Spark), datetime(3), timestamp,
  date, tinyint, bit(1), varchar.
- ``typed.cases.lindorm``: Lindorm Debezium (docs/formats.md 3) SQL table ``lindorm_types`` with a
  Kafka Connect schema: int64, boolean, float64, bytes (base64), int64 Timestamp (epoch ms).

:data:`EXPECTED` holds the typed values each table's generated model must give.
"""

from __future__ import annotations

import base64
import json
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from tests.dbt_models.helpers import DumpLine

DB = "typed_cases"
DATAWORKS_TOPIC = "typed.cases.dataworks"
CANAL_TOPIC = "typed.cases.canal"
LINDORM_TOPIC = "typed.cases.lindorm"
EVENT_MS = 1700000000000

DW_COLUMNS = [
    ("id", "LONG"),
    ("flag", "BOOLEAN"),
    ("ratio", "DOUBLE"),
    ("born", "DATE"),
    ("blob", "BYTES"),
    ("label", "STRING"),
]
DW_ROWS = [
    {
        "id": 1,
        "flag": True,
        "ratio": "1.100000",
        "born": 1590315269123,
        "blob": base64.b64encode(b"\x00\xff\x10").decode(),
        "label": "ünï",
    },
    {"id": 2, "flag": False, "ratio": 2.5, "born": None, "blob": None, "label": ""},
]

CANAL_TYPES = {
    "id": "bigint(20) unsigned",
    "price": "decimal(30,6)",
    "wide": "decimal(65,30)",
    "created": "datetime(3)",
    "updated": "timestamp",
    "day": "date",
    "small": "tinyint(4)",
    "bits": "bit(1)",
    "note": "varchar(10)",
}
CANAL_ROW = {
    "id": "18446744073709551615",
    "price": "12345678901234567890.123456",
    "wide": "1.500000000000000000000000000000",
    "created": "2024-02-29 23:59:59.123",
    "updated": "2024-03-01 00:00:00",
    "day": "2024-02-29",
    "small": "-7",
    "bits": "1",
    "note": "x",
}

LINDORM_FIELDS = [
    {"type": "int64", "optional": False, "field": "id"},
    {"type": "boolean", "optional": True, "field": "active"},
    {"type": "float64", "optional": True, "field": "score"},
    {"type": "bytes", "optional": True, "field": "payload"},
    {
        "type": "int64",
        "optional": True,
        "name": "org.apache.kafka.connect.data.Timestamp",
        "field": "seen_at",
    },
]
LINDORM_ROW = {
    "id": 7,
    "active": True,
    "score": 0.25,
    "payload": base64.b64encode(b"\x01\x02").decode(),
    "seen_at": 1700000000123,
}

# model name -> key value -> column -> typed value (what spark.sql(...).collect() returns;
# timestamps as UTC-aware datetimes are compared through unix_micros in the test)
EXPECTED: dict[str, dict[Any, dict[str, Any]]] = {
    "dataworks__typed_cases__dw_types": {
        1: {
            "flag": True,
            "ratio": 1.1,
            "born": datetime(2020, 5, 24, 10, 14, 29, 123000, tzinfo=UTC),
            "blob": b"\x00\xff\x10",
            "label": "ünï",
        },
        2: {"flag": False, "ratio": 2.5, "born": None, "blob": None, "label": ""},
    },
    "dts_canal__typed_cases__canal_types": {
        Decimal("18446744073709551615"): {
            "price": Decimal("12345678901234567890.123456"),
            "wide": "1.500000000000000000000000000000",
            "created": datetime(2024, 2, 29, 23, 59, 59, 123000),
            "updated": datetime(2024, 3, 1, tzinfo=UTC),
            "day": date(2024, 2, 29),
            "small": -7,
            "bits": "1",
            "note": "x",
        },
    },
    "lindorm__typed_cases__lindorm_types": {
        7: {
            "active": True,
            "score": 0.25,
            "payload": b"\x01\x02",
            "seen_at": datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC),
        },
    },
}
EXPECTED_TYPES = {
    "dataworks__typed_cases__dw_types": {
        "id": "bigint",
        "flag": "boolean",
        "ratio": "double",
        "born": "timestamp",
        "blob": "binary",
        "label": "string",
    },
    "dts_canal__typed_cases__canal_types": {
        "id": "decimal(20,0)",
        "price": "decimal(30,6)",
        "wide": "string",
        "created": "timestamp_ntz",
        "updated": "timestamp",
        "day": "date",
        "small": "tinyint",
        "bits": "string",
        "note": "string",
    },
    "lindorm__typed_cases__lindorm_types": {
        "id": "bigint",
        "active": "boolean",
        "score": "double",
        "payload": "binary",
        "seen_at": "timestamp",
    },
}


def _dataworks(offset: int, row: dict[str, Any]) -> str:
    return json.dumps(
        {
            "schema": {
                "dataColumn": [{"name": n, "type": t} for n, t in DW_COLUMNS],
                "primaryKey": ["id"],
                "source": {"dbType": "MySQL", "dbName": DB, "tableName": "dw_types"},
            },
            "payload": {
                "before": None,
                "after": {"dataColumn": row},
                "sequenceId": str(EVENT_MS * 1000000 + offset),
                "op": "INSERT",
                "timestamp": {"eventTime": EVENT_MS + offset},
                "ddl": None,
            },
            "version": "1.0.0",
        },
        ensure_ascii=False,
    )


def _canal() -> str:
    return json.dumps(
        {
            "data": [CANAL_ROW],
            "database": DB,
            "table": "canal_types",
            "es": EVENT_MS,
            "ts": EVENT_MS + 5,
            "id": 1,
            "isDdl": False,
            "mysqlType": CANAL_TYPES,
            "pkNames": ["id"],
            "sql": "",
            "type": "INSERT",
        }
    )


def _lindorm() -> str:
    return json.dumps(
        {
            "schema": {
                "type": "struct",
                "fields": [
                    {"type": "string", "optional": False, "field": "op"},
                    {
                        "type": "struct",
                        "fields": LINDORM_FIELDS,
                        "optional": True,
                        "field": "before",
                    },
                    {
                        "type": "struct",
                        "fields": LINDORM_FIELDS,
                        "optional": True,
                        "field": "after",
                    },
                ],
                "optional": False,
            },
            "payload": {
                "op": "c",
                "ts_ms": EVENT_MS + 9,
                "before": None,
                "after": LINDORM_ROW,
                "source": {
                    "version": "v2.0",
                    "db": DB,
                    "namespace": None,
                    "table": "lindorm_types",
                    "ts_ms": EVENT_MS,
                },
            },
        }
    )


def records() -> list[dict[str, Any]]:
    """The dump records of the three topics."""
    out = [
        {"topic": DATAWORKS_TOPIC, "partition": 0, "offset": i, "key": None, "value": value}
        for i, value in enumerate(_dataworks(i, row) for i, row in enumerate(DW_ROWS))
    ]
    out.append({"topic": CANAL_TOPIC, "partition": 0, "offset": 0, "key": None, "value": _canal()})
    out.append(
        {"topic": LINDORM_TOPIC, "partition": 0, "offset": 0, "key": None, "value": _lindorm()}
    )
    for record in out:
        record["timestamp"] = EVENT_MS
    return out


def dump_lines() -> list[DumpLine]:
    """The cases as topic dump lines (JSON texts keeping non-ASCII characters as they are)."""
    return [json.dumps(r, ensure_ascii=False) for r in records()]
