"""The benchmark's baselines of DataHub Tuple records, registry format ``datahub_tuple``
(docs/formats.md 2; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`).

- Table ``_source_table_`` (else the topic's last part), op ``_operation_type_`` I / U / D;
  row = the flat record without its meta columns (:data:`TUPLE_META`).
- Ordering key: the plug-in's ordering rule (:data:`cdc_lakehouse.formats.datahub_tuple.ORDERING`):
  (``_sequence_id_`` as a number, 0 when ``_before_image_`` = Y else 1, partition, offset,
  topic). An update is two records sharing ``_sequence_id_``, the before half ranking first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from cdc_lakehouse.formats.datahub_tuple import FORMATS
from cdc_lakehouse.formats.plugin import Change, Value
from cdc_lakehouse.tools.bench.baselines.plugin_api import (
    DUCKDB_MAP,
    PARSED,
    SPARK_ROW,
    Baseline,
    DuckDbEvents,
    duckdb_literal,
    spark_literal,
)

_ORDERING = FORMATS[0].ordering_tuple

TUPLE_META = (
    "_sequence_id_",
    "_operation_type_",
    "_excute_time_",
    "_execute_time_",
    "_source_table_",
    "_before_image_",
    "_after_image_",
)
"""Meta columns of a DataHub Tuple record (docs/formats.md 2; both spellings of the time)."""


def changes(values: Iterable[Value]) -> Iterator[Change]:
    """DataHub Tuple records (docs/formats.md 2): the record is the row plus meta columns; an
    update is two records sharing ``_sequence_id_``, the before half (Y / N) ranking first."""
    loads = orjson.loads
    for topic, partition, offset, raw in values:
        if not raw:
            continue
        row = loads(raw)
        sequence = row.pop("_sequence_id_")
        op = row.pop("_operation_type_")
        before = row.pop("_before_image_", "N")
        table = row.pop("_source_table_", None) or topic.rpartition(".")[2]
        row.pop("_after_image_", None)
        row.pop("_excute_time_", None)
        row.pop("_execute_time_", None)
        rank = 0 if before == "Y" else 1
        order = _ORDERING(
            {
                "sequence_id": int(sequence),
                "image_rank": rank,
                "partition": partition,
                "offset": offset,
                "topic": topic,
            }
        )
        yield table.lower(), order, op == "D", row


_DUCKDB_META = "(" + ", ".join(duckdb_literal(name) for name in TUPLE_META) + ")"
DUCKDB = DuckDbEvents(
    """
    with records as materialized (
        select
            topic,
            partition,
            "offset",
            j::json as image,
            from_json(j, '{"_sequence_id_": "varchar", "_operation_type_": "varchar",
                "_source_table_": "varchar", "_before_image_": "varchar"}') as m
        from src
    )
    select
        lower(coalesce(m['_source_table_'], split_part(topic, '.', -1))) as tbl,
        cast(m['_sequence_id_'] as hugeint) as sequence_id,
        case when m['_before_image_'] = 'Y' then 0 else 1 end as image_rank,
        partition,
        "offset",
        topic,
        m['_operation_type_'] = 'D' as is_delete,
        null::json as base,
        image
    from records
    where m['_operation_type_'] in ('I', 'U', 'D')
    """,
    row=f"map_from_entries(list_filter(map_entries(from_json(image, {DUCKDB_MAP})), "
    f"lambda e: e.key not in {_DUCKDB_META}))",
)
"""DuckDB: the record is the image; its row map leaves the meta columns out."""

SPARK_SCHEMA = SPARK_ROW
"""The whole record as a map."""

_SPARK_META = "(" + ", ".join(spark_literal(name) for name in TUPLE_META) + ")"
SPARK_EVENTS = f"""
    with records as (
        select topic, `partition`, `offset`, m
        from {PARSED}
    )
    select
        lower(coalesce(m['_source_table_'], substring_index(topic, '.', -1))) as tbl,
        cast(m['_sequence_id_'] as decimal(38, 0)) as sequence_id,
        case when m['_before_image_'] = 'Y' then 0 else 1 end as image_rank,
        `partition`,
        `offset`,
        topic,
        m['_operation_type_'] = 'D' as is_delete,
        map_filter(m, (k, v) -> k not in {_SPARK_META}) as row
    from records
    where m['_operation_type_'] in ('I', 'U', 'D')
    """

BASELINES: dict[str, Baseline] = {
    "datahub_tuple": Baseline(
        changes=changes, duckdb=DUCKDB, spark_schema=SPARK_SCHEMA, spark_events=SPARK_EVENTS
    )
}
"""``datahub_tuple`` -> its baselines."""
