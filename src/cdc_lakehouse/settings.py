"""Environment settings shared by the ingest job, dbt and the tests.

Every setting comes from an environment variable so that ``python -m ingest``, ``dbt`` and
``pytest`` read the same values without a config file:

- ``CDC_LAKE_DIR`` (default ``./lake``, resolved against the current directory): root of the
  lakehouse: Spark warehouse, Derby metastore, ingest checkpoints.
- ``CDC_JARS_DIR`` (default ``<virtual environment>/share/cdc-lakehouse/jars``): the
  project's JVM libraries, resolved by ``make install`` (:mod:`cdc_lakehouse.jars`). Every table
  is a Delta Lake table; ``CDC_TABLE_FORMAT`` is gone (set to anything but ``delta`` it stops
  with one line).
- ``CDC_METASTORE_JDBC_URL`` (optional): a shared Hive metastore database instead of the
  embedded Derby one (``jdbc:postgresql://host:port/db``; ``make metastore`` runs one), with
  ``CDC_METASTORE_USER`` and the password in ``CDC_METASTORE_PASSWORD`` or in the file named by
  ``CDC_METASTORE_PASSWORD_FILE`` (never printed), and the JDBC driver jar
  ``CDC_METASTORE_JDBC_JAR`` (default :data:`DEFAULT_JDBC_JAR`, Debian's
  ``libpostgresql-jdbc-java``).

The Spark settings (``CDC_SPARK_*``, read by :mod:`cdc_lakehouse.spark_session` and
:mod:`cdc_lakehouse.spark_master`) are checked with :func:`memory_setting`,
:func:`positive_int_setting` and :func:`boolean_setting` before any JVM starts.

Errors: :class:`ConfigError` with a message that says what to fix.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_JDBC_JAR = Path("/usr/share/java/postgresql.jar")
JDBC_DRIVERS = {
    "postgresql": "org.postgresql.Driver",
    "mysql": "com.mysql.cj.jdbc.Driver",
    "mariadb": "org.mariadb.jdbc.Driver",
}
"""JDBC driver class per URL scheme (``jdbc:<scheme>:``) of a shared metastore database."""


class ConfigError(ValueError):
    """A setting is invalid; the message names the setting and what to do."""


MIN_JVM_MEMORY_MIB = 512
"""The smallest memory size :func:`memory_setting` accepts, MiB: Spark refuses a driver or
executor JVM with less than 450 MiB of heap (``INVALID_DRIVER_MEMORY``, checked when the
context starts, with a stack trace)."""
_MEMORY_UNITS_MIB = {"k": 1 / 1024, "m": 1, "g": 1024, "t": 1024 * 1024}
_MEMORY_SIZE = re.compile(r"([0-9]+)([kmgt])", re.IGNORECASE)


def memory_setting(env: Mapping[str, str], name: str, default: str) -> str:
    """The JVM memory size of the variable ``name`` in ``env`` (stripped; ``default`` when unset
    or blank): a whole number with one of the units ``k``, ``m``, ``g``, ``t`` (Spark's
    and the JVM's ``-Xmx`` format: ``512m``, ``3g``), at least :data:`MIN_JVM_MEMORY_MIB`.

    Raises:
        ConfigError: anything else (``3gb``, ``1.5g``, ``1024``, ``100m``); one line naming
            the variable and what it accepts.
    """
    text = (env.get(name) or "").strip() or default
    match = _MEMORY_SIZE.fullmatch(text)
    if match is None or int(match[1]) * _MEMORY_UNITS_MIB[match[2].lower()] < MIN_JVM_MEMORY_MIB:
        raise ConfigError(
            f"{name}={text!r} is not a JVM memory size Spark accepts: use a whole number with "
            f"the unit k, m, g or t, at least {MIN_JVM_MEMORY_MIB}m (e.g. 512m, 3g; default "
            f"{default})."
        )
    return text


def positive_int_setting(
    env: Mapping[str, str], name: str, default: int, *, default_text: str | None = None
) -> int:
    """The positive integer of the variable ``name`` in ``env`` (stripped; ``default`` when
    unset or blank; ``default_text`` says what the default is in the message, when it is not
    ``default`` itself).

    Raises:
        ConfigError: not a whole number of decimal digits, or 0; one line naming the variable.
    """
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ConfigError(
            f"{name}={text!r} is not a positive integer: use a whole number >= 1 (default "
            f"{default_text or default})."
        )
    return int(text)


def boolean_setting(env: Mapping[str, str], name: str, default: bool) -> bool:
    """The boolean of the variable ``name`` in ``env``: ``true`` or ``false`` in any case
    (stripped; ``default`` when unset or blank), as Spark reads a boolean setting.

    Raises:
        ConfigError: anything else (``yes``, ``1``); one line naming the variable.
    """
    text = (env.get(name) or "").strip()
    if not text:
        return default
    if text.lower() not in ("true", "false"):
        raise ConfigError(
            f"{name}={text!r} is not true or false: use true or false (default "
            f"{str(default).lower()})."
        )
    return text.lower() == "true"


@dataclass(frozen=True)
class SharedMetastore:
    """A shared Hive metastore database (JDBC).

    Attributes:
        jdbc_url: ``jdbc:<scheme>://host:port/database``.
        host / port: where the database listens (checked before Spark starts).
        driver: JDBC driver class.
        jar: the driver's jar, put on the driver's class path.
        user: database user.
        password: database password (left out of ``repr``).
    """

    jdbc_url: str
    host: str
    port: int
    driver: str
    jar: Path
    user: str
    password: str = field(repr=False)


@dataclass(frozen=True)
class Settings:
    """Resolved settings.

    Attributes:
        lake_dir: absolute path of the lakehouse root.
        metastore: the shared metastore, or ``None`` for the embedded Derby one.
    """

    lake_dir: Path
    metastore: SharedMetastore | None = None

    @property
    def warehouse_dir(self) -> Path:
        """Spark SQL warehouse (managed tables of the bronze, silver and gold schemas)."""
        return self.lake_dir / "warehouse"

    @property
    def metastore_dir(self) -> Path:
        """Derby metastore database directory."""
        return self.lake_dir / "metastore_db"

    @property
    def checkpoint_dir(self) -> Path:
        """Root of Structured Streaming checkpoints (one sub-directory per ingest query)."""
        return self.lake_dir / "checkpoints"


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from ``environ`` (default: ``os.environ``).

    Raises:
        ConfigError: ``CDC_TABLE_FORMAT`` set to another format than ``delta``, or a shared
            metastore setting missing or invalid (see :func:`load_metastore`).
    """
    env = os.environ if environ is None else environ
    lake_dir = Path(env.get("CDC_LAKE_DIR") or "./lake").expanduser().resolve()
    table_format = (env.get("CDC_TABLE_FORMAT") or "delta").strip().lower()
    if table_format != "delta":
        raise ConfigError(
            f"CDC_TABLE_FORMAT={table_format!r}: every table of the lake is a Delta Lake table "
            "now (the Parquet path is gone): unset CDC_TABLE_FORMAT."
        )
    return Settings(
        lake_dir=lake_dir,
        metastore=load_metastore(env),
    )


def load_metastore(env: Mapping[str, str]) -> SharedMetastore | None:
    """The shared metastore of ``CDC_METASTORE_*`` in ``env``, or ``None`` without
    ``CDC_METASTORE_JDBC_URL``.

    Raises:
        ConfigError: the URL is not ``jdbc:<scheme>://host:port/db``, its scheme has no known
            driver, ``CDC_METASTORE_USER`` or the password is missing, the password file cannot
            be read, or the driver jar is not a file.
    """
    url = (env.get("CDC_METASTORE_JDBC_URL") or "").strip()
    if not url:
        return None
    scheme, _, rest = url.removeprefix("jdbc:").partition(":")
    parts = urlsplit(f"{scheme}:{rest}")
    if not url.startswith("jdbc:") or not parts.hostname or not parts.path.strip("/"):
        raise ConfigError(
            f"CDC_METASTORE_JDBC_URL={url!r} is not a JDBC URL with a host and a database: use "
            "jdbc:postgresql://HOST:PORT/DATABASE (make metastore prints one)."
        )
    if scheme not in JDBC_DRIVERS:
        raise ConfigError(
            f"CDC_METASTORE_JDBC_URL: no known JDBC driver for {scheme!r}: use one of "
            f"{', '.join(JDBC_DRIVERS)}."
        )
    try:
        port = parts.port or 5432
    except ValueError:
        raise ConfigError(f"CDC_METASTORE_JDBC_URL={url!r} has an invalid port.") from None
    user = env.get("CDC_METASTORE_USER") or ""
    if not user:
        raise ConfigError("CDC_METASTORE_JDBC_URL is set but CDC_METASTORE_USER is not: set it.")
    password = env.get("CDC_METASTORE_PASSWORD")
    password_file = env.get("CDC_METASTORE_PASSWORD_FILE")
    if password is None and password_file:
        try:
            password = Path(password_file).expanduser().read_text().strip()
        except OSError as exc:
            raise ConfigError(
                f"CDC_METASTORE_PASSWORD_FILE={password_file!r} cannot be read "
                f"({exc.strerror or exc}): point it at the metastore password file."
            ) from None
    if password is None:
        raise ConfigError(
            "CDC_METASTORE_JDBC_URL is set but no password: set CDC_METASTORE_PASSWORD_FILE "
            "(or CDC_METASTORE_PASSWORD)."
        )
    jar = Path(env.get("CDC_METASTORE_JDBC_JAR") or DEFAULT_JDBC_JAR).expanduser()
    if not jar.is_file():
        raise ConfigError(
            f"The metastore's JDBC driver {jar} is missing: run make metastore (it installs "
            "libpostgresql-jdbc-java) or set CDC_METASTORE_JDBC_JAR to the driver's jar."
        )
    return SharedMetastore(
        jdbc_url=url,
        host=parts.hostname,
        port=port,
        driver=JDBC_DRIVERS[scheme],
        jar=jar.resolve(),
        user=user,
        password=password,
    )
