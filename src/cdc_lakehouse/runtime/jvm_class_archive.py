"""A class-data-sharing archive of the Spark driver JVM, so that each process starts faster.

Every command of the project (``python -m ingest``, each ``dbt`` command, the live reader, the
tests' session) starts a Spark JVM, which loads and verifies about 20,000 classes before it
answers: 16-17 s to a session and 10-11 s more to the first queries (metastore, Parquet) on a
slow 2-core machine. The JDK's application class-data sharing (JEP 350, dynamic archives,
JDK 13 or later) maps those classes from an archive written by an earlier JVM instead: 9-10 s
and 6-7 s with one (measured on 2026-11-27, the same machine, back to back).

The archive is written once per JDK, Spark installation and driver class path, by the first
JVM that runs without one (at its exit: ``-XX:ArchiveClassesAtExit``), and read by every later
one (``-XX:SharedArchiveFile``). One process at a time writes it (a lock file naming its pid;
the others start without an archive meanwhile). That process's exit waits for its JVM to write
the archive (it costs that process about 40 s more on a slow 2-core machine, once) and moves
it into place only once the JVM has exited normally, so a process killed on the way leaves no
archive, only a temporary file and a lock the next start removes. An archive the JVM
cannot use (another JDK, another class path) is skipped by the JVM, which then loads its
classes as usual; its messages about it are switched off. Any JDK that does not know these
options ignores them (``-XX:+IgnoreUnrecognizedVMOptions``).

Where: ``CDC_JVM_ARCHIVE_DIR``, else ``<sys.prefix>/share/cdc-lakehouse/jvm`` (the project's
virtual environment: a new ``.venv`` starts without them), about 200 MB per class
path. ``CDC_JVM_ARCHIVE=off`` (or a directory that cannot be written) starts every JVM without
an archive. Both are read by :class:`cdc_lakehouse.runtime.settings.JvmArchiveSettings`.

``python -m cdc_lakehouse.runtime.spark_session`` (``cdc-class-archive``) writes the archive ahead
of time (the test session
does): :func:`cdc_lakehouse.runtime.spark_session.write_class_archive`, which lives there because it
starts a session and :mod:`cdc_lakehouse.runtime.spark_session` imports this module.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lakehouse.runtime.settings import JvmArchiveSettings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUIET = "-XX:+IgnoreUnrecognizedVMOptions -Xlog:cds*=off -Xlog:class+path*=off"
"""Options given with either archive option: the JVM's archive messages off (they would print
to the command's output, e.g. classes it cannot archive), unknown options ignored."""

CLASS_PATH_ENV = ("SPARK_HOME", "SPARK_CONF_DIR", "SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR")
"""Environment variables that change the driver JVM's class path (part of the archive's key)."""

EXIT_WAIT_S = 120.0
"""How long a process waits at its exit for its JVM to write the archive."""


def archive_dir(settings: JvmArchiveSettings | None = None) -> Path | None:
    """The directory of the archives, or ``None`` when archives are off or it cannot be
    written (``CDC_JVM_ARCHIVE=off``; ``CDC_JVM_ARCHIVE_DIR``, default under ``sys.prefix``).
    ``settings`` default: :meth:`JvmArchiveSettings.from_env` of the process's environment."""
    settings = settings or JvmArchiveSettings.from_env()
    if not settings.enabled:
        return None
    directory = settings.directory
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return directory if os.access(directory, os.W_OK) else None


def archive_key(conf: Mapping[str, str]) -> str:
    """A hash of what the driver JVM's class path and classes depend on: the ``java`` it runs
    (path, size and time of its binary), the pyspark installation, ``spark.driver.extraClassPath``
    and :data:`CLASS_PATH_ENV`. 16 hex digits."""
    import pyspark

    java_home = os.environ.get("JAVA_HOME")
    java = Path(java_home) / "bin" / "java" if java_home else shutil.which("java")
    parts = [f"pyspark {pyspark.__version__} {Path(pyspark.__file__).parent}"]
    if java is not None and Path(java).exists():
        real = Path(java).resolve()
        stat = real.stat()
        parts.append(f"java {real} {stat.st_size} {stat.st_mtime_ns}")
    parts.append(f"class path {conf.get('spark.driver.extraClassPath', '')}")
    parts.extend(f"{name}={os.environ.get(name, '')}" for name in CLASS_PATH_ENV)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def archive_path(
    conf: Mapping[str, str], settings: JvmArchiveSettings | None = None
) -> Path | None:
    """Where the archive of ``conf``'s driver JVM is (or is to be) written; ``None`` when
    archives are off (``settings``: see :func:`archive_dir`)."""
    directory = archive_dir(settings)
    return None if directory is None else directory / f"spark-{archive_key(conf)}.jsa"


