"""A local PostgreSQL server for the shared Hive metastore (``make metastore``).

With the embedded Derby metastore (the default) one process at a time can use a lake. With a
PostgreSQL-backed metastore the ingest job, ``dbt build``, ``dbt show`` and any PySpark session
use the same lake at the same time. This module runs that PostgreSQL on one machine:

- PostgreSQL and its JDBC driver come from Debian (``postgresql``, ``libpostgresql-jdbc-java``;
  ``make metastore`` installs them with apt-get when missing).
- PostgreSQL refuses to run as root: as root, the server runs as the system user
  :data:`SERVER_USER`, created when missing; as any other user it runs as that user.
- The server's directory (default ``$CDC_LAKE_DIR/metastore_pg``) holds what the lake's
  processes read: ``password`` (the role's random password, mode 0600, never printed) and
  ``metastore.env``. The cluster (``data/``, ``postgresql.log``, ``port``) must be a directory
  the server's user can reach and owns: by default, as root, :data:`SYSTEM_DATA_ROOT`
  ``/<lake name>-<hash of the server directory's path>`` (owned by :data:`SERVER_USER`,
  mode 0700, outside the lake: a lake in a home directory, mode 0700, works; two lakes never
  share a cluster), and as any other user the server directory itself. ``--dir D``
  (``make metastore METASTORE_DIR=D``) puts everything, cluster included, in ``D``, whose
  parents the server's user must be able to enter. See :func:`server_for`.
- The server listens on ``127.0.0.1`` only, on a free port (or ``--port``), with password
  authentication. The database :data:`DATABASE` and its owner role :data:`ROLE` are created
  on the first start.
- Spark creates the metastore's tables itself on first use
  (``datanucleus.schema.autoCreateAll``, see :mod:`cdc_lakehouse.runtime.spark_session`).
- A cluster outside the lake whose lake lost its ``password`` (the lake was removed, e.g.
  ``rm -rf lake``) is stopped and initialized afresh by the next ``start``: its tables were
  the removed lake's. ``remove`` (``make clean``) stops the server and removes its cluster and
  its directory.

``start`` writes ``<dir>/metastore.env``: the ``export`` lines of ``CDC_METASTORE_JDBC_URL``,
``CDC_METASTORE_USER`` and ``CDC_METASTORE_PASSWORD_FILE`` that point every process at it
(``source lake/metastore_pg/metastore.env``), and prints them.

Command line: ``python -m cdc_lakehouse.runtime.metastore_server start|stop|status|remove [--dir D]
[--port P]``; exit 2 with one ``error:`` line when something must be fixed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import pwd
import re
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cdc_lakehouse.runtime.settings import ConfigError, lake_dir_setting
from cdc_lakehouse.tools.kafka.broker import free_port

SERVER_USER = "cdc-metastore"
"""System user the server runs as when started by root."""
ROLE = "hive"
"""PostgreSQL role that owns the metastore database (the user Spark connects as)."""
DATABASE = "metastore"
"""PostgreSQL database holding the Hive metastore's tables."""
POSTGRES_ROOT = Path("/usr/lib/postgresql")
"""Where Debian installs the PostgreSQL server binaries (``<version>/bin``)."""
START_TIMEOUT_S = 60
"""How long ``pg_ctl start`` may take before it is reported as failed, seconds."""
SYSTEM_DATA_ROOT = Path("/var/lib/cdc-metastore")
"""Where the clusters of the servers that run as :data:`SERVER_USER` live by default (one
directory per server directory, see :func:`server_for`)."""
MARKER_FILE = "metastore-dir"
"""File of a cluster directory outside the lake naming the server directory it serves."""


