"""Every ``CDC_*`` environment variable of the project: one table, one typed settings object.

Every setting comes from an environment variable so that ``python -m ingest``, ``dbt`` and
``pytest`` read the same values without a config file. :data:`VARIABLES` lists each of them
once (name, type, default, unit, who reads it, what it does); the reference at the end of this
docstring and ``docs/reference/settings.md`` (``python -m cdc_lakehouse.runtime.settings
--markdown``) are generated from it, and a unit test fails when a ``CDC_*`` name of the package, of
``ingest/`` or of the dbt project is missing from it.

The Python package reads its variables here only: :meth:`Settings.from_env` (also spelled
:func:`load_settings`) reads and checks them once, before any JVM starts, into
:class:`Settings` and its groups :class:`SparkSettings`, :class:`SharedMetastore`,
:class:`JvmArchiveSettings` and :class:`IngestSettings`. A module that needs one group only
(without the others' checks) reads it with that group's ``from_env``. The variables read by
dbt's Jinja (``env_var()`` in ``profiles.yml``), the Makefile or the tests stay there and are
listed in the table with their readers.

Errors: :class:`ConfigError` (:class:`MasterUnreachableError` for the master URL), one line
naming the variable and what to fix.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
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

DEFAULT_LAKE_DIR = "./lake"
DEFAULT_MASTER = "local[*]"
DEFAULT_DRIVER_MEMORY = "3g"
"""``spark.driver.memory`` unless ``CDC_SPARK_DRIVER_MEMORY`` says otherwise. In ``local[*]``
the driver's JVM is the executor too, and its heap is most of the memory a build holds: with
4g, G1 grew the heap to all 4 GiB in the benchmark's stages at 1,000,000 Canal changes (the
heap in use after a collection stayed far lower) and the JVM's RSS reached 5,356 MiB (about
1.2 GiB outside the heap: metaspace, code, threads, buffers); with the PySpark daemons
(187 MiB) and the two decoding workers (about 620 MiB) that made 6,176 MiB, over issue 20's
6 GiB (target 6). With 3g: 4,322 MiB and 5,146 MiB in all, stage times unchanged within the
run-to-run noise (bench/HISTORY.md, 2026-11-26)."""
DEFAULT_SHUFFLE_PARTITIONS = 8
"""``spark.sql.shuffle.partitions`` unless ``CDC_SPARK_SHUFFLE_PARTITIONS`` says otherwise."""
DEFAULT_LOG_LEVEL = "WARN"
DEFAULT_DRIVER_HOST = "127.0.0.1"
DEFAULT_EXECUTOR_MEMORY = "2g"
ARCHIVE_OFF = frozenset({"off", "0", "false", "no"})
"""Values of ``CDC_JVM_ARCHIVE`` (any case) that switch the JVM class archive off."""
EXAMPLES_ENV = "CDC_EXAMPLES"
"""The switch of the bundled sample's and the tests' topics, keys and typed gold models, see
:func:`examples_setting`."""
CRASH_ENV = "CDC_INGEST_CRASH_AFTER_WRITE"
"""The ingest job's fault-injection hook (tests only), see :class:`IngestSettings`."""


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Variable:
    """One environment variable of the project (a row of the reference).

    Attributes:
        name: ``CDC_...``.
        type: what the value is (``path``, ``JVM memory size``, ``positive integer``, ...).
        default: the value when it is unset or blank (as text; ``-`` for none).
        unit: the unit of a number or size (``MiB``, ``partitions``, ``cores``), else ``-``.
        readers: who reads it: ``package`` (the Python package and ``ingest/``, through this
            module), ``dbt`` (Jinja ``env_var()``), ``make`` (the Makefile), ``tests``,
            ``CI template`` (``ci-templates/``).
        description: one line.
    """

    name: str
    type: str
    default: str
    unit: str
    readers: tuple[str, ...]
    description: str


