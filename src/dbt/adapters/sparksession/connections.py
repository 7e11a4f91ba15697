"""Credentials and connection manager of the ``sparksession`` adapter."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
from dbt.adapters.exceptions.connection import FailedToConnectError
from dbt.adapters.spark.connections import (
    SparkConnectionManager,
    SparkConnectionMethod,
    SparkCredentials,
)
from dbt_common.exceptions import DbtConfigError


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
    """A :class:`cdc_lakehouse.settings.ConfigError` of the session's creation as a dbt error
    (an unreachable ``CDC_SPARK_MASTER``, an invalid setting, a lake that cannot be written).

    Raised by the first connection, while dbt fills its relation cache: dbt stops before any
    node runs, prints the one-line message once (under "Encountered an error:" and
    "Configuration Error") and exits 2.
    """

    @property
    def type(self) -> str:
        return "Configuration"


class MetastoreBusy(SessionConfigError):
    """:class:`cdc_lakehouse.spark_session.MetastoreBusyError` as a dbt error."""

    @property
    def type(self) -> str:
        return "Database"


class SparkSessionConnectionManager(SparkConnectionManager):
    """Opens dbt-spark's session connection after creating the project's SparkSession."""

    TYPE = "sparksession"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """Create the project's SparkSession, then dbt-spark's session connection.

        Raises:
            MetastoreBusy: another process has the embedded metastore open.
            SessionConfigError: any other setting problem (e.g. a ``spark://`` master that
                does not answer).
        """
        from cdc_lakehouse.settings import ConfigError
        from cdc_lakehouse.spark_session import MetastoreBusyError, get_spark

        try:
            get_spark()
        except MetastoreBusyError as exc:
            raise MetastoreBusy(str(exc)) from None
        except ConfigError as exc:
            raise SessionConfigError(str(exc)) from None
        return super().open(connection)

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
