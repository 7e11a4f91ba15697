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

CPU time (``cpu_seconds``): user plus system seconds that this process and, for Spark steps,
its descendants spent during the step (each one's CPU time at the end less at the start; a
process that started during the step counts whole). A descendant that ended before the step
did (a Python worker Spark let go) is missed: a lower bound. On a machine others load, it
varies less than the wall time, which waits for cores as well.

Each sample of a Spark step is also split by process kind (:func:`process_kind`, from the
command line): the JVM, PySpark's worker daemon (``python -m pyspark.daemon``), the Python
workers it forks, other Python processes (the simple workers Spark starts for a Python data
source's planning or a streaming source's driver side) and anything else. A step keeps the
split of the sample where the sum peaked (``rss_by_kind_at_peak_bytes``, which adds up to
``peak_rss_bytes``, and the processes of each kind then) and each kind's own peak over the
step (``peak_rss_by_kind_bytes``; the kinds may peak at different times). A forked worker's
RSS counts the pages it still shares with the daemon, as the sum does.

A child of the JVM whose command line is still the JVM's is left out: the JVM starts every
process (Spark's ``rm -rf`` of a temporary directory, Hadoop's shell commands) with
``posix_spawn``, whose child shares the JVM's memory until it runs its own program, and
``psutil`` reads that child's RSS as the whole JVM's. Counted, one such sample doubled a
step's peak (an incremental batch at 1,000,000 Canal changes read 10.4 GB with a 5.2 GB JVM).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import psutil

SAMPLE_INTERVAL_S = 0.05

JVM = "jvm"
PYSPARK_DAEMON = "pyspark_daemon"
PYSPARK_WORKER = "pyspark_worker"
OTHER_PYTHON = "other_python"
OTHER = "other"
KINDS = (JVM, PYSPARK_DAEMON, PYSPARK_WORKER, OTHER_PYTHON, OTHER)
"""The process kinds of :func:`process_kind`, in report order."""
SPAWNING = "spawning"
""":func:`process_kind` of a JVM's child that shares the JVM's memory (not counted)."""
DAEMON_MODULE = "pyspark.daemon"


@dataclass
class Measurement:
    """One step's cost: ``seconds`` of wall time; ``peak_rss_bytes``, the JVM and its Python
    workers (or this process, without Spark); ``driver_peak_rss_bytes``, this process;
    ``rss_by_kind_at_peak_bytes`` and ``processes_by_kind_at_peak``, the split of the peak by
    process kind, and ``peak_rss_by_kind_bytes``, each kind's own peak (Spark steps only;
    see the module docstring); ``cpu_seconds``, user + system CPU seconds of the same
    processes (a lower bound, see the module docstring)."""

    seconds: float = 0.0
    peak_rss_bytes: int = 0
    driver_peak_rss_bytes: int = 0
    rss_by_kind_at_peak_bytes: dict[str, int] = field(default_factory=dict)
    processes_by_kind_at_peak: dict[str, int] = field(default_factory=dict)
    peak_rss_by_kind_bytes: dict[str, int] = field(default_factory=dict)
    cpu_seconds: float = 0.0


def combined(*steps: Measurement) -> Measurement:
    """Steps run one after another as one: seconds added, peaks the largest; the split at
    the peak is the split of the step with the largest peak."""
    top = max(steps, key=lambda step: step.peak_rss_bytes)
    kinds = {kind for step in steps for kind in step.peak_rss_by_kind_bytes}
    return Measurement(
        seconds=sum(step.seconds for step in steps),
        cpu_seconds=sum(step.cpu_seconds for step in steps),
        peak_rss_bytes=top.peak_rss_bytes,
        driver_peak_rss_bytes=max(step.driver_peak_rss_bytes for step in steps),
        rss_by_kind_at_peak_bytes=dict(top.rss_by_kind_at_peak_bytes),
        processes_by_kind_at_peak=dict(top.processes_by_kind_at_peak),
        peak_rss_by_kind_bytes={
            kind: max(step.peak_rss_by_kind_bytes.get(kind, 0) for step in steps)
            for kind in sorted(kinds, key=KINDS.index)
        },
    )


def _python_module(cmdline: Sequence[str]) -> str | None:
    """The module a ``python -m MODULE`` command line runs, or ``None``."""
    for index, arg in enumerate(cmdline[:-1]):
        if arg == "-m":
            return cmdline[index + 1]
    return None


def _is_python(cmdline: Sequence[str]) -> bool:
    return bool(cmdline) and os.path.basename(cmdline[0]).startswith("python")


def _is_pyspark_daemon(cmdline: Sequence[str]) -> bool:
    """``python -m pyspark.daemon``: the daemon, or a worker it forked (same command line)."""
    return _is_python(cmdline) and _python_module(cmdline) == DAEMON_MODULE


def process_kind(cmdline: Sequence[str], parent_cmdline: Sequence[str] = ()) -> str:
    """The kind (one of :data:`KINDS`) of a process with command line ``cmdline`` whose parent
    has ``parent_cmdline``: ``jvm`` (a ``java`` program), ``pyspark_daemon``
    (``python -m pyspark.daemon``), ``pyspark_worker`` (a process the daemon forked: same
    command line, the daemon its parent), ``other_python`` (any other Python) or ``other``;
    :data:`SPAWNING` for a child of the JVM that has not run its own program yet (its command
    line is the JVM's: see the module docstring)."""
    if cmdline and os.path.basename(cmdline[0]) == "java":
        return SPAWNING if list(cmdline) == list(parent_cmdline) else JVM
    if _is_pyspark_daemon(cmdline):
        return PYSPARK_WORKER if _is_pyspark_daemon(parent_cmdline) else PYSPARK_DAEMON
    if _is_python(cmdline):
        return OTHER_PYTHON
    return OTHER


