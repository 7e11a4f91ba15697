"""Queries the pipeline tests share."""

from __future__ import annotations


def gold_rows(spark, where: str) -> dict[str, dict[str, str | None]]:
    """``gold.current_rows`` matching the SQL condition ``where``: row_key -> row_values."""
    rows = spark.sql(f"select row_key, row_values from gold.current_rows where {where}").collect()
    return {r["row_key"]: dict(r["row_values"]) for r in rows}
