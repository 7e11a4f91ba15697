"""Arrow-batched translation of captured DDL records for ``DataFrame.mapInArrow``.

:func:`translate_batches` (bound to the type mappings with :func:`translator`) reads batches of
``silver.captured_ddl`` rows and yields, per record, one row per schema change
(:func:`cdc_lakehouse.ddl.records.record_changes`): ``event_id`` plus :data:`OUTPUT_FIELDS`.
The caller joins the rows back to the records on ``event_id``. One Python call per record, no
row-at-a-time UDF; DDL records are few, the translation itself is sqlglot's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import partial

import pyarrow as pa

from cdc_lakehouse.codegen.type_mapping import TypeMapping
from cdc_lakehouse.ddl.records import changes_of_rows
from cdc_lakehouse.decode.batches import spark_type

INPUT_COLUMNS = (
    "event_id",
    "source_format",
    "ddl_op",
    "ddl_text",
    "source_dialect",
    "source_database",
    "source_schema",
    "source_table",
    "column_types",
    "source_schema_version",
    "previous_column_types",
    "previous_schema_version",
)
OUTPUT_FIELDS = (
    pa.field("event_id", pa.string()),
    pa.field("change_index", pa.int32()),
    pa.field("change_kind", pa.string()),
    pa.field("change_table", pa.string()),
    pa.field("change_source_database", pa.string()),
    pa.field("change_source_schema", pa.string()),
    pa.field("change_source_table", pa.string()),
    pa.field("column_name", pa.string()),
    pa.field("new_name", pa.string()),
    pa.field("new_spark_type", pa.string()),
    pa.field(
        "created_columns",
        pa.list_(
            pa.struct([pa.field("column_name", pa.string()), pa.field("spark_type", pa.string())])
        ),
    ),
    pa.field("spark_sql", pa.string()),
    pa.field("translation_status", pa.string()),
    pa.field("translation_reason", pa.string()),
)
OUTPUT_SCHEMA = pa.schema(OUTPUT_FIELDS)


def output_schema_ddl() -> str:
    """Spark DDL of the rows :func:`translate_batches` yields."""
    return ", ".join(f"{f.name} {spark_type(f.type)}" for f in OUTPUT_FIELDS)


def translate_batches(
    batches: Iterator[pa.RecordBatch], mappings: Mapping[tuple[str, str], TypeMapping]
) -> Iterator[pa.RecordBatch]:
    """Schema-change rows of every record of ``batches`` (see module doc)."""
    for batch in batches:
        rows = changes_of_rows(batch.select(list(INPUT_COLUMNS)).to_pylist(), mappings)
        yield pa.RecordBatch.from_pylist(rows, schema=OUTPUT_SCHEMA)


def translator(
    mappings: Mapping[tuple[str, str], TypeMapping],
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """:func:`translate_batches` bound to ``mappings`` (for ``mapInArrow``)."""
    return partial(translate_batches, mappings=mappings)
