"""A reader in its own process while `dbt build` is killed in gold's write (issue 21).

On a shared PostgreSQL metastore, one lake, real processes:

1. ``python -m cdc_lakehouse.simulate``: Canal JSON in two delivery batches and the oracle;
   ingest batch 1; ``dbt build`` (without the typed gold of the bundled samples).
2. the reader (``python -m cdc_lakehouse.live read``) queries ``gold.current_rows`` every
   0.3 s from here on, printing a fingerprint of the rows it read;
3. ingest batch 2; ``dbt build``, SIGKILLed (whole process group, JVM included) while it writes
   gold.int_row_versions' new generation; ``dbt build`` again;
4. the reader stops.

Every read must succeed and return a whole state: the one before the killed build or the one
after the rerun (fingerprints). The rerun's gold must equal the oracle (``python -m
cdc_lakehouse.live check``); that such a rerun equals a full refresh is
tests/faults/test_kill_and_rerun.py's. About 4 minutes on 2 cores.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from typing import Any

import pytest

from tests.faults.test_kill_and_rerun import Lake, reap_group, succeeded, writing

pytestmark = pytest.mark.dbt

FORMAT = "dts_canal_json"
TOPIC = f"sim.{FORMAT}"


@pytest.fixture(scope="module")
def killed_with_reader(tmp_path_factory: pytest.TempPathFactory, metastore: dict[str, str]):
    root = tmp_path_factory.mktemp("killed-with-reader")
    lake = Lake(root)
    lake.env.update(metastore)
    out = root / "simulated"
    succeeded(
        lake.run(
            [sys.executable, "-m", "cdc_lakehouse.simulate", "--format", FORMAT,
             "--changes", "4000", "--batches", "2", "--duplicate-rate", "0.02", "--out", str(out)]
        )
    )  # fmt: skip
    succeeded(lake.ingest(out / "batch-1"))
    succeeded(lake.dbt("build"))
    reader = subprocess.Popen(
        [sys.executable, "-m", "cdc_lakehouse.live", "read", "--interval", "0.3"],
        cwd=lake.root,
        env=lake.env,
        stdout=subprocess.PIPE,
        stderr=(root / "reader.log").open("w"),
        text=True,
        start_new_session=True,
    )
    reads: list[dict[str, Any]] = []

    def follow() -> None:
        assert reader.stdout is not None
        for line in reader.stdout:
            if line.startswith("{"):
                reads.append(json.loads(line) | {"seen_at": time.time()})

    threading.Thread(target=follow, daemon=True).start()
    try:
        deadline = time.monotonic() + 180
        while not reads and time.monotonic() < deadline:
            time.sleep(0.2)
        assert reads, f"the reader never read: see {root / 'reader.log'}"
        succeeded(lake.ingest(out / "batch-2"))
        generations = lake.warehouse / "gold.db" / "int_row_versions" / "_generations"
        kill_started = time.time()
        killed = lake.dbt("build", kill_when=writing(generations, "*/_temporary"))
        kill_ended = time.time()
        time.sleep(3)  # reads of the state the kill left
        rerun = succeeded(lake.dbt("build"))
        rerun_ended = time.time()
        deadline = time.monotonic() + 60
        while not any(r["started_at"] > rerun_ended for r in reads):
            assert time.monotonic() < deadline, "no read after the rerun"
            time.sleep(0.2)
    finally:
        reader.terminate()
        try:
            reader.wait(60)
        finally:
            reap_group(reader.pid)
    check = succeeded(
        lake.run(
            [sys.executable, "-m", "cdc_lakehouse.live", "check", "--oracle", str(out),
             "--topic", TOPIC, "--records", "0"]
        )
    )  # fmt: skip
    result = json.loads(next(line for line in check.lines if line.startswith("{")))
    return {
        "reads": reads,
        "killed": killed,
        "kill_window": (kill_started, kill_ended),
        "rerun": rerun,
        "after_rerun": next(r for r in reads if r["started_at"] > rerun_ended),
        "differences": result["differences"],
    }


def test_the_build_was_killed_while_the_reader_read(killed_with_reader):
    killed = killed_with_reader["killed"]
    assert killed.returncode == -9, killed.output[-3000:]
    start, end = killed_with_reader["kill_window"]
    assert any(start <= r["started_at"] <= end for r in killed_with_reader["reads"])


def test_every_read_returns_a_whole_state(killed_with_reader):
    reads = killed_with_reader["reads"]
    errors = [r["error"] for r in reads if not r["ok"]]
    assert not errors, errors[:3]
    before = reads[0]["fingerprint"]
    after = killed_with_reader["after_rerun"]["fingerprint"]
    assert before != after
    states = {r["fingerprint"] for r in reads}
    assert states <= {before, after}, (len(states), before, after)
    end = killed_with_reader["kill_window"][1]
    after_kill = [r for r in reads if r["started_at"] > end]
    # the killed build left the last good state
    assert after_kill and after_kill[0]["fingerprint"] == before


def test_the_rerun_gives_the_oracle(killed_with_reader):
    """(That such a rerun equals a full refresh: tests/faults/test_kill_and_rerun.py.)"""
    assert killed_with_reader["after_rerun"]["gold_rows"] > 0
    assert not killed_with_reader["differences"], killed_with_reader["differences"]
