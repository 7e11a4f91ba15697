"""A local PostgreSQL server for the shared Hive metastore (``make metastore``).

With the embedded Derby metastore (the default) one process at a time can use a lake. With a
PostgreSQL-backed metastore the ingest job, ``dbt build``, ``dbt show`` and any PySpark session
use the same lake at the same time. This module runs that PostgreSQL on one machine:

- PostgreSQL and its JDBC driver come from Debian (``postgresql``, ``libpostgresql-jdbc-java``;
  ``make metastore`` installs them with apt-get when missing).
- The cluster lives in ``<dir>/data`` (default ``dir``: ``$CDC_LAKE_DIR/metastore_pg``) and
  listens on ``127.0.0.1`` only, on a free port (or ``--port``), with password authentication.
- PostgreSQL refuses to run as root: as root, the server runs as the system user
  :data:`SERVER_USER`, created when missing; as any other user it runs as that user.
- The database :data:`DATABASE` and its owner role :data:`ROLE` are created on the first start;
  the role's password is random, kept in ``<dir>/password`` (mode 0600), never printed.
- Spark creates the metastore's tables itself on first use
  (``datanucleus.schema.autoCreateAll``, see :mod:`cdc_lakehouse.spark_session`).

``start`` writes ``<dir>/metastore.env``: the ``export`` lines of ``CDC_METASTORE_JDBC_URL``,
``CDC_METASTORE_USER`` and ``CDC_METASTORE_PASSWORD_FILE`` that point every process at it
(``source lake/metastore_pg/metastore.env``), and prints them.

Command line: ``python -m cdc_lakehouse.metastore_server start|stop|status [--dir D]
[--port P]``; exit 2 with one ``error:`` line when something must be fixed.
"""

from __future__ import annotations

import argparse
import os
import pwd
import secrets
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from cdc_lakehouse.kafka.broker import free_port
from cdc_lakehouse.settings import ConfigError, load_settings

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


@dataclass(frozen=True)
class MetastoreServer:
    """A PostgreSQL cluster for the metastore under ``root``.

    Attributes:
        root: directory of the server: ``data/`` (the cluster), ``password``, ``port``,
            ``postgresql.log`` and ``metastore.env``.
    """

    root: Path

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    @property
    def password_file(self) -> Path:
        return self.root / "password"

    @property
    def env_file(self) -> Path:
        return self.root / "metastore.env"

    @property
    def log_file(self) -> Path:
        return self.root / "postgresql.log"

    @property
    def port_file(self) -> Path:
        return self.root / "port"

    def jdbc_url(self, port: int) -> str:
        return f"jdbc:postgresql://127.0.0.1:{port}/{DATABASE}"

    def running_port(self) -> int | None:
        """The port of the running server, or ``None`` when it is not running."""
        if not (self.data_dir / "postmaster.pid").is_file() or not self.port_file.is_file():
            return None
        result = _run_as_server(
            [str(postgres_bin("pg_ctl")), "-D", str(self.data_dir), "status"], check=False
        )
        if result.returncode != 0:
            return None
        return int(self.port_file.read_text().strip())

    def start(self, port: int | None = None) -> int:
        """Initialize the cluster if needed, start it (if not running) and return its port.

        Raises:
            ConfigError: PostgreSQL is not installed, the directory cannot be used, or the
                server does not start (the message names its log file).
        """
        running = self.running_port()
        if running is not None:
            self._write_env(running)
            return running
        initdb = postgres_bin("initdb")
        user = _server_user()
        self.root.mkdir(parents=True, exist_ok=True)
        if user is not None:
            _check_reachable(self.root, user)
            shutil.chown(self.root, user.pw_name, user.pw_gid)
        if not (self.data_dir / "PG_VERSION").is_file():
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

    def _init(self, initdb: Path, user: pwd.struct_passwd | None) -> None:
        password = secrets.token_urlsafe(24)
        self.password_file.touch(mode=0o600, exist_ok=True)
        self.password_file.chmod(0o600)
        self.password_file.write_text(password)
        self.data_dir.mkdir(mode=0o700, exist_ok=True)
        pwfile = self.root / ".initdb-password"
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
                f"{user.pw_name}) cannot reach {directory}: use --dir (make metastore "
                "METASTORE_DIR=...) under a directory others can enter, such as /var/tmp."
            )


def _run_as_server(command: list[str], *, check: bool) -> subprocess.CompletedProcess[str]:
    """Run a PostgreSQL command as the server user (see :func:`_server_user`)."""
    user = _server_user()
    if user is not None:
        command = ["runuser", "-u", user.pw_name, "--", *command]
    return subprocess.run(command, capture_output=True, text=True, check=check, cwd="/")


def default_dir() -> Path:
    """``$CDC_LAKE_DIR/metastore_pg``."""
    return load_settings().lake_dir / "metastore_pg"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0, or 2 with one ``error:`` line)."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.metastore_server",
        description="Run the local PostgreSQL server of the shared Hive metastore.",
    )
    parser.add_argument("action", choices=("start", "stop", "status"))
    parser.add_argument(
        "--dir", type=Path, help="server directory (default $CDC_LAKE_DIR/metastore_pg)"
    )
    parser.add_argument("--port", type=int, help="TCP port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    try:
        server = MetastoreServer((args.dir or default_dir()).resolve())
        if args.action == "start":
            port = server.start(args.port)
            print(f"# metastore: PostgreSQL on 127.0.0.1:{port}; source {server.env_file}")
            print(export_lines(server, port), end="")
        elif args.action == "stop":
            print("stopped" if server.stop() else "not running")
        else:
            port = server.running_port()
            print(f"running on 127.0.0.1:{port}" if port else "not running")
            return 0 if port else 1
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
