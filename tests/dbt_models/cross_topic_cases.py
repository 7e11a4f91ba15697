"""One source table delivered through two topics, for every format (issue 19, "Ties across
topics"): a replication task re-created on a new topic, or a migration between topics.

Per format, topics ``xtopic.<format>.a`` and ``xtopic.<format>.b`` (seeds/cdc_topics.csv)
carry changes of the same row (key 1) of table ``xtopic_items`` of database ``xtopic`` where
the format names one (upper-case for Shareplex and Qlik). Both topics restart at offset 0 of
partition 0, and the change at each offset has the same format ordering fields in both topics
(same sequenceId, es, sourceTimestamp and id, scn, changeSequence...) but different values:
``<side>-insert``, then ``<side>-update``. Only the topic tells the two changes apart, so the
ordering keys must end in it: the changes order (format fields, partition, offset, topic
name), i.e. a-insert, b-insert, a-update, b-update, and the current row is ``b-update``
whatever the delivery order (topic b's records are written first).

DataHub Tuple sends its update as two records (before half, after half); Qlik sends a
metadata message first. Tuple and Lindorm SQL messages carry no key: ``id`` is declared for
both topics in seeds/cdc_declared_keys.csv.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_lakehouse.formats.dts_avro import avro_writer as avro
from cdc_lakehouse.formats.qlik.avro_writer import (
    QlikColumn,
    QlikTable,
    encode_data,
    encode_metadata,
)
from tests.dbt_models import (
    datahub_tuple_cases,
    dataworks_cases,
    debezium_cases,
    lindorm_cases,
    qlik_cases,
)
from tests.dbt_models.dts_canal_cases import canal
from tests.dbt_models.dts_shareplex_cases import msg

SIDES = ("a", "b")
"""The two topics of each format, in name order: b's changes win ties."""
TABLE = "xtopic_items"
DB = "xtopic"
"""The database (schema for Shareplex, task for Qlik) of the table, where the format has one."""
T = 1700000000000  # event time base (ms)


def topic(source_format: str, side: str) -> str:
    return f"xtopic.{source_format}.{side}"


def _dataworks(side: str) -> list[str | bytes]:
    columns = [{"name": "id", "type": "LONG"}, {"name": "name", "type": "STRING"}]
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    messages = [
        dataworks_cases.message("INSERT", "100", table=TABLE, after=inserted, columns=columns),
        dataworks_cases.message(
            "UPDATE_AFTER", "101", table=TABLE, before=inserted, after=updated, columns=columns
        ),
    ]
    database = f'"dbName":"{dataworks_cases.DB}"'
    return [message.replace(database, f'"dbName":"{DB}"') for message in messages]


def _datahub_tuple(side: str) -> list[str | bytes]:
    record = datahub_tuple_cases.record
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    return [
        record("I", "100", datahub_tuple_cases.INSERT, inserted, table=TABLE),
        record("U", "101", datahub_tuple_cases.BEFORE, inserted, table=TABLE, time_ms=T + 1),
        record("U", "101", datahub_tuple_cases.AFTER, updated, table=TABLE, time_ms=T + 1),
    ]


def _lindorm(side: str) -> list[str | bytes]:
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    source = {"db": DB, "namespace": DB}
    return [
        lindorm_cases.message("c", T, after=inserted, table=TABLE, source=source),
        lindorm_cases.message(
            "u", T + 1000, before=inserted, after=updated, table=TABLE, source=source
        ),
    ]


def _dts_avro(side: str) -> list[str | bytes]:
    args: dict[str, Any] = {
        "object_name": f"{DB}.{TABLE}",
        "columns": [("id", 3), ("name", 253)],
        "primary_key": ["id"],
    }
    inserted, updated = {"id": 1, "name": f"{side}-insert"}, {"id": 1, "name": f"{side}-update"}
    return [
        avro.encode(
            avro.make_record("INSERT", record_id=100, source_timestamp=1000, after=inserted, **args)
        ),
        avro.encode(
            avro.make_record(
                "UPDATE",
                record_id=101,
                source_timestamp=1001,
                before=inserted,
                after=updated,
                **args,
            )
        ),
    ]


def _dts_shareplex(side: str) -> list[str | bytes]:
    table = f"{DB}.{TABLE}".upper()
    return [
        msg("ins", 5000, table=table, data={"ID": "1", "NAME": f"{side}-insert"}),
        msg("upd", 5001, table=table, data={"NAME": f"{side}-update"}, key={"ID": "1"}),
    ]


