"""The plain Debezium JSON encoder (``debezium_json``) and its Python baseline decoder (no Spark):
a generated history round-trips through Kafka delivery and the baseline to the oracle's live
rows; every delete is followed by a tombstone; PostgreSQL tables carry schemas and LSNs, MySQL
tables are schemaless with binlog positions; decimal texts are exact (negative, beyond 2**63,
38 digits); every logical type has its value text and declared type."""

from __future__ import annotations

import base64
import datetime as dt
import itertools
import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from cdc_lakehouse import formats
from cdc_lakehouse.decode.json_text import loads as exact_loads
from cdc_lakehouse.decode.json_text import value_text as exact_text
from cdc_lakehouse.formats.debezium import baseline
from cdc_lakehouse.formats.debezium import encoder_debezium_json as encoder
from cdc_lakehouse.tools.bench.baselines.formats import Value
from cdc_lakehouse.tools.simulate.delivery import DeliveryConfig, deliver
from cdc_lakehouse.tools.simulate.encoders._alibaba_values import java_double_text
from cdc_lakehouse.tools.simulate.generate import SimulationConfig, features_used, generate
from cdc_lakehouse.tools.simulate.history import (
    Column,
    Heartbeat,
    History,
    Row,
    RowChange,
    TableSpec,
    Transaction,
    Truncate,
)
from cdc_lakehouse.tools.simulate.messages import Message
from cdc_lakehouse.tools.simulate.oracle import current_state
from cdc_lakehouse.tools.simulate.schema_evolution import generate_schema_evolution

PREFIX = "sim"

# every logical type; "a_kinds" sorts first: PostgreSQL, "b_kinds": MySQL
_COLUMNS = (
    Column("id", "int", nullable=False),
    Column("big", "bigint"),
    Column("amount", "decimal", precision=38, scale=10),
    Column("price", "decimal", precision=12, scale=2),
    Column("ratio", "double"),
    Column("flag", "boolean"),
    Column("name", "string"),
    Column("blob", "binary"),
    Column("day", "date"),
    Column("at", "timestamp"),
)
PG = TableSpec("shop", None, "a_kinds", _COLUMNS, ("id",))
MY = TableSpec("shop", None, "b_kinds", _COLUMNS, ("id",))

ROW: Row = {
    "id": 1,
    "big": -(2**63),
    "amount": Decimal("-12345678901234567890123456.7890123456"),
    "price": Decimal("-12.50"),
    "ratio": 1e21,
    "flag": True,
    "name": 'say "hi"\n日本 \U0001f600',
    "blob": b"\xff\xfe\x00",
    "day": dt.date(1969, 12, 31),
    "at": dt.datetime(1950, 6, 15, 12, 34, 56, 789_000),
}
TEXTS = {
    "id": "1",
    "big": "-9223372036854775808",
    "amount": "-12345678901234567890123456.7890123456",
    "price": "-12.50",
    "ratio": "1.0E21",
    "flag": "true",
    "name": 'say "hi"\n日本 \U0001f600',
    "blob": "//4A",
    "day": "-1",
    "at": "-616850703211000",
}
TYPES = {
    "id": "int32",
    "big": "int64",
    "amount": "bytes (org.apache.kafka.connect.data.Decimal)",
    "price": "bytes (org.apache.kafka.connect.data.Decimal)",
    "ratio": "double",
    "flag": "boolean",
    "name": "string",
    "blob": "bytes",
    "day": "int32 (io.debezium.time.Date)",
    "at": "int64 (io.debezium.time.MicroTimestamp)",
}
NULLS: Row = {name: None for name in ROW} | {"id": 2}

PG_SOURCE_FIELDS = [
    "version",
    "connector",
    "name",
    "ts_ms",
    "snapshot",
    "db",
    "sequence",
    "ts_us",
    "ts_ns",
    "schema",
    "table",
    "txId",
    "lsn",
    "xmin",
]
ENVELOPE_FIELDS = ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
MYSQL_SOURCE_FIELDS = [
    *PG_SOURCE_FIELDS[:9],
    "table",
    "server_id",
    "gtid",
    "file",
    "pos",
    "row",
    "thread",
    "query",
]


def txn(sequence: int, *events: RowChange | Truncate, snapshot: bool = False) -> Transaction:
    return Transaction(f"tx{sequence}", sequence, 1_700_000_000_000 + sequence, events, snapshot)


