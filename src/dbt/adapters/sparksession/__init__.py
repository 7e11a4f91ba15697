"""dbt adapter plugin ``sparksession``: dbt-spark's ``session`` method, plus Python models.

dbt-spark submits Python models only to Databricks. This plugin extends it with a ``session``
submission method that runs the compiled model code in the same process, on the SparkSession
that :func:`cdc_lakehouse.runtime.spark_session.get_spark` creates with the project's one Spark
configuration. Use it in ``profiles.yml`` with ``type: sparksession`` and ``method: session``.
"""

from dbt.adapters.base import AdapterPlugin

from dbt.adapters.sparksession.connections import (
    SparkSessionConnectionManager,
    SparkSessionCredentials,
)
from dbt.adapters.sparksession.impl import SparkSessionAdapter
from dbt.include import sparksession

Plugin = AdapterPlugin(
    adapter=SparkSessionAdapter,  # type: ignore[arg-type]
    credentials=SparkSessionCredentials,
    include_path=sparksession.PACKAGE_PATH,
    dependencies=["spark"],
)

__all__ = [
    "Plugin",
    "SparkSessionAdapter",
    "SparkSessionConnectionManager",
    "SparkSessionCredentials",
]
