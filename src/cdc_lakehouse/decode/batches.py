"""The Arrow batch loop every decoder shares, and the Spark DDL of its output.

A format decoder is a per-message function ``decode_one(value) -> row`` (a dict with one entry
per output field) plus the list of output fields (``pyarrow.Field``). :func:`append_decoded`
turns that pair into a ``DataFrame.mapInArrow`` function, and :func:`output_schema_ddl` gives
the Spark DDL schema ``mapInArrow`` needs. The loop is Arrow-batched: no row-at-a-time UDF, one
Python call per message, one output row per message (a format whose message carries several
changes, DTS Canal JSON, is decoded in SQL: its rows are exploded there).

Nothing disappears and no record fails the batch: a decoder returns a row for every input
message (a decode error is a row with ``decode_error`` set), and the loop turns anything else a
decoder does on one record (an exception, something other than a row, a value its Arrow field
cannot take) into a ``decoder_error`` row for that record.

The decoded column itself (the raw ``value``) is not passed back unless asked for
(``keep_column``): the models drop it (issue 48). A batch is decoded in parts of at most
:data:`BATCH_BYTES` of input and sent in batches of at most :data:`BATCH_BYTES` (halved until
they fit; one row may be larger), and when the rows of a part do not become Arrow arrays (a
value its field cannot take, or over 2 GiB in one column), the part is split until the record
at fault is alone, which becomes a ``decoder_error`` row.

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
DecodeOne = Callable[[Any], Row]
ErrorRow = Callable[[str, str], Row]
"""``(reason, detail) -> row``: the output row of a record that cannot be decoded."""

BATCH_BYTES = 64 * 1024 * 1024
"""Most bytes (Arrow ``nbytes``) of the input values decoded at once and of one output batch
(a part of one input record or one output row excepted): 64 MiB. Simulated batches of
10,000 messages hold 3-26 MiB of values and give 10-35 MiB of output, so they are decoded
and sent whole; the bound keeps the decoder's Python objects and the batches the JVM reads
small when messages are large."""


def append_decoded(
    batches: Iterator[pa.RecordBatch],
    decode_one: DecodeOne,
    fields: Sequence[pa.Field],
    column: str = "value",
    error: ErrorRow | None = None,
    *,
    keep_column: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Append ``fields`` decoded from ``column`` to every batch; pass the other input columns
    through (``column`` too with ``keep_column``).

    No record can fail the batch: when ``decode_one`` raises (a decoder bug: its own errors
    are :class:`~cdc_lakehouse.decode.shared.DecodeError` rows already), returns something
    other than a row, or returns a value that does not fit its Arrow field, that record alone
    becomes one ``error`` row with reason ``decoder_error`` and what went wrong as the detail;
    the others are decoded as usual.

    Args:
        batches: input Arrow batches (``mapInArrow``'s iterator); must have ``column``.
        decode_one: called once per value of ``column``; returns one row dict. Missing keys
            are NULL. A map field's value is a dict or a list of ``(key, item)`` tuples.
        fields: the output fields, in order, appended after the input columns; they include
            ``decode_error`` and ``decode_error_detail``.
        column: the input column holding the raw message (default ``value``).
        error: builds the row of an undecodable record (default: every field NULL except
            ``decode_error`` / ``decode_error_detail``).
        keep_column: pass ``column`` through as well (default: left out, see module doc).

    Yields:
        Batches of the input columns but ``column`` (all of them with ``keep_column``),
        followed by ``fields``: one row per input row, in order, in one batch or, beyond
        :data:`BATCH_BYTES`, in several.
    """
    fields = list(fields)
    names = [field.name for field in fields]
    make_error = error or (lambda reason, detail: error_row(names, reason, detail))
    for batch in batches:
        passed = batch if keep_column else batch.drop_columns([column])
        schema = pa.schema([*passed.schema, *fields])
        for start, piece in _bounded(batch.select([column])):
            with _cyclic_gc_paused():
                rows = _decode_rows(piece.column(0).to_pylist(), decode_one, make_error)
                parts = _converted(
                    passed.slice(start, piece.num_rows), rows, fields, schema, make_error
                )
                del rows  # not kept alive while the caller holds the batch
            for part in parts:
                for _offset, out in _bounded(part):
                    yield out


