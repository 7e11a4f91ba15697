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


class SparkConfigurationError(FailedToConnectError):
    """A :class:`cdc_lakehouse.settings.ConfigError` of the Spark session as a dbt error: the
    embedded metastore busy, the shared metastore unreachable or refusing the credentials, a
    Spark master that does not answer, a bad setting.

    Raised by the first connection, while dbt fills its relation cache: dbt stops before any
    node runs, prints the message once and exits 2.
    """


class SparkSessionConnectionManager(SparkConnectionManager):
    """Opens dbt-spark's session connection after creating the project's SparkSession."""

    TYPE = "sparksession"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        """Create the project's SparkSession, then dbt-spark's session connection.

        Raises:
            SparkConfigurationError: the session cannot start because of a setting or a
                service it needs (see the class).
        """
        from cdc_lakehouse.settings import ConfigError
        from cdc_lakehouse.spark_session import get_spark

        try:
            get_spark()
        except ConfigError as exc:
            raise SparkConfigurationError(str(exc)) from None
        return super().open(connection)

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """dbt-spark's handler, except that :class:`SparkConfigurationError` passes through as
        raised.

        dbt-spark wraps every error in a new ``DbtRuntimeError`` at each level (query, then
        macro), which would frame the one-line message in two more "Runtime Error" lines.
        """
        try:
            yield
        except SparkConfigurationError:
            raise
        except Exception as exc:
            with super().exception_handler(sql):
                raise exc
