"""The baselines' view of the format manifest: each format's :class:`~.plugin_api.Baseline`,
found in its plug-in (:func:`baseline`), and what every baseline shares about formats: the
ordering key's columns (:func:`order_columns`), the Arrow table of changes decoded in Python
(:func:`changes_table`), the value texts (:func:`text`) and the benchmark's keys
(:data:`BENCH_KEYS`).

Each format's baselines live in its plug-in, ``src/cdc_lakehouse/formats/<folder>/baseline.py``
(``BASELINES``, the contract of :mod:`.plugin_api`), where its table, op, row image and
ordering key are described (docs/formats.md gives each format's). A format's plug-in module is
imported the first time a baseline asks for the format, so nothing here names a format and
``--help`` imports no plug-in's baselines.

The ordering key of a change is the tuple of its format plug-in's ordering rule
(``Format.ordering_tuple``, the rule the pipeline's ``ordering_key`` follows too): a tuple
compares part by part, so a duplicate re-delivered later (same key up to its higher offset)
never beats a newer change. Every ordering key ends in the Kafka topic, as the pipeline's do
(macro ``kafka_ordering_tail``): changes with equal format fields, partition and offset (one
table through two topics) order by topic name, and two different changes never tie.

Keys: every baseline takes the tables' key columns as given (:data:`BENCH_KEYS`, the keys of
the simulator's ``shop`` tables), as a hand-written job for known tables would; the pipeline
reads them from the messages where the format carries them and from
``seeds/cdc_declared_keys.csv`` where it does not.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

import pyarrow as pa

from cdc_lakehouse import formats as manifest
from cdc_lakehouse.formats.plugin import Change, Format, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import Baseline, Decoder
from cdc_lakehouse.tools.simulate.generate import default_tables

__all__ = [
    "BENCH_KEYS",
    "FORMATS",
    "ROW_TYPE",
    "Change",
    "Decoder",
    "MissingBaselineError",
    "Value",
    "baseline",
    "changes_schema",
    "changes_table",
    "check_format",
    "order_columns",
    "order_types",
    "plugin_baseline",
    "text",
]

BENCH_KEYS: Mapping[str, tuple[str, ...]] = {
    table.name.lower(): table.key_columns for table in default_tables() if table.key_columns
}
"""Key columns per table (lower-case name) of the benchmark workload:
``customers: (customer_id,)``, ``orders: (order_id, line_no)``."""

FORMATS = frozenset(manifest.NAMES)
"""Every registry format (the format manifest)."""

BASELINE_MODULE = "baseline"
"""The module of a format plug-in package that holds its baselines (``BASELINES``)."""


class MissingBaselineError(LookupError):
    """A format's plug-in has no baselines for it; the message names the format and the file
    to add."""


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
    """Raises ValueError unless ``format_`` is a registry format (the format manifest)."""
    if format_ not in FORMATS:
        raise ValueError(f"unknown format {format_!r}; choose from {sorted(FORMATS)}")


@cache
def baseline(format_: str) -> Baseline:
    """The :class:`~.plugin_api.Baseline` of the registry format ``format_``, from its plug-in
    (:func:`plugin_baseline`), imported on the first call.

    Raises:
        ValueError: ``format_`` is not a registry format.
        MissingBaselineError: see :func:`plugin_baseline`.
    """
    check_format(format_)
    return plugin_baseline(manifest.get(format_))


def plugin_baseline(fmt: Format) -> Baseline:
    """``BASELINES[fmt.name]`` of ``fmt``'s plug-in's ``baseline`` module
    (``cdc_lakehouse.formats.<folder>.baseline``).

    Raises:
        MissingBaselineError: the plug-in has no ``baseline`` module, or its ``BASELINES`` has
            no :class:`~.plugin_api.Baseline` for the format; the message names the format and
            the file to add or complete.
    """
    name = f"{fmt.package}.{BASELINE_MODULE}"
    path = f"src/{name.replace('.', '/')}.py"
    contract = "cdc_lakehouse.tools.bench.baselines.plugin_api"
    try:
        # local: a plug-in's baselines load when a baseline first runs its format, found by name
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:
            raise
        raise MissingBaselineError(
            f"format {fmt.name!r} has no benchmark baselines: add {path} with BASELINES = "
            f"{{{fmt.name!r}: Baseline(...)}} (contract: {contract})"
        ) from None
    found = getattr(module, "BASELINES", {}).get(fmt.name)
    if not isinstance(found, Baseline):
        raise MissingBaselineError(
            f"format {fmt.name!r} has no benchmark baselines: BASELINES of {path} must map it "
            f"to a {contract}.Baseline"
        )
    return found


_ARROW_KINDS = {"int": pa.int64(), "text": pa.string()}
ROW_TYPE = pa.map_(pa.string(), pa.string())
"""Arrow type of a decoded row: column -> value text."""


def order_types(format_: str) -> tuple[pa.DataType, ...]:
    """Arrow types of the ordering key's parts (:func:`order_columns`) of ``format_``, from its
    plug-in's ordering rule: int64, or string for a text part and the topic."""
    return tuple(_ARROW_KINDS[kind] for kind in manifest.get(format_).ordering_kinds())


def changes_schema(format_: str) -> pa.Schema:
    """Arrow schema of :func:`changes_table` for a format decoded in Python: ``tbl`` string,
    the ordering key's parts (:func:`order_columns`, :func:`order_types`), ``is_delete`` bool,
    ``row`` map<string,string>."""
    parts = [
        pa.field(name, kind)
        for name, kind in zip(order_columns(format_), order_types(format_), strict=True)
    ]
    return pa.schema(
        [pa.field("tbl", pa.string()), *parts, pa.field("is_delete", pa.bool_()), ("row", ROW_TYPE)]
    )


def changes_table(changes: Iterable[Change], format_: str) -> pa.Table:
    """Changes of ``format_`` decoded in Python (:attr:`.plugin_api.Baseline.changes`) as Arrow
    (:func:`changes_schema`), values as text (:func:`text`)."""
    schema = changes_schema(format_)
    kinds = order_types(format_)
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
