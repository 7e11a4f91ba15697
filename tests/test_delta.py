"""The one-line errors of a lake that cannot be Delta: no jar folder, or another table format.

Both run the command a user runs (the dump ingest) in a subprocess, so what is checked is the
exit code and the stderr a user reads, not an exception inside the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]


def ingest(tmp_path: Path, **extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CDC_LAKE_DIR": str(tmp_path / "lake"), **extra}
    return subprocess.run(
        [sys.executable, "-m", "ingest", "--dump", "sample_data/dump"],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_missing_jar_folder_stops_with_one_line_saying_make_install(tmp_path):
    result = ingest(tmp_path, CDC_JARS_DIR=str(tmp_path / "no-jars-here"))
    assert result.returncode == 2, result.stderr
    assert "make install" in result.stderr
    assert str(tmp_path / "no-jars-here") in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "lake").exists() or not any((tmp_path / "lake").rglob("*.parquet"))


def test_another_table_format_stops_with_one_line(tmp_path):
    result = ingest(tmp_path, CDC_TABLE_FORMAT="parquet")
    assert result.returncode == 2, result.stderr
    assert "unset CDC_TABLE_FORMAT" in result.stderr
    assert "Traceback" not in result.stderr
