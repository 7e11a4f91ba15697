"""`make ci-changed` refuses to start without a production manifest or on a shared metastore
(one line, exit 2, nothing run), and the GitHub Actions template is a workflow that runs it
(README "Slim CI"; the recipe itself: tests/dbt_models/test_slim_ci.py)."""

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
    # not a sub-make of `make test` (no "Entering directory" lines, no jobserver notice)
    ignored = {"CDC_METASTORE_JDBC_URL", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}
    environment = {k: v for k, v in os.environ.items() if k not in ignored}
    return subprocess.run(
        ["make", "-n", "--no-print-directory", "ci-changed", *args],
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


def test_refuses_a_shared_metastore(tmp_path):
    (tmp_path / "manifest.json").write_text("{}")
    result = make_ci_changed(
        f"STATE={tmp_path}", CDC_METASTORE_JDBC_URL="jdbc:postgresql://127.0.0.1:5432/metastore"
    )
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "unset CDC_METASTORE_JDBC_URL" in lines[0]


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
