"""The shared PostgreSQL metastore (issue 21): settings, errors a user must fix, and the live
demo, with real processes (PostgreSQL from Debian, the local broker, Spark JVMs).

- Settings: a URL without a host, a user or a password stops with one line saying what to set.
- An unreachable metastore database and refused credentials: ``python -m ingest``,
  ``dbt build`` and ``python -m cdc_lakehouse.summary`` exit 2 with one line, before writing.
- ``make metastore`` for lakes in a directory closed to other users (mode 0700, like a home
  directory): two lakes, two servers on their own clusters outside the lakes, each answering;
  stop, status, a removed lake and remove; a cluster an earlier version made in the lake stays
  in use.
- The live demo, short (``make demo-live`` with ``--duration 60``), its lake in a directory
  closed to other users: continuous ingest, dbt builds and a reader of gold in separate
  processes on one shared metastore; gold equal to the oracle, every produced record in bronze
  once, no reader error.

The ``metastore`` fixture's servers live under ``/var/tmp`` with ``--dir`` (a directory the
server's system user must reach itself); the servers of a lake's default directory keep their
clusters where that user owns them (:func:`cdc_lakehouse.metastore_server.server_for`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_lakehouse.metastore_server import postgres_bin
from cdc_lakehouse.settings import ConfigError, load_settings
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
    "summary": [PYTHON, "-m", "cdc_lakehouse.summary"],
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
    """``python -m cdc_lakehouse.metastore_server ACTION`` (what ``make metastore``,
    ``make metastore-stop`` and ``make clean`` run) for the lake ``lake``."""
    env = dict(os.environ, CDC_LAKE_DIR=str(lake))
    return run([PYTHON, "-m", "cdc_lakehouse.metastore_server", action], env)


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
    settings = load_settings(dict(line.removeprefix("export ").split("=", 1) for line in exports))
    assert settings.metastore is not None
    answer = subprocess.run(
        [str(postgres_bin("psql")), "-h", settings.metastore.host, "-p",
         str(settings.metastore.port), "-U", settings.metastore.user, "-d", "metastore",
         "-tAc", "show data_directory"],
        env=dict(os.environ, PGPASSWORD=settings.metastore.password),
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr
    return Path(answer.stdout.strip())


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
            [PYTHON, "-m", "cdc_lakehouse.metastore_server", "start", "--dir",
             str(lake / "metastore_pg")],
            dict(os.environ),
        )  # fmt: skip
        assert legacy.returncode == 0, legacy.stderr
        assert metastore_command("stop", lake).stdout == "stopped\n"
        assert start_metastore(lake) == lake / "metastore_pg" / "data"
    finally:
        remove_metastore(lake)
        shutil.rmtree(lake.parent, ignore_errors=True)


@pytest.mark.dbt
def test_live_demo_keeps_gold_equal_to_the_oracle_while_a_reader_reads(tmp_path: Path):
    """The 2-minute live demo: 60 s of stream at 200 changes/s, a ``dbt build --threads 4``
    every 30 s, a reader and one ``dbt show`` beside ingest and a build; its lake in a
    directory only its owner can enter, as in a clone in a home directory."""
    lake = closed_dir(tmp_path) / "lake"
    try:
        result = run(
            [PYTHON, "-m", "cdc_lakehouse.live", "--lake", str(lake), "--duration", "60",
             "--rate", "200", "--build-interval", "30", "--read-interval", "6"],
            dict(os.environ),
            timeout_s=1500,
        )  # fmt: skip
        output = result.stdout + result.stderr
        assert result.returncode == 0, output[-5000:]
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
    finally:
        remove_metastore(lake)