def _dts_canal(side: str) -> list[str | bytes]:
    args: dict[str, Any] = {
        "database": DB,
        "table": TABLE,
        "types": {"id": "bigint(20)", "name": "varchar(32)"},
    }
    return [
        canal("INSERT", [{"id": "1", "name": f"{side}-insert"}], es=T, **args),
        canal(
            "UPDATE",
            [{"id": "1", "name": f"{side}-update"}],
            [{"name": f"{side}-insert"}],
            es=T + 1000,
            **args,
        ),
    ]


_QLIK_COLUMNS = (
    QlikColumn("ID", "INT4", primary_key_position=1, nullable=False),
    QlikColumn("NAME", "STRING", length=20),
)
QLIK_JSON_TABLE = QlikTable(
    "xtopic-server", DB, DB.upper(), TABLE.upper(), 1, _QLIK_COLUMNS, schema_id="XTJ-V1"
)
QLIK_AVRO_TABLE = QlikTable(
    "xtopic-server", DB, DB.upper(), TABLE.upper(), 1, _QLIK_COLUMNS, schema_id="XTA-V1"
)


def _qlik_json(side: str) -> list[str | bytes]:
    inserted, updated = {"ID": "1", "NAME": f"{side}-insert"}, {"ID": "1", "NAME": f"{side}-update"}
    masks = {"change_mask": "03", "column_mask": "03", "schema_id": QLIK_JSON_TABLE.id}
    return [
        qlik_cases.md(QLIK_JSON_TABLE),
        qlik_cases.dt("INSERT", inserted, counter=1, **masks),
        qlik_cases.dt("UPDATE", updated, counter=2, before=inserted, **masks),
    ]


def _qlik_avro(side: str) -> list[str | bytes]:
    inserted, updated = {"ID": 1, "NAME": f"{side}-insert"}, {"ID": 1, "NAME": f"{side}-update"}
    masks = {"change_mask": 0x03, "column_mask": 0x03}
    return [
        encode_metadata(QLIK_AVRO_TABLE),
        encode_data(
            QLIK_AVRO_TABLE,
            "INSERT",
            inserted,
            change_sequence=qlik_cases.seq(1),
            timestamp="2024-02-03T12:00:00",
            **masks,
        ),
        encode_data(
            QLIK_AVRO_TABLE,
            "UPDATE",
            updated,
            before=inserted,
            change_sequence=qlik_cases.seq(2),
            timestamp="2024-02-03T12:00:01",
            **masks,
        ),
    ]


@dataclass(frozen=True)
class Case:
    """One format's table delivered through its two topics.

    Attributes:
        messages: side -> the topic's record values, in offset order (partition 0).
        source_table: the table as the format names it.
        key: the key column; name: the column whose value names the change.
        changes: rows each topic gives silver.change_events (Tuple: its before half too).
        record_key: the Kafka key of every record (Debezium takes the key columns from it).
    """

    messages: Callable[[str], list[str | bytes]]
    source_table: str
    key: str
    name: str
    changes: int
    record_key: str | None = None


CASES: dict[str, Case] = {
    "dataworks_json": Case(_dataworks, TABLE, "id", "name", 2),
    "datahub_blob": Case(_dataworks, TABLE, "id", "name", 2),
    "datahub_tuple": Case(_datahub_tuple, TABLE, "id", "name", 3),
    "lindorm_debezium": Case(_lindorm, TABLE, "id", "name", 2),
    "dts_avro": Case(_dts_avro, TABLE, "id", "name", 2),
    "dts_shareplex_json": Case(_dts_shareplex, TABLE.upper(), "ID", "NAME", 2),
    "dts_canal_json": Case(_dts_canal, TABLE, "id", "name", 2),
    "qlik_json": Case(_qlik_json, TABLE.upper(), "ID", "NAME", 2),
    "qlik_avro": Case(_qlik_avro, TABLE.upper(), "ID", "NAME", 2),
    "debezium_json": Case(
        debezium_cases.cross_topic_messages, TABLE, "id", "name", 2, debezium_cases.CROSS_TOPIC_KEY
    ),
}

EXPECTED_VERSIONS = ["a-insert", "b-insert", "a-update", "b-update"]
"""The row's versions in order: by change (format fields and offset), then topic name."""
EXPECTED_CURRENT = "b-update"


def write_dump(path: Path) -> Path:
    """Write every format's two topics as a topic dump file at ``path`` (topic b's records
    before topic a's); return it."""
    lines = []
    for source_format, case in CASES.items():
        for side in reversed(SIDES):
            for offset, value in enumerate(case.messages(side)):
                record: dict[str, Any] = {
                    "topic": topic(source_format, side),
                    "partition": 0,
                    "offset": offset,
                    "timestamp": T,
                    "key": case.record_key,
                }
                if isinstance(value, bytes):
                    record["value_base64"] = base64.b64encode(value).decode("ascii")
                else:
                    record["value"] = value
                lines.append(record)
    path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    return path
