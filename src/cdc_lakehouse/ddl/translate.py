"""Source DDL text -> one classified :class:`SchemaChange` per change, with its Spark SQL.

A CDC message that carries a schema change holds the statement text as the source database ran
it (DataWorks ``payload.ddl.text``, DTS Canal ``sql`` with ``isDdl``, DTS Avro ``DDL``
``afterImages``; see ``docs/formats.md``).
:func:`translate` parses that text with sqlglot in the source dialect and returns, in statement
order, one :class:`SchemaChange` per change: a multi-clause ``ALTER TABLE`` gives one change per
clause, ``DROP TABLE a, b`` one per table, MySQL ``CHANGE old new type`` a ``rename_column``
followed by a ``change_column_type``. Each change says what it is (``kind``), whether it could be
translated (``status``), the one Spark SQL statement that applies it (``spark_sql``) and its parts
(table, column, new name, Spark type).

Errors: none are raised for any input. Text that cannot be parsed gives ``status='unparseable'``
with the parse error in ``reason``; a change Spark has no counterpart for (indexes, constraints,
grants, views, stored code, DML, storage options) gives ``status='no_spark_equivalent'``.

What is kept and what is dropped (the Spark side is Spark 4.2's SQL grammar):

- Column ``COMMENT`` and MySQL position (``FIRST`` / ``AFTER col``) are kept in ``ADD COLUMNS``.
  ``CHARACTER SET``, ``COLLATE``, ``AUTO_INCREMENT``, ``ON UPDATE``, ``ZEROFILL``, identity and
  generated-column clauses are dropped silently. ``NOT NULL`` and ``DEFAULT`` are dropped and
  named in ``reason``: Spark's parser accepts both in ``ADD COLUMNS``, but Delta rejects
  ``NOT NULL`` for columns added to existing tables, needs a table feature for ``DEFAULT``, and
  source default expressions (``CURRENT_TIMESTAMP ON UPDATE``, ``nextval(...)``, ``SYSDATE``)
  have no reliable Spark form. A ``MODIFY`` / ``ALTER COLUMN`` becomes ``ALTER COLUMN c TYPE t``
  only (a Spark ``ALTER COLUMN`` does one thing); a restated comment or position is noted.
- Spark has no ``IF EXISTS`` on ``ALTER TABLE`` and no ``IF NOT EXISTS`` on ``ADD COLUMNS``:
  both are dropped (the latter is noted). ``DROP COLUMN IF EXISTS`` and ``DROP TABLE IF EXISTS``
  are kept.
- Identifiers keep the case and the qualification as written (``shop.orders``, ``SCOTT.EMP``,
  ``db.dbo.t``); in ``spark_sql`` they are backquoted only when Spark needs it (not a plain ASCII
  name, or an ANSI reserved keyword of Spark 4.2).
- Types map to plain Spark types (:func:`spark_type_of`), written lowercase in
  ``new_spark_type`` / ``columns`` and uppercase in ``spark_sql``.

sqlglot quirks handled here (sqlglot 30.30): MySQL ``RENAME TABLE``, Oracle ``RENAME a TO b``,
Oracle ``MODIFY (...)`` / ``MODIFY c type``, MySQL ``ADD COLUMN (...)``, T-SQL ``ADD CONSTRAINT
... DEFAULT ... FOR c`` and vendor-scripted ``CREATE TABLE`` (Oracle ``NOT NULL ENABLE``,
SQL Server ``ON [PRIMARY]``) fall back to an opaque ``Command`` or a parse error and are handled
by small regular expressions plus per-column re-parsing; T-SQL ``sp_rename`` is read with a
regular expression; PostgreSQL ``ALTER TABLE t RENAME a TO b`` (``COLUMN`` omitted) is parsed as
a table rename and is corrected; sqlglot folds T-SQL ``FLOAT`` and ``REAL``, MySQL ``REAL`` and
``FLOAT``, Oracle ``FLOAT`` and ``BINARY_FLOAT`` into one type and reads Oracle ``LONG`` as
``BIGINT``, so those type keywords are re-tagged at token level before parsing; sqlglot logs
"unsupported syntax" warnings, which are silenced while :func:`translate` runs.

Sources: ``docs/formats.md`` (where DDL text appears in each message format); MySQL 8.0
Reference Manual (ALTER TABLE, CHANGE/MODIFY, RENAME TABLE, data types); Oracle Database SQL
Language Reference (ALTER TABLE, RENAME, data types: NUMBER, DATE, FLOAT); PostgreSQL
documentation (ALTER TABLE, data types); SQL Server Transact-SQL reference (ALTER TABLE,
sp_rename, data types); Spark 4.2 SQL reference (ALTER TABLE, CREATE TABLE, data types, ANSI
reserved keywords).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import ErrorLevel, SqlglotError
from sqlglot.tokens import Token, TokenType

CHANGE_KINDS = (
    "create_table",
    "drop_table",
    "rename_table",
    "truncate",
    "add_column",
    "drop_column",
    "rename_column",
    "change_column_type",
    "index",
    "other",
)
STATUSES = ("translated", "unparseable", "no_spark_equivalent")
TRANSLATED, UNPARSEABLE, NO_SPARK_EQUIVALENT = STATUSES
NO_INDEXES = "Spark tables have no indexes or constraints"
NO_STATEMENT = "no statement text"
MAX_DECIMAL_PRECISION = 38  # Spark's DecimalType limit


@dataclass(frozen=True)
class SchemaChange:
    """One schema change of a DDL statement, classified, with the Spark SQL that applies it.

    - ``kind``: one of :data:`CHANGE_KINDS`; ``status``: one of :data:`STATUSES`.
    - ``spark_sql``: one Spark SQL statement for this change; ``None`` unless ``translated``.
    - ``table``: the table the change applies to, name parts unquoted and joined by ``"."`` as
      written (``"shop.orders"``, ``"orders"``; a part holding a dot is backquoted,
      ``"`order.items`"``, see :func:`split_dotted`); ``None`` when unknown or not a table.
    - ``column``: the column added / dropped / renamed (old name) / retyped.
    - ``new_name``: ``rename_column``: the new column name; ``rename_table``: the new table name
      as written (unquoted, dotted).
    - ``new_spark_type``: ``add_column`` / ``change_column_type``: the Spark type, lowercase, as
      ``pyspark.sql.types.DataType.fromDDL`` and Spark's ``CAST`` accept it (``"decimal(12,2)"``).
    - ``columns``: ``create_table``: ``(column name, Spark type)`` in table order.
    - ``reason``: why the change was not translated (parse error, "Spark tables have no indexes
      or constraints", ...); for a translated change, a note on what was dropped or approximated.

    Raises:
        ValueError: ``kind`` or ``status`` is not one of the listed values.
    """

    kind: str
    status: str
    spark_sql: str | None
    table: str | None
    column: str | None = None
    new_name: str | None = None
    new_spark_type: str | None = None
    columns: tuple[tuple[str, str], ...] = ()
    reason: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in CHANGE_KINDS:
            raise ValueError(f"SchemaChange kind {self.kind!r} is not one of {CHANGE_KINDS}")
        if self.status not in STATUSES:
            raise ValueError(f"SchemaChange status {self.status!r} is not one of {STATUSES}")


# ---------------------------------------------------------------------------------------------
# Dialects

_DIALECT_ALIASES = {
    **dict.fromkeys(
        ("mysql", "mariadb", "polardb", "polardbmysql", "polardbx", "tidb", "drds"), "mysql"
    ),
    "oracle": "oracle",
    **dict.fromkeys(
        ("postgres", "postgresql", "pg", "polardbpg", "polardbpostgresql", "hologres", "ppas"),
        "postgres",
    ),
    **dict.fromkeys(("sqlserver", "mssql", "tsql", "microsoftsqlserver"), "tsql"),
}


def normalize_dialect(name: str | None) -> str | None:
    """A source dialect / database type as messages and the registry spell it -> the sqlglot
    dialect name, or ``None`` when unknown (or ``None``).

    Case, blanks, ``_`` and ``-`` are ignored: ``mysql``, ``MySQL``, ``mariadb``, ``polardb``,
    ``polardb-x``, ``tidb``, ``drds`` -> ``"mysql"``; ``oracle`` -> ``"oracle"``; ``postgres``,
    ``postgresql``, ``PostgreSQL``, ``pg``, ``polardb_pg``, ``hologres``, ``PPAS`` (DTS
    ``sourceType``) -> ``"postgres"``; ``sqlserver``, ``SQLServer``, ``mssql``, ``sql server``,
    ``tsql`` -> ``"tsql"``. Never raises.
    """
    if name is None:
        return None
    key = re.sub(r"[\s_\-]+", "", str(name)).lower()
    return _DIALECT_ALIASES.get(key)


# Type keywords re-tagged before parsing, because sqlglot folds distinct source types into one.
_TOKEN_REWRITES: dict[str | None, dict[str, TokenType]] = {
    "mysql": {"REAL": TokenType.DOUBLE},  # MySQL REAL is DOUBLE (unless REAL_AS_FLOAT)
    "tsql": {"FLOAT": TokenType.DOUBLE},  # T-SQL FLOAT is FLOAT(53); REAL stays FLOAT
    "oracle": {"FLOAT": TokenType.DOUBLE, "LONG": TokenType.TEXT},  # LONG is a character type
}
_MYSQL_SPATIAL_TEXT = (
    "POINT LINESTRING POLYGON MULTIPOINT MULTILINESTRING MULTIPOLYGON GEOMETRYCOLLECTION"
    " GEOMCOLLECTION"
)
_MYSQL_SPATIAL = frozenset(_MYSQL_SPATIAL_TEXT.split())
_LITERAL_TOKENS = frozenset({TokenType.IDENTIFIER, TokenType.STRING, TokenType.NATIONAL_STRING})


def _tokenize(dialect: Dialect, read: str | None, sql: str) -> list[Token]:
    """``sql``'s tokens in ``dialect``, with the type keywords of :data:`_TOKEN_REWRITES`
    re-tagged (and Oracle ``LONG RAW`` / MySQL spatial types made parseable).

    Raises:
        sqlglot.errors.TokenError: the text cannot be tokenized (an unterminated quote ...).
    """
    rewrites = _TOKEN_REWRITES.get(read, {})
    out: list[Token] = []
    for token in dialect.tokenize(sql):
        upper = token.text.upper()
        if token.token_type in _LITERAL_TOKENS:
            out.append(token)
            continue
        if upper in rewrites:
            token.token_type = rewrites[upper]
        elif read == "oracle" and upper == "RAW" and out and out[-1].text.upper() == "LONG":
            out[-1].token_type = TokenType.VARBINARY  # LONG RAW: one binary type
            continue
        elif (
            read == "mysql"
            and upper in _MYSQL_SPATIAL
            and out
            and out[-1].token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        ):
            token.token_type = TokenType.GEOMETRY  # a type right after a column name
        out.append(token)
    return out


def _parse(dialect: Dialect, read: str | None, sql: str) -> list[exp.Expr]:
    """The statements sqlglot parses out of ``sql`` (``None`` results dropped).

    Raises:
        sqlglot.errors.SqlglotError: a token or parse error.
    """
    tokens = _tokenize(dialect, read, sql)
    parser = dialect.parser(error_level=ErrorLevel.RAISE)
    return [expression for expression in parser.parse(tokens, sql) if expression is not None]


class _QuietSqlglot:
    """Disables the ``sqlglot`` logger while any :func:`translate` call runs (re-entrant and
    thread-safe: the previous state is restored when the last caller leaves)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._previous = False

    @contextmanager
    def __call__(self) -> Iterator[None]:
        logger = logging.getLogger("sqlglot")
        with self._lock:
            if self._depth == 0:
                self._previous = logger.disabled
                logger.disabled = True
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0:
                    logger.disabled = self._previous


_quiet_sqlglot = _QuietSqlglot()


_TOKEN_REPR = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: \d+, col: .*?>")


def _short_error(exc: BaseException) -> str:
    """A one-line reason from a sqlglot error (first error: description, line, col, token)."""
    errors = getattr(exc, "errors", None)
    if errors:
        first = errors[0]
        where = f"line {first.get('line')}, col {first.get('col')}"
        near = first.get("highlight")
        description = _TOKEN_REPR.sub(r"'\1'", str(first.get("description")))
        return f"{description} ({where}{f', near {near!r}' if near else ''})"
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else type(exc).__name__)[:200]


