"""Credentials and connection manager of the ``sparksession`` adapter."""

from __future__ import annotations

from dataclasses import dataclass

from dbt.adapters.contracts.connection import Connection
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


class SparkSessionConnectionManager(SparkConnectionManager):
    """Opens dbt-spark's session connection after creating the project's SparkSession."""

    TYPE = "sparksession"

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        from cdc_lakehouse.spark_session import get_spark

        get_spark()
        return super().open(connection)