PACKAGE = "package"
DBT = "dbt (profiles.yml)"
MAKE = "make"
TESTS = "tests"
CI_TEMPLATE = "CI template"

VARIABLES: tuple[Variable, ...] = (
    Variable("CDC_LAKE_DIR", "path", DEFAULT_LAKE_DIR, "-", (PACKAGE, TESTS),
             "lakehouse root, resolved against the current directory: Spark warehouse, Derby "
             "metastore, ingest checkpoints, logs"),
    Variable("CDC_TABLE_FORMAT", "text", "delta", "-", (PACKAGE,),
             "retired: every table is a Delta Lake table; any other value stops with one line"),
    Variable("CDC_JARS_DIR", "path", "<venv>/share/cdc-lakehouse/jars", "-", (PACKAGE,),
             "the project's JVM libraries (spark/, kafka/, autocdc/), resolved by make install"),
    Variable("CDC_METASTORE_JDBC_URL", "JDBC URL", "- (embedded Derby)", "-",
             (PACKAGE, MAKE, TESTS),
             "a shared Hive metastore database, jdbc:postgresql://HOST:PORT/DB (make metastore)"),
    Variable("CDC_METASTORE_USER", "text", "-", "-", (PACKAGE,),
             "the shared metastore's database user (required with the URL)"),
    Variable("CDC_METASTORE_PASSWORD", "secret", "-", "-", (PACKAGE,),
             "its password (or CDC_METASTORE_PASSWORD_FILE; never printed)"),
    Variable("CDC_METASTORE_PASSWORD_FILE", "path", "-", "-", (PACKAGE,),
             "a file holding its password (used when CDC_METASTORE_PASSWORD is unset)"),
    Variable("CDC_METASTORE_JDBC_JAR", "path", str(DEFAULT_JDBC_JAR), "-", (PACKAGE,),
             "the JDBC driver's jar (Debian's libpostgresql-jdbc-java)"),
    Variable("CDC_SPARK_MASTER", "Spark master URL", DEFAULT_MASTER, "-", (PACKAGE, TESTS),
             "local, local[N], local[*], local[N,F], spark://HOST:PORT, yarn or "
             "k8s://https://HOST:PORT"),
    Variable("CDC_SPARK_DRIVER_MEMORY", "JVM memory size", DEFAULT_DRIVER_MEMORY,
             "k, m, g or t (KiB, MiB, GiB, TiB); at least 512m", (PACKAGE, TESTS),
             "spark.driver.memory (in local[*] the heap of the one JVM: most of a build's memory)"),
    Variable("CDC_SPARK_SHUFFLE_PARTITIONS", "positive integer",
             str(DEFAULT_SHUFFLE_PARTITIONS), "partitions", (PACKAGE,),
             "spark.sql.shuffle.partitions"),
    Variable("CDC_SPARK_UI", "boolean (true / false, any case)", "false", "-", (PACKAGE,),
             "spark.ui.enabled: true starts the Spark UI"),
    Variable("CDC_SPARK_EXTRA_JARS", "comma-separated absolute .jar paths", "- (none)", "-",
             (PACKAGE, TESTS),
             "jars the session loads beside the project's (spark.jars); set by the bench only"),
    Variable("CDC_SPARK_EVENT_LOG_DIR", "path", "- (off)", "-", (PACKAGE,),
             "Spark's event log (one JSON-lines file per application) for the history server; "
             "the bench sets it"),
    Variable("CDC_SPARK_LOG_LEVEL", "log4j level (ERROR, WARN, INFO, ...)", DEFAULT_LOG_LEVEL,
             "-", (PACKAGE,), "the log level of the session's Spark context"),
    Variable("CDC_SPARK_DRIVER_HOST", "host name or address", DEFAULT_DRIVER_HOST, "-",
             (PACKAGE,),
             "cluster masters only: the driver's address as executors reach it (also bound)"),
    Variable("CDC_SPARK_EXECUTOR_MEMORY", "JVM memory size", DEFAULT_EXECUTOR_MEMORY,
             "k, m, g or t (KiB, MiB, GiB, TiB); at least 512m", (PACKAGE,),
             "cluster masters only: spark.executor.memory (must fit a worker)"),
    Variable("CDC_SPARK_EXECUTOR_CORES", "positive integer", "Spark's", "cores", (PACKAGE,),
             "cluster masters only: spark.executor.cores"),
    Variable("CDC_SPARK_EXECUTOR_PYTHON", "path", "the driver's Python (sys.executable)", "-",
             (PACKAGE,),
             "cluster masters only: spark.pyspark.python, the same path on every node"),
    Variable("CDC_JVM_ARCHIVE", "on / off", "on", "-", (PACKAGE, TESTS),
             "off (or 0, false, no) starts every Spark JVM without the class-data archive"),
    Variable("CDC_JVM_ARCHIVE_DIR", "path", "<venv>/share/cdc-lakehouse/jvm", "-",
             (PACKAGE, TESTS),
             "where the driver JVM's class archives are kept (about 200 MB per class path)"),
    Variable(EXAMPLES_ENV, "boolean (true / false, any case)", "false", "-",
             (PACKAGE, "dbt (dbt_project.yml)", MAKE, TESTS),
             "true adds the examples (sample_data/seeds: the sample's and the tests' topics and "
             "declared keys; sample_data/models: their typed gold models) to the user's "
             "registry, keys and models; make demo, test and bench set it"),
    Variable(CRASH_ENV, "batch id (whole number >= 0)", "- (off)", "-", (PACKAGE, TESTS),
             "fault injection: the ingest job exits after writing this batch, before its commit"),
    Variable("CDC_DEV_SCHEMA", "schema prefix", "dev_<user name>", "-", (DBT, TESTS),
             "target dev: the prefix of the engineer's schemas (<prefix>_silver, ...)"),
    Variable("CDC_CI_RUN_ID", "letters, digits, _", "local", "-", (DBT, MAKE, TESTS),
             "target ci: names one CI run's schemas, ci_<id>_silver, ...; required by "
             "make ci-changed on a shared metastore"),
    Variable("CDC_SIM_CHANGES", "positive integer", "5000", "row changes", (TESTS,),
             "the simulated history's size per format in tests/dbt_models"),
    Variable("CDC_CI_RUNNER", "runner label", "ubuntu-latest", "-", (CI_TEMPLATE,),
             "a GitHub Actions repository variable (vars.CDC_CI_RUNNER), not a process "
             "variable: the self-hosted runner of the slim CI workflow"),
)  # fmt: skip
"""Every ``CDC_*`` variable, once. The source of the reference below, of
``docs/reference/settings.md`` and of the unit test that checks the code's names."""

