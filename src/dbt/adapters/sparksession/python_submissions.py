"""The ``session`` submission method: run a compiled dbt Python model in this process."""

from __future__ import annotations

from typing import Any

from dbt.adapters.base import PythonJobHelper
from dbt_common.exceptions import DbtRuntimeError

from cdc_lakehouse.runtime.spark_session import get_spark
from dbt.adapters.sparksession.connections import describe_spark_jobs


class SessionPythonJobHelper(PythonJobHelper):
    """Executes the compiled model code (model function + dbt-spark's table writer).

    The code is dbt-spark's ``py_write_table`` output: it expects a global ``spark`` and writes
    the model's DataFrame with ``saveAsTable``. It runs with the SparkSession of
    :func:`cdc_lakehouse.runtime.spark_session.get_spark`.
    """

    def __init__(self, parsed_model: dict[str, Any], credentials: Any) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials
        self.relation = f"{parsed_model['schema']}.{parsed_model['alias']}"

    def submit(self, compiled_code: str) -> None:
        spark = get_spark()
        describe_spark_jobs(self.parsed_model.get("unique_id"))
        code = compile(compiled_code, f"<dbt python model {self.relation}>", "exec")
        namespace: dict[str, Any] = {"spark": spark, "__name__": "__dbt_python_model__"}
        try:
            exec(code, namespace)
        except Exception as exc:
            raise DbtRuntimeError(
                f"Python model {self.relation} failed: {type(exc).__name__}: {exc}"
            ) from exc