def hand_history() -> History:
    """Both tables: snapshot, insert, update, key update, delete, truncate, heartbeat."""
    items: list[Transaction | Heartbeat] = []
    for table in (PG, MY):
        seq = len(items) + 1
        items.append(txn(seq, RowChange(table, "snapshot", None, NULLS), snapshot=True))
    moved = ROW | {"id": 3}
    for table in (PG, MY):
        n = len(items) + 1
        updated = ROW | {"ratio": 0.5}
        items += [
            txn(n, RowChange(table, "insert", None, ROW)),
            txn(n + 1, RowChange(table, "update", ROW, updated)),
            txn(n + 2, RowChange(table, "update", updated, moved)),
            Heartbeat(n + 3, 1_700_000_000_000 + n + 3),
            txn(n + 4, RowChange(table, "delete", moved, None)),
            txn(n + 5, Truncate(table)),
        ]
    return History(tables=(MY, PG), items=tuple(items))


def values_of(messages: Iterable[Message], partitions: int = 1) -> list[Value]:
    records = deliver(list(messages), DeliveryConfig(partitions=partitions)).records
    return [(r.topic, r.partition, r.offset, r.value) for r in records]


def payload_of(message: Message) -> dict[str, Any]:
    assert message.value is not None
    value = json.loads(message.value)
    return value["payload"] if "schema" in value else value


