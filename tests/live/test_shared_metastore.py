"""The shared PostgreSQL metastore (issue 21): settings, errors a user must fix, and the live
demo, with real processes (PostgreSQL from Debian, the local broker, Spark JVMs).

- Settings: a URL without a host, a user or a password stops with one line saying what to set.
- An unreachable metastore database and refused credentials: ``python -m ingest``,
  ``dbt build`` and ``python -m cdc_lakehouse.tools.summary`` exit 2 with one line, before writing.
- ``make metastore`` for lakes in a directory closed to other users (mode 0700, like a home
  directory): two lakes, two servers on their own clusters outside the lakes, each answering;
  stop, status, a removed lake and remove; a cluster an earlier version made in the lake stays
  in use.
- The live demo, short (``make demo-live`` with ``--duration 30``), its lake in a directory
  closed to other users: continuous ingest, dbt builds and a reader of gold in separate
  processes on one shared metastore; gold equal to the oracle, every produced record in bronze
  once, no reader error.

The ``metastore`` fixture's servers live under ``/var/tmp`` with ``--dir`` (a directory the
server's system user must reach itself); the servers of a lake's default directory keep their
clusters where that user owns them (:func:`cdc_lakehouse.runtime.metastore_server.server_for`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.runtime.metastore_server import export_values, postgres_bin
from cdc_lakehouse.runtime.settings import ConfigError, load_settings
from tests.dbt_models.test_slim_ci import copy_project
from tests.faults.delta_log import commit_operations, latest_version, live_row_count
from tests.metastore import shared_dir

PROJECT_DIR = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
DBT = str(Path(PYTHON).parent / "dbt")


def run(
    args: list[str], env: dict[str, str], timeout_s: float = 180
) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, env=env, cwd=PROJECT_DIR, capture_output=True, text=True, timeout=timeout_s
    )


COMMANDS = {
    "ingest": [PYTHON, "-m", "ingest", "--dump", "sample_data/dump"],
    "dbt": [DBT, "build", "--project-dir", ".", "--profiles-dir", "."],
    "summary": [PYTHON, "-m", "cdc_lakehouse.tools.summary"],
}


def error_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The lines of a failed command that carry its message (dbt frames it in two lines)."""
    text = result.stderr + result.stdout
    return [line for line in text.splitlines() if "metastore database" in line]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CDC_METASTORE_JDBC_URL": "jdbc:postgresql:metastore"}, "with a host and a database"),
        ({"CDC_METASTORE_JDBC_URL": "jdbc:oracle://h:1/db"}, "no known JDBC driver"),
        ({"CDC_METASTORE_JDBC_URL": "jdbc:postgresql://h:1/db"}, "CDC_METASTORE_USER is not"),
        (
            {"CDC_METASTORE_JDBC_URL": "jdbc:postgresql://h:1/db", "CDC_METASTORE_USER": "u"},
            "no password",
        ),
        (
            {
                "CDC_METASTORE_JDBC_URL": "jdbc:postgresql://h:1/db",
                "CDC_METASTORE_USER": "u",
                "CDC_METASTORE_PASSWORD_FILE": "/nonexistent/password",
            },
            "cannot be read",
        ),
    ],
)
def test_incomplete_metastore_settings_say_what_to_set(env: dict[str, str], message: str):
    with pytest.raises(ConfigError, match=message):
        load_settings(env)


def test_metastore_settings_read_the_password_file(metastore: dict[str, str]):
    settings = load_settings(metastore)
    assert settings.metastore is not None
    assert (
        settings.metastore.password
        == Path(metastore["CDC_METASTORE_PASSWORD_FILE"]).read_text().strip()
    )
    assert settings.metastore.password not in repr(settings)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unreachable_metastore_stops_with_one_line_before_writing(tmp_path: Path, command: str):
    lake = tmp_path / "lake"
    env = dict(
        os.environ,
        CDC_LAKE_DIR=str(lake),
        CDC_METASTORE_JDBC_URL="jdbc:postgresql://127.0.0.1:1/metastore",
        CDC_METASTORE_USER="hive",
        CDC_METASTORE_PASSWORD="x",
    )
    result = run(COMMANDS[command], env)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = error_lines(result)
    assert len(lines) == 1 and "127.0.0.1:1 does not answer" in lines[0], lines
    assert "make metastore" in lines[0]
    assert not lake.exists()