@dataclass(frozen=True)
class MetastoreServer:
    """A PostgreSQL cluster for the metastore.

    Attributes:
        root: directory of the server: ``password`` and ``metastore.env`` (what the lake's
            processes read).
        cluster: directory of the cluster (``data/``, ``postgresql.log``, ``port``), which the
            server's user must reach and owns; ``None``: ``root`` itself.
    """

    root: Path
    cluster: Path | None = None

    @property
    def cluster_dir(self) -> Path:
        """The cluster's directory: :attr:`cluster`, or :attr:`root` without one."""
        return self.cluster or self.root

    @property
    def data_dir(self) -> Path:
        return self.cluster_dir / "data"

    @property
    def password_file(self) -> Path:
        return self.root / "password"

    @property
    def env_file(self) -> Path:
        return self.root / "metastore.env"

    @property
    def log_file(self) -> Path:
        return self.cluster_dir / "postgresql.log"

    @property
    def port_file(self) -> Path:
        return self.cluster_dir / "port"

    @property
    def separate_cluster(self) -> bool:
        """Whether the cluster lives outside :attr:`root` (see :func:`server_for`)."""
        return self.cluster_dir != self.root

    def jdbc_url(self, port: int) -> str:
        return f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}"

    def running_port(self) -> int | None:
        """The port of the running server, or ``None`` when it is not running.

        Raises:
            ConfigError: a cluster with a ``postmaster.pid`` but PostgreSQL not installed.
        """
        pid_file = self.data_dir / "postmaster.pid"
        if not pid_file.is_file():
            return None
        result = _run_as_server(
            [str(postgres_bin("pg_ctl")), "-D", str(self.data_dir), "status"], check=False
        )
        if result.returncode != 0:
            return None
        if self.port_file.is_file():
            return int(self.port_file.read_text().strip())
        return int(pid_file.read_text().splitlines()[3])  # postmaster.pid: line 4, the port

    def start(self, port: int | None = None) -> int:
        """Initialize the cluster if needed, start it (if not running) and return its port.

        A cluster outside :attr:`root` whose password file is gone (its lake was removed) is
        stopped and initialized afresh.

        Raises:
            ConfigError: PostgreSQL is not installed, the directory cannot be used (closed to
                the server's user, or a cluster in it without its password file), or the
                server does not start (the message names its log file).
        """
        initialized = (self.data_dir / "PG_VERSION").is_file()
        if initialized and not self.password_file.is_file():
            if not self.separate_cluster:
                raise ConfigError(
                    f"{self.data_dir} holds a metastore cluster but {self.password_file} is "
                    f"missing: restore it, or remove {self.root} to start afresh."
                )
            self.remove()  # the cluster of a removed lake: its tables were that lake's
            initialized = False
        running = self.running_port()
        if running is not None:
            self._write_env(running)
            return running
        initdb = postgres_bin("initdb")
        user = _server_user()
        self.root.mkdir(parents=True, exist_ok=True)
        if self.separate_cluster:
            self._make_cluster_dir(user)
        if user is not None:
            _check_reachable(self.cluster_dir, user)
            shutil.chown(self.cluster_dir, user.pw_name, user.pw_gid)
        if not initialized:
            self._init(initdb, user)
        port = port or free_port()
        self.port_file.write_text(f"{port}\n")
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={port} "
            f"-c unix_socket_directories='{self.data_dir}'"
        )
        result = _run_as_server(
            [
                str(postgres_bin("pg_ctl")),
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_file),
                "-o",
                options,
                "-w",
                "-t",
                str(START_TIMEOUT_S),
                "start",
            ],
            check=False,
        )
        if result.returncode != 0:
            raise ConfigError(
                f"PostgreSQL did not start on 127.0.0.1:{port}: see {self.log_file} "
                f"({(result.stderr or result.stdout).strip().splitlines()[-1:]})."
            )
        self._create_database(port)
        self._write_env(port)
        return port

    def stop(self) -> bool:
        """Stop the server (fast shutdown); ``False`` when it was not running."""
        if self.running_port() is None:
            return False
        _run_as_server(
            [str(postgres_bin("pg_ctl")), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"],
            check=True,
        )
        return True

    def remove(self) -> list[Path]:
        """Stop the server (if running) and remove its cluster and its directory; return the
        directories removed (none when there was nothing)."""
        self.stop()
        removed = []
        for directory in dict.fromkeys((self.cluster_dir, self.root)):
            if directory.exists():
                shutil.rmtree(directory)
                removed.append(directory)
        return removed

    def _make_cluster_dir(self, user: pwd.struct_passwd | None) -> None:
        """Create the cluster's directory outside :attr:`root` (mode 0700; its parent, e.g.
        :data:`SYSTEM_DATA_ROOT`, mode 0755) with a file naming :attr:`root`.

        Raises:
            ConfigError: the directory serves another server directory.
        """
        self.cluster_dir.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        self.cluster_dir.mkdir(mode=0o700, exist_ok=True)
        self.cluster_dir.chmod(0o700)
        marker = self.cluster_dir / MARKER_FILE
        if marker.is_file() and marker.read_text().strip() != str(self.root):
            raise ConfigError(
                f"{self.cluster_dir} is the metastore cluster of {marker.read_text().strip()}, "
                f"not of {self.root}: remove it, or use --dir (make metastore METASTORE_DIR=...)."
            )
        marker.write_text(f"{self.root}\n")

    def _init(self, initdb: Path, user: pwd.struct_passwd | None) -> None:
        password = secrets.token_urlsafe(24)
        self.password_file.touch(mode=0o600, exist_ok=True)
        self.password_file.chmod(0o600)
        self.password_file.write_text(password)
        if self.data_dir.exists():  # left by an initdb that failed
            shutil.rmtree(self.data_dir)
        self.data_dir.mkdir(mode=0o700)
        pwfile = self.cluster_dir / ".initdb-password"
        pwfile.write_text(password)
        if user is not None:
            for path in (self.data_dir, pwfile):
                shutil.chown(path, user.pw_name, user.pw_gid)
        try:
            result = _run_as_server(
                [
                    str(initdb),
                    "-D",
                    str(self.data_dir),
                    "-U",
                    ROLE,
                    "--auth=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "-E",
                    "UTF8",
                    "--locale=C",
                ],
                check=False,
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise ConfigError(
                f"initdb failed in {self.data_dir}: {result.stderr.strip().splitlines()[-1:]}"
            )

    def _create_database(self, port: int) -> None:
        env = {**os.environ, "PGPASSWORD": self.password_file.read_text().strip()}
        psql = [str(postgres_bin("psql")), "-h", "127.0.0.1", "-p", str(port), "-U", ROLE]
        exists = subprocess.run(
            [
                *psql,
                "-d",
                "postgres",
                "-tAc",
                f"select 1 from pg_database where datname='{DATABASE}'",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        if exists.stdout.strip() != "1":
            subprocess.run(
                [*psql, "-d", "postgres", "-c", f"create database {DATABASE}"],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )

    def _write_env(self, port: int) -> None:
        self.env_file.write_text(export_lines(self, port))


def export_lines(server: MetastoreServer, port: int) -> str:
    """The shell ``export`` lines that point the project's processes at ``server``."""
    return (
        f"export CDC_METASTORE_JDBC_URL={server.jdbc_url(port)}\n"
        f"export CDC_METASTORE_USER={ROLE}\n"
        f"export CDC_METASTORE_PASSWORD_FILE={server.password_file}\n"
    )


def export_values(text: str) -> dict[str, str]:
    """The variables of the ``export NAME=value`` lines in ``text`` (what :func:`export_lines`
    writes and ``make metastore`` prints), other lines ignored: name -> value."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("export "):
            key, _, value = line.removeprefix("export ").partition("=")
            values[key] = value
    return values


def postgres_bin(name: str) -> Path:
    """Path of a PostgreSQL server binary (newest installed version).

    Raises:
        ConfigError: PostgreSQL is not installed.
    """
    versions = sorted(
        (p for p in POSTGRES_ROOT.glob("*/bin") if (p / name).is_file()),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
    )
    if not versions:
        raise ConfigError(
            f"PostgreSQL's {name} is not installed under {POSTGRES_ROOT}: run make metastore "
            "(it installs the Debian packages postgresql and libpostgresql-jdbc-java)."
        )
    return versions[-1] / name


def _server_user() -> pwd.struct_passwd | None:
    """The system user to run the server as (created when missing), or ``None`` when this
    process is not root and runs it itself."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                SERVER_USER,
            ],
            check=True,
            capture_output=True,
        )
        return pwd.getpwnam(SERVER_USER)


def _check_reachable(directory: Path, user: pwd.struct_passwd) -> None:
    """Check that ``user`` can enter every parent of ``directory``.

    Raises:
        ConfigError: a parent directory is closed to other users (e.g. a home directory with
            mode 0700); names it and what to do.
    """
    for parent in directory.resolve().parents:
        mode = parent.stat()
        owned = mode.st_uid == user.pw_uid
        if not (mode.st_mode & (0o100 if owned else 0o001)):
            raise ConfigError(
                f"{parent} is closed to other users, so PostgreSQL (running as the system user "
                f"{user.pw_name}) cannot reach {directory}: use a --dir (make metastore "
                "METASTORE_DIR=...) under a directory others can enter, such as /var/tmp, or "
                f"none (the cluster then lives in {SYSTEM_DATA_ROOT})."
            )


def _run_as_server(command: list[str], *, check: bool) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL command as the server user (see :func:`_server_user`)."""
    user = _server_user()
    if user is not None:
        command = ["runuser", "-u", user.pw_name, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, check=check, cwd="/")


def default_dir(lake_dir: Path | None = None) -> Path:
    """``<lake_dir>/metastore_pg`` (default lake: ``$CDC_LAKE_DIR``)."""
    return (lake_dir or lake_dir_setting()) / "metastore_pg"


def cluster_name(root: Path) -> str:
    """The name of the cluster directory of the server directory ``root`` under
    :data:`SYSTEM_DATA_ROOT`: ``<lake name>-<12 hex digits of the SHA-256 of root's path>``
    (the lake's name cut to 40 characters of ``[A-Za-z0-9._-]``; distinct paths, distinct
    names)."""
    lake_name = re.sub(r"[^A-Za-z0-9._-]", "_", root.parent.name)[:40] or "lake"
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return f"{lake_name}-{digest}"


def server_for(directory: Path | None = None, lake_dir: Path | None = None) -> MetastoreServer:
    """The metastore server of ``directory`` (``--dir``), or of the lake ``lake_dir``
    (default ``$CDC_LAKE_DIR``) without one.

    With ``directory``: everything in it, the cluster in ``directory/data`` (its parents must be
    open to the server's user). Without: the server directory is ``<lake>/metastore_pg``, and
    the cluster lives where the server's user owns it: as root (the server runs as
    :data:`SERVER_USER`) in ``SYSTEM_DATA_ROOT / cluster_name(server directory)``, as any other
    user (the server runs as that user) in the server directory. A cluster that an earlier
    version made in ``<lake>/metastore_pg/data`` is used where it is (it holds the lake's
    tables). Only ``CDC_LAKE_DIR`` is read
    (:func:`cdc_lakehouse.runtime.settings.lake_dir_setting`):
    the server starts before the other settings (the metastore's own) point at it.
    """
    if directory is not None:
        return MetastoreServer(directory.resolve())
    root = default_dir(lake_dir.resolve() if lake_dir is not None else None)
    if os.geteuid() != 0 or (root / "data" / "PG_VERSION").is_file():
        return MetastoreServer(root)
    return MetastoreServer(root, SYSTEM_DATA_ROOT / cluster_name(root))


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0, or 2 with one ``error:`` line)."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.runtime.metastore_server",
        description="Run the local PostgreSQL server of the shared Hive metastore.",
    )
    parser.add_argument("action", choices=("start", "stop", "status", "remove"))
    parser.add_argument(
        "--dir",
        type=Path,
        help="server directory, its cluster included (default $CDC_LAKE_DIR/metastore_pg, "
        f"the cluster as root under {SYSTEM_DATA_ROOT})",
    )
    parser.add_argument("--port", type=int, help="TCP port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    try:
        server = server_for(args.dir)
        if args.action == "start":
            port = server.start(args.port)
            print(
                f"# metastore: PostgreSQL on 127.0.0.1:{port}, cluster {server.data_dir}; "
                f"source {server.env_file}"
            )
            print(export_lines(server, port), end="")
        elif args.action == "stop":
            print("stopped" if server.stop() else "not running")
        elif args.action == "remove":
            removed = server.remove()
            print(f"removed {', '.join(map(str, removed))}" if removed else "nothing to remove")
        else:
            running = server.running_port()
            print(f"running on 127.0.0.1:{running}" if running else "not running")
            return 0 if running else 1
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
