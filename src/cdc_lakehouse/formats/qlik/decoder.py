"""Decoder of Qlik Replicate / Qlik Talend Data Integration Kafka messages, JSON and Avro
(docs/formats.md section 5; seed 004).

Framing (decided here; the registry format says which one a topic uses):

- ``qlik_json``: the value is UTF-8 JSON, either the ``atMSG`` envelope
  ``{"magic": "atMSG", "type": "MD" | "DT", "headers", "messageSchemaId", "messageSchema",
  "message": {...}}`` (``message`` an object, or a string holding one) or the bare message.
  A bare message is a metadata (MD) message when it has ``tableStructure`` or ``lineage``,
  else a data (DT) message.
- ``qlik_avro``: the value is one Avro ``MessageEnvelope`` (Qlik's published envelope schema,
  plain Avro binary, no schema-registry header); every byte must be consumed. ``message`` is
  Avro binary written with the envelope's ``messageSchema`` when embedded; otherwise an MD
  message is read with :data:`~cdc_lakehouse.formats.qlik.avro_schema.METADATA_SCHEMA` and a DT
  message *by reference*: with the ``dataSchema`` of the MD message whose ``schemaId`` equals
  the envelope's ``messageSchemaId`` (Qlik's "Replicate envelope" page: ``messageSchemaId`` is
  "a reference to a schema defined elsewhere, which can be used to deserialize the bytes in
  the message field", used exclusively with ``messageSchema``). A DT with neither is
  ``invalid_avro``. Bare Avro (no envelope) cannot be read without a schema registry and is
  rejected (``invalid_avro``).

A DT message depends on an MD message, possibly delivered earlier or later, on any partition:
the column ordinals decode its masks, the primary key positions give its key columns, and for
Avro the ``dataSchema`` is the writer schema. Callers first collect the (few) MD messages with
:func:`metadata_batches` into a list of entries and pass it to :func:`decode_batches`. A DT
message finds its MD entry, within the same registry format (docs/formats.md 5a):

1. ``headers.externalSchemaId``, when set, needs the MD whose ``schemaId`` equals it, and no
   other: Qlik changes the schema id on every DDL (seed 004, ``externalSchemaId``), so another
   version of the table would decode its masks with the wrong ordinals. Likewise the
   envelope's ``messageSchemaId`` of an Avro DT read by reference: no other MD's
   ``dataSchema`` is its writer schema (Avro binary carries no names, so another version's
   schema can read the bytes to the end and still name the columns wrongly).
2. else the envelope's ``messageSchemaId`` (JSON, self-describing Avro) when an MD carries it
   as its ``schemaId`` (of the table the message names, if it names one). Seed 004 does not
   say this id names a metadata message, and in real JSON streams it does not (issue 48: an
   id no MD carries), so it never makes a DT wait;
3. else by table name: the message's own ``schema`` / ``table`` (some targets add them) -> the
   MD of that table with the highest ``tableVersion``;
4. else by topic: the MD messages on the DT's own Kafka topic describe exactly one table
   (Qlik's topic-per-table layout) -> its highest ``tableVersion``.

Completion by a later record. Each entry carries the ingest batch that delivered it. A DT of
ingest batch ``b`` is matched against the MD messages of batches up to ``b``; when none
matches, against those up to the first later batch in which one does. That batch is the DT's
``resolved_batch_id``: the incremental run in which its MD arrives decodes it, exactly as a
full refresh does, and a full refresh gives the same match whatever came after. No match in
any batch -> ``decode_error = missing_table_metadata`` (never a crash); the record waits in
quarantine for its MD. Only rule 1 waits for a particular MD; rules 2 to 4 match as of the
batch, and matching by name or topic takes the newest version known at that batch: enable
Qlik's "external schema id" header for exact matching across DDL changes.

Output fields (:data:`QLIK_FIELDS`), one row per message:

- ``decode_error`` / ``decode_error_detail``: reason code (:data:`REASONS`) and detail.
- ``message_type`` (``MD`` / ``DT`` / other as sent), ``enveloped``, ``message_schema_id``
  (envelope), ``schema_id`` (MD ``schemaId``; for DT the matched MD's), ``metadata_match``
  (``schema_id`` / ``table_name`` / ``topic``), ``external_schema_id``.
- ``qlik_server``, ``qlik_task``, ``source_schema``, ``source_table``, ``table_version``,
  ``metadata_time_us``: MD lineage (for DT: of the matched MD). Time = epoch microseconds UTC.
- ``column_types``: column -> Qlik type text in ordinal order, with the length for STRING /
  WSTRING / BYTES (``STRING(50)``) and precision and scale for NUMERIC (``NUMERIC(10,2)``)
  where the metadata gives them (> 0). ``key_columns``: columns with
  ``primaryKeyPosition > 0`` in key order (empty when none). ``data_schema``: MD
  ``dataSchema`` text.
- ``operation`` (as sent), ``change_sequence``, ``event_time_us`` (``headers.timestamp``,
  UTC, epoch microseconds), ``stream_position``, ``transaction_id``,
  ``transaction_event_counter``, ``transaction_last_event``.
- ``change_mask`` / ``column_mask``: the masks as uppercase hex text (Avro bytes rendered the
  same way); ``changed_columns`` / ``not_provided_columns``: the columns whose bit
  (``ordinal - 1`` of the mask's integer value: ``0B`` = ordinals 1, 2, 4) is set in
  ``changeMask`` / clear in ``columnMask``. An absent or empty ``columnMask`` = every column
  provided. Bits above the last ordinal are ignored.
- ``resolved_batch_id``: for a DT, the ingest batch in which its MD became known (its own
  batch, or the later one that delivered the MD); NULL otherwise.
- ``before_image`` / ``after_image``: map column -> value text. INSERT, REFRESH, UPDATE:
  after = ``data``, before = ``beforeData`` (NULL when not sent). DELETE: ``data`` is the
  deleted row, so before = ``data`` and after = NULL. A column whose ``columnMask`` bit is 0
  is *absent* from both images (not provided), even when the JSON carries it as null;
  ``after_image_is_partial`` is true when an after image lacks a column of the metadata.
  Value text: JSON numbers keep their exact text, strings as sent (binary columns are hex
  digits in JSON and stay so), booleans ``true`` / ``false``; Avro values: strings as sent,
  bytes as uppercase hex (the JSON spelling), ints as digits, floats as ``repr``, decimals
  exactly, dates / times ISO-8601.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, date, datetime, time
from decimal import Decimal
from functools import lru_cache
from typing import Any

import fastavro
import pyarrow as pa

from cdc_lakehouse.decode import batches as arrow_batches
from cdc_lakehouse.decode import shared
from cdc_lakehouse.decode.batches import append_decoded
from cdc_lakehouse.decode.json_text import value_text
from cdc_lakehouse.decode.shared import DecodeError
from cdc_lakehouse.formats.qlik.avro_schema import ENVELOPE_SCHEMA, MAGIC, METADATA_SCHEMA

REASONS = {
    **{
        code: shared.STRUCTURAL_REASONS[code]
        for code in ("empty_value", "invalid_utf8", "invalid_json", "duplicate_key")
    },
    "not_an_object": "the JSON value (or the envelope's message) is not an object",
    "invalid_avro": "the value is not an Avro atMSG envelope, or its message does not match "
    "the writer schema",
    "missing_required_field": shared.STRUCTURAL_REASONS["missing_required_field"],
    "invalid_field_type": "a field has the wrong type or an invalid value",
    "missing_table_metadata": "a data message whose table has no metadata message",
    shared.DECODER_ERROR: shared.STRUCTURAL_REASONS[shared.DECODER_ERROR],
}

_STR = pa.string()
_MAP = pa.map_(pa.string(), pa.string())
_LIST = pa.list_(pa.string())
QLIK_FIELDS: list[pa.Field] = [
    pa.field("decode_error", _STR),
    pa.field("decode_error_detail", _STR),
    pa.field("message_type", _STR),
    pa.field("enveloped", pa.bool_()),
    pa.field("message_schema_id", _STR),
    pa.field("schema_id", _STR),
    pa.field("metadata_match", _STR),
    pa.field("external_schema_id", _STR),
    pa.field("qlik_server", _STR),
    pa.field("qlik_task", _STR),
    pa.field("source_schema", _STR),
    pa.field("source_table", _STR),
    pa.field("table_version", pa.int64()),
    pa.field("metadata_time_us", pa.int64()),
    pa.field("column_types", _MAP),
    pa.field("key_columns", _LIST),
    pa.field("data_schema", _STR),
    pa.field("operation", _STR),
    pa.field("change_sequence", _STR),
    pa.field("event_time_us", pa.int64()),
    pa.field("stream_position", _STR),
    pa.field("transaction_id", _STR),
    pa.field("transaction_event_counter", pa.int64()),
    pa.field("transaction_last_event", pa.bool_()),
    pa.field("change_mask", _STR),
    pa.field("column_mask", _STR),
    pa.field("changed_columns", _LIST),
    pa.field("not_provided_columns", _LIST),
    pa.field("before_image", _MAP),
    pa.field("after_image", _MAP),
    pa.field("after_image_is_partial", pa.bool_()),
    pa.field("resolved_batch_id", pa.int64()),
]
_NAMES = [f.name for f in QLIK_FIELDS]

# One collected metadata message: what :func:`metadata_batches` yields per MD record.
METADATA_ENTRY_FIELDS: list[pa.Field] = [
    pa.field("source_format", _STR),
    pa.field("topic", _STR),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("ingest_batch_id", pa.int64()),
    pa.field("entry", _STR),
]
METADATA_ENTRY_DDL = (
    "source_format string, topic string, partition int, offset bigint, ingest_batch_id bigint, "
    "entry string"
)

_ENVELOPE = fastavro.parse_schema(ENVELOPE_SCHEMA)
_METADATA = fastavro.parse_schema(METADATA_SCHEMA)
_SIZED_BY_LENGTH = {"STRING", "WSTRING", "BYTES"}
_SIZED_BY_PRECISION = {"NUMERIC"}
_CHANGE_SEQUENCE = re.compile(r"[0-9]{1,35}")
_TIMESTAMP = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?"
)


# --------------------------------------------------------------------------- metadata


class Metadata:
    """One table version from an MD message: columns by ordinal, key, data schema."""

    def __init__(self, entry: dict[str, Any]) -> None:
        self.entry = entry
        self.schema_id: str | None = entry.get("schema_id")
        self.columns = [(int(c[0]), str(c[1]), str(c[2])) for c in entry["columns"]]
        self.key_columns: list[str] = list(entry["key_columns"])
        self.column_names = [name for _ordinal, name, _type in self.columns]
        self.ordinals = {name: ordinal for ordinal, name, _type in self.columns}
        self._data_schema: Any = None
        batch = entry.get("ingest_batch_id")
        self.batch: int = -1 if batch is None else int(batch)  # -1: known from the start

    @property
    def table(self) -> tuple[str | None, str | None]:
        return self.entry.get("schema"), self.entry.get("table")

    @property
    def rank(self) -> tuple[int, int, int]:
        """Newest version first: table version, then Kafka position of the MD message."""
        return (
            self.entry.get("table_version") or 0,
            self.entry.get("partition") or 0,
            self.entry.get("offset") or 0,
        )

    def data_schema(self) -> Any:
        """The parsed Avro writer schema of the table's data messages (parsed once)."""
        if self._data_schema is not None:
            return self._data_schema
        text = self.entry.get("data_schema")
        if not text:
            raise DecodeError("invalid_avro", f"metadata {self.schema_id} has no dataSchema")
        try:
            self._data_schema = fastavro.parse_schema(json.loads(text))
        except Exception as exc:
            raise DecodeError(
                "invalid_avro", f"dataSchema of metadata {self.schema_id} is invalid: {exc}"
            ) from None
        return self._data_schema