def text(value: Any) -> str | None:
    """The text of an orjson-decoded image value (doubles as Java prints them)."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_text(value)
    return str(value)


# --------------------------------------------------------------------------- round trip


def _identity(table: TableSpec, texts: dict[str, str | None]) -> tuple[str | None, ...]:
    return tuple(texts[name] for name in table.key_columns or table.column_names)


def _retractions(values: list[Value], keyless: set[str]) -> list[Value]:
    """An update of a keyless row removes its old identity (every column): its ``u`` message
    recast as a ``d`` of the before image, at the same position."""
    out = []
    for topic, partition, offset, raw in values:
        if raw is None:
            continue
        message = json.loads(raw)
        payload = message["payload"] if "schema" in message else message
        if payload["op"] == "u" and payload["source"]["table"] in keyless:
            payload["op"], payload["after"] = "d", None
            out.append((topic, partition, offset, json.dumps(message).encode()))
    return out


def test_round_trip_latest_per_key_equals_the_oracle() -> None:
    config = SimulationConfig(seed=52, changes=500, snapshot_rows=15, features=encoder.FEATURES)
    history = generate(config)
    assert features_used(history) >= encoder.FEATURES
    messages = encoder.encode(history, PREFIX)
    delivery = deliver(messages, DeliveryConfig(partitions=3, duplicate_rate=0.05, seed=5))
    values = [(r.topic, r.partition, r.offset, r.value) for r in delivery.records]
    specs = {table.name: table for table in history.tables}
    keyless = {table.name for table in history.tables if not table.key_columns}

    latest: dict[tuple[str, tuple[str | None, ...]], tuple[tuple[Any, ...], bool, dict]] = {}
    decoded = [*baseline.changes(values), *baseline.changes(_retractions(values, keyless))]
    for table, order, deleted, image in decoded:
        texts = {name: text(value) for name, value in image.items()}
        identity = (table, _identity(specs[table], texts))
        if identity not in latest or latest[identity][0] < order:
            latest[identity] = (order, deleted, texts)
    got: dict[str, dict[tuple[str | None, ...], dict]] = {name: {} for name in specs}
    for (table, key), (_order, deleted, texts) in latest.items():
        if not deleted:
            got[table][key] = texts

    expected: dict[str, dict[tuple[str | None, ...], dict]] = {}
    for name, rows in current_state(history).items():
        spec = specs[name]
        rendered = [
            {c.name: encoder.value_text(c, row[c.name]) for c in spec.columns} for row in rows
        ]
        expected[name] = {_identity(spec, texts): texts for texts in rendered}
    assert all(expected.values()), "every table has live rows"
    assert got == expected
    # the history used both connectors, snapshot marks, key updates and a binlog rotation
    connectors = {payload_of(m)["source"]["connector"] for m in messages if m.value}
    assert connectors == {"postgresql", "mysql"}
    files = {payload_of(m)["source"].get("file") for m in messages if m.value} - {None}
    assert len(files) >= 2


# --------------------------------------------------------------------------- tombstones


def test_a_tombstone_follows_every_delete() -> None:
    history = generate(SimulationConfig(seed=9, changes=300, features=encoder.FEATURES))
    messages = encoder.encode(history, PREFIX)
    deletes = 0
    for index, message in enumerate(messages):
        if message.value is None:
            previous = messages[index - 1]
            assert previous.value is not None and payload_of(previous)["op"] == "d"
            continue
        if payload_of(message)["op"] == "d":
            deletes += 1
            tombstone = messages[index + 1]
            assert tombstone.value is None
            assert (tombstone.topic, tombstone.key) == (message.topic, message.key)
    assert deletes > 10
    assert sum(m.value is None for m in messages) == deletes
    # the baseline skips them
    values = [(m.topic, 0, i, m.value) for i, m in enumerate(messages)]
    assert len(list(baseline.changes(values))) == len(messages) - deletes


def test_a_key_update_is_delete_tombstone_create() -> None:
    messages = encoder.encode(hand_history(), PREFIX)
    for table, topic in ((PG, "sim.public.a_kinds"), (MY, "sim.shop.b_kinds")):
        ops = [(payload_of(m)["op"] if m.value else None) for m in messages if m.topic == topic]
        assert ops == ["r", "c", "u", "d", None, "c", "d", None] + (["t"] if table is PG else [])
        moving = [m for m in messages if m.topic == topic][3:6]
        assert moving[0].key == moving[1].key != moving[2].key
        assert payload_of(moving[0])["before"]["id"] == 1
        assert payload_of(moving[2])["after"]["id"] == 3


# --------------------------------------------------------------------------- connectors


def test_postgresql_tables_carry_schemas_and_mysql_tables_do_not() -> None:
    history = hand_history()
    assert encoder.connector(history, "a_kinds") == "postgresql"
    assert encoder.connector(history, "b_kinds") == "mysql"
    assert encoder.topics(history, PREFIX) == ["sim.shop.b_kinds", "sim.public.a_kinds"]
    messages = encoder.encode(history, PREFIX)
    pg = next(m for m in messages if m.topic == "sim.public.a_kinds" and m.value)
    my = next(m for m in messages if m.topic == "sim.shop.b_kinds" and m.value)
    assert pg.value is not None and my.value is not None

    value = json.loads(pg.value)
    assert list(value) == ["schema", "payload"]
    schema = value["schema"]
    assert schema["name"] == "sim.public.a_kinds.Envelope"
    fields = {f["field"]: f for f in schema["fields"]}
    assert list(fields) == ENVELOPE_FIELDS
    after = fields["after"]["fields"]
    declared = {f["field"]: f["type"] + (f" ({f['name']})" if "name" in f else "") for f in after}
    assert declared == TYPES
    assert encoder.column_types(history, PG) == TYPES
    assert encoder.column_types(history, MY) is None
    assert [f["field"] for f in fields["source"]["fields"]] == PG_SOURCE_FIELDS
    price = next(f for f in after if f["field"] == "price")
    assert price["parameters"] == {"scale": "2", "connect.decimal.precision": "12"}
    payload = value["payload"]
    assert list(payload) == list(fields)
    assert list(payload["source"]) == PG_SOURCE_FIELDS
    source = payload["source"]
    assert (source["connector"], source["name"], source["db"], source["schema"]) == (
        "postgresql",
        "sim",
        "shop",
        "public",
    )
    assert (source["table"], source["snapshot"], source["xmin"]) == ("a_kinds", "last", None)
    assert isinstance(source["lsn"], int) and isinstance(source["txId"], int)
    assert json.loads(source["sequence"])[1] == str(source["lsn"])
    key = json.loads(pg.key or b"")
    assert key["payload"] == {"id": 2}
    assert key["schema"] == {
        "type": "struct",
        "fields": [{"type": "int32", "optional": False, "field": "id"}],
        "optional": False,
        "name": "sim.public.a_kinds.Key",
    }

    value = json.loads(my.value)
    assert "schema" not in value and value["op"] == "r"
    assert list(value) == ENVELOPE_FIELDS
    source = value["source"]
    assert list(source) == MYSQL_SOURCE_FIELDS
    assert (source["connector"], source["db"], source["table"]) == ("mysql", "shop", "b_kinds")
    assert (source["server_id"], source["sequence"], source["gtid"]) == (1, None, None)
    assert source["file"] == "mysql-bin.000003" and isinstance(source["pos"], int)
    assert json.loads(my.key or b"") == {"id": 2}
    # processing time after the commit time; the Kafka timestamp is the processing time
    assert value["ts_ms"] == source["ts_ms"] + encoder.PROCESSING_DELAY_MS == my.timestamp_ms
    assert value["ts_us"] == value["ts_ms"] * 1000


def test_truncates_are_rendered_for_postgresql_tables_only() -> None:
    messages = encoder.encode(hand_history(), PREFIX)
    truncates = [m for m in messages if m.value and payload_of(m)["op"] == "t"]
    assert [m.topic for m in truncates] == ["sim.public.a_kinds"]
    payload = payload_of(truncates[0])
    assert (payload["before"], payload["after"], truncates[0].key) == (None, None, None)
    assert payload["source"]["table"] == "a_kinds"
    values = [(m.topic, 0, i, m.value) for i, m in enumerate(messages)]
    assert all(order[0] > 0 for _t, order, _d, _r in baseline.changes(values))
    assert len(list(baseline.changes(values))) == 12  # r c u d c d per table, no t


def test_keyless_tables_have_no_key_and_updates_stay_updates() -> None:
    history = generate(SimulationConfig(seed=4, changes=300, features=encoder.FEATURES))
    messages = encoder.encode(history, PREFIX)
    audit = [m for m in messages if m.topic == "sim.public.audit_log"]
    assert audit and all(m.key is None for m in audit)
    ops = {payload_of(m)["op"] for m in audit if m.value}
    assert "u" in ops
    assert all(
        payload_of(m)["before"] is not None for m in audit if m.value and payload_of(m)["op"] == "u"
    )


# --------------------------------------------------------------------------- ordering


def test_positions_order_every_change_of_a_row() -> None:
    history = generate(
        SimulationConfig(seed=52, changes=600, snapshot_rows=10, features=encoder.FEATURES)
    )
    messages = [m for m in encoder.encode(history, PREFIX) if m.value]
    pg = [payload_of(m) for m in messages if "public" in m.topic]
    my = [payload_of(m) for m in messages if ".shop." in m.topic]

    snapshot = [p["source"] for p in pg if p["op"] == "r"]
    assert len({s["lsn"] for s in snapshot}) == 1  # the snapshot's LSN
    assert [s["snapshot"] for s in snapshot] == ["true"] * (len(snapshot) - 1) + ["last"]
    streamed = [p["source"]["lsn"] for p in pg if p["op"] != "r"]
    assert snapshot[0]["lsn"] < streamed[0]
    assert streamed == sorted(streamed)  # a key update's d and c share their LSN
    assert len(set(streamed)) >= len(streamed) - sum(p["op"] == "d" for p in pg)

    def binlog(p: dict[str, Any]) -> tuple[int, int, int]:
        source = p["source"]
        return int(source["file"].rpartition(".")[2]), source["pos"], source["row"]

    positions = [binlog(p) for p in my]
    assert positions == sorted(positions)
    assert [p["source"]["snapshot"] for p in my if p["op"] == "r"][-1] == "last"
    files = [position[0] for position in positions]
    assert files[0] == 3 and files[-1] >= 4
    # the position restarts in the next file: only the file number orders across a rotation
    rotation = files.index(4)
    assert positions[rotation][1] < positions[rotation - 1][1]
    # adjacent changes of one table and op form one rows event: same pos, rows 0, 1, ...
    assert any(position[2] > 0 for position in positions)
    for before, after in itertools.pairwise(positions):
        if after[2] > 0:
            assert after[:2] == before[:2] and after[2] in (before[2], before[2] + 1)

    # the baseline's ordering tuple is (major, minor, row, partition, offset, topic)
    values = [(m.topic, 2, i, m.value) for i, m in enumerate(messages)]
    orders = [order for _t, order, _d, _r in baseline.changes(values)]
    pg_orders = [o for o in orders if "public" in o[5]]
    assert [o[0] for o in pg_orders] == [p["source"]["lsn"] for p in pg if p["op"] != "t"]
    assert {o[1:3] for o in pg_orders} == {(0, 0)}
    assert [o[:3] for o in orders if ".shop." in o[5]] == positions
    assert all(o[3:5] == (2, i) for i, o in enumerate(orders))
    kinds = formats.get("debezium_json").ordering_kinds()
    arrow = {"int": pa.int64(), "text": pa.string()}
    array = [pa.array([o[i] for o in orders], arrow[kind]) for i, kind in enumerate(kinds)]
    assert len(array) == len(orders[0]) == 6


# --------------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("precision", "scale", "value", "expected", "base64_"),
    [
        (12, 2, "-12.50", "-12.50", "+x4="),
        (12, 2, "0.00", "0.00", "AA=="),
        (12, 2, "-0.01", "-0.01", "/w=="),
        (12, 2, "1.28", "1.28", "AIA="),
        (12, 2, "-1.28", "-1.28", "gA=="),
        (30, 0, str(2**63), "9223372036854775808", "AIAAAAAAAAAA"),
        (30, 0, str(-(2**63) - 1), "-9223372036854775809", "/3//////////"),
        (38, 10, "9999999999999999999999999999.9999999999", None, "SztMqFqGxHoJiiI//////w=="),
        (38, 10, "-9999999999999999999999999999.9999999999", None, "tMSzV6V5O4X2dd3AAAAAAQ=="),
        (38, 10, "0E-10", "0.0000000000", "AA=="),
        (5, 3, "0.001", "0.001", "AQ=="),
    ],
)
def test_decimal_texts_are_exact(
    precision: int, scale: int, value: str, expected: str | None, base64_: str
) -> None:
    column = Column("d", "decimal", precision=precision, scale=scale)
    number = Decimal(value)
    text_ = expected or value
    assert encoder.value_text(column, number) == text_
    assert encoder.json_value(column, number, "postgresql") == base64_
    assert encoder.json_value(column, number, "mysql") == text_  # decimal.handling.mode=string
    assert baseline.decimal_text(base64_, scale) == text_
    unscaled = int.from_bytes(base64.b64decode(base64_), "big", signed=True)
    assert Decimal(f"{unscaled}E-{scale}") == number


def _exact_image(message: Message, name: str) -> dict[str, str | None]:
    """An image as the project's decoder reads it: exact number texts, schema decimals decoded."""
    assert message.value is not None
    value = exact_loads(message.value)
    schema = value.get("schema") if "payload" in value else None
    payload = value["payload"] if schema is not None else value
    scales = baseline.decimal_scales(schema, name)
    return {
        column: (
            baseline.decimal_text(raw, scales[column])
            if column in scales and raw is not None
            else exact_text(raw)
        )
        for column, raw in payload[name].items()
    }


