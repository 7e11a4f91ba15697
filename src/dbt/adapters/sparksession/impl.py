"""The ``sparksession`` adapter: dbt-spark plus the in-process ``session`` Python submission."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.impl import SparkAdapter

import cdc_lakehouse
from cdc_lakehouse.runtime import jars
from cdc_lakehouse.runtime.interrupted_writes import remove_write_leftovers
from cdc_lakehouse.runtime.spark_session import get_spark
from dbt.adapters.sparksession import project_state
from dbt.adapters.sparksession.connections import SparkSessionConnectionManager
from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper

logger = AdapterLogger("sparksession")

_INVOCATION_VALUES: dict[tuple[str, str], Any] = {}
"""(dbt invocation id, query or name) -> the value :meth:`SparkSessionAdapter.invocation_scalar`
read (or :meth:`~SparkSessionAdapter.project_state` computed):
only the current invocation's (a process may run several, e.g. dbtRunner in the tests)."""
_INVOCATION_VALUES_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple[str, str], threading.Lock] = {}
"""One lock per key of ``_INVOCATION_VALUES``: threads asking the same value wait for one."""


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
        (``on-run-start`` hook; see :mod:`cdc_lakehouse.runtime.interrupted_writes`), in the
        databases
        ``schemas`` (the target's; every database when ``None``), but nothing of the tables
        ``keep`` (``database.table``: the project's sources, written by the ingest job); log
        and return the removed paths."""
        removed = [str(p) for p in remove_write_leftovers(get_spark(), keep or (), schemas)]
        for path in removed:
            logger.warning(f"removed {path}: left by a table creation that was interrupted")
        return removed

    @available
    def register_exact_json(self, name: str, schema_ddl: str) -> str:
        """Register the exact JSON function ``name`` reading the top-level fields
        ``schema_ddl`` (Spark DDL) in the project's SparkSession, and return ``name``
        (macros/cdc_exact_json.sql; the function: :mod:`cdc_lakehouse.decode.exact_json`).
        Registering again replaces the function, so a changed schema takes effect.

        Raises:
            cdc_lakehouse.runtime.jars.JarsMissingError: the session has no exact-json jar (run
                ``make install``).
            pyspark.errors.IllegalArgumentException: a type the function cannot read.
        """
        # local: pyspark, not loaded when dbt loads the adapter (parse, ls, --help)
        from cdc_lakehouse.decode.exact_json import register

        register(get_spark(), name, schema_ddl)
        return name

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
        return _once_per_invocation(invocation_id, sql, lambda: self._first_value(sql))

    def _first_value(self, sql: str) -> Any:
        """The first column of the first row of ``sql``, or None when it returns no row."""
        _response, table = self.execute(sql, fetch=True)
        return table.rows[0][0] if len(table.rows) else None

    @available
    def project_state(self, invocation_id: str) -> str:
        """The md5 of what this invocation's tables are a function of besides bronze
        (:func:`dbt.adapters.sparksession.project_state.digest`: the project's model, macro,
        seed, test and snapshot files and ``dbt_project.yml``, the ``cdc_lakehouse`` package's
        source and that of the project's JVM functions, ``--vars``, the target's schema),
        computed once per dbt invocation
        ``invocation_id`` (macros/cdc_test_scope.sql, built_state)."""
        return str(_once_per_invocation(invocation_id, "project_state", self._project_state))

    def _project_state(self) -> str:
        """:meth:`project_state`, computed."""
        config: Any = self.config
        folders = [
            *config.model_paths,
            *config.macro_paths,
            *config.seed_paths,
            *config.test_paths,
            *config.snapshot_paths,
        ]
        return project_state.digest(
            Path(config.project_root),
            folders,
            [Path(cdc_lakehouse.__file__).parent, *jars.built_sources()],
            config.cli_vars,
            str(config.credentials.schema),
        )


def _once_per_invocation(invocation_id: str, name: str, compute: Callable[[], Any]) -> Any:
    """The value ``compute()`` gave for ``name`` in dbt invocation ``invocation_id``, computed
    by the first thread that asks (the others wait for it) and kept until another invocation
    stores one: the values of earlier invocations are dropped then."""
    key = (invocation_id, name)
    with _INVOCATION_VALUES_LOCK:
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:
        with _INVOCATION_VALUES_LOCK:
            if key in _INVOCATION_VALUES:
                return _INVOCATION_VALUES[key]
        value = compute()
        with _INVOCATION_VALUES_LOCK:
            for cache in (_INVOCATION_VALUES, _KEY_LOCKS):
                for stale in [k for k in cache if k[0] != invocation_id]:
                    del cache[stale]
            _INVOCATION_VALUES[key] = value
        return value
