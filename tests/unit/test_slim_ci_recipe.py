"""`make ci-changed` refuses to start without a production manifest, or on a shared metastore
without a CI run id (one line, exit 2, nothing run); on a shared metastore it builds into the
ci target's schemas with --defer --favor-state; `make drop-schemas` refuses production's
schemas; and the GitHub Actions template is a workflow that runs it (docs/how-to/slim-ci.md
"Slim CI: build and test only what a change touches"; the recipes themselves:
tests/dbt_models/test_slim_ci.py and tests/live/test_shared_metastore.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "ci-templates" / "github-actions" / "dbt-slim-ci.yml"


def make_ci_changed(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`make ci-changed ARGS` in the repository (dry run: a refusal happens before anything)."""
    return make_dry_run("ci-changed", *args, **env)


def make_dry_run(goal: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`make -n GOAL ARGS` in the repository, with ``env`` beside the test's environment."""
    # not a sub-make of `make test` (no "Entering directory" lines, no jobserver notice)
    ignored = {"CDC_METASTORE_JDBC_URL", "CDC_CI_RUN_ID", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    environment = {k: v for k, v in os.environ.items() if k not in ignored}
    return subprocess.run(
        ["make", "-n", "--no-print-directory", goal, *args],
        cwd=ROOT,
        env={**environment, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("state", [None, "missing-dir", "empty-dir"])
def test_refuses_without_a_production_manifest(state, tmp_path):
    args = []
    if state == "missing-dir":
        args = [f"STATE={tmp_path / 'nothing-here'}"]
    elif state == "empty-dir":
        args = [f"STATE={tmp_path}"]
    result = make_ci_changed(*args)
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "no manifest.json in STATE=" in lines[0]


SHARED = "jdbc:postgresql://127.0.0.1:5432/metastore"


def test_refuses_a_shared_metastore_without_a_ci_run_id(tmp_path):
    (tmp_path / "manifest.json").write_text("{}")
    result = make_ci_changed(f"STATE={tmp_path}", CDC_METASTORE_JDBC_URL=SHARED)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "set CDC_CI_RUN_ID" in lines[0]


def test_on_a_shared_metastore_builds_the_change_into_the_ci_schemas(tmp_path):
    """No fresh lake, no ingest: one build on target ci, every unselected ref deferred to
    production's tables (--favor-state: even where a CI schema holds an older copy)."""
    (tmp_path / "manifest.json").write_text("{}")
    result = make_ci_changed(f"STATE={tmp_path}", CDC_METASTORE_JDBC_URL=SHARED, CDC_CI_RUN_ID="7")
    assert result.returncode == 0, result.stderr
    commands = [" ".join(c.split()) for c in result.stdout.replace("\\\n", " ").splitlines()]
    assert commands == [
        ".venv/bin/dbt build --project-dir . --profiles-dir . --target ci --select "
        f"state:modified+ --defer --favor-state --state {tmp_path}"
    ]


@pytest.mark.parametrize("target", [None, "prod", "local"])
def test_drop_schemas_refuses_anything_but_dev_and_ci(target):
    result = make_dry_run("drop-schemas", *([f"TARGET={target}"] if target else []))
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "pass TARGET=dev or TARGET=ci" in lines[0]


def test_drop_schemas_drops_the_targets_schemas():
    result = make_dry_run("drop-schemas", "TARGET=ci")
    assert result.returncode == 0, result.stderr
    assert "dbt run-operation drop_target_schemas" in result.stdout
    assert "--target ci" in result.stdout


def test_runs_the_recipe_with_a_production_manifest(tmp_path):
    (tmp_path / "manifest.json").write_text("{}")
    result = make_ci_changed(f"STATE={tmp_path}")
    assert result.returncode == 0, result.stderr
    printed = result.stdout.replace("\\\n", " ")
    assert "--select state:modified+ --defer" in " ".join(printed.split())
    assert f"--state {tmp_path}" in printed


def test_github_actions_template_runs_ci_changed():
    workflow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    # YAML 1.1 (PyYAML) reads the key `on` as True
    triggers = workflow.get("on", workflow.get(True))
    assert {"push", "pull_request"} <= set(triggers)
    runs = {
        name: "\n".join(step.get("run", "") for step in job["steps"])
        for name, job in workflow["jobs"].items()
    }
    uses = {
        name: [step.get("uses", "") for step in job["steps"]]
        for name, job in workflow["jobs"].items()
    }
    slim = next(name for name, run in runs.items() if "make ci-changed STATE=" in run)
    assert "make install" in runs[slim]
    assert any(u.startswith("actions/setup-python") for u in uses[slim])
    assert any(u.startswith("actions/setup-java") for u in uses[slim])
    assert any(u.startswith("actions/upload-artifact") for u in uses[slim])
    # the main branch's job publishes the manifest the pull requests fetch
    publisher = next(name for name, run in runs.items() if "dbt parse" in run and name != slim)
    assert any(u.startswith("actions/upload-artifact") for u in uses[publisher])
