"""The driver JVM's class-data-sharing archive (cdc_lakehouse.runtime.jvm_class_archive): which JVM
options a process gets, one writer at a time, leftovers of killed writers removed, and the
test session's own JVM started from the archive the session wrote first."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_lakehouse.runtime import jvm_class_archive as jca

CONF = {"spark.driver.extraJavaOptions": "-Dx=1"}


@pytest.fixture
def archive_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CDC_JVM_ARCHIVE_DIR", str(tmp_path))
    monkeypatch.delenv("CDC_JVM_ARCHIVE", raising=False)
    return tmp_path


def dead_pid() -> int:
    """The pid of a process that has ended."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_without_an_archive_the_jvm_writes_one_at_exit(archive_dir: Path) -> None:
    options, on_started = jca.java_options(CONF)
    archive = jca.archive_path(CONF)
    assert archive is not None and archive.parent == archive_dir
    assert f"-XX:ArchiveClassesAtExit={archive}.{os.getpid()}.tmp" in options
    assert "-XX:+IgnoreUnrecognizedVMOptions" in options and "-Xlog:cds*=off" in options
    assert on_started is not None
    assert (archive_dir / f"{archive.name}.lock").read_text() == str(os.getpid())


def test_with_an_archive_the_jvm_reads_it(archive_dir: Path) -> None:
    archive = jca.archive_path(CONF)
    assert archive is not None
    archive.write_bytes(b"archive")
    options, on_started = jca.java_options(CONF)
    assert f"-XX:SharedArchiveFile={archive}" in options
    assert "ArchiveClassesAtExit" not in options
    assert on_started is None


def test_a_second_process_does_not_write_while_the_first_does(archive_dir: Path) -> None:
    archive = jca.archive_path(CONF)
    assert archive is not None
    (archive_dir / f"{archive.name}.lock").write_text(str(os.getppid()))  # a live process
    assert jca.java_options(CONF) == ("", None)


def test_leftovers_of_a_killed_writer_are_removed_and_its_lock_taken(archive_dir: Path) -> None:
    archive = jca.archive_path(CONF)
    assert archive is not None
    gone = dead_pid()
    leftover = archive_dir / f"{archive.name}.{gone}.tmp"
    leftover.write_bytes(b"half an archive")
    running = archive_dir / f"{archive.name}.{os.getppid()}.tmp"
    running.write_bytes(b"being written")
    (archive_dir / f"{archive.name}.lock").write_text(str(gone))
    options, on_started = jca.java_options(CONF)
    assert "ArchiveClassesAtExit" in options and on_started is not None
    assert not leftover.exists()
    assert running.exists()


def test_each_class_path_has_its_own_archive(archive_dir: Path) -> None:
    with_jar = {**CONF, "spark.driver.extraClassPath": "/usr/share/java/postgresql.jar"}
    assert jca.archive_path(CONF) != jca.archive_path(with_jar)
    assert jca.archive_path(CONF) == jca.archive_path(dict(CONF))


@pytest.mark.parametrize("value", ["off", "0", "false"])
def test_archives_can_be_turned_off(
    archive_dir: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CDC_JVM_ARCHIVE", value)
    assert jca.java_options(CONF) == ("", None)
    assert list(archive_dir.iterdir()) == []


def test_the_test_session_jvm_started_from_the_archive_written_before_it(spark) -> None:
    """The session fixture's JVM got the archive the conftest's first step wrote, whole: no
    lock or temporary file left beside it."""
    if jca.archive_dir() is None:
        pytest.skip("class archives are off (CDC_JVM_ARCHIVE) or their directory is read-only")
    options = spark.sparkContext.getConf().get("spark.driver.extraJavaOptions")
    used = [part for part in options.split() if part.startswith("-XX:SharedArchiveFile=")]
    assert len(used) == 1, options
    archive = Path(used[0].split("=", 1)[1])
    assert archive.stat().st_size > 10_000_000
    assert not [p for p in archive.parent.glob(f"{archive.name}.*")]
