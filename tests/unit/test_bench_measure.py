"""The bench's memory figure: the JVM and its Python workers (the bench's child processes)
count towards the step's peak RSS; the bench's own process is reported apart as the driver."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from cdc_lakehouse.tools.bench import measure
from cdc_lakehouse.tools.bench.measure import measured

MIB = 2**20
TOUCH = "block = bytearray({mib} * 2**20); block[::4096] = b'x' * len(block[::4096])"
CHILD = TOUCH.format(mib=300) + "; print('ready', flush=True); import time; time.sleep(1.0)"


def _json_of_fresh_process(script: str, timeout_s: float = 120) -> Any:
    """Run ``script`` in a fresh interpreter (no JVM of the test session among its children)
    and decode the JSON it prints."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        timeout=timeout_s,
    )
    return json.loads(done.stdout)


def _measure_in_fresh_process(include_children: bool, mib: int) -> dict[str, int]:
    """Measure an allocation of ``mib`` MiB in this process's place: a fresh interpreter, so
    no JVM of the test session is among the children."""
    script = (
        "import json\n"
        "from cdc_lakehouse.tools.bench.measure import measured\n"
        f"with measured(include_children={include_children}) as step:\n"
        f"    {TOUCH.format(mib=mib)}\n"
        "print(json.dumps({'peak': step.peak_rss_bytes, 'driver': step.driver_peak_rss_bytes}))\n"
    )
    return _json_of_fresh_process(script, timeout_s=60)


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
        "from cdc_lakehouse.tools.bench.measure import measured\n"
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
    counted, excluded = _json_of_fresh_process(script)
    assert counted >= 300 * MIB
    assert excluded < 50 * MIB


def test_process_kinds_from_the_command_line() -> None:
    daemon = ["/venv/bin/python3.11", "-m", "pyspark.daemon", "pyspark.worker"]
    java = ["/usr/lib/jvm/java-17/bin/java", "-cp", "/spark/jars/*", "-Xmx4g"]
    assert measure.process_kind(java, ["/venv/bin/python", "-m", "bench"]) == measure.JVM
    # posix_spawn's child before it runs its program: the JVM's memory, not counted
    assert measure.process_kind(java, java) == measure.SPAWNING
    assert measure.process_kind(daemon, java) == measure.PYSPARK_DAEMON
    assert measure.process_kind(daemon, daemon) == measure.PYSPARK_WORKER
    source = ["/venv/bin/python", "-m", "pyspark.sql.streaming.python_streaming_source_runner"]
    assert measure.process_kind(source, java) == measure.OTHER_PYTHON
    assert measure.process_kind(["/bin/bash", "-c", "x"], java) == measure.OTHER
    assert measure.process_kind([], []) == measure.OTHER


FAKE_DAEMON = (
    "import os, sys, time\n" + TOUCH.format(mib=60) + "\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    " + TOUCH.format(mib=300).replace("block", "work") + "\n"
    "    print('ready', flush=True)\n"
    "    time.sleep(1.0)\n"
    "    os._exit(0)\n"
    "os.waitpid(pid, 0)\n"
)


def test_the_peak_is_split_by_process_kind() -> None:
    """In a fresh interpreter (no JVM of the test session among the children): a fake PySpark
    daemon (``-m pyspark.daemon`` on its command line) holding 60 MiB forks a worker that
    touches 300 MiB more, beside a plain Python child of 100 MiB; the split at the peak puts
    each in its kind and adds up to the peak."""
    other = TOUCH.format(mib=100) + "; print('ready', flush=True); import time; time.sleep(3)"
    script = (
        "import json, subprocess, sys, time\n"
        "from cdc_lakehouse.tools.bench.measure import measured\n"
        "with measured() as step:\n"
        f"    plain = subprocess.Popen([sys.executable, '-c', {other!r}], stdout=subprocess.PIPE,"
        " text=True)\n"
        f"    daemon = subprocess.Popen([sys.executable, '-c', {FAKE_DAEMON!r}, '-m',"
        " 'pyspark.daemon'], stdout=subprocess.PIPE, text=True)\n"
        "    for child in (plain, daemon):\n"
        "        assert child.stdout.readline().strip() == 'ready'\n"
        "    time.sleep(0.3)  # a few samples with all three alive\n"
        "    daemon.wait(timeout=30)\n"
        "    plain.kill()\n"
        "    plain.wait(timeout=30)\n"
        "print(json.dumps([step.peak_rss_bytes, step.rss_by_kind_at_peak_bytes,"
        " step.processes_by_kind_at_peak, step.peak_rss_by_kind_bytes]))\n"
    )
    peak, split, processes, kind_peaks = _json_of_fresh_process(script)
    assert sum(split.values()) == peak
    assert processes == {
        measure.PYSPARK_DAEMON: 1,
        measure.PYSPARK_WORKER: 1,
        measure.OTHER_PYTHON: 1,
    }
    assert split[measure.PYSPARK_WORKER] >= 300 * MIB  # the worker's own 300 MiB, and more
    assert 60 * MIB <= split[measure.PYSPARK_DAEMON] < 200 * MIB
    assert 100 * MIB <= split[measure.OTHER_PYTHON] < 200 * MIB
    for kind, rss in split.items():
        assert kind_peaks[kind] >= rss


def test_steps_combined_keep_the_split_of_the_larger_peak() -> None:
    small = measure.Measurement(2.0, 100, 10, {"jvm": 100}, {"jvm": 1}, {"jvm": 100})
    large = measure.Measurement(
        3.0,
        300,
        5,
        {"jvm": 90, "pyspark_worker": 210},
        {"jvm": 1, "pyspark_worker": 2},
        {"jvm": 95, "pyspark_worker": 250},
    )
    both = measure.combined(small, large)
    assert (both.seconds, both.peak_rss_bytes, both.driver_peak_rss_bytes) == (5.0, 300, 10)
    assert both.rss_by_kind_at_peak_bytes == {"jvm": 90, "pyspark_worker": 210}
    assert both.processes_by_kind_at_peak == {"jvm": 1, "pyspark_worker": 2}
    assert both.peak_rss_by_kind_bytes == {"jvm": 100, "pyspark_worker": 250}
