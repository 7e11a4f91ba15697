"""``python -m cdc_lakehouse.tools.dbt_loop``: one dbt command run once per input line in one
process (the live demo's builds), each run's output ended by a result line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cdc_lakehouse.tools.dbt_loop import parse_result

PROJECT_DIR = Path(__file__).resolve().parents[2]


def loop(args: list[str], requests: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cdc_lakehouse.tools.dbt_loop", *args],
        input=requests,
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_each_input_line_runs_the_command_once_in_one_process(tmp_path: Path):
    args = ["parse", "--project-dir", str(PROJECT_DIR), "--profiles-dir", str(PROJECT_DIR)]
    args += ["--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs")]
    done = loop(args, "first\nsecond\n", tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    results = [parse_result(line) for line in lines]
    assert [r["request"] for r in results if r] == ["first", "second"]
    assert all(r["ok"] is True for r in results if r)
    # dbt's own output comes before each result line
    first_result = next(i for i, r in enumerate(results) if r)
    assert any("Running with dbt" in line for line in lines[:first_result])
    assert (tmp_path / "target" / "manifest.json").is_file()


def test_a_command_dbt_cannot_run_fails_with_its_reason_and_the_loop_goes_on(tmp_path: Path):
    done = loop(["parse", "--project-dir", str(tmp_path / "missing")], "a\nb\n", tmp_path)
    assert done.returncode == 0
    results = [r for r in map(parse_result, done.stdout.splitlines()) if r]
    assert [(r["request"], r["ok"]) for r in results] == [("a", False), ("b", False)]
    assert "does not exist" in str(results[0]["error"])
    assert f"error: {results[0]['error']}" in done.stdout


def test_no_dbt_command_stops_with_one_line(tmp_path: Path):
    done = loop([], "", tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: give the dbt command to repeat")
    assert len(done.stderr.strip().splitlines()) == 1


def test_parse_result_leaves_dbt_lines_alone():
    assert parse_result("12:00:00  Running with dbt=1.11.16") is None
    assert parse_result('cdc-dbt-loop-result {"request": "x", "ok": true, "seconds": 1.5}') == {
        "request": "x",
        "ok": True,
        "seconds": 1.5,
    }