@pytest.mark.dbt
def test_refused_password_stops_with_one_line(tmp_path: Path, metastore: dict[str, str]):
    env = dict(os.environ, CDC_LAKE_DIR=str(tmp_path / "lake"), **metastore)
    env.pop("CDC_METASTORE_PASSWORD_FILE")
    env["CDC_METASTORE_PASSWORD"] = "not-the-password"
    result = run(COMMANDS["summary"], env)
    assert result.returncode == 2, result.stdout + result.stderr[-3000:]
    lines = error_lines(result)
    assert len(lines) == 1 and "refused user 'hive' or its password" in lines[0], lines
    assert "not-the-password" not in result.stdout + result.stderr


def closed_dir(tmp_path: Path) -> Path:
    """A directory only its owner can enter (mode 0700), like a home directory."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    home.chmod(0o700)
    return home


def metastore_command(action: str, lake: Path) -> subprocess.CompletedProcess:
    """``python -m cdc_lakehouse.runtime.metastore_server ACTION`` (what ``make metastore``,
    ``make metastore-stop`` and ``make clean`` run) for the lake ``lake``."""
    env = dict(os.environ, CDC_LAKE_DIR=str(lake))
    return run([PYTHON, "-m", "cdc_lakehouse.runtime.metastore_server", action], env)


def remove_metastore(lake: Path) -> None:
    """Stop the server of ``lake`` and remove its cluster (test clean-up)."""
    metastore_command("remove", lake)


def start_metastore(lake: Path) -> Path:
    """``make metastore`` for ``lake``: checks its exit code and ``metastore.env``, and asks
    the server for its data directory with the credentials it printed; returns that."""
    started = metastore_command("start", lake)
    assert started.returncode == 0, started.stderr
    exports = [line for line in started.stdout.splitlines() if line.startswith("export ")]
    assert (lake / "metastore_pg" / "metastore.env").read_text().splitlines() == exports
    return Path(metastore_query(export_values(started.stdout), "show data_directory").strip())


def metastore_query(env: dict[str, str], sql: str) -> str:
    """The unaligned output of ``sql`` run with psql on the metastore database that the
    ``CDC_METASTORE_*`` variables of ``env`` name, with their credentials."""
    settings = load_settings(env)
    assert settings.metastore is not None
    answer = subprocess.run(
        [str(postgres_bin("psql")), "-h", settings.metastore.host, "-p",
         str(settings.metastore.port), "-U", settings.metastore.user, "-d", "metastore",
         "-tAc", sql],
        env=dict(os.environ, PGPASSWORD=settings.metastore.password),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    return answer.stdout


def test_metastore_of_lakes_in_a_closed_directory(tmp_path: Path):
    """Two clones in a home directory (mode 0700): ``make metastore`` starts a server for each
    lake, on a cluster of its own outside the lake; each answers with the password it wrote
    into its lake; ``make metastore-stop`` stops one, the other runs on; a lake removed while
    its server runs gets a fresh cluster from the next start; ``remove`` (``make clean``)
    removes the server's cluster and directory."""
    home = closed_dir(tmp_path)
    lakes = [home / "clone-a" / "lake", home / "clone-b" / "lake"]
    try:
        data_dirs = [start_metastore(lake) for lake in lakes]
        assert data_dirs[0] != data_dirs[1]  # two clones never share a cluster
        for data_dir in data_dirs:
            assert home not in data_dir.parents
        stopped = metastore_command("stop", lakes[0])
        assert (stopped.returncode, stopped.stdout) == (0, "stopped\n"), stopped.stderr
        status = metastore_command("status", lakes[0])
        assert (status.returncode, status.stdout) == (1, "not running\n"), status.stderr
        assert metastore_command("status", lakes[1]).returncode == 0  # the other one runs on
        assert start_metastore(lakes[0]) == data_dirs[0]  # the same cluster, started again
        shutil.rmtree(lakes[1])  # rm -rf lake, its server running: the password is gone
        assert start_metastore(lakes[1]) == data_dirs[1]  # initialized afresh, new password
        removed = metastore_command("remove", lakes[0])
        assert removed.returncode == 0, removed.stderr
        assert not data_dirs[0].exists()
        assert not (lakes[0] / "metastore_pg").exists()
        assert data_dirs[1].is_dir()
    finally:
        for lake in lakes:
            remove_metastore(lake)


