"""The ``sparksession`` adapter: dbt-spark plus the in-process ``session`` Python submission."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparksession.connections import SparkSessionConnectionManager
from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper

logger = AdapterLogger("sparksession")


class SparkSessionAdapter(SparkAdapter):
    """dbt-spark's adapter whose Python models run in-process by default (``session``)."""

    ConnectionManager = SparkSessionConnectionManager  # type: ignore[assignment]

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        helpers: dict[str, Any] = dict(super().python_submission_helpers)
        helpers["session"] = SessionPythonJobHelper
        return helpers

    @available
    def remove_write_leftovers(
        self, grace_s: float = 300.0, keep: list[str] | None = None
    ) -> list[str]:
        """Remove what writes killed half way left in the lake, and the generations no
        partition references since more than ``grace_s`` seconds (``on-run-start`` hook; see
        :mod:`cdc_lakehouse.interrupted_writes`), but nothing in the tables ``keep``
        (``database.table``: the project's sources, written by the ingest job); log and return
        the removed paths."""
        from cdc_lakehouse.interrupted_writes import remove_write_leftovers
        from cdc_lakehouse.spark_session import get_spark

        spark = get_spark()
        removed = [str(p) for p in remove_write_leftovers(spark, float(grace_s), keep or ())]
        for path in removed:
            logger.warning(f"removed {path}: left by a write that was interrupted or replaced")
        return removed

    @available
    def write_generation(
        self,
        source: str,
        schema: str,
        identifier: str,
        emptied: list[dict[str, Any]],
        grace_s: float,
    ) -> dict[str, Any]:
        """Write ``source`` as a new generation of the partitioned Parquet table
        ``schema.identifier`` and switch its partitions to it in one metastore call
        (:func:`cdc_lakehouse.generations.write_generation`, which documents the arguments and
        errors). Returns ``{"generation": path, "written": n, "added": n, "emptied": n,
        "removed": n}``."""
        from cdc_lakehouse.generations import write_generation
        from cdc_lakehouse.spark_session import get_spark

        switch = write_generation(
            get_spark(), source, schema, identifier, list(emptied or []), float(grace_s)
        )
        for path in switch.removed:
            logger.info(f"removed {path}: no partition of {schema}.{identifier} references it")
        return {
            "generation": str(switch.generation),
            "written": len(switch.written),
            "added": switch.added,
            "emptied": len(switch.emptied),
            "removed": len(switch.removed),
        }

    @available
    def switch_table_generation(
        self, source: str, schema: str, identifier: str, grace_s: float
    ) -> dict[str, Any]:
        """Replace the unpartitioned Parquet table ``schema.identifier`` by the rows of
        ``source`` with one ``ALTER TABLE .. SET LOCATION``
        (:func:`cdc_lakehouse.generations.switch_table`, which documents the arguments and
        errors). Returns ``{"switched": bool, "generation": path or None, "removed": n}``;
        not switched: the columns differed, the table was dropped, create it again."""
        from cdc_lakehouse.generations import switch_table
        from cdc_lakehouse.spark_session import get_spark

        switch = switch_table(get_spark(), source, schema, identifier, float(grace_s))
        for path in switch.removed:
            logger.info(f"removed {path}: {schema}.{identifier} no longer points at it")
        return {
            "switched": switch.switched,
            "generation": str(switch.generation) if switch.generation else None,
            "removed": len(switch.removed),
        }

    @available
    def remove_dropped_table_dir(self, schema: str, identifier: str) -> str | None:
        """Remove what a dropped table that generation switches had relocated leaves in the
        warehouse (:func:`cdc_lakehouse.generations.remove_dropped_table_dir`); log and return
        the removed directory."""
        from cdc_lakehouse.generations import remove_dropped_table_dir
        from cdc_lakehouse.spark_session import get_spark

        removed = remove_dropped_table_dir(get_spark(), schema, identifier)
        if removed is not None:
            logger.info(f"removed {removed}: left by {schema}.{identifier}, dropped")
        return str(removed) if removed is not None else None
