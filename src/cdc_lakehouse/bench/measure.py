"""Wall time and peak memory of one measured step.

Peak memory is the largest resident set size (RSS, bytes) seen while the step ran, sampled
every 50 ms with ``psutil``. For Spark steps it is the sum over this process's descendants:
the JVM that ``pyspark`` starts and its Python workers, which is what issue 20's memory
target counts. This process itself (the bench worker: it also holds the generated workload,
the oracle and the in-process baselines' data) is sampled apart as the driver's peak. For
steps without Spark (``include_children=False``) both are this process's RSS. Processes
given in ``exclude`` (e.g. a local Kafka broker the step reads from) are left out of the sum.
Sampling can miss a spike shorter than the interval; the values are lower bounds of the true
peaks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil

SAMPLE_INTERVAL_S = 0.05


@dataclass
class Measurement:
    """One step's cost: ``seconds`` of wall time; ``peak_rss_bytes``, the JVM and its Python
    workers (or this process, without Spark); ``driver_peak_rss_bytes``, this process (see
    the module docstring)."""

    seconds: float = 0.0
    peak_rss_bytes: int = 0
    driver_peak_rss_bytes: int = 0


def _rss(process: psutil.Process) -> int:
    try:
        return process.memory_info().rss
    except psutil.Error:  # a worker that exited between listing and reading
        return 0


def sample_rss(
    process: psutil.Process, include_children: bool, exclude: Collection[int] = ()
) -> tuple[int, int]:
    """(measured, driver) RSS in bytes now: ``measured`` is the sum over ``process``'s live
    descendants when ``include_children`` (the JVM and its Python workers; the processes
    whose pid is in ``exclude`` left out), else ``process``'s own; ``driver`` is
    ``process``'s own."""
    own = _rss(process)
    if not include_children:
        return own, own
    try:
        descendants = process.children(recursive=True)
    except psutil.Error:
        descendants = []
    return sum(_rss(member) for member in descendants if member.pid not in exclude), own


@contextmanager
def measured(include_children: bool = True, exclude: Collection[int] = ()) -> Iterator[Measurement]:
    """Time the ``with`` block and sample its peak RSS (``exclude``: pids of descendants left
    out, see :func:`sample_rss`); the yielded :class:`Measurement` is filled when the block
    ends (also when it raises)."""
    result = Measurement()
    process = psutil.Process()
    done = threading.Event()
    peak = list(sample_rss(process, include_children, exclude))

    def record() -> None:
        measured_now, driver_now = sample_rss(process, include_children, exclude)
        peak[0] = max(peak[0], measured_now)
        peak[1] = max(peak[1], driver_now)

    def sample() -> None:
        while not done.wait(SAMPLE_INTERVAL_S):
            record()

    sampler = threading.Thread(target=sample, name="bench-rss-sampler", daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        yield result
    finally:
        result.seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        record()
        result.peak_rss_bytes, result.driver_peak_rss_bytes = peak