# ---------------------------------------------------------------------------------------------
# Spark side: identifiers, literals, types

# Spark 4.2 keywords that cannot be identifiers with spark.sql.ansi.enforceReservedKeywords=true.
_SPARK_RESERVED_TEXT = """
    ALL AND ANY AS AUTHORIZATION BOTH CALL CASE CAST CHECK COLLATE COLLATION COLLATIONS COLUMN
    CONSTRAINT CREATE CROSS CURRENT_DATE CURRENT_PATH CURRENT_SCHEMA CURRENT_TIME
    CURRENT_TIMESTAMP CURRENT_USER DISTINCT ELSE END ESCAPE EXCEPT EXECUTE FALSE FETCH FILTER
    FOR FOREIGN FROM FULL GRANT GROUP HAVING IN INNER INTERSECT INTO IS JOIN LATERAL LEADING
    LEFT NATURAL NOT NULL OFFSET ON ONLY OR ORDER OUTER OVERLAPS PRIMARY RECURSIVE REFERENCES
    RIGHT SELECT SESSION_USER SOME SQL TABLE THEN TIME TO TRAILING UNION UNIQUE UNKNOWN USER
    USING WHEN WHERE WITH WITHIN
"""
_SPARK_RESERVED = frozenset(_SPARK_RESERVED_TEXT.split())
_PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def spark_identifier(name: str) -> str:
    """``name`` as a Spark SQL identifier: as is when plain ASCII and not reserved, else
    backquoted (inner backquotes doubled)."""
    if _PLAIN_IDENTIFIER.match(name) and name.upper() not in _SPARK_RESERVED:
        return name
    return "`" + name.replace("`", "``") + "`"


def _spark_name(parts: tuple[str, ...]) -> str:
    return ".".join(spark_identifier(part) for part in parts)


