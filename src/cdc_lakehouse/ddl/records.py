"""The schema changes of one captured DDL record, whatever its format.

A DDL record is a row of ``silver.captured_ddl`` (one per schema-change record of any format,
as sent). :func:`record_changes` turns it into one or more :class:`ChangeRow` (never zero, never
an exception: what cannot be translated is kept with its status and reason):

- DataWorks / DataHub Blob (``payload.ddl.text``), DTS Canal JSON (``sql``), DTS Avro
  (``afterImages`` of an ``operation = DDL`` record) and Shareplex ``TRUNCATE`` (staging writes
  ``TRUNCATE TABLE <meta.table>``): the statement is translated by
  :func:`cdc_lakehouse.ddl.translate.translate` in the record's dialect (the topic's registry
  ``source_dialect``, else the message's db type).
- Shareplex ``DROP COLUMN``: no statement; the message (docs/formats.md 4b, seed 003 lists the op
  without a payload description) names the dropped column(s) as the keys of ``data`` (else of
  ``key``); the change is a ``drop_column`` per column.
- Qlik metadata (``METADATA``): the difference between the table's previous declared structure
  and this one (:mod:`cdc_lakehouse.ddl.structure_diff`); the first structure of a table is a
  ``create_table``; a repeated ``tableVersion`` is ``other`` (nothing changed).

The table a change applies to (:func:`change_identity`): the record's own table when it names
one, else the table the statement names, split as ``database.table`` in MySQL-family dialects
and ``schema.table`` otherwise (``database.schema.table`` for three parts).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cdc_lakehouse.codegen.type_mapping import TypeMapping
from cdc_lakehouse.ddl.structure_diff import created_table, quote, quote_table, structure_changes
from cdc_lakehouse.ddl.translate import (
    UNPARSEABLE,
    SchemaChange,
    normalize_dialect,
    split_dotted,
    translate,
)
from cdc_lakehouse.decode.json_text import loads

SHAREPLEX_FORMAT = "dts_shareplex_json"
QLIK_FORMATS = ("qlik_json", "qlik_avro")
QLIK_METADATA_OP = "METADATA"


@dataclass(frozen=True)
class DdlRecord:
    """The fields of a ``silver.captured_ddl`` row the translation reads.

    ``column_types`` / ``previous_column_types``: ordered column -> declared type text (Qlik
    metadata: this and the table's previous distinct ``tableVersion``; None elsewhere).
    """

    source_format: str
    ddl_op: str | None
    ddl_text: str | None
    source_dialect: str | None
    source_database: str | None = None
    source_schema: str | None = None
    source_table: str | None = None
    column_types: Mapping[str, str | None] | None = None
    source_schema_version: str | None = None
    previous_column_types: Mapping[str, str | None] | None = None
    previous_schema_version: str | None = None

    @property
    def table_parts(self) -> list[str]:
        """The record's own qualified table name parts (absent parts left out)."""
        return [p for p in (self.source_database, self.source_schema, self.source_table) if p]


@dataclass(frozen=True)
class ChangeRow:
    """One output row: the change, and the source identity it applies to."""

    change: SchemaChange
    source_database: str | None
    source_schema: str | None
    source_table: str | None


def change_identity(record: DdlRecord, change: SchemaChange) -> tuple[str | None, ...]:
    """(database, schema, table) the change applies to (see module doc)."""
    if record.source_table or not change.table:
        return record.source_database, record.source_schema, record.source_table
    parts = split_dotted(change.table)
    if len(parts) >= 3:
        return parts[-3], parts[-2], parts[-1]
    if len(parts) == 2:
        if normalize_dialect(record.source_dialect) in ("mysql", None):
            return parts[0], record.source_schema, parts[1]
        return record.source_database, parts[0], parts[1]
    return record.source_database, record.source_schema, parts[0]


def shareplex_dropped_columns(record: DdlRecord) -> list[SchemaChange]:
    """The ``drop_column`` changes of a Shareplex DROP COLUMN message (see module doc)."""
    table = record.table_parts
    try:
        message = loads(record.ddl_text or "")
        names = [
            *(message.get("data") or {}),
            *([] if message.get("data") else (message.get("key") or {})),
        ]
    except (ValueError, AttributeError, TypeError) as error:
        names, reason = [], f"DROP COLUMN message is not a JSON object: {error}"
    else:
        reason = "DROP COLUMN message names no column (no data or key entries)"
    if not names:
        return [
            SchemaChange(
                kind="drop_column",
                status="unparseable",
                spark_sql=None,
                table=".".join(table) or None,
                reason=reason,
            )
        ]
    return [
        SchemaChange(
            kind="drop_column",
            status="translated",
            spark_sql=f"ALTER TABLE {quote_table(table)} DROP COLUMN {quote(name)}",
            table=".".join(table),
            column=name,
        )
        for name in names
    ]


def qlik_metadata_changes(
    record: DdlRecord, mappings: Mapping[tuple[str, str], TypeMapping]
) -> list[SchemaChange]:
    """The changes a Qlik metadata message declares (see module doc)."""
    table = [p for p in (record.source_schema, record.source_table) if p]
    current = record.column_types or {}
    if record.previous_column_types is None:
        return [created_table(table, current, mappings, record.source_schema_version)]
    changes = structure_changes(table, record.previous_column_types, current, mappings)
    if changes:
        return changes
    same_version = record.previous_schema_version == record.source_schema_version
    return [
        SchemaChange(
            kind="other",
            status="no_spark_equivalent",
            spark_sql=None,
            table=".".join(table),
            reason=(
                f"metadata message repeats tableVersion {record.source_schema_version}"
                if same_version
                else f"tableVersion {record.previous_schema_version} -> "
                f"{record.source_schema_version} changes no column name or type (keys, "
                "nullability or lengths only)"
            ),
        )
    ]


def record_changes(
    record: DdlRecord, mappings: Mapping[tuple[str, str], TypeMapping]
) -> list[ChangeRow]:
    """Every schema change of ``record`` (at least one), with the identity it applies to."""
    if record.source_format in QLIK_FORMATS and (record.ddl_op or "") == QLIK_METADATA_OP:
        changes = qlik_metadata_changes(record, mappings)
    elif record.source_format == SHAREPLEX_FORMAT and (record.ddl_op or "") == "DROP COLUMN":
        changes = shareplex_dropped_columns(record)
    else:
        changes = translate(record.ddl_text, record.source_dialect)
    return [ChangeRow(change, *change_identity(record, change)) for change in changes]


def record_from_row(row: Mapping[str, Any]) -> DdlRecord:
    """A :class:`DdlRecord` from a ``captured_ddl`` row (Arrow ``to_pylist`` form: maps as
    lists of (key, value) pairs or dicts)."""

    def ordered(value: Any) -> dict[str, str | None] | None:
        if value is None:
            return None
        return dict(value.items() if isinstance(value, Mapping) else value)

    fields: dict[str, Any] = {name: row.get(name) for name in DdlRecord.__dataclass_fields__}
    fields["column_types"] = ordered(fields["column_types"])
    fields["previous_column_types"] = ordered(fields["previous_column_types"])
    return DdlRecord(**fields)


def output_values(change_row: ChangeRow, index: int) -> dict[str, Any]:
    """The output columns of one change (see ``cdc_lakehouse.ddl.batches.OUTPUT_FIELDS``)."""
    change = change_row.change
    return {
        "change_index": index,
        "change_kind": change.kind,
        "change_table": change.table,
        "change_source_database": change_row.source_database,
        "change_source_schema": change_row.source_schema,
        "change_source_table": change_row.source_table,
        "column_name": change.column,
        "new_name": change.new_name,
        "new_spark_type": change.new_spark_type,
        "created_columns": [
            {"column_name": name, "spark_type": spark_type} for name, spark_type in change.columns
        ]
        or None,
        "spark_sql": change.spark_sql,
        "translation_status": change.status,
        "translation_reason": change.reason,
    }


def changes_of_rows(
    rows: Sequence[Mapping[str, Any]], mappings: Mapping[tuple[str, str], TypeMapping]
) -> list[dict[str, Any]]:
    """Output rows (``event_id`` plus :func:`output_values`) of ``captured_ddl`` rows.

    A record on which the translation fails unexpectedly (a bug) gives one ``unparseable``
    change whose reason names the exception, so one record never fails the model."""
    out = []
    for row in rows:
        try:
            record = record_from_row(row)
            changes = record_changes(record, mappings)
        except Exception as exc:  # a bug costs this record's translation, visibly
            reason = f"internal error: {type(exc).__name__}: {exc}"
            change = SchemaChange("other", UNPARSEABLE, None, None, reason=reason)
            changes = [ChangeRow(change, None, None, None)]
        for index, change_row in enumerate(changes):
            out.append({"event_id": row["event_id"], **output_values(change_row, index)})
    return out