def _bounded(batch: pa.RecordBatch, offset: int = 0) -> Iterator[tuple[int, pa.RecordBatch]]:
    """``(first row, slice)`` of ``batch`` (zero-copy), halved until each slice holds at most
    :data:`BATCH_BYTES` or one row; the whole batch when it fits (an empty one too)."""
    if batch.num_rows <= 1 or batch.nbytes <= BATCH_BYTES:
        yield offset, batch
        return
    half = batch.num_rows // 2
    yield from _bounded(batch.slice(0, half), offset)
    yield from _bounded(batch.slice(half), offset + half)


def _converted(
    passed: pa.RecordBatch,
    rows: list[Row],
    fields: list[pa.Field],
    schema: pa.Schema,
    make_error: ErrorRow,
) -> list[pa.RecordBatch]:
    """The output batches of records ``passed`` (their pass-through columns) decoded into
    ``rows`` (one per record, in order): one, or, when the rows do not become Arrow arrays,
    those of each half of the records, down to a single record that becomes an error row."""
    try:
        return [_record_batch(passed, rows, fields, schema)]
    except _NOT_ARROW as exc:
        if len(rows) == 1:
            bad = _unfit_row(rows[0], fields, make_error, exc)
            return [_record_batch(passed, [bad], fields, schema)]
        half = len(rows) // 2
        return [
            *_converted(passed.slice(0, half), rows[:half], fields, schema, make_error),
            *_converted(passed.slice(half), rows[half:], fields, schema, make_error),
        ]


def _record_batch(
    passed: pa.RecordBatch, rows: list[Row], fields: list[pa.Field], schema: pa.Schema
) -> pa.RecordBatch:
    """One output batch: ``passed``, then ``fields``.

    Raises:
        One of ``_NOT_ARROW`` when a value does not fit its field or a column does not fit
        one Arrow array."""
    arrays = _fast_arrays(rows, fields)
    return pa.RecordBatch.from_arrays([*passed.columns, *arrays], schema=schema)


def _unfit_row(row: Row, fields: list[pa.Field], make_error: ErrorRow, exc: Exception) -> Row:
    """The error row of one record whose ``row`` did not become Arrow arrays (``exc``):
    ``decoder_error`` naming the first field with a value its type cannot take, else
    ``exc`` itself."""
    for field in fields:
        try:
            _one_array([row.get(field.name)], field)
        except _NOT_ARROW as misfit:
            detail = f"{field.name} does not fit {field.type}: {bug_detail(misfit)}"
            return make_error(DECODER_ERROR, detail)
    return make_error(DECODER_ERROR, bug_detail(exc))


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


def _decode_rows(values: list[Any], decode_one: DecodeOne, make_error: ErrorRow) -> list[Row]:
    """Decode every value: the output rows, one per value, in order.

    A decoder that raises or returns something other than a row (a dict) gives one
    ``decoder_error`` row for that value."""
    rows: list[Row] = []
    for value in values:
        try:
            decoded = decode_one(value)
            if not isinstance(decoded, dict):
                kind = type(decoded).__name__
                raise TypeError(f"the decoder returned a {kind}, not one row for the record")
        except Exception as exc:  # a decoder bug costs this record, not the batch
            decoded = make_error(DECODER_ERROR, bug_detail(exc))
        rows.append(decoded)
    return rows


_NOT_ARROW = (pa.ArrowException, TypeError, ValueError, OverflowError)


def _one_array(values: Sequence[Any], field: pa.Field) -> pa.Array:
    """``pa.array(values, field.type)`` as one array.

    Raises:
        pa.ArrowCapacityError: more data than one Arrow array holds (a string or binary column
            over :data:`_ARRAY_CAPACITY` bytes, e.g. rows repeating one large text): found
            from the values' lengths before converting them when they are that many
            characters, else from a result of several chunks.
        One of ``_NOT_ARROW`` for a value the field's type cannot take."""
    over = f"over the {_ARRAY_CAPACITY:,} bytes one Arrow array holds"
    if pa.types.is_string(field.type) or pa.types.is_binary(field.type):
        length = sum(map(len, filter(None, values)))
        if length > _ARRAY_CAPACITY:
            raise pa.ArrowCapacityError(f"{field.name}: {length:,} characters, {over}")
    array = pa.array(values, type=field.type)
    if isinstance(array, pa.ChunkedArray):
        raise pa.ArrowCapacityError(f"{field.name}: {over}")
    return array