def _remove_stale(directory: Path) -> None:
    """Remove the temporary files of processes that are gone (killed while their JVM wrote)."""
    for path in directory.glob("*.jsa.*.tmp"):
        pid = path.name.rsplit(".", 2)[-2]
        if pid.isdigit() and not _alive(int(pid)):
            path.unlink(missing_ok=True)


def _lock_path(archive: Path) -> Path:
    return archive.with_name(f"{archive.name}.lock")


def _take_lock(archive: Path) -> bool:
    """Whether this process may write ``archive``: one process at a time (a lock file naming
    its pid, taken over when that process is gone)."""
    lock = _lock_path(archive)
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            try:
                holder = lock.read_text().strip()
            except OSError:  # removed by its writer meanwhile: try again
                holder = ""
            if holder.isdigit() and _alive(int(holder)):
                return False
            lock.unlink(missing_ok=True)
            continue
        except OSError:
            return False
        with os.fdopen(fd, "w") as out:
            out.write(str(os.getpid()))
        return True
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def java_options(
    conf: Mapping[str, str], settings: JvmArchiveSettings | None = None
) -> tuple[str, Callable[[SparkSession], None] | None]:
    """The driver JVM options for ``conf`` and what to do once its session has started
    (``settings``: see :func:`archive_dir`).

    Returns ``(options, on_started)``: ``-XX:SharedArchiveFile`` when the archive exists;
    otherwise ``-XX:ArchiveClassesAtExit`` to a temporary file and a function to call with the
    started session, which makes the process wait at exit for its JVM and move the archive into
    place; ``("", None)`` when archives are off.
    """
    archive = archive_path(conf, settings)
    if archive is None:
        return "", None
    directory = archive.parent
    if archive.exists():
        return f"{QUIET} -XX:SharedArchiveFile={archive}", None
    _remove_stale(directory)
    if not _take_lock(archive):
        return "", None  # another process writes it: start without one
    written = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")

    def on_started(spark: SparkSession) -> None:
        atexit.register(_finish_archive, spark, written, archive)

    return f"{QUIET} -XX:ArchiveClassesAtExit={written}", on_started


def _finish_archive(spark: SparkSession, written: Path, archive: Path) -> None:
    """At the process's exit: stop the session, end the JVM (its input closed, as at any
    Python exit), wait for it to write the archive and move the archive into place."""
    proc: subprocess.Popen[bytes] | None = getattr(spark.sparkContext._gateway, "proc", None)
    if proc is None or proc.stdin is None:
        return
    try:
        spark.stop()
    except Exception:  # the JVM is already gone: nothing to archive
        written.unlink(missing_ok=True)
        _lock_path(archive).unlink(missing_ok=True)
        return
    proc.stdin.close()
    try:
        returncode = proc.wait(timeout=EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        return  # the JVM still writes: the next start removes the file once this one is gone
    if returncode == 0 and written.exists() and written.stat().st_size > 0:
        os.replace(written, archive)
    else:
        written.unlink(missing_ok=True)
    _lock_path(archive).unlink(missing_ok=True)


WRITER_WAIT_S = 300.0
"""How long ``python -m cdc_lakehouse.runtime.spark_session`` (``cdc-class-archive``) waits for
another process that is writing the archive (its lock taken) before it goes on without one."""


def wait_for_writer(archive: Path, timeout_s: float = WRITER_WAIT_S) -> bool:
    """Wait while a live process holds ``archive``'s lock (it writes the archive); return
    whether the archive exists then. ``False`` at once when nobody holds the lock."""
    lock = _lock_path(archive)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if archive.exists():
            return True
        try:
            holder = lock.read_text().strip()
        except OSError:
            holder = ""
        if not (holder.isdigit() and _alive(int(holder))):
            return archive.exists()
        time.sleep(1.0)
    return archive.exists()
