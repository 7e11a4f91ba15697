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
        self, keep: list[str] | None = None, schemas: list[str] | None = None
    ) -> list[str]:
        """Remove the directories table creations killed half way left in the lake
        (``on-run-start`` hook; see :mod:`cdc_lakehouse.interrupted_writes`), in the databases
        ``schemas`` (the target's; every database when ``None``), but nothing of the tables
        ``keep`` (``database.table``: the project's sources, written by the ingest job); log
        and return the removed paths."""
        from cdc_lakehouse.interrupted_writes import remove_write_leftovers
        from cdc_lakehouse.spark_session import get_spark

        removed = [str(p) for p in remove_write_leftovers(get_spark(), keep or (), schemas)]
        for path in removed:
            logger.warning(f"removed {path}: left by a table creation that was interrupted")
        return removed
