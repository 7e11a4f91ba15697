"""The dbt adapter plugin `sparksession` (no Spark started)."""

from __future__ import annotations

import pytest
from dbt_common.exceptions import DbtConfigError


def test_plugin_is_found_by_type_name_and_extends_spark():
    from dbt.adapters.sparksession import Plugin

    assert Plugin.adapter.type() == "sparksession"
    assert Plugin.dependencies == ["spark"]


def test_python_models_default_to_the_in_process_session_method():
    from dbt.adapters.sparksession.impl import SparkSessionAdapter
    from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper

    adapter = SparkSessionAdapter.__new__(SparkSessionAdapter)
    assert adapter.default_python_submission_method == "session"
    assert adapter.python_submission_helpers["session"] is SessionPythonJobHelper
    assert "all_purpose_cluster" in adapter.python_submission_helpers  # dbt-spark's stay


def test_credentials_accept_only_the_session_method():
    from dbt.adapters.sparksession.connections import SparkSessionCredentials

    creds = SparkSessionCredentials(schema="silver", method="session")
    assert creds.type == "sparksession"
    with pytest.raises(DbtConfigError, match="supports only method: session"):
        SparkSessionCredentials(schema="silver", method="thrift", host="h")


def test_a_failing_python_model_names_the_model(spark):
    from dbt_common.exceptions import DbtRuntimeError

    from dbt.adapters.sparksession.python_submissions import SessionPythonJobHelper

    helper = SessionPythonJobHelper({"schema": "silver", "alias": "m"}, None)
    with pytest.raises(DbtRuntimeError, match=r"Python model silver\.m failed: ZeroDivisionError"):
        helper.submit("spark = spark\n1 / 0\n")
