"""Credentials and connection manager of the ``sparksession`` adapter."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.exceptions.connection import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt_common.exceptions import DbtConfigError

from cdc_lakehouse.runtime.settings import ConfigError
from cdc_lakehouse.runtime.spark_session import MetastoreBusyError, get_spark


@dataclass
class SparkSessionCredentials(SparkCredentials):
    """dbt-spark's credentials, under the adapter type ``sparksession``.

    Only ``method: session`` is accepted: the point of this adapter is the in-process session.
    """

    def __post_init__(self) -> None:
        if self.method is None:
            self.method = SparkConnectionMethod.SESSION
        if self.method != SparkConnectionMethod.SESSION:
            raise DbtConfigError(
                f"type: sparksession supports only method: session (got {self.method!r}); "
                "use type: spark for thrift, http or odbc connections."
            )
        if not self.host:
            self.host = "localhost"
        super().__post_init__()

    @property
    def type(self) -> str:
        return "sparksession"


class SessionConfigError(FailedToConnectError):
    """A :class:`cdc_lakehouse.runtime.settings.ConfigError` of the session's creation as a dbt
    error (an unreachable ``CDC_SPARK_MASTER``, an invalid setting, a lake that cannot be written).

    Raised by the first connection, while dbt fills its relation cache: dbt stops before any
    node runs, prints the one-line message once (under "Encountered an error:" and
    "Configuration Error") and exits 2.
    """

    @property
    def type(self) -> str:
        return "Configuration"


class MetastoreBusy(SessionConfigError):
    """:class:`cdc_lakehouse.runtime.spark_session.MetastoreBusyError` as a dbt error."""

    @property
    def type(self) -> str:
        return "Database"


_NODE_ID = re.compile(r'"node_id":\s*"([^"]+)"')
"""The node of dbt's query comment (``/* {"app": "dbt", ..., "node_id": "model.p.m"} */``,
which dbt puts before every query it sends)."""


def node_of_query(sql: str) -> str | None:
    """The dbt node (unique_id) named by the query comment at the start of ``sql``, or None
    (no comment, or one without a node: dbt's own queries between nodes)."""
    match = _NODE_ID.search(sql, 0, 2000)
    return match.group(1) if match else None


def describe_spark_jobs(node_id: str | None) -> None:
    """Give the Spark jobs this thread starts from now on ``node_id`` (a dbt unique_id) as
    their description: Spark's UI and event log then say which dbt node ran each job
    (:mod:`cdc_lakehouse.tools.bench.spark_stages`). PySpark pins each Python thread (a dbt
    thread) to a JVM thread of its own, whose local properties these are. No-op without a
    node or a SparkContext."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    if node_id and context is not None:
        context.setJobDescription(node_id)


class SparkSessionConnectionManager(SparkConnectionManager):
    """Opens dbt-spark's session connection after creating the project's SparkSession."""

    TYPE = "sparksession"

    def add_query(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        """dbt-spark's ``add_query``, after naming the query's dbt node (from dbt's query
        comment) as the description of the Spark jobs it starts (:func:`describe_spark_jobs`).
        """
        describe_spark_jobs(node_of_query(sql))
        return super().add_query(sql, *args, **kwargs)

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """Create the project's SparkSession, then dbt-spark's session connection.

        Raises:
            MetastoreBusy: another process has the embedded metastore open.
            SessionConfigError: any other setting problem (e.g. a ``spark://`` master that
                does not answer).
        """
        try:
            get_spark()
        except MetastoreBusyError as exc:
            raise MetastoreBusy(str(exc)) from None
        except ConfigError as exc:
            raise SessionConfigError(str(exc)) from None
        return super().open(connection)

    @classmethod
    def process_results(
        cls, column_names: Iterable[str], rows: Iterable[Any]
    ) -> Iterator[dict[str, Any]]:
        """dbt's result rows, with every map's entries sorted by key (in structs and arrays
        too).

        Spark does not order a map's entries (the same map can come out of ``map_concat`` in
        another order), but dbt renders a fetched map as the JSON of its entries in the order
        they came, and a unit test compares those texts: equal maps would differ. Arrays keep
        their order (it means something).
        """
        for row in super().process_results(column_names, rows):
            yield {name: _maps_sorted(value) for name, value in row.items()}

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """dbt-spark's handler, except that :class:`SessionConfigError` passes through as raised.

        dbt-spark wraps every error in a new ``DbtRuntimeError`` at each level (query, then
        macro), which would frame the one-line message in two more "Runtime Error" lines.
        """
        try:
            yield
        except SessionConfigError:
            raise
        except Exception as exc:
            with super().exception_handler(sql):
                raise exc


def _maps_sorted(value: Any) -> Any:
    """``value`` (a fetched Spark value) with every map (dict) in it sorted by key; structs
    (pyspark ``Row``, a tuple) become plain tuples, which dbt renders as the same JSON list."""
    if isinstance(value, dict):
        return {key: _maps_sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_maps_sorted(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_maps_sorted(item) for item in value)
    return value
