"""The Parquet files of the built lake: written without dictionary pages
(``cdc_lakehouse.runtime.spark_session.PARQUET_DICTIONARY``), by the ingest job, the SQL models and
the dbt Python models alike."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.dbt

# one table per writer: the ingest job, a decoding dbt Python model, a silver SQL model, gold
WRITTEN_TABLES = (
    "bronze.kafka_records",
    "silver.stg_dts_avro__decoded",
    "silver.change_events",
    "gold.int_row_versions",
)


@pytest.mark.parametrize("table", WRITTEN_TABLES)
def test_tables_are_written_without_dictionary_pages(spark: Any, built_lake: Any, table: str):
    files = [unquote(urlparse(uri).path) for uri in spark.table(table).inputFiles()]
    assert files, f"{table} has no data file"
    with_dictionary = []
    for path in files:
        metadata = pq.ParquetFile(path).metadata
        for group in range(metadata.num_row_groups):
            row_group = metadata.row_group(group)
            for column in range(row_group.num_columns):
                chunk = row_group.column(column)
                if chunk.has_dictionary_page:
                    with_dictionary.append(f"{path}: {chunk.path_in_schema}")
    assert not with_dictionary, f"{len(with_dictionary)} column chunks: {with_dictionary[:3]}"
