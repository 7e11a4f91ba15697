"""Read the generator's inputs from the lake through Spark (``CDC_LAKE_DIR``).

- :func:`read_tables`: one :class:`~cdc_lakehouse.codegen.gold_tables.SilverTable` per source
  table found in ``silver.change_events`` or ``silver.table_schemas``: every schema version
  (oldest first by ``first_seen_ordering_key``), the columns of the change images in first-seen
  order (by ordering key, then position in the image), the key silver used for the latest
  change (unless it was ``all_columns``), the message's source type (``source_db_type``) and the
  registry ``source_dialect`` of the table's topic (``silver.stg_bronze__topics``: the user's
  registry seed and, with ``CDC_EXAMPLES=true``, the example topics).
- :func:`read_mappings`: the seed table ``bronze.cdc_type_mappings``.

Raises :class:`MissingTableError` when a table is not in the lake (ingest / dbt not run).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cdc_lakehouse.codegen.gold_tables import SchemaVersion, SilverTable
from cdc_lakehouse.codegen.type_mapping import TypeMapping, parse_seed_rows

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MAPPINGS_TABLE = "bronze.cdc_type_mappings"
REQUIRED_TABLES = (
    "silver.change_events",
    "silver.table_schemas",
    "silver.stg_bronze__topics",
    MAPPINGS_TABLE,
)
_IDENTITY = "source_format, source_database, source_schema, source_table"

_VERSIONS_SQL = f"""
select {_IDENTITY}, schema_version, column_names, column_types, key_columns,
    first_seen_ordering_key
from silver.table_schemas
order by {_IDENTITY}, first_seen_ordering_key, schema_version
"""

_TABLES_SQL = f"""
with events as (
    select * from silver.change_events
),
topics as (
    select
        topic,
        -- dbt-spark's session seed loader writes an empty CSV field as the text None
        case when trim(source_dialect) not in ('', 'None') then trim(source_dialect) end
            as source_dialect
    from silver.stg_bronze__topics
)
select
    {_IDENTITY},
    collect_set(
        case when key_source != 'all_columns' then key_columns else array() end
    ) as event_key_sets,
    max_by(source_db_type, ordering_key) as source_db_type,
    max(topics.source_dialect) as source_dialect
from events
left join topics on events.kafka_topic = topics.topic
group by {_IDENTITY}
"""

_IMAGE_COLUMNS_SQL = f"""
with image_columns as (
    select {_IDENTITY}, ordering_key, pos, column_name
    from silver.change_events
    lateral view posexplode(
        array_distinct(concat(
            coalesce(map_keys(after_image), array()), coalesce(map_keys(before_image), array())
        ))
    ) image_column as pos, column_name
)
select {_IDENTITY}, column_name, min(struct(ordering_key, pos)) as first_seen
from image_columns
group by {_IDENTITY}, column_name
order by {_IDENTITY}, first_seen
"""


class MissingTableError(RuntimeError):
    """A table the generator reads is not in the lake."""


def _key(row: Any) -> tuple[str, str | None, str | None, str]:
    return (row.source_format, row.source_database, row.source_schema, row.source_table)


def read_tables(spark: SparkSession) -> list[SilverTable]:
    """Every source table silver knows of (see module doc), in identity order."""
    _require(spark)
    versions: dict[tuple, list[SchemaVersion]] = {}
    for row in spark.sql(_VERSIONS_SQL).collect():
        types = dict(row.column_types or {})
        versions.setdefault(_key(row), []).append(
            SchemaVersion(
                schema_version=row.schema_version,
                column_names=tuple(row.column_names or ()),
                column_types={name: types.get(name) for name in row.column_names or ()},
                key_columns=tuple(row.key_columns) if row.key_columns else None,
                first_seen_ordering_key=row.first_seen_ordering_key,
            )
        )
    images: dict[tuple, list[str]] = {}
    for row in spark.sql(_IMAGE_COLUMNS_SQL).collect():
        images.setdefault(_key(row), []).append(row.column_name)
    info = {_key(row): row for row in spark.sql(_TABLES_SQL).collect()}
    tables = []
    for key in sorted(set(versions) | set(info), key=lambda k: tuple(p or "" for p in k)):
        event = info.get(key)
        tables.append(
            SilverTable(
                source_format=key[0],
                source_database=key[1],
                source_schema=key[2],
                source_table=key[3],
                versions=tuple(versions.get(key, ())),
                image_columns=tuple(images.get(key, ())),
                event_key_sets=(
                    tuple(sorted(tuple(keys) for keys in event.event_key_sets))
                    if event is not None
                    else ()
                ),
                source_dialect=event.source_dialect if event is not None else None,
                source_db_type=event.source_db_type if event is not None else None,
            )
        )
    return tables


def read_mappings(spark: SparkSession) -> dict[tuple[str, str], TypeMapping]:
    """The seed ``bronze.cdc_type_mappings`` as ``{(family, source_type): mapping}``."""
    _require(spark)
    return parse_seed_rows(row.asDict() for row in spark.table(MAPPINGS_TABLE).collect())


def _require(spark: SparkSession) -> None:
    missing = [t for t in REQUIRED_TABLES if not spark.catalog.tableExists(t)]
    if missing:
        raise MissingTableError(
            f"table(s) {', '.join(missing)} not found in the lake: run `python -m ingest "
            "--dump PATH` and `dbt build` (or `dbt seed`) first"
        )