def test_value_text_and_source_type_of_every_type() -> None:
    assert {c.name: encoder.value_text(c, ROW[c.name]) for c in _COLUMNS} == TEXTS
    assert {c.name: encoder.source_type(c) for c in _COLUMNS} == TYPES
    assert all(encoder.value_text(c, None) is None for c in _COLUMNS)
    messages = encoder.encode(hand_history(), PREFIX)
    for topic in ("sim.public.a_kinds", "sim.shop.b_kinds"):
        inserted = [m for m in messages if m.topic == topic and m.value][1]
        assert payload_of(inserted)["op"] == "c"
        assert _exact_image(inserted, "after") == TEXTS
        snapshot = next(m for m in messages if m.topic == topic and m.value)
        assert _exact_image(snapshot, "after") == {n: v for n, v in NULLS.items()} | {"id": "2"}
        values = [(topic, 0, 0, inserted.value)]
        image = next(baseline.changes(values))[3]
        assert {name: text(value) for name, value in image.items()} == TEXTS


def test_generated_values_of_every_type_decode_to_their_value_text() -> None:
    history = generate(SimulationConfig(seed=11, changes=300, features=encoder.FEATURES))
    messages = encoder.encode(history, PREFIX)
    changes = [c for c in history.row_changes if c.after is not None]
    rendered = [m for m in messages if m.value and payload_of(m)["after"] is not None]
    assert len(rendered) == len(changes)
    kinds: set[str] = set()
    for change, message in zip(changes, rendered, strict=True):
        expected = {
            c.name: encoder.value_text(c, change.after[c.name]) for c in change.table.columns
        }
        assert _exact_image(message, "after") == expected
        kinds |= {c.type for c in change.table.columns}
    assert kinds == {
        "int",
        "bigint",
        "decimal",
        "double",
        "boolean",
        "string",
        "binary",
        "date",
        "timestamp",
    }


