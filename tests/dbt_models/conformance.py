"""The conformance protocol: what a format's cases file gives the tests shared by all formats.

The shared tests (cross-topic ties, the bad-input matrix, schema changes, the decoders'
robustness, the benchmark baselines) hold no per-format entries: they find each format of
the manifest (:data:`cdc_lakehouse.formats.MANIFEST`) and ask its cases file,
``tests/dbt_models/formats/<staging_folder>/cases.py`` (one per staging folder, shared by the
formats of that folder), for these names, each a function of the registry format name:

``cross_topic_case(format_name) -> cross_topic_cases.Case``
    One row of table ``xtopic_items`` through topics ``xtopic.<format>.a`` and ``.b``
    (tests/dbt_models/cross_topic_cases.py; test_cross_topic.py, test_bench_baselines.py).
``fault_matrix(format_name) -> fault_matrix_cases.FaultMatrix``
    The format's good records and bad inputs of topic ``faults.<format>``
    (tests/dbt_models/fault_matrix_cases.py; test_fault_matrix.py, test_decode_robustness.py).
``schema_changes(format_name) -> schema_evolution_cases.SchemaChanges``
    For a format of :data:`cdc_lakehouse.tools.simulate.schema_evolution.SCHEMA_CHANGE_FORMATS`:
    the column changes silver.schema_changes must capture from each batch of its
    schema-evolution stream (test_schema_changes.py, test_simulated_schema_evolution.py).
``broken_records(format_name) -> BrokenRecords | None``
    The broken records of the format's edge cases (the lines its ``dump_lines`` writes) and
    the quarantine reason each must get (test_format_conformance.py); None for a format of
    the folder whose cases hold no broken records of their own.
``number_form_image(format_name, raw: bytes) -> dict[str, str | None]``
    For a JSON format with a Python decoder: the row values (column names lower case) the
    decoder reads from ``raw``, an insert of :func:`fault_matrix_cases.good_message`
    (test_decode_robustness.py).
``truncates(format_name) -> list[Truncate]``
    The truncates of the format's edge cases (the lines its ``dump_lines`` writes): the rows
    silver.table_truncates must hold for them, each placed on the table's ordering key
    (test_row_history.py); an empty list for a format whose records there truncate nothing
    while another format of the folder's do. A cases file none of whose records truncates a
    table sets it to None. (The shared truncate cases, history_cases.py and
    gold_rules_cases.py, list theirs, with their formats, in ``TRUNCATES``.)

Where a check does not apply to a format, its cases file opts out explicitly: it sets the
name to None, with a comment saying why (``fault_matrix = None  # ...``). A format whose cases
file lacks a name it must give fails tests/unit/test_conformance.py (which names the format,
the file and the missing name), and each shared test of that name fails for the format with
the same message.

Everything else a new format needs: its plug-in folder (src/cdc_lakehouse/formats/<folder>/),
its staging folder, its tests package ``tests/dbt_models/formats/<folder>/`` (with
``__init__.py``; its ``cases.py`` with ``dump_lines``, tests/dbt_models/conftest.py, beside the
format's own tests: ``test_pipeline.py``, ``test_decoder.py``, ``test_encoder.py``) and its
rows in seeds/cdc_topics.csv (``faults.<format>``, ``xtopic.<format>.a`` / ``.b``, and
``simddl.<format>`` for a format that sends DDL).
"""

from __future__ import annotations

import base64
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from cdc_lakehouse import formats
from cdc_lakehouse.formats import Format


def _sends_ddl(fmt: Format) -> bool:
    from cdc_lakehouse.tools.simulate.schema_evolution import SCHEMA_CHANGE_FORMATS

    return fmt.name in SCHEMA_CHANGE_FORMATS


NAMES: dict[str, Callable[[Format], bool]] = {
    "cross_topic_case": lambda fmt: True,
    "fault_matrix": lambda fmt: True,
    "schema_changes": _sends_ddl,
    "broken_records": lambda fmt: True,
    "number_form_image": lambda fmt: fmt.decoder is not None and fmt.value_encoding == "json",
    "truncates": lambda fmt: True,
}
"""Every protocol name -> which formats must give it (the others need not)."""


@dataclass(frozen=True)
class BrokenRecords:
    """What ``broken_records(format_name)`` of a cases file returns.

    Attributes:
        where: the SQL condition on silver.quarantine whose rows must be exactly these
            records (e.g. the topic, or the topic and the partition of the broken records).
        records: each broken record as its topic dump line, with the reason it must get.
    """

    where: str
    records: list[tuple[dict[str, Any], str]]


