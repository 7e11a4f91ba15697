"""The ``sparksession`` adapter: dbt-spark plus the in-process ``session`` Python submission."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt.adapters.spark.impl import SparkAdapter

from dbt.adapters.sparksession.connections import SparkSessionConnectionManager
from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper


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