def _spark_string(text: str) -> str:
    """A Spark SQL string literal (backslash escapes, Spark's default)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


_T = exp.DataType.Type


def _types(names: str) -> list[exp.DType]:
    """The sqlglot types named in ``names`` (blank-separated; names this sqlglot lacks skipped)."""
    return [getattr(_T, name) for name in names.split() if hasattr(_T, name)]


def _exp_classes(names: str) -> tuple[type[exp.Expr], ...]:
    """The sqlglot expression classes named in ``names`` (names this sqlglot lacks skipped)."""
    return tuple(getattr(exp, name) for name in names.split() if hasattr(exp, name))


_PLAIN_TYPES: dict[exp.DType, str] = {}
for _spark, _names in (
    ("boolean", "BOOLEAN"),
    ("tinyint", "TINYINT"),
    ("smallint", "UTINYINT SMALLINT SMALLSERIAL"),
    ("int", "USMALLINT MEDIUMINT UMEDIUMINT INT YEAR"),
    ("bigint", "UINT BIGINT BIGSERIAL"),
    ("decimal(20,0)", "UBIGINT"),
    ("double", "UDOUBLE"),
    ("date", "DATE DATE32"),
    (
        "timestamp",
        "DATETIME DATETIME2 DATETIME64 SMALLDATETIME TIMESTAMP TIMESTAMPTZ TIMESTAMPLTZ"
        " TIMESTAMPNTZ TIMESTAMP_S TIMESTAMP_MS TIMESTAMP_NS",
    ),
    (
        "string",
        "CHAR NCHAR VARCHAR NVARCHAR BPCHAR TEXT TINYTEXT MEDIUMTEXT LONGTEXT NAME ENUM ENUM8"
        " ENUM16 SET JSON JSONB UUID XML TIME TIMETZ INTERVAL INET IPADDRESS HSTORE VARIANT",
    ),
    (
        "binary",
        "BINARY VARBINARY BLOB TINYBLOB MEDIUMBLOB LONGBLOB IMAGE ROWVERSION GEOMETRY GEOGRAPHY",
    ),
):
    _PLAIN_TYPES.update(dict.fromkeys(_types(_names), _spark))

# sqlglot USERDEFINED types by name (Oracle RAW, NCLOB ...; PostgreSQL citext ...).
_USER_DEFINED_TYPES = {
    "RAW": "binary",
    "BFILE": "binary",
    "NCLOB": "string",
    "XMLTYPE": "string",
    "ROWID": "string",
    "UROWID": "string",
    "CITEXT": "string",
    "HIERARCHYID": "string",
    "SYSNAME": "string",
}
_DECIMALS = frozenset(_types("DECIMAL UDECIMAL BIGDECIMAL NUMBER"))
_ORACLE_INTEGERS = frozenset(_types("TINYINT SMALLINT INT BIGINT"))


def _type_params(dtype: exp.DataType) -> list[int | None]:
    """Numeric parameters of a type (``None`` for ``*``, ``MAX`` and other non-numbers)."""
    out: list[int | None] = []
    for param in dtype.expressions:
        value = param.this if isinstance(param, exp.DataTypeParam) else param
        if isinstance(value, exp.Literal) and not value.is_string:
            try:
                out.append(int(value.this))
            except ValueError:
                out.append(None)
        else:
            out.append(None)
    return out


def _decimal_type(
    params: list[int | None], read: str | None, source: str
) -> tuple[str, str | None]:
    if not params or params == [None]:
        if read == "mysql":
            return "decimal(10,0)", None  # MySQL DECIMAL = DECIMAL(10,0)
        if read == "tsql":
            return "decimal(18,0)", None  # SQL Server DECIMAL = DECIMAL(18,0)
        return "decimal(38,10)", f"{source} without precision mapped to decimal(38,10)"
    precision = params[0] if params[0] is not None else MAX_DECIMAL_PRECISION
    scale = params[1] if len(params) > 1 and params[1] is not None else 0
    if scale < 0:  # Oracle NUMBER(p,-s): integers rounded to 10^s
        precision, scale = precision - scale, 0
    precision = max(precision, scale)  # Oracle NUMBER(p,s) with s > p
    if precision > MAX_DECIMAL_PRECISION:
        return "string", f"{source}: precision {precision} exceeds Spark's 38, mapped to string"
    return f"decimal({precision},{scale})", None


def spark_type_of(dtype: exp.Expr, read: str | None) -> tuple[str, str | None]:
    """A parsed source column type -> ``(Spark type lowercase, note or None)``.

    ``read`` is the sqlglot dialect the type was parsed in (it decides the defaults: MySQL
    ``DECIMAL`` = ``decimal(10,0)``, Oracle ``DATE`` has a time part, T-SQL ``MONEY`` has 4
    decimals, ...). Integers widen for ``UNSIGNED``; Oracle ``NUMBER`` without precision and
    PostgreSQL ``numeric`` become ``decimal(38,10)`` (noted); decimals over 38 digits and types
    Spark lacks become ``string`` (noted). Never raises.
    """
    if not isinstance(dtype, exp.DataType):
        return "string", f"{dtype.sql(dialect=read)} has no Spark type, mapped to string"
    kind = dtype.this
    params = _type_params(dtype)
    source = dtype.sql(dialect=read)
    single = params[0] if len(params) == 1 else None
    if kind in _DECIMALS:
        return _decimal_type(params, read, source)
    if read == "oracle" and kind in _ORACLE_INTEGERS:
        return "decimal(38,0)", None  # Oracle INTEGER / SMALLINT = NUMBER(38)
    if read == "oracle" and kind == _T.DATE:
        return "timestamp", None  # Oracle DATE has a time part
    if kind == _T.MONEY:
        return ("decimal(19,2)" if read == "postgres" else "decimal(19,4)"), None
    if kind == _T.SMALLMONEY:
        return "decimal(10,4)", None
    if kind == _T.SERIAL:  # MySQL SERIAL = BIGINT UNSIGNED; PostgreSQL serial = integer
        return ("decimal(20,0)" if read == "mysql" else "int"), None
    if kind == _T.BIT:
        if not params or params == [1]:
            return "boolean", None
        if read == "mysql" and single is not None and single <= 64:
            return "bigint", None
        return "string", f"{source} mapped to string"
    if kind == _T.FLOAT:  # FLOAT(p) with p > 24 binary digits is a double
        return ("double" if single is not None and single > 24 else "float"), None
    if kind == _T.DOUBLE:  # T-SQL / Oracle FLOAT(p <= 24) (re-tagged as DOUBLE) is a float
        small = read in ("tsql", "oracle") and single is not None and single <= 24
        return ("float" if small else "double"), None
    if kind == _T.USERDEFINED:
        name = str(dtype.args.get("kind") or "").upper()
        if name in _USER_DEFINED_TYPES:
            return _USER_DEFINED_TYPES[name], None
    if kind in _PLAIN_TYPES:
        return _PLAIN_TYPES[kind], None
    return "string", f"{source} has no Spark type, mapped to string"


# ---------------------------------------------------------------------------------------------
# Building changes


def _dotted(parts: Iterable[str]) -> str:
    """Name parts joined by ``.``; a part that holds a dot itself is backquoted
    (:func:`split_dotted` reads it back)."""
    return ".".join(f"`{p}`" if "." in p else p for p in parts)


_DOTTED_PART = re.compile(r"`([^`]*)`|([^.]+)")


def split_dotted(name: str) -> list[str]:
    """The parts of a :attr:`SchemaChange.table` name (``"shop.orders"`` -> ``["shop",
    "orders"]``, ``"`order.items`"`` -> ``["order.items"]``)."""
    return [quoted or plain for quoted, plain in _DOTTED_PART.findall(name)]


def _table_parts(table: exp.Expr | None) -> tuple[str, ...]:
    if table is None:
        return ()
    if isinstance(table, exp.Table):
        return tuple(part.name for part in table.parts)
    return tuple(part for part in table.name.split(".") if part) if table.name else ()


def _join_notes(*notes: str | None) -> str | None:
    kept = [note for note in notes if note]
    return "; ".join(dict.fromkeys(kept)) or None


def _unparseable(reason: str, kind: str = "other", table: str | None = None) -> SchemaChange:
    return SchemaChange(kind, UNPARSEABLE, None, table, reason=reason)


def _no_spark(
    kind: str, table: tuple[str, ...] | None, reason: str, column: str | None = None
) -> SchemaChange:
    return SchemaChange(
        kind, NO_SPARK_EQUIVALENT, None, _dotted(table) if table else None, column, reason=reason
    )


def _index(table: tuple[str, ...] | None, what: str) -> SchemaChange:
    return _no_spark("index", table, f"{what}: {NO_INDEXES}")


@dataclass
class _Column:
    """A source column definition reduced to what Spark keeps."""

    name: str
    spark_type: str | None
    comment: str | None = None
    position: str | None = None  # Spark SQL: "FIRST" or "AFTER col"
    notes: list[str] = field(default_factory=list)  # type approximations
    dropped: list[str] = field(default_factory=list)  # NOT NULL, DEFAULT ...
    key: bool = False  # inline PRIMARY KEY / UNIQUE / REFERENCES / CHECK

    def sql(self, with_position: bool = True) -> str:
        text = f"{spark_identifier(self.name)} {(self.spark_type or 'string').upper()}"
        if self.comment is not None:
            text += f" COMMENT {_spark_string(self.comment)}"
        if with_position and self.position:
            text += f" {self.position}"
        return text


_KEY_CONSTRAINTS = _exp_classes(
    "PrimaryKeyColumnConstraint UniqueColumnConstraint CheckColumnConstraint Reference"
)


def _column(coldef: exp.ColumnDef, read: str | None) -> _Column:
    kind = coldef.args.get("kind")
    spark_type, note = spark_type_of(kind, read) if kind is not None else (None, None)
    column = _Column(coldef.name, spark_type)
    if note:
        column.notes.append(f"{coldef.name}: {note}")
    for constraint in coldef.args.get("constraints") or []:
        option = (
            constraint.args.get("kind") if isinstance(constraint, exp.ColumnConstraint) else None
        )
        if isinstance(option, exp.CommentColumnConstraint):
            text = option.this
            column.comment = text.name if isinstance(text, exp.Literal) else text.sql(dialect=read)
        elif isinstance(option, exp.NotNullColumnConstraint) and not option.args.get("allow_null"):
            column.dropped.append("NOT NULL")
        elif isinstance(option, exp.DefaultColumnConstraint):
            column.dropped.append(f"DEFAULT {option.this.sql(dialect=read)}")
        elif isinstance(option, _KEY_CONSTRAINTS):
            column.key = True
    position = coldef.args.get("position")
    if isinstance(position, exp.ColumnPosition):
        where = str(position.args.get("position") or "").upper()
        if where == "FIRST":
            column.position = "FIRST"
        elif where == "AFTER" and position.this is not None:
            column.position = f"AFTER {spark_identifier(position.this.name)}"
    return column


def _dropped_note(column: _Column) -> str | None:
    if not column.dropped:
        return None
    return f"{', '.join(column.dropped)} not carried over to Spark"


def _add_column(table: tuple[str, ...], column: _Column, if_not_exists: bool) -> SchemaChange:
    name = _dotted(table)
    if column.spark_type is None:
        return SchemaChange(
            "add_column", UNPARSEABLE, None, name, column.name, reason="column has no type"
        )
    sql = f"ALTER TABLE {_spark_name(table)} ADD COLUMNS ({column.sql()})"
    reason = _join_notes(
        *column.notes,
        _dropped_note(column),
        "IF NOT EXISTS dropped (Spark ADD COLUMNS has none)" if if_not_exists else None,
    )
    return SchemaChange(
        "add_column", TRANSLATED, sql, name, column.name, None, column.spark_type, reason=reason
    )


def _change_type(table: tuple[str, ...], column: _Column, *extra_notes: str | None) -> SchemaChange:
    name = _dotted(table)
    if column.spark_type is None:
        return _no_spark(
            "other",
            table,
            f"column {column.name}: only nullability / default / other options change; "
            "not applied in Spark",
            column.name,
        )
    sql = (
        f"ALTER TABLE {_spark_name(table)} ALTER COLUMN {spark_identifier(column.name)} "
        f"TYPE {column.spark_type.upper()}"
    )
    restated = [
        what
        for what, present in (
            ("COMMENT", column.comment is not None),
            ("position", column.position),
        )
        if present
    ]
    reason = _join_notes(
        *column.notes,
        _dropped_note(column),
        f"{' and '.join(restated)} not applied (a Spark ALTER COLUMN does one thing)"
        if restated
        else None,
        *extra_notes,
    )
    return SchemaChange(
        "change_column_type",
        TRANSLATED,
        sql,
        name,
        column.name,
        None,
        column.spark_type,
        reason=reason,
    )


def _rename_column(table: tuple[str, ...], old: str, new: str) -> SchemaChange:
    sql = (
        f"ALTER TABLE {_spark_name(table)} RENAME COLUMN {spark_identifier(old)} "
        f"TO {spark_identifier(new)}"
    )
    return SchemaChange("rename_column", TRANSLATED, sql, _dotted(table), old, new)


def _rename_table(
    table: tuple[str, ...], new: tuple[str, ...], reason: str | None = None
) -> SchemaChange:
    sql = f"ALTER TABLE {_spark_name(table)} RENAME TO {_spark_name(new)}"
    return SchemaChange(
        "rename_table", TRANSLATED, sql, _dotted(table), new_name=_dotted(new), reason=reason
    )


def _drop_column(table: tuple[str, ...], column: str, if_exists: bool) -> SchemaChange:
    sql = (
        f"ALTER TABLE {_spark_name(table)} DROP COLUMN {'IF EXISTS ' if if_exists else ''}"
        f"{spark_identifier(column)}"
    )
    return SchemaChange("drop_column", TRANSLATED, sql, _dotted(table), column)


def _create_table(
    table: tuple[str, ...],
    columns: list[_Column],
    if_not_exists: bool,
    comment: str | None,
    constraints: bool,
    *extra_notes: str | None,
) -> SchemaChange:
    name = _dotted(table)
    untyped = [column.name for column in columns if column.spark_type is None]
    if untyped or not columns:
        why = f"column {untyped[0]} has no type" if untyped else "no column definitions"
        return _unparseable(why, "create_table", name)
    sql = (
        f"CREATE TABLE {'IF NOT EXISTS ' if if_not_exists else ''}{_spark_name(table)} "
        f"({', '.join(column.sql(with_position=False) for column in columns)})"
    )
    if comment is not None:
        sql += f" COMMENT {_spark_string(comment)}"
    dropped = [
        option
        for option in ("NOT NULL", "DEFAULT")
        if any(word.startswith(option) for column in columns for word in column.dropped)
    ]
    reason = _join_notes(
        f"PRIMARY KEY, indexes and constraints dropped ({NO_INDEXES})"
        if constraints or any(column.key for column in columns)
        else None,
        f"column {' and '.join(dropped)} options not carried over to Spark" if dropped else None,
        *(note for column in columns for note in column.notes),
        *extra_notes,
    )
    return SchemaChange(
        "create_table",
        TRANSLATED,
        sql,
        name,
        columns=tuple((column.name, column.spark_type or "string") for column in columns),
        reason=reason,
    )


# ---------------------------------------------------------------------------------------------
# Regular expressions for what sqlglot does not parse

_PART = r"(?:`(?:[^`]|``)+`|\"(?:[^\"]|\"\")+\"|\[(?:[^\]]|\]\])+\]|[^\W\d][\w$#@]*)"
_NAME = rf"{_PART}(?:\s*\.\s*{_PART})*"
_PART_RE = re.compile(_PART)
_NAME_RE = re.compile(_NAME)


def _name_parts(text: str) -> tuple[str, ...]:
    """``"SCOTT"."EMP"`` / ``[dbo].[t]`` / ``db.t`` -> the unquoted parts."""
    parts = []
    for match in _PART_RE.finditer(text):
        part = match.group(0)
        if part[0] == "`":
            part = part[1:-1].replace("``", "`")
        elif part[0] == '"':
            part = part[1:-1].replace('""', '"')
        elif part[0] == "[":
            part = part[1:-1].replace("]]", "]")
        parts.append(part)
    return tuple(parts)


_FLAGS = re.IGNORECASE | re.DOTALL
_STORED_CODE_RE = re.compile(
    r"\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:DEFINER\s*=\s*\S+\s+)?(?:(?:NON)?EDITIONABLE\s+)?"
    r"(?P<what>PROCEDURE|FUNCTION|TRIGGER|EVENT|PACKAGE(?:\s+BODY)?|TYPE\s+BODY)"
    r"|(?P<block>BEGIN|DECLARE)\s)",
    _FLAGS,
)
_OTHER_STATEMENT_RE = re.compile(
    r"\s*(?P<what>(?:CREATE|ALTER|DROP|RENAME)\s+(?:OR\s+REPLACE\s+)?(?:DEFINER\s*=\s*\S+\s+)?"
    r"(?:SQL\s+SECURITY\s+\w+\s+)?(?:ALGORITHM\s*=\s*\w+\s+)?(?:PUBLIC\s+)?"
    r"(?:MATERIALIZED\s+VIEW|VIEW|PROCEDURE|FUNCTION|TRIGGER|EVENT|SEQUENCE|SYNONYM|DATABASE"
    r"(?:\s+LINK)?|SCHEMA|TABLESPACE|USER|ROLE|LOGIN|TYPE|PACKAGE|EXTENSION|PUBLICATION"
    r"|SUBSCRIPTION|POLICY|RULE|DOMAIN|PROFILE|DIRECTORY|SERVER)"
    r"|GRANT|REVOKE|DENY|SET|USE|FLUSH|OPTIMIZE|ANALYZE|CHECK|REPAIR|LOCK|UNLOCK|CALL"
    r"|EXEC(?:UTE)?|SHOW|EXPLAIN|DESCRIBE|DESC|START|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|PURGE"
    r"|KILL|RESET|PRINT|DBCC|AUDIT|NOAUDIT|INSTALL|UNINSTALL|XA|HANDLER|LOAD|VACUUM|REINDEX"
    r"|CLUSTER|REFRESH|NOTIFY|LISTEN|DISCARD|COMMENT|INSERT|UPDATE|DELETE|REPLACE|MERGE|UPSERT"
    r"|SELECT|WITH|VALUES)\b",
    _FLAGS,
)
_DML_WORDS = frozenset({"INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE", "UPSERT", "SELECT"})
_STR = r"N?'((?:[^']|'')*)'"
_SP_RENAME_RE = re.compile(
    rf"\s*(?:EXEC(?:UTE)?\s+)?(?:[\w\[\]]+\s*\.\s*)*\[?sp_rename\]?\s+"
    rf"(?:@objname\s*=\s*)?{_STR}\s*,\s*(?:@newname\s*=\s*)?{_STR}"
    rf"(?:\s*,\s*(?:@objtype\s*=\s*)?{_STR})?\s*\Z",
    _FLAGS,
)
_RENAME_HEAD_RE = re.compile(r"\s*RENAME\s+(?:TABLES?\s+)?", _FLAGS)
_RENAME_PAIR_RE = re.compile(rf"(?P<old>{_NAME})\s+TO\s+(?P<new>{_NAME})\s*(?:,\s*|\Z)", _FLAGS)
_ALTER_TABLE_RE = re.compile(
    rf"\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?(?P<name>{_NAME})(?P<rest>.*)\Z", _FLAGS
)
_CREATE_TABLE_RE = re.compile(
    r"\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?P<temp>(?:GLOBAL\s+|LOCAL\s+|PRIVATE\s+)?"
    r"(?:TEMPORARY|TEMP)\s+)?(?:UNLOGGED\s+)?TABLE\s+(?P<ine>IF\s+NOT\s+EXISTS\s+)?"
    rf"(?P<name>{_NAME})\s*(?P<rest>.*)\Z",
    _FLAGS,
)
_INDEX_RE = re.compile(
    r"\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:(?:UNIQUE|FULLTEXT|SPATIAL|BITMAP|CLUSTERED"
    r"|NONCLUSTERED|COLUMNSTORE)\s+)*INDEX\b.*?\bON\s+(?:TABLE\s+)?(?:ONLY\s+)?"
    rf"(?P<on>{_NAME})|DROP\s+INDEX\b(?:.*?\bON\s+(?P<drop_on>{_NAME}))?)",
    _FLAGS,
)
_SNIFFS = (
    (
        "drop_table",
        re.compile(rf"\s*DROP\s+TABLE\s+(?:IF\s+EXISTS\s+)?(?P<name>{_NAME})\s*\Z", _FLAGS),
    ),
    ("truncate", re.compile(rf"\s*TRUNCATE\s+(?:TABLE\s+)?(?P<name>{_NAME})\s*\Z", _FLAGS)),
    ("rename_table", re.compile(rf"\s*RENAME\s+(?:TABLE\s+)?(?P<name>{_NAME})\s+TO\b", _FLAGS)),
)
# ALTER TABLE clauses, for the fallback when sqlglot cannot parse a statement.
_ALTER_VERBS_TEXT = """
    ADD ALTER CHANGE DROP MODIFY RENAME SET RESET ENGINE CONVERT ALGORITHM LOCK COMMENT
    AUTO_INCREMENT ROW_FORMAT CHARACTER CHARSET DEFAULT COLLATE ENABLE DISABLE MOVE SHRINK
    TRUNCATE COALESCE REORGANIZE EXCHANGE ANALYZE CHECK OPTIMIZE REBUILD REPAIR REMOVE
    PARTITION FORCE OWNER INHERIT NO REPLICA ATTACH DETACH SWITCH CLUSTER LOGGING NOLOGGING
    COMPRESS NOCOMPRESS PARALLEL NOPARALLEL CACHE NOCACHE ALLOCATE DEALLOCATE UPGRADE IMPORT
    DISCARD SPLIT MERGE ORDER KEY_BLOCK_SIZE STATS_PERSISTENT STATS_AUTO_RECALC CHECKSUM
