"""Delta Lake: the same pipeline with CDC_TABLE_FORMAT=delta, and the error without the jars.

Delta needs its own JVM (SQL extension and catalog are static settings), so these tests run
the commands a user runs in subprocesses, each with its own lake directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_lakehouse.settings import load_settings
from cdc_lakehouse.spark_session import delta_jars_available

PROJECT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(args: list[str], env: dict[str, str], timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run(
        args, cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def delta_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "CDC_LAKE_DIR": str(tmp_path / "lake"),
        "CDC_TABLE_FORMAT": "delta",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
        **extra,
    }
    return env


def test_delta_without_its_jars_stops_with_a_message(tmp_path):
    empty = tmp_path / "jars"
    empty.mkdir()
    result = run(
        [sys.executable, "-m", "ingest", "--dump", "sample_data/dump"],
        delta_env(tmp_path, CDC_DELTA_JARS_DIR=str(empty)),
    )
    assert result.returncode == 2, result.stderr
    assert "CDC_TABLE_FORMAT=delta" in result.stderr
    assert "delta-spark_*.jar" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.skipif(
    delta_jars_available(load_settings({})) is not None,
    reason="Delta jars are resolvable here, so the missing-jars path cannot be shown",
)
def test_delta_resolved_the_usual_way_but_unreachable_stops_with_a_message(tmp_path):
    env = delta_env(tmp_path)
    env.pop("CDC_DELTA_JARS_DIR", None)
    result = run([sys.executable, "-m", "ingest", "--dump", "sample_data/dump"], env)
    assert result.returncode == 2, result.stderr
    assert "could not start with the Delta Lake jars" in result.stderr
    assert "CDC_DELTA_JARS_DIR" in result.stderr


@pytest.mark.delta
@pytest.mark.skipif(
    delta_jars_available() is None,
    reason="Delta Lake jars not available offline: set CDC_DELTA_JARS_DIR to a directory with "
    "delta-spark_*.jar and delta-storage-*.jar (or resolve them once into the Ivy cache)",
)
def test_sample_pipeline_on_delta(tmp_path):
    env = delta_env(tmp_path)
    ingest = run([sys.executable, "-m", "ingest", "--dump", "sample_data/dump"], env)
    assert ingest.returncode == 0, ingest.stderr
    build = run(
        [
            str(BIN / "dbt"),
            "build",
            # the unit tests read fixed rows, not Delta tables (tests/dbt_models/test_unit_tests.py)
            "--exclude-resource-type",
            "unit_test",
            "--project-dir",
            ".",
            "--profiles-dir",
            ".",
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ],
        env,
        timeout=1200,
    )
    assert build.returncode == 0, build.stdout[-4000:]
    check = run(
        [
            sys.executable,
            "-c",
            (
                "from cdc_lakehouse.spark_session import get_spark\n"
                "s = get_spark()\n"
                "print(s.sql('describe detail gold.current_rows').first()['format'])\n"
                "print(s.table('gold.current_rows').count())\n"
            ),
        ],
        env,
    )
    assert check.returncode == 0, check.stderr
    assert check.stdout.split()[-2:] == ["delta", "2"]