@dataclass
class RssSample:
    """RSS in bytes at one instant: ``measured`` (see :func:`sample_rss`), ``driver`` (this
    process), and ``measured`` split by process kind (``by_kind``, ``processes``: how many of
    each kind; both empty without children)."""

    measured: int
    driver: int
    by_kind: dict[str, int] = field(default_factory=dict)
    processes: dict[str, int] = field(default_factory=dict)


def _rss(process: psutil.Process) -> int:
    try:
        return process.memory_info().rss
    except psutil.Error:  # a worker that exited between listing and reading
        return 0


_KIND_CACHE: dict[tuple[int, float, str], str] = {}
"""Process kinds by (pid, create time, name): a process's command line and parent change only
when it runs another program (``exec``: ``spark-submit``'s shell becomes the JVM, a spawned
child becomes ``rm``), which changes its name too, so each is read once per program."""


def _kind(process: psutil.Process) -> str:
    try:
        key = (process.pid, process.create_time(), process.name())
    except psutil.Error:
        return OTHER
    kind = _KIND_CACHE.get(key)
    if kind is None:
        try:
            cmdline = process.cmdline()
            parent = process.parent()
            parent_cmdline = parent.cmdline() if parent is not None else []
        except psutil.Error:
            return OTHER
        kind = _KIND_CACHE[key] = process_kind(cmdline, parent_cmdline)
    return kind


def sample_rss(
    process: psutil.Process, include_children: bool, exclude: Collection[int] = ()
) -> RssSample:
    """RSS now: ``measured`` is the sum over ``process``'s live descendants when
    ``include_children`` (the JVM and its Python workers; the processes whose pid is in
    ``exclude`` left out), split by kind, else ``process``'s own; ``driver`` is
    ``process``'s own."""
    own = _rss(process)
    if not include_children:
        return RssSample(own, own)
    try:
        descendants = process.children(recursive=True)
    except psutil.Error:
        descendants = []
    by_kind: dict[str, int] = {}
    processes: dict[str, int] = {}
    for member in descendants:
        if member.pid in exclude:
            continue
        kind = _kind(member)
        rss = _rss(member)
        if not rss or kind == SPAWNING:
            continue
        by_kind[kind] = by_kind.get(kind, 0) + rss
        processes[kind] = processes.get(kind, 0) + 1
    return RssSample(sum(by_kind.values()), own, by_kind, processes)


def cpu_times(process: psutil.Process, include_children: bool) -> dict[tuple[int, float], float]:
    """CPU seconds (user + system) so far of ``process`` and, with ``include_children``, each
    of its live descendants, by (pid, create time); a process gone meanwhile is left out."""
    processes = [process, *(process.children(recursive=True) if include_children else [])]
    times: dict[tuple[int, float], float] = {}
    for each in processes:
        try:
            cpu = each.cpu_times()
            times[(each.pid, each.create_time())] = cpu.user + cpu.system
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return times


@contextmanager
def measured(include_children: bool = True, exclude: Collection[int] = ()) -> Iterator[Measurement]:
    """Time the ``with`` block and sample its peak RSS (``exclude``: pids of descendants left
    out, see :func:`sample_rss`); the yielded :class:`Measurement` is filled when the block
    ends (also when it raises)."""
    result = Measurement()
    process = psutil.Process()
    done = threading.Event()
    top = sample_rss(process, include_children, exclude)
    driver_peak = top.driver
    kind_peaks = dict(top.by_kind)

    def record() -> None:
        nonlocal top, driver_peak
        now = sample_rss(process, include_children, exclude)
        if now.measured > top.measured:
            top = now
        driver_peak = max(driver_peak, now.driver)
        for kind, rss in now.by_kind.items():
            kind_peaks[kind] = max(kind_peaks.get(kind, 0), rss)

    def sample() -> None:
        while not done.wait(SAMPLE_INTERVAL_S):
            record()

    sampler = threading.Thread(target=sample, name="bench-rss-sampler", daemon=True)
    sampler.start()
    cpu_at_start = cpu_times(process, include_children)
    started = time.perf_counter()
    try:
        yield result
    finally:
        result.seconds = time.perf_counter() - started
        cpu_at_end = cpu_times(process, include_children)
        result.cpu_seconds = sum(
            max(cpu - cpu_at_start.get(key, 0.0), 0.0) for key, cpu in cpu_at_end.items()
        )
        done.set()
        sampler.join()
        record()
        result.peak_rss_bytes = top.measured
        result.driver_peak_rss_bytes = driver_peak
        result.rss_by_kind_at_peak_bytes = _ordered(top.by_kind)
        result.processes_by_kind_at_peak = _ordered(top.processes)
        result.peak_rss_by_kind_bytes = _ordered(kind_peaks)


def _ordered(values: dict[str, int]) -> dict[str, int]:
    return {kind: values[kind] for kind in KINDS if kind in values}