def test_schema_changes_give_each_message_the_schema_of_its_table_version() -> None:
    history = generate_schema_evolution(seed=3, rows=24)
    messages = [m for m in encoder.encode(history, PREFIX) if m.value]
    assert {m.topic for m in messages} == {"sim.public.products"}  # one table: PostgreSQL
    changes = [c for c in history.row_changes if c.after is not None]
    rendered = [m for m in messages if payload_of(m)["after"] is not None]
    assert len(rendered) == len(changes)
    versions = set()
    for change, message in zip(changes, rendered, strict=True):
        assert message.value is not None
        schema = json.loads(message.value)["schema"]
        after = next(f for f in schema["fields"] if f["field"] == "after")
        declared = tuple((f["field"], f["type"]) for f in after["fields"])
        assert declared == tuple(
            (c.name, encoder.source_type(c).split(" ")[0]) for c in change.table.columns
        )
        versions.add(declared)  # the widened column changes its type: int32 -> int64
        # a column the row lacks (written before an ADD COLUMN) is NULL
        expected = {
            c.name: encoder.value_text(c, change.after.get(c.name)) for c in change.table.columns
        }
        assert _exact_image(message, "after") == expected
    assert len(versions) == len(history.table_versions("products"))
    assert any(payload_of(m)["op"] == "t" for m in messages)
