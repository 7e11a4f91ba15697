"""Slim CI (`make ci-changed`, docs/how-to/slim-ci.md "Slim CI: build and test only what a
change touches"): a change to one model builds and tests that model, its children and their
tests, and nothing else.

A copy of the project (what dbt reads: dbt_project.yml, profiles.yml and the directories it
names) gives the production manifest (`dbt parse` of the unchanged copy, no warehouse work);
then silver.control_events of the copy changes (a comment: dbt compares a model's file with
production's), and the dbt commands that `make -n ci-changed` prints run in-process on the
session lake, which holds the fixture data
already built (the production tables `--defer` resolves to: with this project's fixed
schemas they have the names the CI build writes). The expectations come from the manifest of
the changed copy (its child and parent maps), not from a list of node names.

The changed model has a child (the view silver.source_freshness), data tests of its own and of
that child, and parents in every decoding path. A change to a staging model works the same
way, but everything below ``silver.change_events`` is most of silver and gold: with the
recipe's ``--full-refresh`` that took 112 s of the test session's run (2026-12-06), against
about 20 s for this one.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.dbt

CHANGED_MODEL = "model.cdc_lakehouse.control_events"
CHANGED_FILE = Path("models/marts/changes/control_events.sql")
CHANGE = "{# a change under review #}\n"
# the resource types a build executes (ephemeral models excepted)
EXECUTED = {"model", "seed", "snapshot", "test", "unit_test"}
OK = {"success", "pass"}


def copy_project(source: Path, target: Path) -> Path:
    """Copy what dbt reads of the project at ``source`` (its project and profile files and the
    directories dbt_project.yml names that exist) to ``target``."""
    target.mkdir(parents=True)
    config = yaml.safe_load((source / "dbt_project.yml").read_text(encoding="utf-8"))
    directories = {
        path
        for key, value in config.items()
        if key.endswith("-paths") and key != "clean-targets"
        for path in value
    }
    for name in ("dbt_project.yml", "profiles.yml", "packages.yml", "dependencies.yml"):
        if (source / name).is_file():
            shutil.copy2(source / name, target / name)
    for directory in sorted(directories):
        if (source / directory).is_dir():
            shutil.copytree(source / directory, target / directory)
    return target


def make_dbt_commands(makefile: Path, state: Path) -> list[list[str]]:
    """The dbt argument lists of the `dbt build` commands `make ci-changed STATE=state` of
    ``makefile`` runs, in order, as `make -n` prints them (without the dbt binary and the
    ``--project-dir`` / ``--profiles-dir`` arguments)."""
    ignored = {"CDC_METASTORE_JDBC_URL", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}  # not a sub-make
    env = {k: v for k, v in os.environ.items() if k not in ignored}
    printed = subprocess.run(
        ["make", "-n", "--no-print-directory", "-f", str(makefile), "ci-changed", f"STATE={state}"],
        cwd=makefile.parent,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.replace("\\\n", " ")
    commands = []
    for line in printed.splitlines():
        words = shlex.split(line)
        starts = [
            i for i, w in enumerate(words[:-1]) if w.endswith("dbt") and words[i + 1] == "build"
        ]
        if starts:
            commands.append(without_project_args(words[starts[0] + 2 :]))
    return commands


def without_project_args(words: list[str]) -> list[str]:
    """``words`` without ``--project-dir X`` and ``--profiles-dir X``."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in ("--project-dir", "--profiles-dir"):
            skip = True
        else:
            out.append(word)
    return out


def dbt_runner(project: Path, target: Path, logs: Path) -> Callable[..., Any]:
    """Run dbt in-process on ``project`` (the session's SparkSession and lake); fail the test
    with dbt's error when the command fails."""
    from dbt.cli.main import dbtRunner

    def run(*args: str) -> Any:
        argv = [
            *args,
            *("--project-dir", str(project), "--profiles-dir", str(project)),
            *("--target-path", str(target), "--log-path", str(logs)),
        ]
        result = dbtRunner().invoke(argv)
        if not result.success:
            failed = [
                f"{r.node.unique_id}: {r.message}"
                for r in getattr(result.result, "results", None) or []
                if str(r.status) in ("error", "fail", "runtime error")
            ]
            pytest.fail(f"dbt {' '.join(args)} failed: {result.exception or failed}")
        return result

    return run


def closure(start: Iterable[str], edges: dict[str, list[str]]) -> set[str]:
    """``start`` and every node reachable from it along ``edges``."""
    seen: set[str] = set()
    todo = list(start)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, []))
    return seen


