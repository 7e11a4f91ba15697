"""The shared PostgreSQL metastore (issue 21): settings, errors a user must fix, and the live
demo, with real processes (PostgreSQL from Debian, the local broker, Spark JVMs).

- Settings: a URL without a host, a user or a password stops with one line saying what to set.
- An unreachable metastore database and refused credentials: ``python -m ingest``,
  ``dbt build`` and ``python -m cdc_lakehouse.summary`` exit 2 with one line, before writing.
- The live demo, short (``make demo-live`` with ``--duration 60``): continuous ingest, dbt
  builds and a reader of gold in separate processes on one shared metastore; gold equal to the
  oracle, every produced record in bronze once, no reader error.

PostgreSQL refuses to run as root and must reach its directory as its own system user, so the
servers live under ``/var/tmp`` (pytest's temporary directories are closed to other users).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.dbt
def test_live_demo_keeps_gold_equal_to_the_oracle_while_a_reader_reads():
    """The 2-minute live demo: 60 s of stream at 200 changes/s, a ``dbt build --threads 4``
    every 30 s, a reader and one ``dbt show`` beside ingest and a build."""
    lake = shared_dir("cdc-live-test-") / "lake"
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
        shutil.rmtree(lake.parent, ignore_errors=True)
