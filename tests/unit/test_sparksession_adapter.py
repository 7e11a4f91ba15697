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


def test_fetched_maps_come_out_sorted_by_key_so_equal_maps_render_alike():
    """dbt renders a fetched map as JSON in entry order; Spark does not order a map's
    entries, so a unit test would see two equal maps as different rows."""
    from dbt_common.clients.agate_helper import table_from_data_flat

    from dbt.adapters.sparksession.connections import SparkSessionConnectionManager

    def rendered(rows: list[tuple]) -> list:
        names = ["row_values", "versions"]
        data = SparkSessionConnectionManager.process_results(list(names), rows)
        return [list(row.values()) for row in table_from_data_flat(data, names).rows]

    one_order = ({"id": "1", "a": None}, [("k1", {"v": "x", "b": "y"})])
    other_order = ({"a": None, "id": "1"}, [("k1", {"b": "y", "v": "x"})])
    assert rendered([one_order]) == rendered([other_order])
    assert rendered([one_order]) == [['{"a": null, "id": "1"}', '[["k1", {"b": "y", "v": "x"}]]']]
    # arrays keep their order: it means something
    assert rendered([({}, [("k2", {}), ("k1", {})])]) != rendered([({}, [("k1", {}), ("k2", {})])])
