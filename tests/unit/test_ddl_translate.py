"""Tests of :mod:`cdc_lakehouse.ddl`: the DDL corpus (classification, parts, exact Spark SQL),
Spark's parser accepting every translated statement and every Spark type, bad input, dialect
names, identifier quoting and quiet logging.

The Spark tests only parse (``sqlParser().parsePlan``): no table is created.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from cdc_lakehouse.ddl import (
    CHANGE_KINDS,
    STATUSES,
    SchemaChange,
    normalize_dialect,
    spark_identifier,
    translate,
)
from cdc_lakehouse.ddl.translate import _PLAIN_TYPES, _SPARK_RESERVED
from tests.unit.ddl_corpus import CORPUS, Case, Expected

CASE_IDS = [case.id for case in CORPUS]


def _parts(change: SchemaChange | Expected) -> tuple[Any, ...]:
    return (
        change.kind,
        change.status,
        change.table,
        change.column,
        change.new_name,
        change.new_spark_type,
        change.spark_sql,
        change.columns,
    )


def test_corpus_covers_each_dialect() -> None:
    dialects = [normalize_dialect(case.dialect) for case in CORPUS]
    assert dialects.count("mysql") >= 15
    assert dialects.count("oracle") >= 8
    assert dialects.count("postgres") >= 8
    assert dialects.count("tsql") >= 6
    assert len(set(CASE_IDS)) == len(CASE_IDS)


@pytest.mark.parametrize("case", CORPUS, ids=CASE_IDS)
def test_corpus_translation(case: Case) -> None:
    changes = translate(case.ddl, case.dialect)
    assert [_parts(change) for change in changes] == [_parts(want) for want in case.expected]
    for change, want in zip(changes, case.expected, strict=True):
        if want.reason_contains is not None:
            assert want.reason_contains in (change.reason or "")
        if change.status != "translated":
            assert change.spark_sql is None
            assert change.reason


@pytest.fixture(scope="module")
def spark_parser(spark: Any) -> Any:
    """Spark's SQL parser of the test session."""
    return spark._jsparkSession.sessionState().sqlParser()


@pytest.mark.parametrize("case", CORPUS, ids=CASE_IDS)
def test_translated_sql_parses_in_spark(case: Case, spark_parser: Any) -> None:
    for change in translate(case.ddl, case.dialect):
        if change.spark_sql is not None:
            spark_parser.parsePlan(change.spark_sql)  # raises on a syntax error


def test_spark_types_are_spark_types(spark: Any) -> None:
    """Every Spark type the translator can produce round-trips through PySpark's parser."""
    from pyspark.sql.types import _parse_datatype_string

    produced = set(_PLAIN_TYPES.values()) | {"decimal(38,10)", "decimal(19,2)", "decimal(10,4)"}
    for case in CORPUS:
        for change in translate(case.ddl, case.dialect):
            produced.update(t for t in (change.new_spark_type,) if t)
            produced.update(spark_type for _, spark_type in change.columns)
    for spark_type in sorted(produced):
        assert _parse_datatype_string(spark_type).simpleString() == spark_type


# Spark keywords that are common column names and need no quotes.
COLUMN_NAME_KEYWORDS_TEXT = """
    name date year month day hour type value key position range row data current timestamp
    interval first last partition location format option level source target version comment
    status
"""
COLUMN_NAME_KEYWORDS = COLUMN_NAME_KEYWORDS_TEXT.split()


def test_identifier_quoting_for_spark_keywords(spark: Any, spark_parser: Any) -> None:
    """Every ANSI reserved keyword is quoted and accepted with the reserved keywords enforced;
    common non-reserved keywords stay unquoted and are accepted (a sample: the first parse of
    each keyword costs ANTLR ~15 ms)."""
    jvm = spark._jvm  # the list behind sql_keywords(), read without running a Spark job
    keywords = {
        str(keyword).upper()
        for keyword in jvm.scala.jdk.javaapi.CollectionConverters.asJava(
            jvm.org.apache.spark.sql.catalyst.util.SQLKeywordUtils.keywords()
        )
    }
    assert keywords >= _SPARK_RESERVED
    conf = spark.conf
    previous = {
        key: conf.get(key)
        for key in ("spark.sql.ansi.enabled", "spark.sql.ansi.enforceReservedKeywords")
    }
    conf.set("spark.sql.ansi.enabled", "true")
    conf.set("spark.sql.ansi.enforceReservedKeywords", "true")
    try:
        for keyword in sorted(_SPARK_RESERVED):
            assert spark_identifier(keyword.lower()) == f"`{keyword.lower()}`"
            spark_parser.parsePlan(f"ALTER TABLE t ADD COLUMNS (`{keyword.lower()}` INT)")
        for keyword in COLUMN_NAME_KEYWORDS:
            assert spark_identifier(keyword) == keyword
            spark_parser.parsePlan(f"ALTER TABLE t ADD COLUMNS ({keyword} INT)")
        with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
            spark_parser.parsePlan("ALTER TABLE t ADD COLUMNS (select INT)")
    finally:
        for key, value in previous.items():
            conf.set(key, value)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("orders", "orders"),
        ("Order_Items2", "Order_Items2"),
        ("order", "`order`"),
        ("select", "`select`"),
        ("rank", "rank"),
        ("1st", "`1st`"),
        ("données", "`données`"),
        ("a b", "`a b`"),
        ("a`b", "`a``b`"),
        ("price$", "`price$`"),
    ],
)
def test_spark_identifier(name: str, expected: str) -> None:
    assert spark_identifier(name) == expected


