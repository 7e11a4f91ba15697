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

The rows of a batch become Arrow columns field by field, not value by value: a map field's
value is a dict (or a list of ``(key, item)`` tuples) and its column is built from the flat
keys and items, once per distinct map object (rows that share a dict share its conversion).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np
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
            NULL. A map field's value is a dict or a list of ``(key, item)`` tuples.
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
        with _cyclic_gc_paused():
            rows, counts = _decode_rows(batch.column(column).to_pylist(), decode_one, make_error)
            try:
                arrays = _fast_arrays(rows, fields)
            except _NOT_ARROW:  # some value does not fit its field: find its record
                arrays, counts = _checked_arrays(rows, counts, fields, make_error)
            del rows  # not kept alive while the caller holds the batch
        source = batch
        if sum(counts) != batch.num_rows:  # a multi-row message: repeat its input columns
            source = batch.take(np.repeat(np.arange(batch.num_rows, dtype=np.int64), counts))
        columns = [*source.columns, *arrays]
        yield pa.RecordBatch.from_arrays(columns, schema=pa.schema(list(batch.schema) + fields))


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector (when it runs) for the block.

    Decoding a batch makes about a million short-lived containers (parsed messages, rows) and
    no reference cycles: reference counting frees them all, while each collection the
    allocations trigger would walk every row still alive in the batch, about a quarter of the
    decoding time. A cycle made meanwhile is collected by the next collection after the block.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _decode_rows(
    values: list[Any], decode_one: DecodeOne, make_error: ErrorRow
) -> tuple[list[Row], list[int]]:
    """Decode every value: (the output rows in order, the number of rows of each value).

    A decoder that raises or returns no row gives one ``decoder_error`` row for that value."""
    rows: list[Row] = []
    counts: list[int] = []
    for value in values:
        try:
            decoded = decode_one(value)
            if isinstance(decoded, list) and not decoded:
                raise ValueError("the decoder returned no row for the record")
        except Exception as exc:  # a decoder bug costs this record, not the batch
            decoded = make_error(DECODER_ERROR, bug_detail(exc))
        if isinstance(decoded, list):
            rows.extend(decoded)
            counts.append(len(decoded))
        else:
            rows.append(decoded)
            counts.append(1)
    return rows, counts


_NOT_ARROW = (pa.ArrowException, TypeError, ValueError, OverflowError)


def _fast_arrays(rows: list[Row], fields: list[pa.Field]) -> list[pa.Array]:
    """One Arrow array per field from the rows, converted column by column.

    Raises:
        One of ``_NOT_ARROW`` when a value does not fit its field (which one is then found by
        :func:`_checked_arrays`)."""
    if not rows:
        return [pa.array([], type=f.type) for f in fields]
    names = [f.name for f in fields]
    try:  # rows with every key (and several fields): transposed in C
        if len(names) < 2:
            raise KeyError(names)
        columns: list[Sequence[Any]] = list(zip(*map(itemgetter(*names), rows), strict=True))
    except KeyError:
        columns = [[row.get(name) for row in rows] for name in names]
    arrays: dict[int, pa.Array] = {}
    for map_type in {f.type for f in fields if pa.types.is_map(f.type)}:
        same_type = [i for i, f in enumerate(fields) if f.type == map_type]
        converted = _map_arrays([columns[i] for i in same_type], map_type)
        arrays.update(zip(same_type, converted, strict=True))
    return [
        arrays[i] if i in arrays else pa.array(columns[i], type=f.type)
        for i, f in enumerate(fields)
    ]


def _map_arrays(columns: list[Sequence[Any]], map_type: pa.MapType) -> list[pa.MapArray]:
    """The map arrays of several columns of one map type; each distinct map object is
    converted once.

    Rows often share a map object: a Canal image that is the message's ``data`` element as
    sent, a multi-row message's type maps, a decoder's cached type maps. The distinct objects
    (by identity; all are alive in the rows) form one pool array, and each column takes its
    rows from the pool (an Arrow copy, much cheaper than converting Python strings again)."""
    values = list(chain.from_iterable(columns))
    ids = list(map(id, values))
    by_id = dict(zip(ids, values, strict=True))
    position = {object_id: index for index, object_id in enumerate(by_id)}
    pool = _map_array(list(by_id.values()), map_type)  # None, if any, is a NULL map
    indices = pa.array(list(map(position.__getitem__, ids)), type=pa.int32())
    arrays = []
    start = 0
    for column in columns:
        arrays.append(pool.take(indices.slice(start, len(column))))
        start += len(column)
    return arrays


def _map_array(values: Sequence[Any], map_type: pa.MapType) -> pa.MapArray:
    """A map array from values that are None (NULL), dicts, or lists of ``(key, item)`` tuples.

    At least as strict as ``pa.array(values, map_type)``: a value that is no dict or list, an
    entry that is no 2-tuple, a NULL key or a key / item its type cannot take raises
    (``TypeError`` or an Arrow error), and the caller's per-value check then decides."""
    present = [value for value in values if value is not None]
    if {dict}.issuperset(map(type, present)):
        keys = list(chain.from_iterable(present))
        items = list(chain.from_iterable(map(dict.values, present)))
    else:
        entries = list(chain.from_iterable(_entries(value) for value in present))
        if set(map(type, entries)) - {tuple} or set(map(len, entries)) - {2}:
            raise TypeError("a map entry is not a (key, item) tuple")
        keys = list(map(itemgetter(0), entries))
        items = list(map(itemgetter(1), entries))
    sizes = [0 if value is None else len(value) for value in values]
    offsets = pa.array(np.cumsum([0, *sizes]), type=pa.int32())  # beyond int32 raises
    mask = pa.array([value is None for value in values], type=pa.bool_())
    return pa.MapArray.from_arrays(
        offsets,
        pa.array(keys, type=map_type.key_type),
        pa.array(items, type=map_type.item_type),
        type=map_type,
        mask=mask,
    )


def _entries(value: Any) -> Iterable[Any]:
    """The entries of one map value: a dict's ``(key, item)`` pairs, a list as it is."""
    if isinstance(value, dict):
        return value.items()
    if not isinstance(value, list):
        raise TypeError(f"a map value must be a dict or a list, not {type(value).__name__}")
    return value


def _checked_arrays(
    rows: list[Row], counts: list[int], fields: list[pa.Field], make_error: ErrorRow
) -> tuple[list[pa.Array], list[int]]:
    """One Arrow array per field, each value converted alone to find those that do not fit;
    and the number of rows of each record.

    When a row holds a value its field's type cannot take, the rows of that row's record are
    replaced by one error row naming the field (the first such field of the record)."""
    take: list[int] = np.repeat(np.arange(len(counts)), counts).tolist()
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
    return arrays, np.bincount(kept_take, minlength=len(counts)).tolist()


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