def executed(manifest: dict[str, Any], ids: Iterable[str]) -> set[str]:
    """The ids of ``ids`` that a `dbt build` executes (not ephemeral models, sources, ...)."""
    nodes = {**manifest["nodes"], **manifest.get("unit_tests", {})}
    return {
        i
        for i in ids
        if i in nodes
        and nodes[i]["resource_type"] in EXECUTED
        and nodes[i].get("config", {}).get("materialized") != "ephemeral"
    }


def run_slim_ci(project_dir: Path, makefile: Path, work: Path) -> dict[str, Any]:
    """In ``work``: a copy of the project at ``project_dir``, its production manifest, the
    change, and the dbt commands that `make ci-changed` of ``makefile`` runs: the parents'
    selection listed (`dbt ls`), the recipe run (`dbt build`) on the session lake."""
    copy = copy_project(project_dir, work / "project")
    run = dbt_runner(copy, work / "target", work / "logs")
    run("parse")  # the unchanged project: production's manifest
    state = work / "production"
    state.mkdir()
    shutil.copy2(work / "target" / "manifest.json", state / "manifest.json")

    sql = (copy / CHANGED_FILE).read_text(encoding="utf-8")
    (copy / CHANGED_FILE).write_text(CHANGE + sql, encoding="utf-8")

    commands = make_dbt_commands(makefile, state)
    assert len(commands) == 2, f"make ci-changed: expected 2 dbt builds, got {commands}"
    parents_step, recipe = commands
    listed = run("ls", *parents_step, "--output", "json", "--output-keys", "unique_id", "-q")
    run("build", *recipe)
    return {
        "recipe": recipe,
        "parents": {json.loads(line)["unique_id"] for line in listed.result},
        "manifest": json.loads((work / "target" / "manifest.json").read_text()),
        "run_results": json.loads((work / "target" / "run_results.json").read_text()),
    }


@pytest.fixture(scope="module")
def slim_ci(spark, built_lake, project_dir: Path, tmp_path_factory) -> dict[str, Any]:
    """`make ci-changed`'s commands after a change to silver.control_events
    (:func:`run_slim_ci`)."""
    work = tmp_path_factory.mktemp("slim-ci")
    return run_slim_ci(project_dir, project_dir / "Makefile", work)


def test_recipe_is_the_documented_command(slim_ci):
    recipe = slim_ci["recipe"]
    assert recipe[:2] == ["--select", "state:modified+"]
    assert "--defer" in recipe
    assert "--state" in recipe


def test_builds_exactly_the_changed_model_its_children_and_their_tests(slim_ci):
    manifest = slim_ci["manifest"]
    expected = executed(manifest, closure([CHANGED_MODEL], manifest["child_map"]))
    results = {
        r["unique_id"]: r["status"]
        for r in slim_ci["run_results"]["results"]
        if not r["unique_id"].startswith("operation.")  # on-run-start / on-run-end hooks
    }
    # the subtree is the change's: the model, its child view, their data tests
    assert CHANGED_MODEL in expected
    assert "model.cdc_lakehouse.source_freshness" in expected
    assert "test.cdc_lakehouse.assert_every_bronze_record_accounted_for" in expected
    assert "model.cdc_lakehouse.change_events" not in expected
    assert "model.cdc_lakehouse.stg_lindorm__events" not in expected
    assert len(expected) < len(executed(manifest, manifest["nodes"]))

    assert set(results) - expected == set(), "built but not below the change"
    assert expected - set(results) == set(), "below the change but not built"
    assert {i: s for i, s in results.items() if s not in OK} == {}


def test_parents_step_selects_the_unmodified_models_and_seeds_the_subtree_reads(slim_ci):
    manifest = slim_ci["manifest"]
    subtree = closure([CHANGED_MODEL], manifest["child_map"])
    ancestors = closure(
        [p for node in subtree for p in manifest["parent_map"].get(node, [])],
        manifest["parent_map"],
    )
    nodes = manifest["nodes"]
    expected = {
        i
        for i in ancestors - subtree
        if i in nodes and nodes[i]["resource_type"] in {"model", "seed"}
    }
    assert "model.cdc_lakehouse.stg_lindorm__events" in expected
    assert "model.cdc_lakehouse.stg_lindorm__decoded" in expected
    assert "seed.cdc_lakehouse.cdc_topics" in expected
    listed = {i for i in slim_ci["parents"] if not i.startswith("source.")}
    assert listed == expected
