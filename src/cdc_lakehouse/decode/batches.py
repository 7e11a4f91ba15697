"""The Arrow batch loop every decoder shares, and the Spark DDL of its output.

A format decoder is a per-message function ``decode_one(value) -> row | [rows]`` (a row is a
dict with one entry per output field) plus the list of output fields (``pyarrow.Field``).
:func:`append_decoded` turns that pair into a ``DataFrame.mapInArrow`` function, and
:func:`output_schema_ddl` gives the Spark DDL schema ``mapInArrow`` needs. The loop is
Arrow-batched: no row-at-a-time UDF, one Python call per message.

Nothing disappears: a decoder returns at least one row for every input message (a decode
error is a row with ``decode_error`` set). A multi-row message (e.g. Canal JSON's ``data``
array) returns a list; the input columns are then repeated for each of its rows, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

Row = dict[str, Any]
DecodeOne = Callable[[Any], Row | list[Row]]


def append_decoded(
    batches: Iterator[pa.RecordBatch],
    decode_one: DecodeOne,
    fields: Sequence[pa.Field],
    column: str = "value",
) -> Iterator[pa.RecordBatch]:
    """Append ``fields`` decoded from ``column`` to every batch; pass input columns through.

    Args:
        batches: input Arrow batches (``mapInArrow``'s iterator); must have ``column``.
        decode_one: called once per value of ``column``; returns one row dict, or a non-empty
            list of row dicts for a message that carries several changes. Missing keys are
            NULL.
        fields: the output fields, in order, appended after the input columns.
        column: the input column holding the raw message (default ``value``).

    Yields:
        One batch per input batch: the input columns (repeated per output row of a
        multi-row message) followed by ``fields``.

    Raises:
        ValueError: ``decode_one`` returned an empty list (the message would disappear).
    """
    fields = list(fields)
    for batch in batches:
        rows: list[Row] = []
        take: list[int] = []
        multi = False
        for index, value in enumerate(batch.column(column).to_pylist()):
            decoded = decode_one(value)
            if isinstance(decoded, list):
                if not decoded:
                    raise ValueError(f"decoder returned no row for input row {index}")
                multi = multi or len(decoded) != 1
                rows.extend(decoded)
                take.extend([index] * len(decoded))
            else:
                rows.append(decoded)
                take.append(index)
        source = batch.take(pa.array(take, type=pa.int64())) if multi else batch
        columns = list(source.columns)
        for field in fields:
            columns.append(pa.array([row.get(field.name) for row in rows], type=field.type))
        yield pa.RecordBatch.from_arrays(columns, schema=pa.schema(list(batch.schema) + fields))


def spark_type(arrow_type: pa.DataType) -> str:
    """The Spark SQL type name of an Arrow type (the types decoders use).

    Raises:
        TypeError: the Arrow type has no mapping here.
    """
    simple = {
        pa.string(): "string",
        pa.large_string(): "string",
        pa.binary(): "binary",
        pa.bool_(): "boolean",
        pa.int8(): "tinyint",
        pa.int16(): "smallint",
        pa.int32(): "int",
        pa.int64(): "bigint",
        pa.float32(): "float",
        pa.float64(): "double",
        pa.date32(): "date",
    }
    if arrow_type in simple:
        return simple[arrow_type]
    if pa.types.is_timestamp(arrow_type):
        return "timestamp"
    if pa.types.is_map(arrow_type):
        return f"map<{spark_type(arrow_type.key_type)},{spark_type(arrow_type.item_type)}>"
    if pa.types.is_list(arrow_type):
        return f"array<{spark_type(arrow_type.value_type)}>"
    if pa.types.is_struct(arrow_type):
        inner = ",".join(f"{f.name}:{spark_type(f.type)}" for f in arrow_type)
        return f"struct<{inner}>"
    raise TypeError(f"no Spark type for Arrow type {arrow_type}")


def output_schema_ddl(input_schema_ddl: str, fields: Sequence[pa.Field]) -> str:
    """Spark DDL of :func:`append_decoded`'s output: the input DDL, then ``fields``."""
    decoded = ", ".join(f"{field.name} {spark_type(field.type)}" for field in fields)
    return f"{input_schema_ddl}, {decoded}"
