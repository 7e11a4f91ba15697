"""Schema changes of a table from two versions of its declared structure (Qlik metadata).

Qlik Replicate sends no DDL text: after a source DDL it sends a new metadata (MD) message with
``tableVersion`` incremented and the table's new ``tableStructure`` (docs/formats.md section 5, seed
004). :func:`structure_changes` derives the column changes from the previous and the new
structure, in the same vocabulary as :func:`cdc_lakehouse.ddl.translate.translate`:

- a column at the same position with a new name, the same type, whose old name is gone and
  whose new name is new: ``rename_column`` (Qlik keeps a renamed column's ordinal; a drop plus
  an add at the same position with the same type cannot be told apart from a rename - the
  rename is the likelier reading);
- a column only in the previous structure: ``drop_column``;
- a column only in the new structure: ``add_column`` (with its position: ``FIRST`` /
  ``AFTER <previous column>``);
- a column in both with another declared type: ``change_column_type``.

Spark types come from the seed ``cdc_type_mappings`` (family ``qlik``) through
:func:`cdc_lakehouse.codegen.type_mapping.resolve`, the same mapping typed gold uses; an
unmapped type is ``string``. Structures are ordered mappings column -> declared type text in
ordinal order, as ``stg_qlik__events.column_types`` holds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from cdc_lakehouse.codegen.type_mapping import TypeMapping, resolve
from cdc_lakehouse.ddl.translate import SchemaChange

QLIK_FAMILY = "qlik"


def quote(name: str) -> str:
    """A Spark identifier: ``name`` in backticks (a backtick doubled)."""
    return "`" + name.replace("`", "``") + "`"


def quote_table(parts: Sequence[str]) -> str:
    """A multipart Spark table identifier, each part quoted."""
    return ".".join(quote(p) for p in parts)


def spark_type_of(type_text: str | None, mappings: Mapping[tuple[str, str], TypeMapping]) -> str:
    """The Spark type of a Qlik declared type (``string`` when unmapped or undeclared)."""
    return resolve(QLIK_FAMILY, type_text, mappings).spark_type


def created_table(
    table: Sequence[str],
    structure: Mapping[str, str | None],
    mappings: Mapping[tuple[str, str], TypeMapping],
    version: str | None,
) -> SchemaChange:
    """The first structure of a table: a ``create_table`` with its columns (the table as the
    first metadata message declares it; there is no earlier version to compare)."""
    columns = tuple((name, spark_type_of(t, mappings)) for name, t in structure.items())
    body = ", ".join(f"{quote(n)} {t.upper()}" for n, t in columns)
    return SchemaChange(
        kind="create_table",
        status="translated",
        spark_sql=f"CREATE TABLE IF NOT EXISTS {quote_table(table)} ({body})",
        table=".".join(table),
        columns=columns,
        reason=f"first metadata message of the table (tableVersion {version}): the structure "
        "as declared, no earlier version to compare",
    )


def structure_changes(
    table: Sequence[str],
    previous: Mapping[str, str | None],
    current: Mapping[str, str | None],
    mappings: Mapping[tuple[str, str], TypeMapping],
) -> list[SchemaChange]:
    """The column changes from ``previous`` to ``current`` (see module doc), renames first,
    then drops, adds and type changes, each in column order. Empty when the structures declare
    the same columns and types."""
    name = ".".join(table)
    target = quote_table(table)
    old_names, new_names = list(previous), list(current)
    renamed: dict[str, str] = {}
    for position, old in enumerate(old_names):
        if position >= len(new_names):
            break
        new = new_names[position]
        if (
            old != new
            and old not in current
            and new not in previous
            and previous[old] == current[new]
        ):
            renamed[old] = new
    changes = [
        SchemaChange(
            kind="rename_column",
            status="translated",
            spark_sql=f"ALTER TABLE {target} RENAME COLUMN {quote(old)} TO {quote(new)}",
            table=name,
            column=old,
            new_name=new,
        )
        for old, new in renamed.items()
    ]
    for old in old_names:
        if old not in current and old not in renamed:
            changes.append(
                SchemaChange(
                    kind="drop_column",
                    status="translated",
                    spark_sql=f"ALTER TABLE {target} DROP COLUMN {quote(old)}",
                    table=name,
                    column=old,
                )
            )
    added_names = set(renamed.values())
    for position, new in enumerate(new_names):
        if new in previous or new in added_names:
            continue
        spark_type = spark_type_of(current[new], mappings)
        after = f"AFTER {quote(new_names[position - 1])}" if position else "FIRST"
        changes.append(
            SchemaChange(
                kind="add_column",
                status="translated",
                spark_sql=f"ALTER TABLE {target} ADD COLUMNS ({quote(new)} "
                f"{spark_type.upper()} {after})",
                table=name,
                column=new,
                new_spark_type=spark_type,
            )
        )
    for new in new_names:
        if new in previous and (previous[new] or "") != (current[new] or ""):
            spark_type = spark_type_of(current[new], mappings)
            changes.append(
                SchemaChange(
                    kind="change_column_type",
                    status="translated",
                    spark_sql=f"ALTER TABLE {target} ALTER COLUMN {quote(new)} TYPE "
                    f"{spark_type.upper()}",
                    table=name,
                    column=new,
                    new_spark_type=spark_type,
                    reason=f"declared type {previous[new]} -> {current[new]}",
                )
            )
    return changes