VARIABLE_NAMES = frozenset(variable.name for variable in VARIABLES)

MARKDOWN_COMMAND = "python -m cdc_lakehouse.runtime.settings --markdown"
"""The command that prints :func:`markdown_reference` (``docs/reference/settings.md``)."""


def markdown_reference() -> str:
    """The Markdown reference of :data:`VARIABLES`: a generated-file header line, then a
    table (``docs/reference/settings.md`` holds this text)."""
    lines = [
        f"<!-- Generated by `{MARKDOWN_COMMAND} > docs/reference/settings.md`: do not edit. -->",
        "",
        "# Settings: the `CDC_*` environment variables",
        "",
        "Read by: `package` = the Python package and `ingest/`, through "
        "`cdc_lakehouse.runtime.settings` only (checked once, before any JVM starts; a bad "
        "value is "
        "one line naming the variable, exit code 2); `dbt (profiles.yml)` = dbt's Jinja "
        "`env_var()`; `make` = the Makefile; `tests` = the test suite sets or reads it; "
        "`CI template` = `ci-templates/`. Unset or blank means the default.",
        "",
        "| variable | type | default | unit | read by | description |",
        "|---|---|---|---|---|---|",
    ]
    for v in VARIABLES:
        cells = [f"`{v.name}`", v.type, _code(v.default), v.unit, ", ".join(v.readers)]
        lines.append("| " + " | ".join([*cells, v.description]).replace("\n", " ") + " |")
    return "\n".join(lines) + "\n"