@dataclass(frozen=True)
class Truncate:
    """One row of silver.table_truncates that a cases file's records must give (``truncates``):
    the truncated table as the record names it, and the record's ``ddl_op``."""

    database: str | None
    schema: str | None
    table: str
    ddl_op: str


def raw_value(line: dict[str, Any]) -> bytes | None:
    """The Kafka value bytes of a topic dump line (None: a Kafka NULL value)."""
    if "value_base64" in line:
        return base64.b64decode(line["value_base64"])
    return None if line.get("value") is None else line["value"].encode()


class MissingConformanceError(LookupError):
    """A format's cases file lacks a protocol name it must give (the message says which)."""


def cases_path(format_name: str) -> str:
    """The format's cases file, relative to the repository."""
    return f"tests/dbt_models/formats/{formats.get(format_name).staging_folder}/cases.py"


def cases_module_name(format_name: str) -> str:
    """The format's cases module name, ``tests.dbt_models.formats.<staging_folder>.cases``."""
    return f"tests.dbt_models.formats.{formats.get(format_name).staging_folder}.cases"


def cases_module(format_name: str) -> ModuleType:
    """The format's cases module, ``tests.dbt_models.formats.<staging_folder>.cases``.

    Raises:
        MissingConformanceError: the format has no cases file (or no tests package).
    """
    name = cases_module_name(format_name)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        # the module or its package (tests/dbt_models/formats/<folder>/) is missing
        if exc.name not in (name, name.rsplit(".", 1)[0]):
            raise
        raise MissingConformanceError(
            f"{format_name}: no cases file {cases_path(format_name)} (tests/dbt_models/"
            "conformance.py lists what it gives)"
        ) from None


def applies(format_name: str, name: str) -> bool:
    """Whether ``format_name`` must give the protocol name ``name``."""
    return NAMES[name](formats.get(format_name))


def lookup(format_name: str, name: str) -> Any:
    """What ``format_name``'s cases file gives as ``name``: a function, or None when the
    format opts out of the check.

    Raises:
        MissingConformanceError: the cases file (or the name in it) is missing.
    """
    module = cases_module(format_name)
    if not hasattr(module, name):
        raise MissingConformanceError(
            f"{format_name}: {cases_path(format_name)} has no `{name}` (tests/dbt_models/"
            "conformance.py says what it is; set it to None, with the reason in a comment, "
            "where the check does not apply)"
        )
    return getattr(module, name)


def provide(format_name: str, name: str, *args: Any) -> Any:
    """``lookup(format_name, name)(format_name, *args)``: the format's answer.

    Raises:
        MissingConformanceError: the name is missing or the format opted out of it.
    """
    given = lookup(format_name, name)
    if given is None:
        raise MissingConformanceError(
            f"{format_name}: {cases_path(format_name)} opts out of `{name}` (set to None)"
        )
    return given(format_name, *args)


def _status(name: str) -> dict[str, str]:
    """format name -> ``given``, ``opted out`` or ``missing``, for every format of the
    manifest that must give ``name``."""
    out = {}
    for fmt in formats.MANIFEST:
        if not NAMES[name](fmt):
            continue
        try:
            out[fmt.name] = "opted out" if lookup(fmt.name, name) is None else "given"
        except MissingConformanceError:
            out[fmt.name] = "missing"
    return out


def formats_for(name: str) -> list[str]:
    """The format names (sorted) that a test of ``name`` runs for: every format of the
    manifest that must give it and has not opted out. A format whose cases file lacks the
    name is listed: its test fails with :class:`MissingConformanceError`."""
    return sorted(f for f, status in _status(name).items() if status != "opted out")


def opted_out(name: str) -> list[str]:
    """The format names (sorted) that must give ``name`` but set it to None."""
    return sorted(f for f, status in _status(name).items() if status == "opted out")


def broken_at_end(
    where: str, lines: list[dict[str, Any]], broken: list[tuple[Any, ...]]
) -> BrokenRecords:
    """:class:`BrokenRecords` of the broken records ``broken`` (tuples ending in the reason)
    written as the last ``len(broken)`` of ``lines``."""
    last = lines[len(lines) - len(broken) :]
    return BrokenRecords(
        where, [(line, reason) for line, (*_b, reason) in zip(last, broken, strict=True)]
    )


def provided(name: str) -> dict[str, Any]:
    """format name -> the answer of :func:`provide` (no arguments beyond the format name) for
    every format of :func:`formats_for` whose cases file gives ``name``; formats that lack it
    are left out here (their tests and tests/unit/test_conformance.py fail for them)."""
    out = {}
    for format_name in formats_for(name):
        try:
            out[format_name] = provide(format_name, name)
        except MissingConformanceError:
            continue
    return out