NASTY = [
    None,
    "",
    "   \n\t ",
    ";;;",
    "'",
    '"',
    "`",
    "[",
    "/*",
    "-- only a comment",
    "(((((",
    ")))",
    "ALTER",
    "ALTER TABLE",
    "ALTER TABLE t",
    "ALTER TABLE t ADD",
    "ALTER TABLE t ADD (",
    "ALTER TABLE t MODIFY (",
    "CREATE TABLE t (",
    "CREATE TABLE t (a",
    "CREATE TABLE t (a int,",
    "DROP TABLE",
    "TRUNCATE",
    "RENAME TABLE a TO",
    "EXEC sp_rename",
    "EXEC sp_rename 'a', ",
    "SELECT",
    "\x00\x01\x02",
    "ALTER TABLE t ADD c int\x00",
    "ALTER TABLE t ADD c NUMBER(10,-2)",
    "ALTER TABLE t ADD c DECIMAL(999999999999999999999,1)",
    "CREATE TABLE " + "x" * 5000 + " (a int)",
    "ALTER TABLE t " + ", ".join(f"ADD c{i} int" for i in range(300)),
    "; ".join("DROP TABLE t" for _ in range(200)),
    "ALTER TABLE t ADD c " + "(" * 500,
    "💥 ALTER TABLE ☃ ADD ✓ int",
]


@pytest.mark.parametrize("dialect", ["mysql", "oracle", "postgres", "tsql", "nonsense", None])
@pytest.mark.parametrize("text", NASTY, ids=range(len(NASTY)))
def test_bad_input_never_raises(text: str | None, dialect: str | None) -> None:
    changes = translate(text, dialect)
    assert changes
    for change in changes:
        assert change.kind in CHANGE_KINDS
        assert change.status in STATUSES
        assert (change.spark_sql is not None) == (change.status == "translated")
        if change.status != "translated":
            assert change.reason
        if change.status == "unparseable":
            assert change.spark_sql is None


def test_empty_text_reason() -> None:
    assert translate(None, "mysql") == [
        SchemaChange("other", "unparseable", None, None, reason="no statement text")
    ]
    assert translate("  ", None)[0].reason == "no statement text"


def test_many_statements_give_one_change_each() -> None:
    changes = translate("; ".join(f"ALTER TABLE t ADD c{i} int" for i in range(200)), "mysql")
    assert [change.column for change in changes] == [f"c{i}" for i in range(200)]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("mysql", "mysql"),
        ("MySQL", "mysql"),
        ("mariadb", "mysql"),
        ("polardb", "mysql"),
        ("PolarDB-X", "mysql"),
        ("polardb_x", "mysql"),
        ("tidb", "mysql"),
        ("DRDS", "mysql"),
        ("oracle", "oracle"),
        ("Oracle", "oracle"),
        ("postgres", "postgres"),
        ("postgresql", "postgres"),
        ("PostgreSQL", "postgres"),
        ("pg", "postgres"),
        ("polardb_pg", "postgres"),
        ("hologres", "postgres"),
        ("sqlserver", "tsql"),
        ("SQLServer", "tsql"),
        ("mssql", "tsql"),
        ("sql server", "tsql"),
        ("tsql", "tsql"),
        (" MySQL ", "mysql"),
        ("db2", None),
        ("mongodb", None),
        ("", None),
        (None, None),
    ],
)
def test_normalize_dialect(name: str | None, expected: str | None) -> None:
    assert normalize_dialect(name) == expected


def test_translate_is_quiet_and_restores_logging(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("sqlglot")
    before = logger.disabled
    with caplog.at_level(logging.DEBUG):
        translate("RENAME TABLE a TO b; ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4", "mysql")
        translate("GRANT SELECT ON db.* TO 'u'@'%'", "mysql")
    assert not [record for record in caplog.records if record.name.startswith("sqlglot")]
    assert logger.disabled == before


def test_schema_change_rejects_unknown_kind_or_status() -> None:
    with pytest.raises(ValueError, match="kind"):
        SchemaChange("alter", "translated", None, None)
    with pytest.raises(ValueError, match="status"):
        SchemaChange("other", "done", None, None)
