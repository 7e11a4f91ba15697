"""DDL of CDC sources (MySQL, Oracle, PostgreSQL, SQL Server) translated to Spark SQL.

:func:`translate` turns the DDL text a CDC message carries into one classified
:class:`SchemaChange` per change (kind, status, the Spark SQL statement, table / column / new
name / Spark type); :func:`normalize_dialect` maps the source database names used by messages and
the registry to sqlglot dialects. Nothing here raises on bad input: see
:mod:`cdc_lakehouse.ddl.translate` for the statuses, the mapping rules and the sources.
"""

from cdc_lakehouse.ddl.translate import (
    CHANGE_KINDS,
    STATUSES,
    SchemaChange,
    normalize_dialect,
    spark_identifier,
    spark_type_of,
    translate,
)

__all__ = [
    "CHANGE_KINDS",
    "STATUSES",
    "SchemaChange",
    "normalize_dialect",
    "spark_identifier",
    "spark_type_of",
    "translate",
]