def test_a_cluster_made_in_the_lake_before_stays_in_use():
    """A lake whose cluster an earlier version made in ``metastore_pg/data`` (the layout of
    ``--dir``, in a directory others can enter) keeps it: ``make metastore`` starts that
    cluster, with the lake's tables, instead of an empty one elsewhere."""
    lake = shared_dir("cdc-metastore-legacy-") / "lake"
    try:
        legacy = run(
            [PYTHON, "-m", "cdc_lakehouse.runtime.metastore_server", "start", "--dir",
             str(lake / "metastore_pg")],
            dict(os.environ),
        )  # fmt: skip
        assert legacy.returncode == 0, legacy.stderr
        assert metastore_command("stop", lake).stdout == "stopped\n"
        assert start_metastore(lake) == lake / "metastore_pg" / "data"
    finally:
        remove_metastore(lake)
        shutil.rmtree(lake.parent, ignore_errors=True)


@pytest.fixture(scope="module")
def live_demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The short live demo: 30 s of stream at 200 changes/s, a ``dbt build --threads 4``
    every 30 s, a reader and one ``dbt show`` beside ingest and a build; its lake in a
    directory only its owner can enter, as in a clone in a home directory. Yields the lake,
    the demo's exit code and output; the lake's metastore is removed at the module's end (the
    slim CI test below starts it again: production's lake and metastore)."""
    lake = closed_dir(tmp_path_factory.mktemp("live")) / "lake"
    try:
        result = run(
            [PYTHON, "-m", "cdc_lakehouse.tools.live", "--lake", str(lake), "--duration", "30",
             "--rate", "200", "--build-interval", "30", "--read-interval", "6"],
            dict(os.environ),
            timeout_s=1500,
        )  # fmt: skip
        yield {
            "lake": lake,
            "returncode": result.returncode,
            "output": result.stdout + result.stderr,
        }
    finally:
        remove_metastore(lake)


@pytest.mark.dbt
def test_live_demo_keeps_gold_equal_to_the_oracle_while_a_reader_reads(
    live_demo: dict[str, Any],
) -> None:
    output = live_demo["output"]
    assert live_demo["returncode"] == 0, output[-5000:]
    builds = re.findall(r"build \d+: ok in [\d.]+ s; .*freshness ([\d.]+) s", output)
    assert len(builds) >= 2, output  # at least one while the stream runs, and the last
    assert re.search(r"\d+ reads, 0 reader errors", output), output
    shown = re.search(r"dbt show beside build \d+: ok, gold.current_rows has \d+ rows", output)
    assert shown, output
    assert "ingest stopped (exit 0)" in output, output  # stopped after its batch
    assert "gold equals the oracle" in output, output
    assert ", 0 written twice" in output, output
    produced = re.search(r"bronze: ([\d,]+) records of ([\d,]+) produced", output)
    assert produced and produced[1] == produced[2] and produced[1] != "0", output


CI_RUN_ID = "t51"
DEV_SCHEMA = "dev_t51"
CHANGED_MODEL = "model.cdc_lakehouse.current_rows"
CHANGED_FILE = Path("models/marts/current_state/current_rows.sql")
PRODUCTION = ("bronze", "silver", "gold")


def lake_env(lake: Path) -> dict[str, str]:
    """The environment of a command on the live demo's lake, its metastore server started again
    (``make metastore``): production's lake and shared metastore."""
    started = metastore_command("start", lake)
    assert started.returncode == 0, started.stderr
    env = dict(os.environ, CDC_LAKE_DIR=str(lake), CDC_CI_RUN_ID=CI_RUN_ID)
    env["CDC_DEV_SCHEMA"] = DEV_SCHEMA
    return {**env, **export_values(started.stdout)}


def table_dirs(lake: Path, schemas: tuple[str, ...]) -> dict[str, Path]:
    """schema.table -> directory of every Delta table of ``schemas`` in the lake's warehouse."""
    return {
        f"{schema}.{table.name}": table
        for schema in schemas
        for table in sorted((lake / "warehouse" / f"{schema}.db").glob("*"))
        if (table / "_delta_log").is_dir()
    }


def production_versions(lake: Path) -> dict[str, int]:
    """schema.table -> newest Delta version, for every table of bronze, silver and gold."""
    return {name: latest_version(path) for name, path in table_dirs(lake, PRODUCTION).items()}


def metastore_databases(env: dict[str, str]) -> set[str]:
    """The databases the shared metastore lists (its PostgreSQL table ``DBS``)."""
    return set(metastore_query(env, 'select "NAME" from "DBS"').split())