def _fast_arrays(rows: list[Row], fields: list[pa.Field]) -> list[pa.Array]:
    """One Arrow array per field from the rows, converted column by column.

    Raises:
        One of ``_NOT_ARROW`` when a value does not fit its field or a column does not fit
        one Arrow array (which record is then found by :func:`_converted`)."""
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
    return [arrays[i] if i in arrays else _one_array(columns[i], f) for i, f in enumerate(fields)]


def _map_arrays(columns: list[Sequence[Any]], map_type: pa.MapType) -> list[pa.MapArray]:
    """The map arrays of several columns of one map type; each distinct map object is
    converted once.

    Rows often share a map object: an image that is a message's element as sent, a decoder's
    cached type maps. The distinct objects
    (by identity; all are alive in the rows) form one pool array, and each column takes its
    rows from the pool (an Arrow copy, much cheaper than converting Python strings again).

    Raises:
        pa.ArrowCapacityError: a column would hold more entries, key bytes or item bytes than
            one Arrow array holds (:data:`_ARRAY_CAPACITY`; rows repeating one large map
            can), found from the pool's offsets before any copy."""
    values = list(chain.from_iterable(columns))
    ids = list(map(id, values))
    by_id = dict(zip(ids, values, strict=True))
    position = {object_id: index for index, object_id in enumerate(by_id)}
    pool = _map_array(list(by_id.values()), map_type)  # None, if any, is a NULL map
    indices = pa.array(list(map(position.__getitem__, ids)), type=pa.int32())
    sizes = _map_sizes(pool)
    arrays = []
    start = 0
    for column in columns:
        taken = indices.slice(start, len(column))
        rows = taken.to_numpy()
        for what, size in sizes.items():
            total = int(size[rows].sum(dtype=np.int64))
            if total > _ARRAY_CAPACITY:
                raise pa.ArrowCapacityError(
                    f"{len(column):,} maps of {total:,} {what}, over the "
                    f"{_ARRAY_CAPACITY:,} one Arrow array holds"
                )
        arrays.append(pool.take(taken))
        start += len(column)
    return arrays


_ARRAY_CAPACITY = 2**31 - 1
"""Most entries of one list / map array and most bytes of one string / binary array (their
offsets are int32)."""


def _map_sizes(pool: pa.MapArray) -> dict[str, np.ndarray]:
    """Per map of ``pool``: its number of entries, and the bytes of its keys and of its items
    when they are strings or binary (what the arrays taken from the pool add up)."""
    offsets = pool.offsets.to_numpy()
    sizes = {"entries": np.diff(offsets)}
    for what, child in (("key bytes", pool.keys), ("item bytes", pool.items)):
        if pa.types.is_string(child.type) or pa.types.is_binary(child.type):
            value_offsets = np.frombuffer(
                child.buffers()[1], dtype=np.int32, count=len(child) + 1, offset=4 * child.offset
            )
            sizes[what] = np.diff(value_offsets[offsets])
    return sizes


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


def output_schema_ddl(
    input_schema_ddl: str,
    fields: Sequence[pa.Field],
    column: str = "value",
    *,
    keep_column: bool = False,
) -> str:
    """Spark DDL of :func:`append_decoded`'s output: the input DDL (``"name type, ..."``)
    without the decoded ``column`` (unless ``keep_column``), then ``fields``."""
    passed = input_schema_ddl if keep_column else _without_column(input_schema_ddl, column)
    decoded = ", ".join(f"{field.name} {spark_type(field.type)}" for field in fields)
    return f"{passed}, {decoded}" if passed else decoded


def _without_column(schema_ddl: str, column: str) -> str:
    """A Spark DDL schema (``"name type, ..."``) without the column ``column`` (the DDL
    unchanged when it has none); commas inside ``<...>`` / ``(...)`` types do not split."""
    entries: list[str] = []
    depth = 0
    start = 0
    for index, char in enumerate(schema_ddl):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == "," and depth == 0:
            entries.append(schema_ddl[start:index].strip())
            start = index + 1
    entries.append(schema_ddl[start:].strip())
    kept = [entry for entry in entries if entry.split(None, 1)[0].strip("`") != column]
    return ", ".join(kept)
