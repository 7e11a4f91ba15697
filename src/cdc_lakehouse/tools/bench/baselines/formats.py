"""Where each registry format keeps what a latest-per-key baseline needs, and the Python
decoders that the floor (:mod:`.python_floor`) and the two Avro paths of DuckDB and PySpark
share.

Facts per format (docs/formats.md; the project's decoders in the format plug-ins,
``src/cdc_lakehouse/formats/<folder>/``). The ordering key of a change is the tuple of its
format plug-in's ordering rule (``Format.ordering_tuple``, the rule the pipeline's
``ordering_key`` follows too): the decoders below give its parts by name; a tuple compares
part by part, so a duplicate re-delivered later (same key up to its higher
offset) never beats a newer change. Every ordering key ends in the Kafka topic, as the
pipeline's do (macro ``kafka_ordering_tail``): changes with equal format fields, partition
and offset (one table through two topics) order by topic name, and two different changes
never tie:

- ``dataworks_json``, ``datahub_blob`` (docs/formats.md 1, 2): table ``schema.source.tableName``,
  op ``payload.op``; row ``payload.after.dataColumn`` (INSERT, UPDATE_AFTER) or
  ``payload.before.dataColumn`` (DELETE, and the UPDATE_BEFOR(E) half of a split update);
  ordering key (``sequenceId`` as a number, 0 for a before half else 1, partition, offset,
  topic).
- ``datahub_tuple`` (docs/formats.md 2): table ``_source_table_`` (else the topic's last part), op
  ``_operation_type_`` I / U / D; row = the flat record without its ``_..._`` meta columns;
  ordering key (``_sequence_id_`` as a number, 0 when ``_before_image_`` = Y else 1,
  partition, offset, topic).
- ``lindorm_debezium`` (docs/formats.md 3): table ``payload.source.table``, op ``payload.op``; row
  ``payload.after`` (c, u, r) or ``payload.before`` (d); ordering key (``source.ts_ms``,
  ``payload.ts_ms``, partition, offset, topic).
- ``dts_avro`` (docs/formats.md 4a): table = last part of ``objectName``, op ``operation``; row =
  ``beforeImages`` overlaid by ``afterImages`` (positional with ``fields``; EmptyObject NONE =
  not provided); ordering key (0 for INIT / FILL else 1, ``sourceTimestamp``, ``id``,
  partition, offset, topic).
- ``dts_shareplex_json`` (docs/formats.md 4b): table = ``meta.table`` after the dot, op ``meta.op``;
  row ``data`` (ins), ``key`` overlaid by ``data`` (upd: ``data`` holds only the changed
  columns), ``data`` = the key (del); ordering key (``scn`` as a number, ``seq``, partition,
  offset, topic).
- ``dts_canal_json`` (docs/formats.md 4c): table ``table``, op ``type``; each element of ``data``
  is one change (the row after INSERT / UPDATE, the deleted row of DELETE); ordering key
  (``es``, 0 for INIT else 1, partition, offset, index in ``data``, topic).
- ``qlik_json``, ``qlik_avro`` (docs/formats.md 5): table = ``lineage.table`` of the MD message
  whose ``schemaId`` the DT message's ``messageSchemaId`` names, op ``headers.operation``;
  row ``message.data`` (a DELETE's too); ordering key (1 for REFRESH else 2,
  ``changeSequence`` as text, partition, offset, topic).

Keys: every baseline takes the tables' key columns as given (:data:`BENCH_KEYS`, the keys of
the simulator's ``shop`` tables), as a hand-written job for known tables would; the pipeline
reads them from the messages where the format carries them and from
``seeds/cdc_declared_keys.csv`` where it does not (DataHub Tuple, Lindorm SQL tables).

What the baselines do not handle, because the benchmark workload has none of it
(:mod:`cdc_lakehouse.tools.bench.workload`): key updates (the before image of an update is not
turned into a delete of the old key), partial updates (a column that a message does not
provide is not carried over from the previous change of the row - DTS Avro MINIMAL images
and Shareplex ``upd`` do leave the unchanged columns out, but the workload's updates change
every non-key column, so the before key plus the after image is the whole row), truncates,
DDL / schema versions and Qlik ``columnMask``. Snapshot ranks are kept because they cost
nothing.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeAlias

import fastavro
import orjson
import pyarrow as pa

from cdc_lakehouse import formats as manifest
from cdc_lakehouse.formats.debezium import baseline as debezium_baseline
from cdc_lakehouse.formats.dts_avro.avro_schema import PARSED_NEW, PARSED_OLD
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.formats.qlik.avro_schema import ENVELOPE_SCHEMA, METADATA_SCHEMA
from cdc_lakehouse.tools.simulate.generate import default_tables

BENCH_KEYS: Mapping[str, tuple[str, ...]] = {
    table.name.lower(): table.key_columns for table in default_tables() if table.key_columns
}
"""Key columns per table (lower-case name) of the benchmark workload:
``customers: (customer_id,)``, ``orders: (order_id, line_no)``."""

JSON_FORMATS = manifest.with_value_encoding("json")
AVRO_FORMATS = manifest.with_value_encoding("avro")
FORMATS = JSON_FORMATS | AVRO_FORMATS
"""Registry formats by how their Kafka values are encoded (the format manifest)."""

# Each format's ordering tuple, in its plug-in's order (the rule is written once, in
# src/cdc_lakehouse/formats/<folder>/__init__.py): a decoder gives the parts by name.
_DATAWORKS = manifest.get("dataworks_json").ordering_tuple
_TUPLE = manifest.get("datahub_tuple").ordering_tuple
_LINDORM = manifest.get("lindorm_debezium").ordering_tuple
_SHAREPLEX = manifest.get("dts_shareplex_json").ordering_tuple
_CANAL = manifest.get("dts_canal_json").ordering_tuple
_QLIK = manifest.get("qlik_json").ordering_tuple
_DTS_AVRO = manifest.get("dts_avro").ordering_tuple

Decoder: TypeAlias = Callable[[Iterable[Value]], Iterator[Change]]


def text(value: Any) -> str | None:
    """The text of a decoded value: strings as they are, integers in decimal, booleans
    ``true`` / ``false``, doubles as Python ``repr``, bytes as upper-case hex (Qlik Avro
    BYTES, docs/formats.md 5), None for NULL. Only int and string texts are compared."""
    if value is None or type(value) is str:
        return value
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:
        return str(value)
    if type(value) is float:
        return repr(value)
    if type(value) is bytes:
        return value.hex().upper()
    return str(value)


def check_format(format_: str) -> None:
    """Raises ValueError unless ``format_`` is one of the nine registry formats."""
    if format_ not in FORMATS:
        raise ValueError(f"unknown format {format_!r}; choose from {sorted(FORMATS)}")


# --------------------------------------------------------------------------- JSON formats


def dataworks_changes(values: Iterable[Value]) -> Iterator[Change]:
    """DataWorks / DataHub Blob envelopes (docs/formats.md 1 and 2): one change per DML message;
    a split update's UPDATE_BEFOR(E) half ranks below its UPDATE_AFTER half."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        message = loads(raw)
        payload = message["payload"]
        op = payload["op"]
        if op == "INSERT" or op == "UPDATE_AFTER":
            image, rank, deleted = payload["after"], 1, False
        elif op == "DELETE":
            image, rank, deleted = payload["before"], 1, True
        elif op == "UPDATE_BEFOR" or op == "UPDATE_BEFORE":
            image, rank, deleted = payload["before"], 0, False
        else:
            continue  # transaction markers, DDL, heartbeats
        table = message["schema"]["source"]["tableName"].lower()
        order = _DATAWORKS(
            {
                "sequence_id": int(payload["sequenceId"]),
                "image_rank": rank,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield table, order, deleted, image["dataColumn"]


TUPLE_META = (
    "_sequence_id_",
    "_operation_type_",
    "_excute_time_",
    "_execute_time_",
    "_source_table_",
    "_before_image_",
    "_after_image_",
)
"""Meta columns of a DataHub Tuple record (docs/formats.md 2; both spellings of the time)."""


def datahub_tuple_changes(values: Iterable[Value]) -> Iterator[Change]:
    """DataHub Tuple records (docs/formats.md 2): the record is the row plus meta columns; an
    update is two records sharing ``_sequence_id_``, the before half (Y / N) ranking first."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        row = loads(raw)
        sequence = row.pop("_sequence_id_")
        op = row.pop("_operation_type_")
        before = row.pop("_before_image_", "N")
        table = row.pop("_source_table_", None) or topic.rpartition(".")[2]
        row.pop("_after_image_", None)
        row.pop("_excute_time_", None)
        row.pop("_execute_time_", None)
        rank = 0 if before == "Y" else 1
        order = _TUPLE(
            {
                "sequence_id": int(sequence),
                "image_rank": rank,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield table.lower(), order, op == "D", row


def lindorm_changes(values: Iterable[Value]) -> Iterator[Change]:
    """Lindorm Debezium V2.0 (docs/formats.md 3). A NULL column is absent from the image (Lindorm
    keeps no cell for it); the row then simply lacks the column."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        payload = loads(raw)["payload"]
        op = payload["op"]
        if op == "d":
            image, deleted = payload["before"], True
        elif op in ("c", "u", "r"):
            image, deleted = payload["after"], False
        else:
            continue
        source = payload["source"]
        order = _LINDORM(
            {
                "source_ts_ms": source["ts_ms"],
                "payload_ts_ms": payload.get("ts_ms") or 0,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield source["table"].lower(), order, deleted, image


def shareplex_changes(values: Iterable[Value]) -> Iterator[Change]:
    """DTS Shareplex JSON (docs/formats.md 4b): ``ins`` / ``upd`` / ``del`` (and the documented
    INSERT / UPDATE / DELETE spellings); ``upd`` carries the key in ``key`` and only the
    changed columns in ``data``."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        message = loads(raw)
        meta = message["meta"]
        op = meta["op"]
        if op == "upd" or op == "UPDATE" or op == "UPDATE AFTER":
            row, deleted = {**message.get("key", {}), **message["data"]}, False
        elif op == "ins" or op == "INSERT":
            row, deleted = message["data"], False
        elif op == "del" or op == "DELETE":
            row, deleted = message["data"], True
        else:
            continue  # TRUNCATE, DROP COLUMN
        table = meta["table"].rpartition(".")[2].lower()
        order = _SHAREPLEX(
            {
                "scn": int(meta["scn"]),
                "seq": meta.get("seq") or 0,
                "image_rank": 1,  # the workload's updates are one UPDATE message (no BEFORE half)
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield table, order, deleted, row


_CANAL_DML = {"INSERT": (1, False), "UPDATE": (1, False), "DELETE": (1, True), "INIT": (0, False)}


def canal_changes(values: Iterable[Value]) -> Iterator[Change]:
    """DTS Canal JSON, open-source meaning (docs/formats.md 4c): every element of ``data`` is its
    own change (the row after an INSERT / UPDATE, the deleted row of a DELETE)."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        message = loads(raw)
        kind = _CANAL_DML.get(message.get("type"))
        if kind is None or message.get("isDdl"):
            continue
        rank, deleted = kind
        table = message["table"].lower()
        es = message["es"]
        for index, row in enumerate(message["data"]):
            order = _CANAL(
                {
                    "es_ms": es,
                    "snapshot_rank": rank,
                    "partition": partition,
                    "offset": offset,
                    "row_index": index,
                    "topic": topic,
                }
            )
            yield table, order, deleted, row


def _qlik_change(
    table: str, message: dict[str, Any], topic: str, partition: int, offset: int
) -> Change | None:
    headers = message["headers"]
    operation = headers["operation"]
    if operation == "REFRESH":
        rank, sequence = 1, ""
    elif operation in ("INSERT", "UPDATE", "DELETE"):
        rank, sequence = 2, headers["changeSequence"]
    else:
        return None
    order = _QLIK(
        {
            "load_rank": rank,
            "change_sequence": sequence,
            "partition": partition,
            "offset": offset,
            "topic": topic,
        }
    )
    return table, order, operation == "DELETE", message["data"]


def qlik_json_changes(values: Iterable[Value]) -> Iterator[Change]:
    """Qlik JSON ``atMSG`` envelopes (docs/formats.md 5): MD messages map ``schemaId`` -> table;
    a DT message names its table by ``messageSchemaId``. MD messages have no Kafka key, so
    they may sit in another partition than the DT messages: a DT whose MD comes later in the
    input waits until the end."""
    loads = orjson.loads
    tables: dict[str, str] = {}
    waiting: list[tuple[str, int, int, dict[str, Any]]] = []
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        envelope = loads(raw)
        kind = envelope.get("type")
        message = envelope["message"]
        if kind == "MD":
            tables[message["schemaId"]] = message["lineage"]["table"].lower()
            continue
        if kind != "DT":
            continue
        table = tables.get(envelope.get("messageSchemaId") or "")
        if table is None:
            waiting.append((topic, partition, offset, envelope))
            continue
        change = _qlik_change(table, message, topic, partition, offset)
        if change is not None:
            yield change
    for topic, partition, offset, envelope in waiting:
        schema_id = envelope.get("messageSchemaId") or ""
        if schema_id not in tables:
            raise ValueError(f"qlik DT message at {partition}/{offset}: no MD for {schema_id!r}")
        change = _qlik_change(tables[schema_id], envelope["message"], topic, partition, offset)
        if change is not None:
            yield change


# --------------------------------------------------------------------------- Avro formats

_DTS_DML = {"INSERT": (1, False), "UPDATE": (1, False), "DELETE": (1, True)}
_DTS_DML.update({"INIT": (0, False), "FILL": (0, False)})
_UTF8 = frozenset({"utf8", "utf8mb3", "utf8mb4", "utf-8"})


def _dts_text(name: str, value: dict[str, Any]) -> str | None:
    """Text of one DTS Avro image element (``name``: the value type's full name), as
    :mod:`cdc_lakehouse.formats.dts_avro.decoder` renders it for the compared types (Integer value,
    Character decoded with its charset); others approximately."""
    kind = name[name.rfind(".") + 1 :]
    if kind == "Integer" or kind == "Decimal" or kind == "TextObject" or kind == "TextGeometry":
        return value["value"]
    if kind == "Character":
        raw = value["value"]
        charset = value["charset"].lower()
        try:
            return raw.decode("utf-8" if charset in _UTF8 else charset)
        except (LookupError, UnicodeDecodeError):
            return base64.b64encode(raw).decode("ascii")
    if kind == "Float":
        return repr(value["value"])
    if kind == "BinaryObject" or kind == "BinaryGeometry":
        return base64.b64encode(value["value"]).decode("ascii")
    if kind == "DateTime":
        parts = value
        date = f"{parts['year']:04d}-{parts['month']:02d}-{parts['day']:02d}"
        if parts["hour"] is None:
            return date
        time = f"{parts['hour']:02d}:{parts['minute']:02d}:{parts['second']:02d}"
        micros = parts["millis"]
        return f"{date} {time}" + (f".{micros:06d}" if micros is not None else "")
    return str(value)


def _dts_image(fields: list[dict[str, Any]], image: Any, row: dict[str, str | None]) -> None:
    """Add the provided columns of a positional image to ``row`` (EmptyObject NONE: skipped).

    fastavro (``return_record_name``) gives a value record as ``(full name, record)``, and the
    EmptyObject enum as its bare symbol in ``beforeImages`` (where the type is defined) but
    as ``(full name, symbol)`` in ``afterImages`` (where it is referenced by name)."""
    if not isinstance(image, list):
        return
    for field, element in zip(fields, image, strict=False):
        if type(element) is tuple:
            name, value = element
            if type(value) is not str:
                row[field["name"]] = _dts_text(name, value)
                continue
            element = value
        if element != "NONE":
            row[field["name"]] = None  # EmptyObject NULL or an Avro null element


def _dts_record(raw: bytes) -> dict[str, Any]:
    """One ``com.alibaba.dts.formats.avro.Record``: the newer revision (``bornTimestamp``),
    else the older one (dts_avro_schema)."""
    stream = io.BytesIO(raw)
    try:
        record = fastavro.schemaless_reader(stream, PARSED_NEW, return_record_name=True)
        if stream.tell() == len(raw):
            return record  # type: ignore[return-value]
    except (EOFError, ValueError, IndexError):
        pass
    return fastavro.schemaless_reader(io.BytesIO(raw), PARSED_OLD, return_record_name=True)  # type: ignore[return-value]


def dts_avro_changes(values: Iterable[Value]) -> Iterator[Change]:
    """DTS Avro (docs/formats.md 4a): INSERT / UPDATE / DELETE records (INIT / FILL rank first);
    the row is the before image overlaid by the after image, values already as text."""
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        record = _dts_record(raw)
        kind = _DTS_DML.get(record["operation"])
        if kind is None:
            continue  # BEGIN, COMMIT, DDL, HEARTBEAT, ...
        fields = record["fields"]
        row: dict[str, str | None] = {}
        _dts_image(fields, record["beforeImages"], row)
        _dts_image(fields, record["afterImages"], row)
        table = record["objectName"].rpartition(".")[2].replace("\\u002E", ".").lower()
        order = _DTS_AVRO(
            {
                "load_rank": kind[0],
                "source_timestamp": record["sourceTimestamp"],
                "record_id": record["id"],
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield table, order, kind[1], row


_QLIK_ENVELOPE = fastavro.parse_schema(ENVELOPE_SCHEMA)
_QLIK_METADATA = fastavro.parse_schema(METADATA_SCHEMA)
QlikCatalog: TypeAlias = dict[str, tuple[str, str]]
"""Qlik Avro ``schemaId`` -> (table lower-case, ``dataSchema`` Avro text) from MD messages."""


@lru_cache(maxsize=64)
def _parsed(schema_text: str) -> Any:
    return fastavro.parse_schema(orjson.loads(schema_text))


def qlik_avro_envelope(raw: bytes) -> dict[str, Any]:
    """The ``MessageEnvelope`` of a Qlik Avro value (qlik_schema.ENVELOPE_SCHEMA)."""
    return fastavro.schemaless_reader(io.BytesIO(raw), _QLIK_ENVELOPE)  # type: ignore[return-value]


def qlik_avro_metadata(envelope: Mapping[str, Any]) -> tuple[str, str, str]:
    """(``schemaId``, table lower-case, ``dataSchema`` text) of an MD envelope, read with the
    schema it embeds (``messageSchema``), else the documented metadata schema."""
    schema_text = envelope.get("messageSchema")
    schema = _parsed(schema_text) if schema_text else _QLIK_METADATA
    message = fastavro.schemaless_reader(io.BytesIO(envelope["message"]), schema)
    assert isinstance(message, dict)
    return message["schemaId"], message["lineage"]["table"].lower(), message["dataSchema"]


def qlik_avro_changes(
    values: Iterable[Value], catalog: QlikCatalog | None = None
) -> Iterator[Change]:
    """Qlik Avro envelopes (docs/formats.md 5): MD messages (Avro, schema embedded) give each
    ``schemaId`` its table and ``dataSchema``; a DT message is read with the data schema its
    ``messageSchemaId`` names. ``catalog``: MD messages already read elsewhere (the PySpark
    script reads them on the driver first). A DT whose MD comes later waits until the end."""
    tables: QlikCatalog = dict(catalog or {})
    waiting: list[tuple[str, int, int, dict[str, Any]]] = []

    def data_change(
        envelope: dict[str, Any], topic: str, partition: int, offset: int
    ) -> Change | None:
        table, schema_text = tables[envelope["messageSchemaId"]]
        message = fastavro.schemaless_reader(io.BytesIO(envelope["message"]), _parsed(schema_text))
        assert isinstance(message, dict)
        return _qlik_change(table, message, topic, partition, offset)

    for topic, partition, offset, raw in values:
        if not raw:
            continue
        envelope = qlik_avro_envelope(raw)
        kind = envelope["type"]
        if kind == "MD":
            schema_id, table, data_schema = qlik_avro_metadata(envelope)
            tables[schema_id] = (table, data_schema)
            continue
        if kind != "DT":
            continue
        if envelope.get("messageSchemaId") not in tables:
            waiting.append((topic, partition, offset, envelope))
            continue
        change = data_change(envelope, topic, partition, offset)
        if change is not None:
            yield change
    for topic, partition, offset, envelope in waiting:
        if envelope.get("messageSchemaId") not in tables:
            raise ValueError(
                f"qlik DT message at {partition}/{offset}: no MD for "
                f"{envelope.get('messageSchemaId')!r}"
            )
        change = data_change(envelope, topic, partition, offset)
        if change is not None:
            yield change


DECODERS: dict[str, Decoder] = {
    "dataworks_json": dataworks_changes,
    "datahub_blob": dataworks_changes,
    "datahub_tuple": datahub_tuple_changes,
    "lindorm_debezium": lindorm_changes,
    "dts_avro": dts_avro_changes,
    "dts_shareplex_json": shareplex_changes,
    "dts_canal_json": canal_changes,
    "qlik_json": qlik_json_changes,
    "qlik_avro": qlik_avro_changes,
    "debezium_json": debezium_baseline.changes,
}
"""Registry format -> Python decoder of its values into :data:`Change` tuples (a plug-in may
hold its own: ``cdc_lakehouse.formats.<folder>.baseline``)."""

_ARROW_KINDS = {"int": pa.int64(), "text": pa.string()}
ORDER_TYPES: dict[str, tuple[pa.DataType, ...]] = {
    name: tuple(_ARROW_KINDS[kind] for kind in manifest.get(name).ordering_kinds())
    for name in ("dts_avro", "qlik_avro")
}
"""Arrow types of the ordering key's parts of the Avro formats, from their plug-ins' ordering
rules."""
ROW_TYPE = pa.map_(pa.string(), pa.string())


def changes_schema(format_: str) -> pa.Schema:
    """Arrow schema of :func:`changes_table` for an Avro format: ``tbl`` string, the ordering
    key's parts (:func:`order_columns`), ``is_delete`` bool, ``row`` map<string,string>."""
    parts = [
        pa.field(name, kind)
        for name, kind in zip(order_columns(format_), ORDER_TYPES[format_], strict=True)
    ]
    return pa.schema(
        [pa.field("tbl", pa.string()), *parts, pa.field("is_delete", pa.bool_()), ("row", ROW_TYPE)]
    )


def changes_table(changes: Iterable[Change], format_: str) -> pa.Table:
    """Decoded changes of an Avro format as Arrow (:func:`changes_schema`), values as text."""
    schema = changes_schema(format_)
    kinds = ORDER_TYPES[format_]
    width = len(kinds)
    tables: list[str] = []
    orders: list[list[Any]] = [[] for _ in range(width)]
    deletes: list[bool] = []
    offsets = [0]  # the map column, flat: entry offsets, keys, values
    names: list[str] = []
    texts: list[str | None] = []
    for table, order, deleted, row in changes:
        tables.append(table)
        for i in range(width):
            orders[i].append(order[i])
        deletes.append(deleted)
        names.extend(row)
        texts.extend([text(value) for value in row.values()])
        offsets.append(len(names))
    rows = pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32()), pa.array(names, pa.string()), pa.array(texts, pa.string())
    )
    arrays = [pa.array(tables, pa.string())]
    arrays += [pa.array(part, kind) for part, kind in zip(orders, kinds, strict=True)]
    arrays += [pa.array(deletes, pa.bool_()), rows]
    return pa.Table.from_arrays(arrays, schema=schema)


def order_columns(format_: str) -> Sequence[str]:
    """Names of the ordering key's columns for ``format_``, most significant first: its
    plug-in's ordering parts, then the Kafka tail (:meth:`.Format.ordering_names`). Every
    baseline orders its changes by them."""
    return manifest.get(format_).ordering_names()