class MetadataCatalog:
    """The collected MD entries of every Qlik topic, looked up per registry format and as of an
    ingest batch (see the module doc)."""

    def __init__(self, entries: Sequence[dict[str, Any] | str] = ()) -> None:
        self._by_id: dict[tuple[str, str], list[Metadata]] = {}
        self._by_table: dict[tuple[str, Any, Any], list[Metadata]] = {}
        self._by_topic: dict[tuple[str, str], list[Metadata]] = {}
        batches: set[int] = set()
        for raw in entries:
            entry = json.loads(raw) if isinstance(raw, str) else raw
            md = Metadata(entry)
            fmt = entry.get("source_format") or ""
            if md.schema_id:
                self._by_id.setdefault((fmt, md.schema_id), []).append(md)
            self._by_table.setdefault((fmt, *md.table), []).append(md)
            self._by_topic.setdefault((fmt, entry.get("topic") or ""), []).append(md)
            batches.add(md.batch)
        self._batches = sorted(batches)

    def find(
        self,
        source_format: str,
        topic: str | None,
        *,
        exact_id: str | None = None,
        preferred_id: str | None = None,
        table: tuple[str | None, str | None] = (None, None),
        batch: int | None = None,
    ) -> tuple[Metadata, str, int | None] | None:
        """The MD of a DT message, how it matched (``schema_id`` / ``table_name`` /
        ``topic``) and the ingest batch as of which it matched; None when no MD, in any
        batch, matches (see the module doc).

        Args:
            source_format: the DT's registry format; only MD messages of that format count.
            topic: the DT's Kafka topic (the topic rule).
            exact_id: a schema id the DT requires (``headers.externalSchemaId``; for an Avro
                DT read by reference, the envelope's ``messageSchemaId``): only the MD whose
                ``schemaId`` equals it will do, and the DT waits for it.
            preferred_id: a schema id that picks its MD when one carries it (the envelope's
                ``messageSchemaId`` of a JSON or self-describing Avro DT), else is ignored.
            table: (schema, table) the message names, each None when not named.
            batch: the DT's own ingest batch; None matches against every entry (and returns
                None as the batch).
        """
        if batch is None:
            found = self._find_as_of(source_format, topic, exact_id, preferred_id, table, None)
            return None if found is None else (*found, None)
        for as_of in (batch, *(b for b in self._batches if b > batch)):
            found = self._find_as_of(source_format, topic, exact_id, preferred_id, table, as_of)
            if found is not None:
                return (*found, as_of)
        return None

    def _find_as_of(
        self,
        source_format: str,
        topic: str | None,
        exact_id: str | None,
        preferred_id: str | None,
        table: tuple[str | None, str | None],
        batch: int | None,
    ) -> tuple[Metadata, str] | None:
        def known(versions: list[Metadata] | None) -> list[Metadata]:
            return [m for m in versions or () if batch is None or m.batch <= batch]

        def newest(versions: list[Metadata]) -> Metadata:
            return max(versions, key=lambda m: m.rank)

        def first_delivered(versions: list[Metadata]) -> Metadata:
            return min(versions, key=lambda m: m.batch)

        def of_named_table(md: Metadata) -> bool:
            schema, name = table
            return (name is None or md.table[1] == name) and (
                schema is None or md.table[0] == schema
            )

        if exact_id is not None:  # exact: no other version will do
            versions = known(self._by_id.get((source_format, exact_id)))
            return (first_delivered(versions), "schema_id") if versions else None
        if preferred_id is not None:  # taken when an MD carries it, never waited for
            carrying = known(self._by_id.get((source_format, preferred_id)))
            versions = [m for m in carrying if of_named_table(m)]
            if versions:
                return first_delivered(versions), "schema_id"
        if table[1] is not None:
            versions = known(self._by_table.get((source_format, *table)))
            if not versions and table[0] is None:
                same_name = {
                    key: found
                    for key, entries in self._by_table.items()
                    if key[0] == source_format and key[2] == table[1] and (found := known(entries))
                }
                versions = next(iter(same_name.values())) if len(same_name) == 1 else []
            if versions:
                return newest(versions), "table_name"
        on_topic = known(self._by_topic.get((source_format, topic or "")))
        if on_topic and len({m.table for m in on_topic}) == 1:
            return newest(on_topic), "topic"
        return None


