"""The tables part's pieces that need no Spark: the project copy dbt runs on (typed gold is
written into it, never into the checkout) and what the report reads of dbt's run."""

from __future__ import annotations

import json
from pathlib import Path

from cdc_lakehouse.tools.bench import tables_bench, workload
from cdc_lakehouse.tools.bench.baselines import check

PROJECT = Path(__file__).resolve().parents[2]


def test_the_project_copy_has_what_dbt_reads_and_no_typed_gold(tmp_path: Path) -> None:
    shipped = sorted((PROJECT / tables_bench.EXAMPLE_TYPED_GOLD).rglob("*.sql"))
    assert shipped, "the checkout ships typed gold models of the samples"
    users = sorted((PROJECT / tables_bench.TYPED_GOLD).rglob("*.sql"))
    copy = tables_bench.copy_project(PROJECT, tmp_path / "project")
    assert (copy / "dbt_project.yml").read_text() == (PROJECT / "dbt_project.yml").read_text()
    assert (copy / "profiles.yml").is_file()
    for folder in (
        "models/staging",
        "models/marts/changes",
        "macros",
        "seeds",
        "sample_data/seeds",
        "tests/dbt/generic",
    ):
        assert (copy / folder).is_dir(), folder
    assert not (copy / "tests" / "unit").exists(), "pytest's tests are not dbt's"
    assert not (copy / "sample_data" / "models").exists(), "the examples' typed gold"
    assert not (copy / "sample_data" / "dump").exists()
    assert list((copy / tables_bench.TYPED_GOLD).iterdir()) == []
    assert sorted((PROJECT / tables_bench.EXAMPLE_TYPED_GOLD).rglob("*.sql")) == shipped
    assert sorted((PROJECT / tables_bench.TYPED_GOLD).rglob("*.sql")) == users
    # copying again replaces the copy (a second run in the same work dir)
    (copy / tables_bench.TYPED_GOLD / "stale.sql").write_text("select 1")
    tables_bench.copy_project(PROJECT, copy)
    assert list((copy / tables_bench.TYPED_GOLD).iterdir()) == []


def test_typed_gold_node_times_count_the_tagged_models_and_the_tests_on_them(
    tmp_path: Path,
) -> None:
    typed = "model.cdc_lakehouse.dts_canal__shop__t0001"
    nodes = {
        typed: {"resource_type": "model", "tags": ["typed_gold"], "depends_on": {"nodes": []}},
        "model.cdc_lakehouse.current_rows": {"resource_type": "model", "tags": []},
        "test.cdc_lakehouse.unique_t0001.c8": {
            "resource_type": "test",
            "tags": [],
            "depends_on": {"nodes": [typed]},
        },
        "test.cdc_lakehouse.not_null_current_rows.a1": {
            "resource_type": "test",
            "tags": [],
            "depends_on": {"nodes": ["model.cdc_lakehouse.current_rows"]},
        },
    }
    (tmp_path / "manifest.json").write_text(json.dumps({"nodes": nodes}))
    results = [
        {"unique_id": typed, "execution_time": 1.25},
        {"unique_id": "model.cdc_lakehouse.current_rows", "execution_time": 9.0},
        {"unique_id": "test.cdc_lakehouse.unique_t0001.c8", "execution_time": 0.5},
        {"unique_id": "test.cdc_lakehouse.not_null_current_rows.a1", "execution_time": 2.0},
    ]
    (tmp_path / "run_results.json").write_text(json.dumps({"results": results}))
    assert tables_bench.typed_gold_node_times(tmp_path) == {
        "models": 1,
        "tests": 1,
        "seconds": 1.8,
    }


def test_the_tables_workload_spreads_over_n_tables_and_the_oracle_covers_them() -> None:
    load = workload.build("dts_canal_json", 800, 40, seed=3, tables=8)
    names = {f"t{n:04d}" for n in range(1, 9)}
    assert {t.name for t in load.history.tables} == names
    assert load.topics == ["sim.dts_canal_json"]
    expected = check.history_rows(load.encoder, load.whole)
    assert {table for table, _key in expected} == names
    assert set(check.compared_columns(load.whole)) == names