def make_commands(goal: str, env: dict[str, str], *args: str) -> list[list[str]]:
    """The dbt argument lists `make -n GOAL ARGS` prints in the repository with ``env``."""
    environment = {k: v for k, v in env.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    printed = subprocess.run(
        ["make", "-n", "--no-print-directory", goal, *args],
        cwd=PROJECT_DIR, env=environment, capture_output=True, text=True, check=True,
    ).stdout.replace("\\\n", " ")  # fmt: skip
    return [line.split()[1:] for line in printed.splitlines() if line.startswith(".venv/bin/dbt")]


def run_dbt_in(project: Path, args: list[str], env: dict[str, str], work: Path) -> dict[str, str]:
    """``dbt ARGS`` in ``project``; fails with dbt's output if it fails; returns unique id ->
    status of the nodes (not the hooks) of its run_results.json."""
    work.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [DBT, *args, "--target-path", str(work / "target"), "--log-path", str(work / "logs")],
        cwd=project, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, (result.stdout + result.stderr)[-5000:]
    results = json.loads((work / "target" / "run_results.json").read_text())["results"]
    return {
        r["unique_id"]: r["status"] for r in results if not r["unique_id"].startswith("operation.")
    }


@pytest.mark.dbt
def test_slim_ci_and_dev_clones_on_the_shared_metastore_leave_production_untouched(
    live_demo: dict[str, Any], tmp_path: Path
) -> None:
    """Production: the live demo's lake and shared metastore, its manifest the one its last
    build wrote. A change to gold.current_rows, in a copy of the project: `make ci-changed`
    (shared-metastore mode) builds that model and runs its tests in the CI run's schemas,
    reading its parents from production (--defer), with production's rows; `make dev-clone`
    shallow-clones production's models into a dev schema; `make drop-schemas` drops the CI
    and the dev schemas. Production's tables keep their versions throughout, and the
    metastore ends with the databases it started with."""
    assert live_demo["returncode"] == 0, live_demo["output"][-3000:]
    lake = live_demo["lake"]
    env = lake_env(lake)
    state = tmp_path / "prod-state"
    state.mkdir()
    shutil.copy2(lake / "target" / "manifest.json", state / "manifest.json")
    changed = copy_project(PROJECT_DIR, tmp_path / "changed")
    source = changed / CHANGED_FILE
    source.write_text("{# a change under review #}\n" + source.read_text())
    versions = production_versions(lake)
    databases = metastore_databases(env)
    assert set(PRODUCTION) <= databases

    # slim CI: the change and its tests in ci_t51_*, the parents read from production
    (ci_build,) = make_commands("ci-changed", env, f"STATE={state}")
    statuses = run_dbt_in(changed, ci_build, env, tmp_path / "ci")
    manifest = json.loads((tmp_path / "ci" / "target" / "manifest.json").read_text())
    tests = {c for c in manifest["child_map"][CHANGED_MODEL] if c.split(".")[0] != "model"}
    assert set(statuses) == {CHANGED_MODEL, *tests}, statuses
    assert set(statuses.values()) <= {"success", "pass"}, statuses
    ci_tables = table_dirs(lake, (f"ci_{CI_RUN_ID}_gold",))
    assert set(ci_tables) == {f"ci_{CI_RUN_ID}_gold.current_rows"}
    production_rows = live_row_count(table_dirs(lake, ("gold",))["gold.current_rows"])
    assert production_rows > 0
    assert live_row_count(ci_tables[f"ci_{CI_RUN_ID}_gold.current_rows"]) == production_rows
    assert production_versions(lake) == versions

    # a dev environment from production's state: shallow clones, no data file copied
    (clone,) = make_commands(
        "dev-clone", env, f"STATE={state}", "SELECT=current_rows change_events"
    )
    statuses = run_dbt_in(PROJECT_DIR, clone, env, tmp_path / "dev")
    assert set(statuses.values()) == {"success"}, statuses
    dev = table_dirs(lake, (f"{DEV_SCHEMA}_silver", f"{DEV_SCHEMA}_gold"))
    assert set(dev) == {f"{DEV_SCHEMA}_gold.current_rows", f"{DEV_SCHEMA}_silver.change_events"}
    cloned = dev[f"{DEV_SCHEMA}_gold.current_rows"]
    assert commit_operations(cloned) == ["CLONE"]
    assert not list(cloned.glob("*.parquet"))
    assert live_row_count(cloned) == production_rows
    assert production_versions(lake) == versions

    # the CI run's and the dev schemas dropped, production's kept
    for target in ("ci", "dev"):
        (drop,) = make_commands("drop-schemas", env, f"TARGET={target}")
        run_dbt_in(PROJECT_DIR, drop, env, tmp_path / f"drop-{target}")
    assert metastore_databases(env) == databases
    assert not table_dirs(lake, (f"ci_{CI_RUN_ID}_gold", f"{DEV_SCHEMA}_gold"))
    assert production_versions(lake) == versions