"""
_ALTER_VERBS = frozenset(_ALTER_VERBS_TEXT.split())
_MODIFY_LIST_RE = re.compile(r"\s*MODIFY\s*\((?P<body>.*)\)\s*\Z", _FLAGS)
_MODIFY_ONE_RE = re.compile(r"\s*MODIFY\s+(?:COLUMN\s+)?(?P<element>.+)\Z", _FLAGS)
_ADD_LIST_RE = re.compile(
    r"\s*ADD\s+(?:COLUMNS?\s+)?(?P<ine>IF\s+NOT\s+EXISTS\s+)?\((?P<body>.*)\)\s*\Z", _FLAGS
)
_CONSTRAINT_HEAD = (
    r"(?:CONSTRAINT|PRIMARY|UNIQUE|KEY|INDEX|FOREIGN|CHECK|FULLTEXT|SPATIAL|PERIOD|EXCLUDE"
    r"|SUPPLEMENTAL)\b"
)
_CONSTRAINT_RE = re.compile(rf"\s*{_CONSTRAINT_HEAD}", _FLAGS)
_ADD_ONE_RE = re.compile(
    rf"\s*ADD\s+(?:COLUMN\s+)?(?P<ine>IF\s+NOT\s+EXISTS\s+)?(?!{_CONSTRAINT_HEAD})(?P<element>.+)\Z",
    _FLAGS,
)
_DROP_LIST_RE = re.compile(
    rf"\s*DROP\s*(?:COLUMN\s*)?\((?P<names>\s*{_NAME}(?:\s*,\s*{_NAME})*)\s*\)", _FLAGS
)
_KEY_CLAUSE_RE = re.compile(
    r"\s*(?:(?:ADD|DROP)\s+(?:CONSTRAINT|PRIMARY|UNIQUE|KEY|INDEX|FOREIGN|CHECK|FULLTEXT"
    r"|SPATIAL)\b|(?:ENABLE|DISABLE|VALIDATE|NOVALIDATE)\s+(?:CONSTRAINT|PRIMARY|UNIQUE)\b"
    r"|RENAME\s+(?:INDEX|KEY|CONSTRAINT)\b|ALTER\s+(?:INDEX|CONSTRAINT)\b)",
    _FLAGS,
)
_PARTITION_RE = re.compile(
    r"\s*(?:(?:ADD|DROP|TRUNCATE|COALESCE|REORGANIZE|EXCHANGE|ANALYZE|CHECK|OPTIMIZE|REBUILD"
    r"|REPAIR|DISCARD|IMPORT|SPLIT|MERGE|MOVE|ATTACH|DETACH|MODIFY)\s+(?:SUB)?PARTITION"
    r"|REMOVE\s+PARTITIONING|PARTITION\s+BY|SWITCH\b)",
    _FLAGS,
)
_RENAME_TO_RE = re.compile(rf"\s*RENAME\s+(?:TO\s+|AS\s+)?(?P<name>{_NAME})\s*\Z", _FLAGS)
_SET_SCHEMA_RE = re.compile(rf"\s*SET\s+SCHEMA\s+(?P<schema>{_NAME})\s*\Z", _FLAGS)


def _clip(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _head(sql: str, words: int = 2) -> str:
    return " ".join(sql.split()[:words]).upper()


# ---------------------------------------------------------------------------------------------
# Translation


def translate(ddl_text: str | None, dialect: str | None) -> list[SchemaChange]:
    """Parse ``ddl_text`` in the (normalized, :func:`normalize_dialect`) source dialect and
    return one :class:`SchemaChange` per change, in statement order.

    Several statements separated by ``;`` are translated one by one (T-SQL ``GO`` lines and
    Oracle ``/`` lines count as separators). Stored code (``CREATE PROCEDURE``, ``BEGIN ... END``)
    is one ``other`` change for the whole text.

    Errors: never raises. Empty or ``None`` text -> one ``unparseable`` change with reason
    ``"no statement text"``; a statement sqlglot cannot parse -> ``unparseable`` with the parse
    error as reason (kind and table from the leading keywords when they are unambiguous); an
    unknown or missing dialect -> parsed with sqlglot's default dialect, said in every reason.
    """
    if ddl_text is None or not str(ddl_text).strip():
        return [_unparseable(NO_STATEMENT)]
    read = normalize_dialect(dialect)
    note = None
    if read is None:
        said = f"unknown dialect {dialect!r}" if dialect else "no dialect given"
        note = f"{said}: parsed with sqlglot's default dialect"
    with _quiet_sqlglot():
        try:
            changes = _translate_text(str(ddl_text), read)
        except Exception as exc:  # last resort: a sqlglot bug must not stop a Spark task
            changes = [_unparseable(f"internal error: {type(exc).__name__}: {_clip(str(exc))}")]
    if note:
        changes = [replace(change, reason=_join_notes(change.reason, note)) for change in changes]
    return changes


_GO_LINE = re.compile(r"^[ \t]*GO[ \t]*(?:\d+[ \t]*)?$", re.IGNORECASE | re.MULTILINE)
_SLASH_LINE = re.compile(r"^[ \t]*/[ \t]*$", re.MULTILINE)


def _translate_text(text: str, read: str | None) -> list[SchemaChange]:
    dialect = Dialect.get_or_raise(read)
    if read == "tsql":
        text = _GO_LINE.sub(";", text)
    if read == "oracle":
        text = _SLASH_LINE.sub(";", text)
    stored = _STORED_CODE_RE.match(text)
    if stored:
        what = f"CREATE {stored['what']}" if stored["what"] else f"{stored['block']} ... END"
        what = " ".join(what.split()).upper()
        return [_no_spark("other", None, f"{what}: stored code has no Spark equivalent")]
    try:
        tokens = dialect.tokenize(text)
    except SqlglotError as exc:
        return [_unparseable_statement(text, _short_error(exc))]
    changes: list[SchemaChange] = []
    for start, end in _statement_spans(tokens):
        changes.extend(_translate_statement(text[start:end], read, dialect))
    return changes or [_unparseable(NO_STATEMENT)]


def _statement_spans(tokens: list[Token]) -> list[tuple[int, int]]:
    """``(start, end)`` text offsets of the statements between ``;`` tokens."""
    spans: list[tuple[int, int]] = []
    start = end = -1
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if start >= 0:
                spans.append((start, end))
            start = -1
            continue
        if start < 0:
            start = token.start
        end = token.end + 1
    if start >= 0:
        spans.append((start, end))
    return spans


def _translate_statement(sql: str, read: str | None, dialect: Dialect) -> list[SchemaChange]:
    special = _special_statement(sql)
    if special is not None:
        return special
    try:
        expressions = _parse(dialect, read, sql)
    except SqlglotError as exc:
        return _fallback(sql, read, dialect, _short_error(exc))
    changes: list[SchemaChange] = []
    for expression in expressions:
        changes.extend(_from_expression(expression, sql, read, dialect))
    return changes


def _special_statement(sql: str) -> list[SchemaChange] | None:
    """T-SQL ``sp_rename`` and MySQL ``RENAME TABLE`` / Oracle ``RENAME``, which sqlglot does
    not parse into a rename; ``None`` for anything else."""
    match = _SP_RENAME_RE.match(sql)
    if match:
        objname, newname, objtype = (
            None if g is None else g.replace("''", "'") for g in match.groups()
        )
        assert objname is not None and newname is not None  # the pattern's first two groups
        return [_sp_rename(objname, newname, objtype)]
    head = _RENAME_HEAD_RE.match(sql)
    if head:
        changes = []
        position = head.end()
        while position < len(sql):
            pair = _RENAME_PAIR_RE.match(sql, position)
            if pair is None:
                return None
            changes.append(_rename_table(_name_parts(pair["old"]), _name_parts(pair["new"])))
            position = pair.end()
        return changes or None
    return None


def _sp_rename(objname: str, newname: str, objtype: str | None) -> SchemaChange:
    """``EXEC sp_rename 'dbo.t.a', 'b', 'COLUMN'`` and friends (SQL Server sp_rename)."""
    parts = _name_parts(objname)
    what = (objtype or "").strip().upper()
    if what == "COLUMN" and len(parts) >= 2:
        return _rename_column(parts[:-1], parts[-1], newname)
    if what in ("INDEX", "STATISTICS"):
        return _index(parts[:-1] or None, f"sp_rename of {what.lower()} {objname}")
    if what in ("", "OBJECT") and parts:
        note = "sp_rename OBJECT: assumed to rename a table" if what else None
        return _rename_table(parts, (newname,), note)
    return _no_spark("other", None, f"sp_rename of {what.lower() or 'object'} {objname}")


def _from_expression(
    expression: exp.Expr, sql: str, read: str | None, dialect: Dialect
) -> list[SchemaChange]:
    if isinstance(expression, exp.Command):
        return _fallback(sql, read, dialect, "sqlglot parsed it only as an opaque command")
    if isinstance(expression, exp.Alter):
        return _from_alter(expression, _table_parts(expression.this), read, dialect)
    if isinstance(expression, exp.Create):
        return _from_create(expression, read)
    if isinstance(expression, exp.Drop):
        return _from_drop(expression)
    if isinstance(expression, exp.TruncateTable):
        return [_truncate(table) for table in expression.expressions]
    if isinstance(expression, exp.Comment):
        target = expression.this
        if isinstance(target, exp.Column):
            table = tuple(part.name for part in target.parts[:-1])
            return [
                _no_spark(
                    "other", table, "COMMENT ON COLUMN: comments are not replicated", target.name
                )
            ]
        return [_no_spark("other", _table_parts(target), "COMMENT ON: comments are not replicated")]
    if isinstance(expression, _STATEMENTS):
        word = _head(sql, 1)
        what = "DML statement" if word in _DML_WORDS else "statement"
        return [_no_spark("other", None, f"{word} {what}: no Spark schema change")]
    return [_unparseable_statement(sql, f"not a DDL statement ({type(expression).__name__})")]


_STATEMENTS = _exp_classes(
    "Query Insert Update Delete Merge Grant Revoke Use Set Analyze Transaction Commit Rollback"
    " Describe Show Pragma Cache Uncache Refresh LoadData Copy Kill Execute"
)


def _truncate(table_expression: exp.Expr) -> SchemaChange:
    table = _table_parts(table_expression)
    if table_expression.args.get("partition") is not None:
        return _no_spark(
            "truncate", table, "TRUNCATE of source partitions: they are not Spark partitions"
        )
    return SchemaChange(
        "truncate", TRANSLATED, f"TRUNCATE TABLE {_spark_name(table)}", _dotted(table)
    )


def _from_create(expression: exp.Create, read: str | None) -> list[SchemaChange]:
    kind = str(expression.args.get("kind") or "").upper()
    target = expression.this
    if "INDEX" in kind:
        table = target.args.get("table") if isinstance(target, exp.Index) else None
        return [_index(_table_parts(table) or None, f"CREATE {kind}")]
    if kind != "TABLE":
        return [_no_spark("other", None, f"CREATE {kind or 'statement'} has no Spark equivalent")]
    schema = target if isinstance(target, exp.Schema) else None
    table = _table_parts(schema.this if schema is not None else target)
    properties = expression.args.get("properties")
    props = list(properties.expressions) if properties is not None else []
    if any(isinstance(prop, exp.TemporaryProperty) for prop in props):
        return [_no_spark("create_table", table, "temporary tables are not replicated")]
    if_not_exists = bool(expression.args.get("exists"))
    like = next((prop for prop in props if isinstance(prop, exp.LikeProperty)), None)
    if like is not None:
        source = _table_parts(like.this)
        sql = (
            f"CREATE TABLE {'IF NOT EXISTS ' if if_not_exists else ''}{_spark_name(table)} "
            f"LIKE {_spark_name(source)}"
        )
        return [
            SchemaChange(
                "create_table",
                TRANSLATED,
                sql,
                _dotted(table),
                reason=f"columns copied from {_dotted(source)}",
            )
        ]
    if schema is None:
        what = "AS SELECT" if expression.args.get("expression") is not None else "without columns"
        return [
            _no_spark(
                "create_table", table, f"CREATE TABLE ... {what}: the columns are not declared"
            )
        ]
    columns = [
        _column(item, read) for item in schema.expressions if isinstance(item, exp.ColumnDef)
    ]
    constraints = any(not isinstance(item, exp.ColumnDef) for item in schema.expressions)
    comment = next(
        (prop.this.name for prop in props if isinstance(prop, exp.SchemaCommentProperty)), None
    )
    return [_create_table(table, columns, if_not_exists, comment, constraints)]


def _from_drop(expression: exp.Drop) -> list[SchemaChange]:
    kind = str(expression.args.get("kind") or "").upper()
    if "INDEX" in kind:
        on = expression.args.get("cluster")
        table = _table_parts(on.this) if isinstance(on, exp.OnProperty) else ()
        return [_index(table or None, f"DROP {kind}")]
    if kind != "TABLE":
        return [_no_spark("other", None, f"DROP {kind or 'statement'} has no Spark equivalent")]
    changes = []
    for table_expression in expression.expressions or expression.args.get("tables") or []:
        table = _table_parts(table_expression)
        if expression.args.get("temporary"):
            changes.append(_no_spark("drop_table", table, "temporary tables are not replicated"))
            continue
        if_exists = "IF EXISTS " if expression.args.get("exists") else ""
        changes.append(
            SchemaChange(
                "drop_table",
                TRANSLATED,
                f"DROP TABLE {if_exists}{_spark_name(table)}",
                _dotted(table),
            )
        )
    return changes


def _from_alter(
    expression: exp.Alter, table: tuple[str, ...], read: str | None, dialect: Dialect
) -> list[SchemaChange]:
    kind = str(expression.args.get("kind") or "").upper()
    if kind != "TABLE":
        return [_no_spark("other", None, f"ALTER {kind or 'statement'} has no Spark equivalent")]
    actions = expression.args.get("actions") or []
    options = expression.args.get("options") or []
    if not actions:
        what = ", ".join(option.sql(dialect=read) for option in options) or "no clause"
        return [_no_spark("other", table, f"ALTER TABLE {_clip(what)}: table options only")]
    to_table = next((opt for opt in options if isinstance(opt, exp.ToTableProperty)), None)
    changes: list[SchemaChange] = []
    for action in actions:
        if isinstance(action, exp.AlterRename) and to_table is not None:
            # PostgreSQL "RENAME a TO b" (COLUMN omitted): sqlglot reads a table rename
            changes.append(_rename_column(table, action.this.name, to_table.this.name))
        else:
            changes.extend(_alter_action(action, table, read, dialect))
    return changes


def _alter_action(
    action: exp.Expr, table: tuple[str, ...], read: str | None, dialect: Dialect
) -> list[SchemaChange]:
    if isinstance(action, exp.ColumnDef):
        return [_add_column(table, _column(action, read), bool(action.args.get("exists")))]
    if isinstance(action, exp.Schema):  # Oracle ADD (c1 type, c2 type, CONSTRAINT ...)
        return [
            _add_column(table, _column(item, read), False)
            if isinstance(item, exp.ColumnDef)
            else _index(table, "ADD constraint")
            for item in action.expressions
        ]
    if isinstance(action, exp.Drop):
        kind = str(action.args.get("kind") or "").upper()
        if kind == "COLUMN":
            return [
                _drop_column(table, column.name, bool(action.args.get("exists")))
                for column in action.expressions or action.args.get("tables") or []
            ]
        if kind in ("INDEX", "KEY", "CONSTRAINT", "FOREIGN KEY", "PRIMARY KEY", "UNIQUE", "CHECK"):
            return [_index(table, f"DROP {kind}")]
        return [_no_spark("other", table, f"DROP {kind or 'clause'} has no Spark equivalent")]
    if isinstance(action, exp.DropPrimaryKey):
        return [_index(table, "DROP PRIMARY KEY")]
    if isinstance(action, (exp.AddConstraint, exp.RenameIndex)):
        return [
            _index(
                table,
                "ADD INDEX / CONSTRAINT"
                if isinstance(action, exp.AddConstraint)
                else "RENAME INDEX",
            )
        ]
    if isinstance(action, exp.ModifyColumn):
        return _modify(table, action.this, action.args.get("rename_from"), read)
    if isinstance(action, exp.AlterColumn):
        return [_alter_column(table, action, read)]
    if isinstance(action, exp.RenameColumn):
        return [_rename_column(table, action.this.name, action.args["to"].name)]
    if isinstance(action, exp.AlterRename):
        return [_rename_table(table, _table_parts(action.this))]
    if isinstance(action, exp.Command):  # Oracle DROP (c1, c2) ...
        body = action.args.get("expression")
        clause = f"{action.this} {body.name if isinstance(body, exp.Expr) else body or ''}"
        return _alter_clause(table, clause, read, dialect, "sqlglot could not parse the clause")
    return [
        _no_spark(
            "other", table, f"ALTER TABLE {_clip(action.sql(dialect=read))}: no Spark equivalent"
        )
    ]


def _modify(
    table: tuple[str, ...], coldef: exp.Expr, rename_from: exp.Expr | None, read: str | None
) -> list[SchemaChange]:
    """MySQL ``MODIFY c type`` / ``CHANGE old new type``, Oracle ``MODIFY (c type)``."""
    if not isinstance(coldef, exp.ColumnDef):
        return [
            _unparseable(f"MODIFY of {_clip(coldef.sql(dialect=read))}", "other", _dotted(table))
        ]
    column = _column(coldef, read)
    changes = []
    if rename_from is not None and rename_from.name != column.name:
        changes.append(_rename_column(table, rename_from.name, column.name))
    changes.append(_change_type(table, column))
    return changes


def _alter_column(
    table: tuple[str, ...], action: exp.AlterColumn, read: str | None
) -> SchemaChange:
    """PostgreSQL ``ALTER COLUMN c [SET DATA] TYPE t [USING ...]``, SQL Server ``ALTER COLUMN c
    type [NOT NULL]``; a default / nullability change alone has no Spark counterpart here."""
    name = action.this.name
    dtype = action.args.get("dtype")
    if dtype is None:
        return _no_spark(
            "other",
            table,
            f"ALTER COLUMN {name}: only the default / nullability / options change; "
            "not applied in Spark",
            name,
        )
    spark_type, note = spark_type_of(dtype, read)
    column = _Column(name, spark_type, notes=[f"{name}: {note}"] if note else [])
    if action.args.get("allow_null") is False:
        column.dropped.append("NOT NULL")
    using = "USING expression ignored" if action.args.get("using") else None
    return _change_type(table, column, using)


# ---------------------------------------------------------------------------------------------
# Fallbacks: statements sqlglot rejects or reads as an opaque Command


def _fallback(sql: str, read: str | None, dialect: Dialect, error: str) -> list[SchemaChange]:
    alter = _ALTER_TABLE_RE.match(sql)
    if alter:
        return _alter_fallback(_name_parts(alter["name"]), alter["rest"], read, dialect, error)
    create = _CREATE_TABLE_RE.match(sql)
    if create:
        return [_create_fallback(create, read, dialect, error)]
    index = _INDEX_RE.match(sql)
    if index:
        on = index["on"] or index["drop_on"]
        return [_index(_name_parts(on) if on else None, _head(sql))]
    other = _OTHER_STATEMENT_RE.match(sql)
    if other:
        what = " ".join(other["what"].split()).upper()
        label = "DML statement" if what in _DML_WORDS else "statement"
        return [_no_spark("other", None, f"{what} {label}: no Spark schema change")]
    return [_unparseable_statement(sql, error)]


def _unparseable_statement(sql: str, error: str) -> SchemaChange:
    """An ``unparseable`` change; kind and table from the leading keywords when unambiguous."""
    for kind, pattern in _SNIFFS:
        match = pattern.match(sql)
        if match:
            return _unparseable(error, kind, _dotted(_name_parts(match["name"])))
    create = _CREATE_TABLE_RE.match(sql)
    if create:
        return _unparseable(error, "create_table", _dotted(_name_parts(create["name"])))
    alter = _ALTER_TABLE_RE.match(sql)
    if alter:
        return _unparseable(error, "other", _dotted(_name_parts(alter["name"])))
    return _unparseable(error)


def _split_top_level(text: str, dialect: Dialect) -> list[str]:
    """``text`` split at the commas outside parentheses and quotes (stripped pieces)."""
    try:
        tokens = dialect.tokenize(text)
    except SqlglotError:
        return [text.strip()] if text.strip() else []
    pieces: list[str] = []
    depth = 0
    first: Token | None = None
    last: Token | None = None
    for token in tokens:
        if token.token_type == TokenType.COMMA and depth == 0:
            if first is not None and last is not None:
                pieces.append(text[first.start : last.end + 1])
            first = last = None
            continue
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth = max(0, depth - 1)
        first = first or token
        last = token
    if first is not None and last is not None:
        pieces.append(text[first.start : last.end + 1])
    return pieces


_MAX_TRIMMED_TOKENS = 24
# Words that start a column's options when a definition has no type (Oracle MODIFY (c NOT NULL)).
_NOT_A_TYPE_TEXT = """
    NOT NULL DEFAULT CONSTRAINT CHECK PRIMARY UNIQUE REFERENCES ENABLE DISABLE VISIBLE
    INVISIBLE COLLATE ENCRYPT DECRYPT
