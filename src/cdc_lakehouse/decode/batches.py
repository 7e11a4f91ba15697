"""The Arrow batch loop every decoder shares, and the Spark DDL of its output.

A format decoder is a per-message function ``decode_one(value) -> row | [rows]`` (a row is a
dict with one entry per output field) plus the list of output fields (``pyarrow.Field``).
:func:`append_decoded` turns that pair into a ``DataFrame.mapInArrow`` function, and
:func:`output_schema_ddl` gives the Spark DDL schema ``mapInArrow`` needs. The loop is
Arrow-batched: no row-at-a-time UDF, one Python call per message.

Nothing disappears and no record fails the batch: a decoder returns at least one row for every
input message (a decode error is a row with ``decode_error`` set), and the loop turns anything
else a decoder does on one record (an exception, no row, a value its Arrow field cannot take)
into a ``decoder_error`` row for that record. A multi-row message (e.g. Canal JSON's ``data``
array) returns a list; the input columns are then repeated for each of its rows, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from cdc_lakehouse.decode.shared import DECODER_ERROR, bug_detail, error_row

Row = dict[str, Any]
DecodeOne = Callable[[Any], Row | list[Row]]
ErrorRow = Callable[[str, str], Row]
"""``(reason, detail) -> row``: the output row of a record that cannot be decoded."""


def append_decoded(
    batches: Iterator[pa.RecordBatch],
    decode_one: DecodeOne,
    fields: Sequence[pa.Field],
    column: str = "value",
    error: ErrorRow | None = None,
) -> Iterator[pa.RecordBatch]:
    """Append ``fields`` decoded from ``column`` to every batch; pass input columns through.

    No record can fail the batch: when ``decode_one`` raises (a decoder bug: its own errors
    are :class:`~cdc_lakehouse.decode.shared.DecodeError` rows already), returns an empty list,
    or returns a value that does not fit its Arrow field, that record alone becomes one
    ``error`` row with reason ``decoder_error`` and the exception's type and message as the
    detail, and the others are decoded as usual.

    Args:
        batches: input Arrow batches (``mapInArrow``'s iterator); must have ``column``.
        decode_one: called once per value of ``column``; returns one row dict, or a non-empty
            list of row dicts for a message that carries several changes. Missing keys are
            NULL.
        fields: the output fields, in order, appended after the input columns; they include
            ``decode_error`` and ``decode_error_detail``.
        column: the input column holding the raw message (default ``value``).
        error: builds the row of an undecodable record (default: every field NULL except
            ``decode_error`` / ``decode_error_detail``).

    Yields:
        One batch per input batch: the input columns (repeated per output row of a
        multi-row message) followed by ``fields``.
    """
    fields = list(fields)
    names = [field.name for field in fields]
    make_error = error or (lambda reason, detail: error_row(names, reason, detail))
    for batch in batches:
        rows: list[Row] = []
        take: list[int] = []
        for index, value in enumerate(batch.column(column).to_pylist()):
            try:
                decoded = decode_one(value)
                if isinstance(decoded, list) and not decoded:
                    raise ValueError("the decoder returned no row for the record")
            except Exception as exc:  # a decoder bug costs this record, not the batch
                decoded = make_error(DECODER_ERROR, bug_detail(exc))
            if isinstance(decoded, list):
                rows.extend(decoded)
                take.extend([index] * len(decoded))
            else:
                rows.append(decoded)
                take.append(index)
        arrays, take = _arrays(rows, take, fields, make_error)
        same_rows = len(take) == batch.num_rows and take == list(range(batch.num_rows))
        source = batch if same_rows else batch.take(pa.array(take, type=pa.int64()))
        columns = [*source.columns, *arrays]
        yield pa.RecordBatch.from_arrays(columns, schema=pa.schema(list(batch.schema) + fields))


_NOT_ARROW = (pa.ArrowException, TypeError, ValueError, OverflowError)


def _arrays(
    rows: list[Row], take: list[int], fields: list[pa.Field], make_error: ErrorRow
) -> tuple[list[pa.Array], list[int]]:
    """One Arrow array per field, and ``take`` (the input record of each output row).

    When a row holds a value its field's type cannot take, the rows of that row's record are
    replaced by one error row naming the field."""
    try:
        return [pa.array([row.get(f.name) for row in rows], type=f.type) for f in fields], take
    except _NOT_ARROW:
        pass
    bad_records: dict[int, str] = {}
    for row, record in zip(rows, take, strict=True):
        for field in fields:
            try:
                pa.array([row.get(field.name)], type=field.type)
            except _NOT_ARROW as exc:
                bad_records.setdefault(
                    record, f"{field.name} does not fit {field.type}: {bug_detail(exc)}"
                )
    kept_rows: list[Row] = []
    kept_take: list[int] = []
    for row, record in zip(rows, take, strict=True):
        if record not in bad_records:
            kept_rows.append(row)
            kept_take.append(record)
        elif not kept_take or kept_take[-1] != record:  # one error row per bad record
            kept_rows.append(make_error(DECODER_ERROR, bad_records[record]))
            kept_take.append(record)
    arrays = [pa.array([row.get(f.name) for row in kept_rows], type=f.type) for f in fields]
    return arrays, kept_take


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
