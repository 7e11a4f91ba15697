"""Wall time and peak memory of one measured step.

Peak memory is the largest resident set size (RSS, bytes) seen while the step ran, sampled
every 50 ms with ``psutil``: of this process and, for Spark steps, all its children too (the
JVM that ``pyspark`` starts and its Python workers). Sampling can miss a spike shorter than
the interval; the value is a lower bound of the true peak.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import psutil

SAMPLE_INTERVAL_S = 0.05


@dataclass
class Measurement:
    """One step's cost: ``seconds`` of wall time, ``peak_rss_bytes`` (see module docstring)."""

    seconds: float = 0.0
    peak_rss_bytes: int = 0


def tree_rss(process: psutil.Process, include_children: bool) -> int:
    """RSS in bytes of ``process`` (plus its live descendants when ``include_children``)."""
    processes = [process]
    if include_children:
        processes += process.children(recursive=True)
    total = 0
    for member in processes:
        try:
            total += member.memory_info().rss
        except psutil.Error:  # a worker that exited between listing and reading
            continue
    return total


@contextmanager
def measured(include_children: bool = True) -> Iterator[Measurement]:
    """Time the ``with`` block and sample its peak RSS; the yielded :class:`Measurement` is
    filled when the block ends (also when it raises)."""
    result = Measurement()
    process = psutil.Process()
    done = threading.Event()
    peak = [tree_rss(process, include_children)]

    def sample() -> None:
        while not done.wait(SAMPLE_INTERVAL_S):
            peak[0] = max(peak[0], tree_rss(process, include_children))

    sampler = threading.Thread(target=sample, name="bench-rss-sampler", daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        yield result
    finally:
        result.seconds = time.perf_counter() - started
        done.set()
        sampler.join()
        result.peak_rss_bytes = max(peak[0], tree_rss(process, include_children))
