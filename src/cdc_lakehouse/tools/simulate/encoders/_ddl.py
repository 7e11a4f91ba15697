"""MySQL DDL statement texts of :class:`~cdc_lakehouse.tools.simulate.history.SchemaChange` events,
shared by the encoders whose messages carry the statement (DataWorks / DataHub Blob
``ddl.text``, DTS Canal ``sql``, DTS Avro ``afterImages``).

The texts are what MySQL's binlog logs for the statement as a client typed it, names in
backticks and the table qualified by its database (``schema`` when the spec has one):

- add: ``ALTER TABLE `db`.`t` ADD COLUMN `c` int(11) DEFAULT NULL COMMENT '...' AFTER `p```
  (``FIRST`` for a new first column, no position for a new last one; the comment only when
  the event has one);
- rename, :data:`RENAME_CHANGE` style (DataWorks / DataHub Blob): ``ALTER TABLE `db`.`t`
  CHANGE COLUMN `old` `new` varchar(100) DEFAULT NULL``; :data:`RENAME_TO` style (Canal,
  DTS Avro): ``ALTER TABLE `db`.`t` RENAME COLUMN `old` TO `new```;
- widen: ``ALTER TABLE `db`.`t` MODIFY COLUMN `c` bigint(20) DEFAULT NULL``;
- drop: ``ALTER TABLE `db`.`t` DROP COLUMN `c```.

Column types (MySQL 5.7 spelling, with display widths): int ``int(11)``, bigint
``bigint(20)``, decimal ``decimal(p,s)``, double ``double``, boolean ``tinyint(1)``, string
``varchar(n)`` / ``text``, binary ``varbinary(n)`` / ``blob``, date ``date``, timestamp
``datetime(3)``; ``DEFAULT NULL`` for a nullable column, ``NOT NULL`` otherwise.
"""

from __future__ import annotations

from typing import Final, Literal

from cdc_lakehouse.tools.simulate.history import Column, SchemaChange, TableSpec

RENAME_CHANGE: Final = "change"
RENAME_TO: Final = "rename"
RenameStyle = Literal["change", "rename"]


def quote(name: str) -> str:
    """A MySQL identifier in backticks (a backtick inside doubled)."""
    return "`" + name.replace("`", "``") + "`"


def qualified_name(table: TableSpec) -> str:
    """```db`.`table``` (the spec's schema instead of its database when it has one)."""
    return f"{quote(table.schema or table.database)}.{quote(table.name)}"


def mysql_type(column: Column) -> str:
    """The MySQL column type of ``column`` as a DDL statement spells it (module doc)."""
    match column.type:
        case "int":
            return "int(11)"
        case "bigint":
            return "bigint(20)"
        case "decimal":
            return f"decimal({column.precision or 10},{column.scale or 0})"
        case "double":
            return "double"
        case "boolean":
            return "tinyint(1)"
        case "string":
            return f"varchar({column.length})" if column.length is not None else "text"
        case "binary":
            return f"varbinary({column.length})" if column.length is not None else "blob"
        case "date":
            return "date"
        case "timestamp":
            return "datetime(3)"
    raise ValueError(f"unknown logical type {column.type!r}")


def column_definition(column: Column) -> str:
    """``<type> DEFAULT NULL`` or ``<type> NOT NULL``."""
    return f"{mysql_type(column)} {'DEFAULT NULL' if column.nullable else 'NOT NULL'}"


def _string_literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def statement(change: SchemaChange, *, rename: RenameStyle) -> str:
    """The MySQL statement text of ``change`` (module doc); ``rename`` picks the spelling of a
    column rename (``"change"``: CHANGE COLUMN, ``"rename"``: RENAME COLUMN ... TO)."""
    prefix = f"ALTER TABLE {qualified_name(change.table)}"
    name = quote(change.column)
    match change.kind:
        case "add_column":
            column = change.table.column(change.column)
            names = change.table.column_names
            index = names.index(change.column)
            text = f"{prefix} ADD COLUMN {name} {column_definition(column)}"
            if change.comment is not None:
                text += f" COMMENT {_string_literal(change.comment)}"
            if index == 0:
                text += " FIRST"
            elif index < len(names) - 1:
                text += f" AFTER {quote(names[index - 1])}"
            return text
        case "rename_column":
            if change.new_name is None:
                raise ValueError("a rename_column schema change needs new_name")
            if rename == RENAME_TO:
                return f"{prefix} RENAME COLUMN {name} TO {quote(change.new_name)}"
            column = change.table.column(change.new_name)
            return f"{prefix} CHANGE COLUMN {name} {quote(change.new_name)} " + column_definition(
                column
            )
        case "widen_column":
            column = change.table.column(change.column)
            return f"{prefix} MODIFY COLUMN {name} {column_definition(column)}"
        case "drop_column":
            return f"{prefix} DROP COLUMN {name}"
    raise ValueError(f"unknown schema change kind {change.kind!r}")
