"""Baselines of the benchmark (issue 7): hand-written "latest row per key, deletes removed" on
the same Kafka message values the pipeline ingests, one per engine, so the report can give the
pipeline's time as ratios against them.

- :mod:`.python_floor`: one Python thread, ``orjson`` / ``fastavro`` and a dict upsert: the
  decode floor.
- :mod:`.duckdb_baseline`: DuckDB reads the bronze parquet files, decodes JSON in SQL and keeps
  the latest change per key with a window (Avro decoded by fastavro in Python).
- :mod:`.pyspark_script`: the single PySpark script a data engineer would write (``from_json``,
  ``row_number()`` over a window, ``saveAsTable``).
- :mod:`.plugin_api`: what a format plug-in gives them, in its ``baseline.py``
  (``src/cdc_lakehouse/formats/<folder>/``): the Python decoder (where the format keeps the
  table, op, images and ordering key), the DuckDB SQL and the Spark SQL, per format.
- :mod:`.formats`: each format's baselines found in its plug-in (:func:`.formats.baseline`),
  and what the baselines share about formats (ordering columns, decoded changes as Arrow).
- :mod:`.check`: the expected rows from the simulator's oracle and the comparison.

Every baseline returns a :class:`BaselineResult` whose ``rows`` is a :data:`LatestRows`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TypeAlias

LatestRows: TypeAlias = dict[tuple[str, str], dict[str, str | None]]
"""``(source table name lower-case, row_key) -> {column: value text or None}``: the live rows.
``row_key`` is the pipeline's canonical key (:func:`row_key`); values are texts as the
format's decoder yields them, None for SQL NULL. A column absent from a row means NULL (Lindorm
keeps no cell for NULL; :func:`.check.differences` compares with ``dict.get``)."""


@dataclass(frozen=True)
class BaselineResult:
    """What one baseline run gives.

    Attributes:
        rows: the live rows it computed.
        seconds: wall-clock seconds of the timed part (decode through latest-per-key; what is
            excluded is said by each baseline: loading the input, fetching the result).
        events: row changes decoded, producer-retry duplicates included (a split update's
            before and after messages count two, a Canal message one per ``data`` element),
            as ``silver.change_events`` counts them.
        engine: what ran it, e.g. ``duckdb 2.0.0 (4 threads)``.
        cores: cores the engine was allowed to use (for events/s per core).
    """

    rows: LatestRows
    seconds: float
    events: int
    engine: str
    cores: int


def row_key(key_columns: Iterable[str], values: Mapping[str, str | None]) -> str:
    """The pipeline's canonical row key: compact JSON object of key column -> value text, keys
    sorted, non-ASCII kept (``{"line_no":"1","order_id":"10000000004"}``); docs/architecture.md,
    ``gold.current_rows.row_key``."""
    return json.dumps(
        {column: values.get(column) for column in sorted(key_columns)},
        separators=(",", ":"),
        ensure_ascii=False,
    )


__all__ = ["BaselineResult", "LatestRows", "row_key"]
