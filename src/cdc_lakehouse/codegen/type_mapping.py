"""Source type -> Spark type and value expression, from the seed ``seeds/cdc_type_mappings.csv``
(generated from each format plug-in's ``type_mappings.csv``: :mod:`cdc_lakehouse.formats.dbt_side`).

Pure Python (no Spark): the typed gold generator (:mod:`cdc_lakehouse.codegen.gold_tables`)
calls :func:`resolve` once per column.

- A *type family* is the type system a format's declared types belong to (:func:`type_family`):
  ``dataworks`` (DataWorks / DataHub Blob ``dataColumn`` types), ``mysql`` (Canal ``mysqlType``),
  ``oracle`` / ``postgresql`` / ``sqlserver`` (Canal JSON of DTS instances whose registry
  ``source_dialect`` names those sources), ``mysql_binlog`` (DTS Avro ``dataTypeNumber`` of a
  MySQL source, rendered as the binlog type name by the decoder), ``kafka_connect`` (Lindorm SQL
  tables with a schema), ``hbase`` (Lindorm HBase tables), ``qlik`` (Qlik metadata types).
  Formats that declare no types (DataHub Tuple, Shareplex) have no family.
- A declared type text is normalized (:func:`parse_source_type`): lowercase, the numeric
  parameters taken out (``decimal(12,2)`` -> ``decimal`` with precision 12, scale 2;
  ``varchar(20)`` -> ``varchar`` with length 20), value lists dropped (``enum('a','b')`` ->
  ``enum``), ``zerofill`` dropped, blanks collapsed (``int(10) unsigned`` -> ``int unsigned``;
  Kafka Connect ``int64 (org.apache.kafka.connect.data.Timestamp)`` ->
  ``int64 org.apache.kafka.connect.data.timestamp``).
- A seed row gives the Spark type template (``{precision}``, ``{scale}``, ``{length}``) and the
  expression template over ``{value}`` (the column's value text, ``row_values['col']``) that
  turns the format's value text into the Spark value; an empty expression means
  ``cast({value} as <spark type>)`` (plain ``{value}`` for ``string``). String literals in seed
  expressions are written in double quotes (``concat({value}, "Z")``) and rendered single-quoted:
  dbt-spark's session cursor loads seed values into SQL literals without escaping single quotes.
- No safe mapping -> ``string`` with the value text as sent: an unknown family or type, a
  parameterized template without parameters (and no seed default), a decimal Spark cannot hold
  (precision over 38, scale outside 0..precision).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from cdc_lakehouse import formats

SEED_COLUMNS = (
    "type_family",
    "source_type",
    "spark_type",
    "value_expression",
    "default_precision",
    "default_scale",
    "value_text",
)
MAX_DECIMAL_PRECISION = 38  # Spark's DecimalType limit

# Registry format -> family of its declared types (None: the format declares no types), from
# the format manifest (cdc_lakehouse.formats); type_family refines it per table.
FORMAT_FAMILIES: dict[str, str | None] = {fmt.name: fmt.type_family for fmt in formats.MANIFEST}
# Canal JSON: registry source_dialect (cdc_topics.csv) -> family of the mysqlType texts.
CANAL_DIALECT_FAMILIES = {
    "mysql": "mysql",
    "oracle": "oracle",
    "postgres": "postgresql",
    "postgresql": "postgresql",
    "tsql": "sqlserver",
    "sqlserver": "sqlserver",
}
HBASE_ROW_KEY = "ROW"


@dataclass(frozen=True)
class TypeMapping:
    """One seed row (see :data:`SEED_COLUMNS` and ``seeds/_seeds__models.yml``)."""

    type_family: str
    source_type: str
    spark_type: str
    value_expression: str = ""
    default_precision: int | None = None
    default_scale: int | None = None
    value_text: str = ""


@dataclass(frozen=True)
class SourceType:
    """A declared type text split into its normalized base name and numeric parameters."""

    text: str
    base: str
    params: tuple[int, ...] = ()


@dataclass(frozen=True)
class ResolvedType:
    """How one column is typed: the Spark type, the SQL expression template over ``{value}``,
    and a note when the column falls back to string (why)."""

    spark_type: str
    expression: str
    fallback_reason: str | None = None
    value_text: str = ""

    def render(self, value_sql: str) -> str:
        """The expression with ``{value}`` replaced by ``value_sql``."""
        return self.expression.replace("{value}", value_sql)


STRING_AS_SENT = "{value}"
_NUMERIC_PARAMS = re.compile(r"\(\s*(-?\d+)\s*(?:,\s*(-?\d+)\s*)?\)")
_VALUE_LIST = re.compile(r"\((?:\s*'(?:[^']|'')*'\s*,?)*\)")
_DOUBLE_QUOTED = re.compile(r'"([^"\'\\]*)"')
_DECIMAL = re.compile(r"^decimal\((\d+),(-?\d+)\)$")


def parse_source_type(text: str) -> SourceType:
    """Normalize a declared type text (see module doc): ``"DECIMAL(12, 2) UNSIGNED"`` ->
    ``SourceType(base="decimal unsigned", params=(12, 2))``."""
    lowered = text.strip().lower()
    params: tuple[int, ...] = ()
    match = _NUMERIC_PARAMS.search(lowered)
    if match:
        params = tuple(int(group) for group in match.groups() if group is not None)
        lowered = lowered[: match.start()] + " " + lowered[match.end() :]
    lowered = _VALUE_LIST.sub(" ", lowered)
    lowered = lowered.replace("(", " ").replace(")", " ")
    words = [word for word in lowered.split() if word != "zerofill"]
    return SourceType(text=text, base=" ".join(words), params=params)


def parse_seed_rows(rows: Iterable[Mapping[str, object]]) -> dict[tuple[str, str], TypeMapping]:
    """Seed rows (CSV dicts or Spark rows as dicts) -> ``{(family, source_type): mapping}``.

    Raises:
        ValueError: a required column is empty, or a (family, source_type) pair repeats.
    """
    out: dict[tuple[str, str], TypeMapping] = {}
    for row in rows:
        family = _text(row.get("type_family")).lower()
        source_type = " ".join(_text(row.get("source_type")).lower().split())
        spark_type = _text(row.get("spark_type")).lower()
        if not family or not source_type or not spark_type:
            raise ValueError(f"type mapping row needs type_family, source_type, spark_type: {row}")
        if (family, source_type) in out:
            raise ValueError(f"type mapping ({family}, {source_type}) is listed twice")
        out[(family, source_type)] = TypeMapping(
            type_family=family,
            source_type=source_type,
            spark_type=spark_type,
            value_expression=_text(row.get("value_expression")),
            default_precision=_int(row.get("default_precision")),
            default_scale=_int(row.get("default_scale")),
            value_text=_text(row.get("value_text")),
        )
    return out


def type_family(
    source_format: str,
    column_types: Mapping[str, str | None],
    source_dialect: str | None = None,
    source_db_type: str | None = None,
) -> str | None:
    """The family of a table's declared types (see module doc).

    ``source_dialect`` is the registry ``source_dialect`` of the table's topic (picks the family
    of Canal ``mysqlType`` texts, MySQL by default); ``source_db_type`` is the message's source
    type (DTS Avro: only a MySQL source's type codes are binlog codes; other sources' numbers
    have no documented meaning and get the family ``dts_avro_<type>``, which the seed does not
    list). A Lindorm table whose ``ROW`` column is ``bytes`` is an HBase table.
    """
    if source_format not in FORMAT_FAMILIES:
        return None
    family = FORMAT_FAMILIES[source_format]
    if source_format == "dts_canal_json" and source_dialect:
        family = CANAL_DIALECT_FAMILIES.get(
            source_dialect.strip().lower(), f"canal_{source_dialect}"
        )
    if source_format == "dts_avro" and source_db_type and source_db_type.lower() != "mysql":
        family = f"dts_avro_{source_db_type.strip().lower()}"
    if source_format == "lindorm_debezium" and (column_types.get(HBASE_ROW_KEY) or "") == "bytes":
        family = "hbase"
    return family


def as_text() -> ResolvedType:
    """The string fallback: the value text as sent."""
    return ResolvedType("string", STRING_AS_SENT)


def resolve(
    family: str | None,
    source_type: str | None,
    mappings: Mapping[tuple[str, str], TypeMapping],
) -> ResolvedType:
    """The Spark type and expression of a column of declared type ``source_type`` (see module
    doc for the fallbacks); ``source_type`` None means the format declares no type."""
    if source_type is None or family is None:
        return ResolvedType("string", STRING_AS_SENT, "the format declares no column types")
    parsed = parse_source_type(source_type)
    mapping = mappings.get((family, parsed.base))
    if mapping is None:
        return ResolvedType(
            "string", STRING_AS_SENT, f"no mapping for {family} type {parsed.base!r}"
        )
    spark_type = _fill(mapping.spark_type, parsed.params, mapping)
    if spark_type is None:
        return ResolvedType(
            "string",
            STRING_AS_SENT,
            f"{source_type} gives no parameters for {mapping.spark_type}",
            mapping.value_text,
        )
    decimal = _DECIMAL.match(spark_type.replace(" ", ""))
    if decimal:
        precision, scale = int(decimal.group(1)), int(decimal.group(2))
        if not (1 <= precision <= MAX_DECIMAL_PRECISION and 0 <= scale <= precision):
            return ResolvedType(
                "string",
                STRING_AS_SENT,
                f"{source_type} does not fit a Spark decimal (precision 1..38, scale 0..p)",
                mapping.value_text,
            )
        spark_type = f"decimal({precision},{scale})"
    if mapping.value_expression:
        expression = _fill(mapping.value_expression, parsed.params, mapping) or ""
        expression = _DOUBLE_QUOTED.sub(r"'\1'", expression)
        expression = expression.replace("{spark_type}", spark_type)
    elif spark_type == "string":
        expression = STRING_AS_SENT
    else:
        expression = f"cast({{value}} as {spark_type})"
    return ResolvedType(spark_type, expression, None, mapping.value_text)


def _fill(template: str, params: tuple[int, ...], mapping: TypeMapping) -> str | None:
    """``template`` with ``{precision}`` / ``{scale}`` / ``{length}`` filled, or None when it
    needs a parameter the type text does not give and the seed has no default."""
    precision: int | None
    scale: int | None
    length: int | None
    if params:
        precision, scale = params[0], (params[1] if len(params) > 1 else 0)
        length = params[0]
    else:
        precision, scale, length = mapping.default_precision, mapping.default_scale, None
        if precision is not None and scale is None:
            scale = 0
    values = {"{precision}": precision, "{scale}": scale, "{length}": length}
    out = template
    for placeholder, value in values.items():
        if placeholder in out:
            if value is None:
                return None
            out = out.replace(placeholder, str(value))
    return out


def _text(value: object) -> str:
    """A seed field as text; empty for NULL and for the text ``None``, which dbt-spark's
    session seed loader writes for an empty CSV field (it renders every binding as
    ``'<python value>'``)."""
    text = "" if value is None else str(value).strip()
    return "" if text == "None" else text


def _int(value: object) -> int | None:
    text = _text(value)
    return int(text) if text else None