# --------------------------------------------------------------------------- helpers


def _int(parent: dict[str, Any] | None, key: str, where: str) -> int | None:
    if parent is None:
        return None
    value = parent.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value.strip()):
        return int(value)
    raise DecodeError("invalid_field_type", f"{where}{key} must be an integer")


def _bool(parent: dict[str, Any] | None, key: str, where: str) -> bool | None:
    value = None if parent is None else parent.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    raise DecodeError("invalid_field_type", f"{where}{key} must be true or false")


def timestamp_micros(text: str | None, where: str) -> int | None:
    """Epoch microseconds of a Qlik timestamp text (UTC unless it names an offset).

    Accepts ``YYYY-MM-DD[T ]HH:MM:SS[.fraction][Z|+HH:MM]``; the empty text is None.

    Raises:
        DecodeError: ``invalid_field_type`` for any other text.
    """
    if text is None or not text.strip():
        return None
    match = _TIMESTAMP.fullmatch(text.strip())
    if match is None:
        raise DecodeError("invalid_field_type", f"{where} is not a timestamp: {text!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = (match.group(7) or "").ljust(6, "0")[:6]
    try:
        moment = datetime(year, month, day, hour, minute, second, int(fraction), tzinfo=UTC)
    except ValueError as exc:
        raise DecodeError("invalid_field_type", f"{where} is not a timestamp: {exc}") from None
    micros = (moment - datetime(1970, 1, 1, tzinfo=UTC)) // _MICRO
    zone = match.group(8)
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        micros -= sign * (int(digits[:2]) * 3600 + int(digits[2:]) * 60) * 1_000_000
    return micros


_MICRO = datetime(1970, 1, 1, 0, 0, 0, 1, tzinfo=UTC) - datetime(1970, 1, 1, tzinfo=UTC)


def column_type_text(
    qlik_type: str, length: int | None, precision: int | None, scale: int | None
) -> str:
    """Qlik type text with its size: ``STRING(50)``, ``NUMERIC(10,2)``, else the type."""
    base = qlik_type.strip()
    upper = base.upper()
    if upper in _SIZED_BY_PRECISION and precision:
        return f"{base}({precision},{scale or 0})"
    if upper in _SIZED_BY_LENGTH and length:
        return f"{base}({length})"
    return base


def mask_hex(value: Any, where: str) -> str | None:
    """A mask as uppercase hex text: JSON hex string or Avro bytes; None / "" -> None."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.hex().upper() or None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        if re.fullmatch(r"[0-9A-Fa-f]+", text):
            return text.upper()
    raise DecodeError("invalid_field_type", f"{where} must be hex digits, got {value!r}")


def mask_columns(mask: str, columns: Sequence[tuple[int, str, str]]) -> list[str]:
    """Columns whose bit ``ordinal - 1`` is set in the integer value of hex ``mask``."""
    bits = int(mask, 16)
    return [name for ordinal, name, _type in columns if ordinal >= 1 and bits >> (ordinal - 1) & 1]


def _avro_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes):
        return value.hex().upper()
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, str | int):
        return str(value)
    return json.dumps(value, default=str, separators=(",", ":"))


def _read_exact(raw: bytes, schema: Any, what: str) -> dict[str, Any]:
    stream = io.BytesIO(raw)
    try:
        record = fastavro.schemaless_reader(stream, schema)
    except Exception as exc:
        raise DecodeError("invalid_avro", f"{what}: {type(exc).__name__}: {exc}") from None
    if stream.tell() != len(raw):
        raise DecodeError(
            "invalid_avro", f"{what}: {len(raw) - stream.tell()} of {len(raw)} bytes left unread"
        )
    if not isinstance(record, dict):
        raise DecodeError("invalid_avro", f"{what}: not a record")
    return record


@lru_cache(maxsize=256)
def _parse_schema_text(text: str) -> Any:
    try:
        return fastavro.parse_schema(json.loads(text))
    except Exception as exc:
        raise DecodeError("invalid_avro", f"messageSchema is not an Avro schema: {exc}") from None


# --------------------------------------------------------------------------- framing


class _Frame:
    """A message taken out of its framing: type, envelope fields, JSON message or Avro bytes."""

    def __init__(self) -> None:
        self.message_type: str | None = None
        self.enveloped = False
        self.schema_id: str | None = None
        self.schema_text: str | None = None
        self.message: dict[str, Any] | None = None
        self.avro_body: bytes | None = None


def _json_frame(raw: bytes) -> _Frame:
    value = shared.parse_json_object(raw)
    frame = _Frame()
    if "magic" in value:
        if value["magic"] != "atMSG":
            raise DecodeError("invalid_field_type", f"magic must be atMSG, got {value['magic']!r}")
        frame.enveloped = True
        frame.message_type = shared.text(value, "type", "")
        if frame.message_type is None:
            raise DecodeError("missing_required_field", "envelope type is missing")
        frame.schema_id = shared.text(value, "messageSchemaId", "")
        frame.schema_text = shared.text(value, "messageSchema", "")
        message = value.get("message")
        if isinstance(message, str):
            message = shared.parse_json(message, "envelope message")
        if message is None:
            raise DecodeError("missing_required_field", "envelope message is missing")
        if not isinstance(message, dict):
            raise DecodeError("not_an_object", "envelope message is not an object")
        frame.message = message
    else:
        frame.message = value
        is_md = "tableStructure" in value or "lineage" in value
        frame.message_type = "MD" if is_md else "DT"
    return frame


def _avro_frame(raw: bytes) -> _Frame:
    if not raw.startswith(MAGIC):
        hint = " (Confluent schema-registry framing?)" if raw[:1] == b"\x00" else ""
        raise DecodeError("invalid_avro", f"value does not start with the atMSG envelope{hint}")
    record = _read_exact(raw, _ENVELOPE, "envelope")
    frame = _Frame()
    frame.enveloped = True
    frame.message_type = record["type"]
    frame.schema_id = record["messageSchemaId"]
    frame.schema_text = record["messageSchema"]
    frame.avro_body = record["message"]
    return frame


# --------------------------------------------------------------------------- MD


def metadata_entry(message: dict[str, Any]) -> dict[str, Any]:
    """The catalog entry of a metadata message (JSON shape); raises DecodeError."""
    lineage = shared.obj(message, "lineage", "")
    if lineage is None:
        raise DecodeError("missing_required_field", "lineage is missing")
    structure = shared.obj(message, "tableStructure", "")
    columns_obj = shared.obj(structure, "tableColumns", "tableStructure.") if structure else None
    if columns_obj is None:
        raise DecodeError("missing_required_field", "tableStructure.tableColumns is missing")
    table = shared.text(lineage, "table", "lineage.")
    if table is None:
        raise DecodeError("missing_required_field", "lineage.table is missing")
    columns = []
    keys = []
    for name, props in columns_obj.items():
        where = f"tableStructure.tableColumns.{name}."
        if not isinstance(props, dict):
            raise DecodeError("invalid_field_type", f"{where[:-1]} must be an object")
        ordinal = _int(props, "ordinal", where)
        qlik_type = shared.text(props, "type", where)
        if ordinal is None or qlik_type is None:
            raise DecodeError("missing_required_field", f"{where}ordinal / type is missing")
        type_text = column_type_text(
            qlik_type,
            _int(props, "length", where),
            _int(props, "precision", where),
            _int(props, "scale", where),
        )
        columns.append((ordinal, name, type_text))
        position = _int(props, "primaryKeyPosition", where) or 0
        if position > 0:
            keys.append((position, name))
    columns.sort()
    if len({c[0] for c in columns}) != len(columns):
        raise DecodeError("invalid_field_type", "tableStructure.tableColumns repeats an ordinal")
    return {
        "schema_id": shared.text(message, "schemaId", ""),
        "server": shared.text(lineage, "server", "lineage."),
        "task": shared.text(lineage, "task", "lineage."),
        "schema": shared.text(lineage, "schema", "lineage."),
        "table": table,
        "table_version": _int(lineage, "tableVersion", "lineage."),
        "timestamp_us": timestamp_micros(
            shared.text(lineage, "timestamp", "lineage."), "lineage.timestamp"
        ),
        "columns": columns,
        "key_columns": [name for _pos, name in sorted(keys)],
        "data_schema": shared.text(message, "dataSchema", ""),
    }


def _metadata_message(frame: _Frame) -> dict[str, Any]:
    if frame.avro_body is not None:
        schema = _parse_schema_text(frame.schema_text) if frame.schema_text else _METADATA
        return _read_exact(frame.avro_body, schema, "metadata message")
    assert frame.message is not None
    return frame.message


def _frame(raw: bytes | None, source_format: str) -> _Frame:
    if not raw:
        raise DecodeError("empty_value", REASONS["empty_value"])
    return _avro_frame(raw) if source_format == "qlik_avro" else _json_frame(raw)


# --------------------------------------------------------------------------- DT


def _image(
    values: Any, md: Metadata, provided: set[str] | None, where: str, avro: bool
) -> list[tuple[str, str | None]] | None:
    if values is None:
        return None
    if not isinstance(values, dict):
        raise DecodeError("invalid_field_type", f"{where} must be an object or null")
    render = _avro_text if avro else value_text
    return [
        (name, render(value))
        for name, value in values.items()
        if provided is None or name in provided or name not in md.ordinals
    ]


def _no_metadata_detail(
    frame: _Frame,
    external_id: str | None,
    table: tuple[str | None, str | None],
    topic: str | None,
) -> str:
    """The ``missing_table_metadata`` detail: what the DT waits for."""
    if frame.avro_body is not None and not frame.schema_text:
        return (
            f"Avro data message read with the dataSchema of metadata message "
            f"{frame.schema_id} (envelope messageSchemaId), which has not arrived"
        )
    if external_id:
        return f"no metadata message with schemaId {external_id} (headers.externalSchemaId)"
    envelope = f"envelope messageSchemaId {frame.schema_id} names none; " if frame.schema_id else ""
    named = ".".join(t for t in table if t) or "not named"
    return (
        f"no metadata message for this data message ({envelope}table: {named}; topic {topic}: "
        "no metadata messages of a single table)"
    )


def _decode_data(
    frame: _Frame,
    catalog: MetadataCatalog,
    source_format: str,
    topic: str | None,
    batch: int | None,
    row: dict[str, Any],
) -> None:
    avro = frame.avro_body is not None
    message = frame.message
    by_reference = avro and not frame.schema_text  # Avro bytes whose writer schema is an MD's
    if by_reference and not frame.schema_id:
        raise DecodeError(
            "invalid_avro",
            "Avro data message with neither messageSchema nor messageSchemaId: nothing names "
            "its writer schema",
        )
    if avro and frame.schema_text:  # self-describing Avro: readable before the lookup
        message = _read_exact(
            frame.avro_body or b"", _parse_schema_text(frame.schema_text), "data message"
        )
    external_id = None
    table: tuple[str | None, str | None] = (None, None)
    if message is not None:
        headers = shared.obj(message, "headers", "")
        external_id = shared.text(headers, "externalSchemaId", "headers.")
        table = (
            shared.text(message, "schema", "") or shared.text(message, "schemaName", ""),
            shared.text(message, "table", "") or shared.text(message, "tableName", ""),
        )
    if by_reference:  # the envelope's id names the writer schema: exactly that MD
        exact_id, preferred_id = frame.schema_id, None
    else:  # externalSchemaId names the MD; the envelope's id only helps when an MD carries it
        exact_id, preferred_id = external_id, frame.schema_id
    found = catalog.find(
        source_format,
        topic,
        exact_id=exact_id,
        preferred_id=preferred_id,
        table=table,
        batch=batch,
    )
    if found is None:
        detail = _no_metadata_detail(frame, external_id, table, topic)
        raise DecodeError("missing_table_metadata", detail)
    md, how, resolved_batch = found
    if by_reference:
        message = _read_exact(frame.avro_body or b"", md.data_schema(), "data message")
    assert message is not None
    headers = shared.obj(message, "headers", "")
    if headers is None:
        raise DecodeError("missing_required_field", "headers is missing")
    operation = headers.get("operation")
    if operation is None:
        raise DecodeError("missing_required_field", "headers.operation is missing")
    if not isinstance(operation, str):
        raise DecodeError("invalid_field_type", "headers.operation must be a string")
    change_sequence = shared.text(headers, "changeSequence", "headers.")
    if change_sequence and not _CHANGE_SEQUENCE.fullmatch(change_sequence):
        raise DecodeError(
            "invalid_field_type",
            f"headers.changeSequence must be up to 35 digits, got {change_sequence!r}",
        )
    change_mask = mask_hex(headers.get("changeMask"), "headers.changeMask")
    column_mask = mask_hex(headers.get("columnMask"), "headers.columnMask")
    provided = set(mask_columns(column_mask, md.columns)) if column_mask else None
    data = _image(message.get("data"), md, provided, "data", avro)
    before = _image(message.get("beforeData"), md, provided, "beforeData", avro)
    if operation == "DELETE":
        before, after = data, None
    else:
        after = data
    after_names = {name for name, _v in after} if after is not None else set()
    row.update(
        schema_id=md.schema_id,
        metadata_match=how,
        external_schema_id=external_id,
        qlik_server=md.entry.get("server"),
        qlik_task=md.entry.get("task"),
        source_schema=md.entry.get("schema"),
        source_table=md.entry.get("table"),
        table_version=md.entry.get("table_version"),
        metadata_time_us=md.entry.get("timestamp_us"),
        column_types=[(name, type_text) for _o, name, type_text in md.columns],
        key_columns=md.key_columns,
        operation=operation,
        change_sequence=change_sequence,
        event_time_us=timestamp_micros(
            shared.text(headers, "timestamp", "headers."), "headers.timestamp"
        ),
        stream_position=shared.text(headers, "streamPosition", "headers."),
        transaction_id=shared.text(headers, "transactionId", "headers."),
        transaction_event_counter=_int(headers, "transactionEventCounter", "headers."),
        transaction_last_event=_bool(headers, "transactionLastEvent", "headers."),
        change_mask=change_mask,
        column_mask=column_mask,
        changed_columns=mask_columns(change_mask, md.columns) if change_mask else None,
        not_provided_columns=(
            [n for n in md.column_names if n not in provided] if provided is not None else []
        ),
        before_image=before,
        after_image=after,
        after_image_is_partial=after is not None
        and any(name not in after_names for name in md.column_names),
        resolved_batch_id=resolved_batch,
    )


# --------------------------------------------------------------------------- entry points


def decode_one(
    raw: bytes | None,
    *,
    source_format: str = "qlik_json",
    topic: str | None = None,
    catalog: MetadataCatalog | None = None,
    batch: int | None = None,
) -> dict[str, Any]:
    """Decode one Kafka value of ``source_format`` (see module doc); raises only on a decoder
    bug, which :func:`decode_batches` turns into a ``decoder_error`` row.

    ``catalog`` holds the collected MD entries a DT message needs (empty when None); ``batch``
    is the record's ingest batch (None: every entry of the catalog counts).
    """
    row: dict[str, Any] = dict.fromkeys(_NAMES)
    try:
        frame = _frame(raw, source_format)
        row.update(
            message_type=frame.message_type,
            enveloped=frame.enveloped,
            message_schema_id=frame.schema_id,
        )
        if frame.message_type == "MD":
            entry = metadata_entry(_metadata_message(frame))
            row.update(
                schema_id=entry["schema_id"],
                qlik_server=entry["server"],
                qlik_task=entry["task"],
                source_schema=entry["schema"],
                source_table=entry["table"],
                table_version=entry["table_version"],
                metadata_time_us=entry["timestamp_us"],
                column_types=[(name, type_text) for _o, name, type_text in entry["columns"]],
                key_columns=entry["key_columns"],
                data_schema=entry["data_schema"],
            )
        elif frame.message_type == "DT":
            _decode_data(frame, catalog or MetadataCatalog(), source_format, topic, batch, row)
    except DecodeError as invalid:
        row = shared.error_row(_NAMES, invalid.reason, invalid.detail)
    return row


def decode_record(record: dict[str, Any], catalog: MetadataCatalog) -> dict[str, Any]:
    """:func:`decode_one` of a ``{source_format, topic, value, ingest_batch_id}`` struct (the
    model's input)."""
    return decode_one(
        record.get("value"),
        source_format=record.get("source_format") or "qlik_json",
        topic=record.get("topic"),
        catalog=catalog,
        batch=record.get("ingest_batch_id"),
    )


INPUT_COLUMN = "qlik_input"


def decode_batches(
    batches: Iterator[pa.RecordBatch], entries: Sequence[dict[str, Any] | str] = ()
) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function: append :data:`QLIK_FIELDS` decoded from the struct column
    ``qlik_input`` (source_format, topic, value, ingest_batch_id), with the collected MD
    ``entries``; every input column but ``qlik_input`` is passed through (``value`` too)."""
    catalog = MetadataCatalog(entries)
    return append_decoded(
        batches, lambda record: decode_record(record, catalog), QLIK_FIELDS, column=INPUT_COLUMN
    )


def output_schema_ddl(input_schema_ddl: str) -> str:
    """Spark DDL of :func:`decode_batches`' output for an input with ``input_schema_ddl``
    (without ``qlik_input``)."""
    return arrow_batches.output_schema_ddl(input_schema_ddl, QLIK_FIELDS, INPUT_COLUMN)


def is_metadata_candidate(raw: bytes | None, source_format: str) -> bool:
    """Cheap pre-filter: could this value be an MD message? (False negatives impossible.)"""
    if not raw:
        return False
    if source_format == "qlik_avro":
        return raw.startswith(MAGIC + b"\x04MD")
    return b"tableStructure" in raw or b'"MD"' in raw


def metadata_entries(
    raw: bytes | None,
    source_format: str,
    topic: str,
    partition: int,
    offset: int,
    ingest_batch_id: int | None = None,
) -> dict[str, Any] | None:
    """The catalog entry of one record when it is a valid MD message, else None."""
    if not is_metadata_candidate(raw, source_format):
        return None
    try:
        frame = _frame(raw, source_format)
        if frame.message_type != "MD":
            return None
        entry = metadata_entry(_metadata_message(frame))
    except Exception:  # DecodeError, or a bug: decode_batches quarantines the record itself
        return None
    entry.update(
        source_format=source_format,
        topic=topic,
        partition=partition,
        offset=offset,
        ingest_batch_id=ingest_batch_id,
    )
    return entry


def metadata_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """``mapInArrow`` function over (source_format, topic, partition, offset, ingest_batch_id,
    value) batches: one row per valid MD message (:data:`METADATA_ENTRY_DDL`), ``entry`` as
    JSON text."""
    schema = pa.schema(METADATA_ENTRY_FIELDS)
    for batch in batches:
        out: dict[str, list[Any]] = {f.name: [] for f in METADATA_ENTRY_FIELDS}
        columns = {name: batch.column(name).to_pylist() for name in batch.schema.names}
        columns.setdefault("ingest_batch_id", [None] * batch.num_rows)
        for index, raw in enumerate(columns["value"]):
            entry = metadata_entries(
                raw,
                columns["source_format"][index],
                columns["topic"][index],
                columns["partition"][index],
                columns["offset"][index],
                columns["ingest_batch_id"][index],
            )
            if entry is not None:
                out["source_format"].append(entry["source_format"])
                out["topic"].append(entry["topic"])
                out["partition"].append(entry["partition"])
                out["offset"].append(entry["offset"])
                out["ingest_batch_id"].append(entry["ingest_batch_id"])
                out["entry"].append(json.dumps(entry, separators=(",", ":")))
        yield pa.RecordBatch.from_pydict(out, schema=schema)