"""
_NOT_A_TYPE = frozenset(_NOT_A_TYPE_TEXT.split())


def _column_element(element: str, read: str | None, dialect: Dialect) -> exp.ColumnDef | None:
    """One column definition text (``"ID" NUMBER(10,0) NOT NULL ENABLE``) parsed alone; when
    sqlglot rejects it, trailing tokens are dropped one by one (vendor options such as Oracle
    ``ENABLE`` or SQL Server ``ROWGUIDCOL`` come last) until it parses with a type, never cutting
    inside parentheses or before a parameter list (``NUMBER(10,-2)`` does not become
    ``NUMBER``). A definition without a type is returned only when it parses whole or when the
    word after the name starts the options (Oracle ``MODIFY (c NOT NULL ENABLE)``). ``None`` when
    nothing parses."""
    try:
        tokens = dialect.tokenize(element)
    except SqlglotError:
        return None
    cuts = []  # token counts after which the text may be cut
    depth = 0
    for position, token in enumerate(tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        following = tokens[position + 1] if position + 1 < len(tokens) else None
        if depth == 0 and (following is None or following.token_type != TokenType.L_PAREN):
            cuts.append(position + 1)
    untyped_ok = len(tokens) > 1 and tokens[1].text.upper() in _NOT_A_TYPE
    for keep in sorted(cuts, reverse=True)[:_MAX_TRIMMED_TOKENS]:
        if keep < 2 and keep != len(tokens):
            break
        prefix = element[: tokens[keep - 1].end + 1]
        try:
            parsed = _parse(dialect, read, f"CREATE TABLE _t ({prefix})")
        except SqlglotError:
            continue
        schema = parsed[0].this if parsed and isinstance(parsed[0], exp.Create) else None
        items = schema.expressions if isinstance(schema, exp.Schema) else []
        if len(items) != 1 or not isinstance(items[0], exp.ColumnDef):
            continue
        if items[0].args.get("kind") is not None or keep == len(tokens) or untyped_ok:
            return items[0]
    return None


def _alter_fallback(
    table: tuple[str, ...], rest: str, read: str | None, dialect: Dialect, error: str
) -> list[SchemaChange]:
    """An ALTER TABLE sqlglot rejected: each top-level clause on its own (in T-SQL a clause
    without a verb continues the previous ``ADD`` / ``DROP``)."""
    changes: list[SchemaChange] = []
    verb = ""
    for clause in _split_top_level(rest, dialect):
        first = clause.split(None, 1)[0].upper().rstrip("(")
        if first not in _ALTER_VERBS and verb in ("ADD", "DROP") and read == "tsql":
            clause = f"{verb} {clause}"
        else:
            verb = first
        changes.extend(_alter_clause(table, clause, read, dialect, error))
    return changes or [_unparseable(error, "other", _dotted(table))]


def _alter_clause(
    table: tuple[str, ...], clause: str, read: str | None, dialect: Dialect, error: str
) -> list[SchemaChange]:
    try:
        parsed = _parse(dialect, read, f"ALTER TABLE _t {clause}")
    except SqlglotError:
        parsed = []
    if (
        len(parsed) == 1
        and isinstance(parsed[0], exp.Alter)
        and parsed[0].args.get("actions")
        and not any(isinstance(a, exp.Command) for a in parsed[0].args["actions"])
    ):
        return _from_alter(parsed[0], table, read, dialect)
    if _PARTITION_RE.match(clause):
        return [_no_spark("other", table, f"{_clip(clause, 40)}: partition maintenance")]
    if _KEY_CLAUSE_RE.match(clause):
        return [_index(table, _clip(clause, 40))]
    modify = _MODIFY_LIST_RE.match(clause)
    if modify:
        return _column_list(table, modify["body"], read, dialect, error, adding=False)
    added = _ADD_LIST_RE.match(clause)
    if added:
        return _column_list(table, added["body"], read, dialect, error, adding=True)
    dropped = _DROP_LIST_RE.match(clause)
    if dropped:
        return [
            _drop_column(table, _name_parts(name)[-1], False)
            for name in _NAME_RE.findall(dropped["names"])
        ]
    renamed = _RENAME_TO_RE.match(clause)
    if renamed:
        return [_rename_table(table, _name_parts(renamed["name"]))]
    schema = _SET_SCHEMA_RE.match(clause)
    if schema:
        return [_rename_table(table, (*_name_parts(schema["schema"]), table[-1]))]
    for pattern, adding in ((_MODIFY_ONE_RE, False), (_ADD_ONE_RE, True)):
        match = pattern.match(clause)
        if match:
            return _column_list(table, match["element"], read, dialect, error, adding=adding)
    first = clause.split(None, 1)[0].upper()
    if first in _ALTER_VERBS and first not in (
        "ADD",
        "ALTER",
        "CHANGE",
        "DROP",
        "MODIFY",
        "RENAME",
    ):
        return [_no_spark("other", table, f"ALTER TABLE {_clip(clause, 40)}: table options only")]
    return [_unparseable(f"{error}; clause: {_clip(clause)}", "other", _dotted(table))]


def _column_list(
    table: tuple[str, ...],
    body: str,
    read: str | None,
    dialect: Dialect,
    error: str,
    adding: bool,
) -> list[SchemaChange]:
    """``ADD (...)`` / ``MODIFY (...)`` (or one element): one change per element."""
    changes: list[SchemaChange] = []
    for element in _split_top_level(body, dialect):
        if _CONSTRAINT_RE.match(element):
            changes.append(_index(table, f"{'ADD' if adding else 'MODIFY'} {_clip(element, 40)}"))
            continue
        coldef = _column_element(element, read, dialect)
        if coldef is None:
            name = _NAME_RE.match(element.strip())
            names = _name_parts(name[0]) if name else ()
            changes.append(
                SchemaChange(
                    "add_column" if adding else "change_column_type",
                    UNPARSEABLE,
                    None,
                    _dotted(table),
                    names[-1] if names else None,
                    reason=f"{error}; column definition: {_clip(element)}",
                )
            )
        elif adding:
            changes.append(_add_column(table, _column(coldef, read), False))
        else:
            changes.extend(_modify(table, coldef, None, read))
    return changes


def _create_fallback(
    match: re.Match[str], read: str | None, dialect: Dialect, error: str
) -> SchemaChange:
    """A CREATE TABLE sqlglot rejected (vendor-scripted options): the column list re-parsed
    column by column; everything after the list is ignored."""
    table = _name_parts(match["name"])
    if match["temp"]:
        return _no_spark("create_table", table, "temporary tables are not replicated")
    rest = match["rest"]
    body = _paren_body(rest, dialect) if rest.startswith("(") else None
    if body is None:
        return _unparseable(error, "create_table", _dotted(table))
    columns: list[_Column] = []
    constraints = False
    for element in _split_top_level(body, dialect):
        if _CONSTRAINT_RE.match(element):
            constraints = True
            continue
        coldef = _column_element(element, read, dialect)
        if coldef is None or coldef.args.get("kind") is None:
            reason = f"{error}; column definition: {_clip(element)}"
            return _unparseable(reason, "create_table", _dotted(table))
        columns.append(_column(coldef, read))
    return _create_table(
        table,
        columns,
        bool(match["ine"]),
        None,
        constraints,
        "vendor options of the statement ignored (sqlglot could not parse them)",
    )


def _paren_body(text: str, dialect: Dialect) -> str | None:
    """The text inside the parenthesis that opens ``text`` (``None`` if unbalanced)."""
    try:
        tokens = dialect.tokenize(text)
    except SqlglotError:
        return None
    depth = 0
    for token in tokens:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
            if depth == 0:
                return text[1 : token.start]
    return None
