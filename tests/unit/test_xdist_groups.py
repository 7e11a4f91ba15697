"""How make test splits the tests between its two workers (tests/xdist_groups.py)."""

from __future__ import annotations

from tests.xdist_groups import group, run_order


def test_tests_sharing_the_session_lake_or_the_broker_are_one_unit() -> None:
    lake = {
        group("tests/dbt_models/test_column_checks.py::test_rows_that_break_no_rule_pass"),
        group("tests/dbt_models/test_simulated_gold.py::test_gold_equals_the_oracle[dataworks]"),
    }
    assert lake == {"tests/dbt_models/"}
    assert group("tests/kafka/test_broker.py::test_a") == group("tests/kafka/test_kafka_ingest.py")


def test_other_modules_are_units_of_their_own() -> None:
    assert group("tests/unit/test_spark_master.py::test_a") == "tests/unit/test_spark_master.py"
    assert group("tests/unit/test_spark_master.py::test_a") != group("tests/unit/test_dump.py::t")


def test_the_longest_units_run_first_and_a_unit_keeps_its_file_order() -> None:
    collected = [
        "tests/cluster/test_spark_cluster.py::test_sample",
        "tests/dbt_models/test_a.py::test_1",
        "tests/unit/test_spark_master.py::test_a",
        "tests/dbt_models/test_b.py::test_2",
        "tests/faults/test_kill_and_rerun.py::test_rerun",
    ]
    assert sorted(collected, key=run_order) == [
        "tests/dbt_models/test_a.py::test_1",
        "tests/dbt_models/test_b.py::test_2",
        "tests/faults/test_kill_and_rerun.py::test_rerun",
        "tests/cluster/test_spark_cluster.py::test_sample",
        "tests/unit/test_spark_master.py::test_a",
    ]