def _code(default: str) -> str:
    return default if default.startswith(("-", "the ", "Spark's")) else f"`{default}`"


def _text_reference() -> str:
    """The reference of :data:`VARIABLES` as reStructuredText, appended to this docstring."""
    lines = ["Reference (generated from :data:`VARIABLES`):", ""]
    for v in VARIABLES:
        unit = "" if v.unit == "-" else f"; unit {v.unit}"
        lines.append(
            f"- ``{v.name}`` ({v.type}; default {v.default}{unit}; read by "
            f"{', '.join(v.readers)}): {v.description}."
        )
    return "\n".join(lines)


__doc__ = f"{__doc__}\n{_text_reference()}\n"


def _environ(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """``env``, or the process's environment: the one place the package reads ``CDC_*``
    variables from ``os.environ``."""
    return os.environ if env is None else env


# --------------------------------------------------------------------------- validators


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


# --------------------------------------------------------------------------- Spark


class MasterUnreachableError(ConfigError):
    """``CDC_SPARK_MASTER`` names a standalone master that does not answer (or cannot be
    parsed); the message says what was tried and what to do."""


MASTER_URLS = (
    "local, local[N], local[*], local[N,F], spark://HOST:PORT, yarn or k8s://https://HOST:PORT"
)
"""The master URLs :func:`check_master_url` accepts (for its message)."""
_LOCAL = re.compile(r"local(?:\[(?:[0-9]+|\*)(?:\s*,\s*[0-9]+)?\])?")
"""Spark's local master URLs (``SparkMasterRegex``: ``local``, ``local[N]``, ``local[*]``,
``local[N,F]``, ``local[*,F]``)."""


def is_local(master: str) -> bool:
    """Whether ``master`` runs everything in the driver's JVM (``local``, ``local[N]``, ...)."""
    return master == "local" or master.startswith("local[")


def standalone_addresses(master: str) -> list[tuple[str, int]]:
    """The (host, port) of each master of a ``spark://`` URL; ``[]`` for any other URL.

    Raises:
        MasterUnreachableError: a ``spark://`` URL without a host or a numeric port.
    """
    if not master.startswith("spark://"):
        return []
    addresses = []
    for part in master[len("spark://") :].split(","):
        host, _, port = part.strip().rpartition(":")
        host = host.strip("[]")  # an IPv6 literal
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise MasterUnreachableError(
                f"CDC_SPARK_MASTER={master} is not a standalone master URL: write "
                "spark://HOST:PORT (make spark-cluster prints one), or unset it (local[*])."
            )
        addresses.append((host, int(port)))
    return addresses


def check_master_url(master: str) -> None:
    """Check that Spark accepts ``master`` as a master URL: ``local``, ``local[N]``,
    ``local[*]``, ``local[N,F]`` / ``local[*,F]`` (N threads, F task failures allowed; N and F
    >= 1), ``spark://HOST:PORT[,HOST:PORT...]``, ``yarn``, or ``k8s://`` followed by the API
    server's ``https://HOST[:PORT]`` (or ``HOST:PORT``, https). No connection is made.

    Raises:
        MasterUnreachableError: any other URL (one line naming ``CDC_SPARK_MASTER`` and what
            it accepts).
    """
    if master == "yarn" or standalone_addresses(master):
        return
    local = _LOCAL.fullmatch(master)
    if local is not None:
        if all(int(n) >= 1 for n in re.findall(r"[0-9]+", master)):
            return
    elif master.startswith("k8s://"):
        api = master[len("k8s://") :]
        parts = urlsplit(api if "://" in api else f"https://{api}")
        if parts.scheme in ("http", "https") and parts.hostname:
            return
    raise MasterUnreachableError(
        f"CDC_SPARK_MASTER={master} is not a Spark master URL: use {MASTER_URLS} (unset: "
        f"{DEFAULT_MASTER})."
    )


def master_setting(env: Mapping[str, str] | None = None) -> str:
    """The master URL of ``CDC_SPARK_MASTER`` in ``env`` (default: the process's environment;
    stripped), default ``local[*]``; not checked (:func:`check_master_url` does)."""
    return (_environ(env).get("CDC_SPARK_MASTER") or "").strip() or DEFAULT_MASTER


def extra_jars_setting(env: Mapping[str, str]) -> tuple[str, ...]:
    """``CDC_SPARK_EXTRA_JARS`` in ``env``: comma-separated absolute paths of existing ``.jar``
    files; empty when unset.

    Raises:
        ConfigError: a path that is not absolute or not an existing ``.jar`` file.
    """
    text = env.get("CDC_SPARK_EXTRA_JARS", "").strip()
    jars = tuple(part.strip() for part in text.split(",") if part.strip())
    for jar in jars:
        path = Path(jar)
        if not path.is_absolute() or path.suffix != ".jar" or not path.is_file():
            raise ConfigError(
                f"CDC_SPARK_EXTRA_JARS: {jar!r} is not an existing .jar file given by its "
                "absolute path (comma-separated paths, or unset)"
            )
    return jars


@dataclass(frozen=True)
class SparkSettings:
    """The ``CDC_SPARK_*`` settings (:func:`cdc_lakehouse.runtime.spark_session.spark_conf` turns
    them into Spark's configuration).

    Attributes:
        master: the master URL (checked by :func:`check_master_url`).
        driver_memory: ``spark.driver.memory``, a JVM memory size (``3g``; units k, m, g, t).
        shuffle_partitions: ``spark.sql.shuffle.partitions``.
        ui: ``spark.ui.enabled``.
        extra_jars: absolute paths of jars loaded beside the project's (the bench's).
        event_log_dir: the directory of Spark's event log (absolute), or ``None`` (off).
        log_level: the Spark context's log level.
        driver_host: cluster masters: the driver's address as executors reach it.
        executor_memory: cluster masters: ``spark.executor.memory`` (a JVM memory size).
        executor_cores: cluster masters: ``spark.executor.cores``; ``None``: Spark's default.
        executor_python: cluster masters: ``spark.pyspark.python``.
    """

    master: str = DEFAULT_MASTER
    driver_memory: str = DEFAULT_DRIVER_MEMORY
    shuffle_partitions: int = DEFAULT_SHUFFLE_PARTITIONS
    ui: bool = False
    extra_jars: tuple[str, ...] = ()
    event_log_dir: Path | None = None
    log_level: str = DEFAULT_LOG_LEVEL
    driver_host: str = DEFAULT_DRIVER_HOST
    executor_memory: str = DEFAULT_EXECUTOR_MEMORY
    executor_cores: int | None = None
    executor_python: str = field(default_factory=lambda: sys.executable)

    @property
    def is_local(self) -> bool:
        """Whether the master runs everything in the driver's JVM (no executors to size)."""
        return is_local(self.master)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> SparkSettings:
        """The ``CDC_SPARK_*`` settings of ``env`` (default: the process's environment), each
        stripped, blank meaning the default. Checked in this order: the master URL, the
        driver memory, the shuffle partitions, the UI switch, the extra jars and, for a
        cluster master only, the executors' memory and cores.

        Raises:
            MasterUnreachableError: the master URL is not one Spark accepts.
            ConfigError: another bad setting, one line naming it and what it accepts.
        """
        env = _environ(env)
        master = master_setting(env)
        check_master_url(master)
        driver_memory = memory_setting(env, "CDC_SPARK_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY)
        shuffle_partitions = positive_int_setting(
            env, "CDC_SPARK_SHUFFLE_PARTITIONS", DEFAULT_SHUFFLE_PARTITIONS
        )
        ui = boolean_setting(env, "CDC_SPARK_UI", False)
        extra_jars = extra_jars_setting(env)
        executor_memory, executor_cores = DEFAULT_EXECUTOR_MEMORY, None
        if not is_local(master):  # executors to size: local[...] ignores these settings
            executor_memory = memory_setting(
                env, "CDC_SPARK_EXECUTOR_MEMORY", DEFAULT_EXECUTOR_MEMORY
            )
            executor_cores = (
                positive_int_setting(env, "CDC_SPARK_EXECUTOR_CORES", 0, default_text="Spark's")
                or None
            )
        event_log_dir = env.get("CDC_SPARK_EVENT_LOG_DIR")
        return cls(
            master=master,
            driver_memory=driver_memory,
            shuffle_partitions=shuffle_partitions,
            ui=ui,
            extra_jars=extra_jars,
            event_log_dir=Path(event_log_dir).expanduser().resolve() if event_log_dir else None,
            log_level=env.get("CDC_SPARK_LOG_LEVEL", DEFAULT_LOG_LEVEL),
            driver_host=env.get("CDC_SPARK_DRIVER_HOST") or DEFAULT_DRIVER_HOST,
            executor_memory=executor_memory,
            executor_cores=executor_cores,
            executor_python=env.get("CDC_SPARK_EXECUTOR_PYTHON") or sys.executable,
        )


# --------------------------------------------------------------------------- other groups


def default_jars_dir() -> Path:
    """``<sys.prefix>/share/cdc-lakehouse/jars`` (the virtual environment ``make install``
    made)."""
    return Path(sys.prefix) / "share" / "cdc-lakehouse" / "jars"


def jars_dir_setting(env: Mapping[str, str] | None = None) -> Path:
    """The root of the project's jar folders: ``CDC_JARS_DIR`` of ``env`` (default: the
    process's environment; resolved), else :func:`default_jars_dir`."""
    configured = _environ(env).get("CDC_JARS_DIR")
    if configured:
        return Path(configured).expanduser().resolve()
    return default_jars_dir()


def examples_setting(env: Mapping[str, str] | None = None) -> bool:
    """``CDC_EXAMPLES`` of ``env`` (default: the process's environment): whether the examples
    are switched on (``true`` in any case; ``false``, unset or blank: off). dbt reads the same
    variable (dbt_project.yml, macros/cdc_examples.sql).

    Raises:
        ConfigError: another value.
    """
    return boolean_setting(_environ(env), EXAMPLES_ENV, False)


def lake_dir_setting(env: Mapping[str, str] | None = None) -> Path:
    """``CDC_LAKE_DIR`` of ``env`` (default: the process's environment), else ``./lake``;
    absolute (resolved against the current directory). Nothing else is checked, for commands
    that only need the lake's place (an error log, a cluster's directory)."""
    return Path(_environ(env).get("CDC_LAKE_DIR") or DEFAULT_LAKE_DIR).expanduser().resolve()


@dataclass(frozen=True)
class JvmArchiveSettings:
    """The driver JVM's class-data archive (:mod:`cdc_lakehouse.runtime.jvm_class_archive`).

    Attributes:
        enabled: ``False`` when ``CDC_JVM_ARCHIVE`` is ``off``, ``0``, ``false`` or ``no`` (any
            case); anything else is on.
        directory: ``CDC_JVM_ARCHIVE_DIR``, else ``<sys.prefix>/share/cdc-lakehouse/jvm``.
    """

    enabled: bool = True
    directory: Path = field(
        default_factory=lambda: Path(sys.prefix) / "share" / "cdc-lakehouse" / "jvm"
    )

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> JvmArchiveSettings:
        """The archive settings of ``env`` (default: the process's environment)."""
        env = _environ(env)
        enabled = env.get("CDC_JVM_ARCHIVE", "on").lower() not in ARCHIVE_OFF
        directory = env.get("CDC_JVM_ARCHIVE_DIR")
        return cls(enabled, Path(directory)) if directory else cls(enabled)


@dataclass(frozen=True)
class IngestSettings:
    """The ingest job's settings.

    Attributes:
        crash_after_write: fault injection for the tests (``CDC_INGEST_CRASH_AFTER_WRITE``):
            the batch id after whose bronze write the job exits before its commit; ``None``
            when unset or not a whole number.
    """

    crash_after_write: int | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> IngestSettings:
        """The ingest settings of ``env`` (default: the process's environment)."""
        text = _environ(env).get(CRASH_ENV, "")
        return cls(int(text) if text.isdigit() else None)


# --------------------------------------------------------------------------- all of them


@dataclass(frozen=True)
class Settings:
    """Resolved settings: every ``CDC_*`` variable the package reads, grouped.

    Attributes:
        lake_dir: absolute path of the lakehouse root (``CDC_LAKE_DIR``).
        metastore: the shared metastore, or ``None`` for the embedded Derby one.
        spark: the ``CDC_SPARK_*`` settings.
        jars_dir: the root of the project's jar folders (``CDC_JARS_DIR``).
        jvm_archive: the driver JVM's class archive (``CDC_JVM_ARCHIVE*``).
        ingest: the ingest job's settings.
    """

    lake_dir: Path
    metastore: SharedMetastore | None = None
    spark: SparkSettings = field(default_factory=SparkSettings)
    jars_dir: Path = field(default_factory=default_jars_dir)
    jvm_archive: JvmArchiveSettings = field(default_factory=JvmArchiveSettings)
    ingest: IngestSettings = field(default_factory=IngestSettings)

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

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read and check every setting of ``env`` (default: the process's environment), in
        this order: the lake, the table format, the shared metastore, Spark.

        Raises:
            ConfigError: ``CDC_TABLE_FORMAT`` set to another format than ``delta``, a shared
                metastore setting missing or invalid (see :func:`load_metastore`), or a
                ``CDC_SPARK_*`` setting Spark would refuse (see :meth:`SparkSettings.from_env`).
        """
        env = _environ(env)
        lake_dir = lake_dir_setting(env)
        table_format = (env.get("CDC_TABLE_FORMAT") or "delta").strip().lower()
        if table_format != "delta":
            raise ConfigError(
                f"CDC_TABLE_FORMAT={table_format!r}: every table of the lake is a Delta Lake "
                "table now (the Parquet path is gone): unset CDC_TABLE_FORMAT."
            )
        return cls(
            lake_dir=lake_dir,
            metastore=load_metastore(env),
            spark=SparkSettings.from_env(env),
            jars_dir=jars_dir_setting(env),
            jvm_archive=JvmArchiveSettings.from_env(env),
            ingest=IngestSettings.from_env(env),
        )


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """Read the settings from ``environ`` (default: ``os.environ``): :meth:`Settings.from_env`.

    Raises:
        ConfigError: see :meth:`Settings.from_env`.
    """
    return Settings.from_env(environ)


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


def main(argv: list[str] | None = None) -> int:
    """``python -m cdc_lakehouse.runtime.settings``: check this environment's settings (exit 0, or
    2 with the one line of the first bad one); ``--markdown``: print the Markdown reference of
    every variable (``docs/reference/settings.md``)."""
    parser = argparse.ArgumentParser(prog="python -m cdc_lakehouse.runtime.settings")
    parser.add_argument(
        "--markdown", action="store_true", help="print the Markdown reference of the variables"
    )
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown_reference())
        return 0
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(settings)  # the password is left out of the repr
    return 0


if __name__ == "__main__":
    sys.exit(main())
