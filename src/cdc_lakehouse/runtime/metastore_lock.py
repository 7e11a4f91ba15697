"""Who holds the embedded Derby metastore: the lock probe behind the one-line error of a
busy metastore (:class:`cdc_lakehouse.runtime.spark_session.MetastoreBusyError`).

Derby admits one JVM per database. While a JVM has the database booted it holds an exclusive
lock on :data:`DERBY_LOCK_FILE` in the database directory (Java's ``FileChannel.tryLock``: a
POSIX fcntl write lock on Linux); ``db.lck`` beside it is only a marker file. A crashed holder
leaves the files behind but no lock, so stale files block nobody. The probe asks the kernel
who holds the lock without taking it (Linux ``F_GETLK``), so it names the holder's pid and
command line.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import struct
import sys
from dataclasses import dataclass
from pathlib import Path

# Derby holds an exclusive lock (Java's FileChannel.tryLock: a POSIX fcntl write lock on Linux)
# on this file of the database directory for as long as a JVM has the database booted; db.lck
# next to it is only a marker file and carries no lock.
DERBY_LOCK_FILE = "dbex.lck"
# struct flock of Linux on 64-bit platforms: l_type, l_whence, l_start, l_len, l_pid (+ padding)
_LINUX_FLOCK = "hhqqi4x"


@dataclass(frozen=True)
class LockHolder:
    """A process holding a lock file.

    Attributes:
        pid: its process id, or ``None`` where the platform does not say.
        command: its command line, shortened for a message, or ``None`` when unknown.
        exiting: a process on its way out - a Spark JVM whose launching process has already
            exited (the JVM of the command that just ended, shutting down), or a process whose
            command line is already gone - which releases the lock within seconds.
    """

    pid: int | None
    command: str | None
    exiting: bool = False


def lock_holder(path: Path) -> LockHolder | None:
    """The process holding a POSIX (fcntl) lock on ``path``, or ``None`` if none does.

    On Linux (64-bit) asks the kernel with ``F_GETLK``, which takes no lock and names the
    holder's pid; elsewhere takes a shared lock and releases it at once (pid unknown then).
    A missing file is not locked. The holder's ``command`` is left unset.

    Raises:
        OSError: ``path`` exists but cannot be opened or queried.
    """
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if sys.platform == "linux" and sys.maxsize > 2**32:
            query = struct.pack(_LINUX_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
            lock_type, _, _, _, pid = struct.unpack(
                _LINUX_FLOCK, fcntl.fcntl(fd, fcntl.F_GETLK, query)
            )
            return None if lock_type == fcntl.F_UNLCK else LockHolder(pid, None)
        try:
            fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:  # EACCES or EAGAIN: another process holds a write lock
            return LockHolder(None, None)
        fcntl.lockf(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def process_argv(pid: int) -> list[str] | None:
    """The arguments of process ``pid`` (``/proc/PID/cmdline``), or ``None`` if unknown."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return [arg.decode(errors="replace") for arg in raw.split(b"\0") if arg] or None


def short_command(argv: list[str], max_chars: int = 100) -> str:
    """``argv`` as one shell-quoted line for a message: program and script paths shortened to
    their names, cut at ``max_chars`` characters."""
    argv = list(argv)
    argv[0] = Path(argv[0]).name
    if len(argv) > 1 and "/" in argv[1] and not argv[1].startswith("-"):
        argv[1] = Path(argv[1]).name
    command = shlex.join(argv)
    return command if len(command) <= max_chars else command[: max_chars - 3] + "..."


def _parent_pid(pid: int) -> int | None:
    """The parent of process ``pid`` (``/proc/PID/stat``), or ``None``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return int(stat.rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _own_jvm_pid() -> int | None:
    """The pid of the JVM PySpark launched in this process, or ``None`` if none runs yet."""
    from pyspark import SparkContext

    proc = getattr(SparkContext._gateway, "proc", None)
    return getattr(proc, "pid", None)


def metastore_holder(derby_dir: Path) -> LockHolder | None:
    """The other process that has the Derby database ``derby_dir`` booted, or ``None``.

    A PySpark JVM is reported as the Python process that started it (``python -m ingest``,
    ``dbt``, ...): the one to wait for. This process's own JVM is not another process.

    Raises:
        OSError: the lock file exists but cannot be read.
    """
    holder = lock_holder(derby_dir / DERBY_LOCK_FILE)
    if holder is None or holder.pid is None:
        return holder
    pid = holder.pid
    if pid == _own_jvm_pid():
        return None
    argv = process_argv(pid)
    if argv is None:  # its command line is gone: the process is exiting (or has exited)
        return LockHolder(pid, None, exiting=True)
    exiting = False
    if "org.apache.spark.deploy.SparkSubmit" in argv:
        parent = _parent_pid(pid)
        parent_argv = process_argv(parent) if parent is not None and parent > 1 else None
        if parent is not None and parent_argv:
            pid, argv = parent, parent_argv
        else:  # orphaned: the command that started it has ended, the JVM is shutting down
            exiting = True
    return LockHolder(pid, short_command(argv), exiting)


def busy_message(derby_dir: Path, holder: LockHolder) -> str:
    """The one-line message of :class:`MetastoreBusyError` for ``holder``."""
    if holder.pid is None:
        who = "another process"
    elif holder.command:
        who = f"another process (pid {holder.pid}: {holder.command})"
    else:
        who = f"another process (pid {holder.pid})"
    # When a shared metastore can be configured, name it here as the way to run them together.
    return (
        f"The metastore {derby_dir} is in use by {who}; the embedded Derby metastore admits "
        "one process at a time: wait for it to finish, and run ingest, dbt and the summary "
        "one at a time."
    )
