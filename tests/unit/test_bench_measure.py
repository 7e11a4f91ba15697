"""The bench's memory figure: the JVM and its Python workers (the bench's child processes)
count towards the step's peak RSS; the bench's own process is reported apart as the driver."""

from __future__ import annotations

import json
import subprocess
import sys

from cdc_lakehouse.bench.measure import measured

MIB = 2**20
TOUCH = "block = bytearray({mib} * 2**20); block[::4096] = b'x' * len(block[::4096])"
CHILD = TOUCH.format(mib=300) + "; print('ready', flush=True); import time; time.sleep(1.0)"


def _measure_in_fresh_process(include_children: bool, mib: int) -> dict[str, int]:
    """Measure an allocation of ``mib`` MiB in this process's place: a fresh interpreter, so
    no JVM of the test session is among the children."""
    script = (
        "import json\n"
        "from cdc_lakehouse.bench.measure import measured\n"
        f"with measured(include_children={include_children}) as step:\n"
        f"    {TOUCH.format(mib=mib)}\n"
        "print(json.dumps({'peak': step.peak_rss_bytes, 'driver': step.driver_peak_rss_bytes}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    return json.loads(done.stdout)


def test_a_child_process_counts_in_the_peak() -> None:
    with measured() as step:
        child = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        child.wait(timeout=30)
    assert step.peak_rss_bytes >= 300 * MIB
    assert step.seconds >= 0.9


def test_the_bench_process_memory_is_the_driver_peak_not_the_steps() -> None:
    step = _measure_in_fresh_process(include_children=True, mib=200)
    assert step["driver"] >= 200 * MIB
    assert step["peak"] < 50 * MIB  # no child process ran


def test_without_children_both_figures_are_this_process() -> None:
    step = _measure_in_fresh_process(include_children=False, mib=100)
    assert step["peak"] == step["driver"] >= 100 * MIB


def test_an_excluded_child_does_not_count_in_the_peak() -> None:
    """In a fresh interpreter: a 300 MiB child (the bench's Kafka broker, say) counts unless
    its pid is excluded."""
    script = (
        "import json, subprocess, sys\n"
        "from cdc_lakehouse.bench.measure import measured\n"
        "peaks = []\n"
        "for exclude in (False, True):\n"
        f"    child = subprocess.Popen([sys.executable, '-c', {CHILD!r}], stdout=subprocess.PIPE,"
        " text=True)\n"
        "    with measured(exclude=[child.pid] if exclude else []) as step:\n"
        "        assert child.stdout.readline().strip() == 'ready'\n"
        "        child.wait(timeout=30)\n"
        "    peaks.append(step.peak_rss_bytes)\n"
        "print(json.dumps(peaks))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    counted, excluded = json.loads(done.stdout)
    assert counted >= 300 * MIB
    assert excluded < 50 * MIB
