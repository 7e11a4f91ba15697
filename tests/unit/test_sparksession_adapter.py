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


def _project(root):
    (root / "models").mkdir(parents=True)
    (root / "macros").mkdir()
    (root / "dbt_project.yml").write_text("name: p\n")
    (root / "models" / "m.sql").write_text("select 1\n")
    (root / "macros" / "x.sql").write_text("{% macro x() %}1{% endmacro %}\n")
    package = root / "pkg"
    package.mkdir()
    (package / "decode.py").write_text("A = 1\n")
    return package


def test_the_project_state_changes_with_a_file_the_vars_or_the_schema(tmp_path):
    """A build is up to date only with the recorded build's project state
    (macros/cdc_test_scope.sql): any changed model, macro or package file, JVM function
    source, --vars or target schema gives another digest; compiled Python caches do not."""
    from dbt.adapters.sparksession.project_state import digest

    package = _project(tmp_path)
    jvm_source = tmp_path / "jvm" / "src"
    jvm_source.mkdir(parents=True)
    (jvm_source / "ExactJson.java").write_text("class ExactJson {}\n")

    def state(vars_=None, schema="silver"):
        return digest(
            tmp_path, ["models", "macros", "seeds"], [package, jvm_source], vars_ or {}, schema
        )

    first = state()
    assert state() == first
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "decode.cpython-311.pyc").write_bytes(b"\0")
    assert state() == first
    assert state({"cdc_formats": ["dts_canal_json"]}) != first
    assert state(schema="dev_ana_silver") != first
    for changed in (
        tmp_path / "macros" / "x.sql",
        package / "decode.py",
        jvm_source / "ExactJson.java",
    ):
        before = changed.read_text()
        changed.write_text(before + "-- edited\n")
        assert state() != first, changed
        changed.write_text(before)
    assert state() == first
    (tmp_path / "models" / "new.sql").write_text("select 2\n")
    assert state() != first
