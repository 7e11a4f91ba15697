"""The ``sparksession`` adapter: dbt-spark plus the in-process ``session`` Python submission."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter

import cdc_lakehouse
from dbt.adapters.sparksession import project_state
from dbt.adapters.sparksession.connections import SparkSessionConnectionManager
from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper

logger = AdapterLogger("sparksession")

_INVOCATION_VALUES: dict[tuple[str, str], Any] = {}
"""(dbt invocation id, query) -> the value :meth:`SparkSessionAdapter.invocation_scalar` read:
only the current invocation's (a process may run several, e.g. dbtRunner in the tests)."""
_INVOCATION_VALUES_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[str, str], threading.Lock] = {}
"""One lock per (invocation id, query): threads asking the same value wait for one query."""


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

    @available
    def invocation_scalar(self, invocation_id: str, sql: str) -> Any:
        """The first column of the first row of ``sql`` (None when it returns no row), run at
        most once per dbt invocation ``invocation_id``: every node of the invocation gets the
        value the first one read. For values fixed for an invocation that many nodes put into
        their SQL as a literal (macros/cdc_test_scope.sql: the newest bronze batch the last
        recorded build tested), so that Spark prunes files with it, where a scalar subquery
        would be run again by every query and prune nothing.

        Raises:
            dbt's database error when the query fails (as ``run_query`` does).
        """
        key = (invocation_id, sql)
        with _INVOCATION_VALUES_LOCK:
            key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
        # one thread runs the query, the others wait for its value
        with key_lock:
            with _INVOCATION_VALUES_LOCK:
                if key in _INVOCATION_VALUES:
                    return _INVOCATION_VALUES[key]
            _response, table = self.execute(sql, fetch=True)
            value = table.rows[0][0] if len(table.rows) else None
            with _INVOCATION_VALUES_LOCK:
                for stale in [k for k in _INVOCATION_VALUES if k[0] != invocation_id]:
                    del _INVOCATION_VALUES[stale]
                for stale in [k for k in _KEY_LOCKS if k[0] != invocation_id]:
                    del _KEY_LOCKS[stale]
                _INVOCATION_VALUES[key] = value
            return value

    @available
    def project_state(self, invocation_id: str) -> str:
        """The md5 of what this invocation's tables are a function of besides bronze
        (:func:`dbt.adapters.sparksession.project_state.digest`: the project's model, macro,
        seed, test and snapshot files and ``dbt_project.yml``, the ``cdc_lakehouse`` package's
        source, ``--vars``, the target's schema), computed once per dbt invocation
        ``invocation_id`` (macros/cdc_test_scope.sql, built_state)."""
        key = (invocation_id, "project_state")
        with _INVOCATION_VALUES_LOCK:
            if key in _INVOCATION_VALUES:
                return str(_INVOCATION_VALUES[key])
        config: Any = self.config
        folders = [
            *config.model_paths,
            *config.macro_paths,
            *config.seed_paths,
            *config.test_paths,
            *config.snapshot_paths,
        ]
        value = project_state.digest(
            Path(config.project_root),
            folders,
            Path(cdc_lakehouse.__file__).parent,
            config.cli_vars,
            str(config.credentials.schema),
        )
        with _INVOCATION_VALUES_LOCK:
            _INVOCATION_VALUES[key] = value
        return value
