"""The benchmark's baselines of DTS Avro, registry format ``dts_avro`` (docs/formats.md 4a;
:mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table = last part of ``objectName`` (lower-case), op ``operation``: INSERT / UPDATE / DELETE,
  INIT / FILL (a full-load row, ranking first); BEGIN, COMMIT, DDL, HEARTBEAT give no change.
- Row = ``beforeImages`` overlaid by ``afterImages`` (positional with ``fields``; EmptyObject
  NONE = not provided), values as text as :mod:`.decoder` renders them for the compared types.
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.dts_avro.ORDERING`):
  (0 for INIT / FILL else 1, ``sourceTimestamp``, ``id``, partition, offset, topic).

Decoded by fastavro in Python by every baseline: DuckDB has no Avro reader here, and for the
PySpark script Spark's ``from_avro`` plus the SQL that gives the same value texts was measured
slower (docs/formats.md 4a, "Why fastavro and not from_avro").
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterable, Iterator
from typing import Any

import fastavro

from cdc_lakehouse.formats.dts_avro import FORMATS
from cdc_lakehouse.formats.dts_avro.avro_schema import PARSED_NEW, PARSED_OLD
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import Baseline

_ORDERING = FORMATS[0].ordering_tuple

_DML = {"INSERT": (1, False), "UPDATE": (1, False), "DELETE": (1, True)}
_DML.update({"INIT": (0, False), "FILL": (0, False)})
"""Operation -> (load rank, is a delete)."""
_UTF8 = frozenset({"utf8", "utf8mb3", "utf8mb4", "utf-8"})


def _text(name: str, value: dict[str, Any]) -> str | None:
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


def _image(fields: list[dict[str, Any]], image: Any, row: dict[str, str | None]) -> None:
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
                row[field["name"]] = _text(name, value)
                continue
            element = value
        if element != "NONE":
            row[field["name"]] = None  # EmptyObject NULL or an Avro null element


def _record(raw: bytes) -> dict[str, Any]:
    """One ``com.alibaba.dts.formats.avro.Record``: the newer revision (``bornTimestamp``),
    else the older one (:mod:`.avro_schema`)."""
    stream = io.BytesIO(raw)
    try:
        record = fastavro.schemaless_reader(stream, PARSED_NEW, return_record_name=True)
        if stream.tell() == len(raw):
            return record  # type: ignore[return-value]
    except (EOFError, ValueError, IndexError):
        pass
    return fastavro.schemaless_reader(io.BytesIO(raw), PARSED_OLD, return_record_name=True)  # type: ignore[return-value]


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """DTS Avro (docs/formats.md 4a): INSERT / UPDATE / DELETE records (INIT / FILL rank first);
    the row is the before image overlaid by the after image, values already as text."""
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        record = _record(raw)
        kind = _DML.get(record["operation"])
        if kind is None:
            continue  # BEGIN, COMMIT, DDL, HEARTBEAT, ...
        fields = record["fields"]
        row: dict[str, str | None] = {}
        _image(fields, record["beforeImages"], row)
        _image(fields, record["afterImages"], row)
        table = record["objectName"].rpartition(".")[2].replace("\\u002E", ".").lower()
        order = _ORDERING(
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


BASELINES: dict[str, Baseline] = {
    "dts_avro": Baseline(
        changes=changes,
        python_decode=(
            "Avro: DuckDB has no Avro reader here (its extension would be downloaded); for "
            "Spark, from_avro plus the SQL giving the same value texts was measured slower"
        ),
    )
}
"""``dts_avro`` -> its baselines."""
