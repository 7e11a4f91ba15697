"""The one Spark configuration of the project, used by the ingest job, dbt and the tests.

``python -m ingest`` calls :func:`get_spark`; dbt reaches the same function through the
``sparksession`` adapter (``profiles.yml``), whose connection creates the session before
dbt-spark's ``method: session`` cursor asks for it. Everything Spark, Hive and Derby write goes
under ``CDC_LAKE_DIR`` (see :mod:`cdc_lakehouse.runtime.settings`); nothing lands in the working
directory or the home directory. Every table is a Delta Lake table: the session loads Delta's
SQL extension and catalog, and the project's JVM libraries (Delta Lake, Spark's Kafka source,
spark-avro) from the local folder ``make install`` resolved (``spark.jars``,
:mod:`cdc_lakehouse.runtime.jars`): nothing downloads at run time.

Settings that matter for correctness:

- ``spark.sql.session.timeZone=UTC``: event times are UTC timestamps.
- ``spark.sql.ansi.enabled=false``: dbt-spark forces it for its session and views remember the
  setting they were created with, so the ingest job uses the same.
- ``spark.sql.sources.partitionOverwriteMode=dynamic``: ``INSERT OVERWRITE`` replaces only the
  partitions it writes (the batch-partitioned incremental models; on Delta one atomic commit).

The embedded Derby metastore admits one JVM at a time. :func:`get_spark` checks Derby's lock
file before starting the JVM and opens the metastore right after, so that a second process
stops within seconds with :class:`MetastoreBusyError` (one line: who holds it, what to do)
instead of Hive's retries and stack traces.
"""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lakehouse.runtime.jars import class_path
from cdc_lakehouse.runtime.jvm_class_archive import archive_path, java_options, wait_for_writer
from cdc_lakehouse.runtime.metastore_lock import DERBY_LOCK_FILE, busy_message, metastore_holder
from cdc_lakehouse.runtime.settings import (
    ConfigError,
    Settings,
    SharedMetastore,
    SparkSettings,
    load_settings,
)
from cdc_lakehouse.runtime.spark_master import check_master, master_conf

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

LOG4J2_CONFIG = Path(__file__).resolve().parents[1] / "resources" / "log4j2.properties"
DELTA_EXTENSION = "io.delta.sql.DeltaSparkSessionExtension"
DELTA_CATALOG = "org.apache.spark.sql.delta.catalog.DeltaCatalog"
_SESSION_LOCK = threading.Lock()
DERBY_URL_PREFIX = "jdbc:derby:"


DELTA_SNAPSHOT_PARTITIONS = "2"
"""``spark.databricks.delta.snapshotPartitions``: the tasks in which Delta replays a table's log
into its state. With Delta's default of 50, a query of a small table whose state changed ran a
50-task stage on 2 cores: ten queries of a five-commit table took 71 s against 32 s with 1, on
a loaded machine."""


JIT_OPTIONS = "-XX:CompileThresholdScaling=5"
"""JVM options of the driver and the executors: the JIT compiles a method once it has run five
times as often as HotSpot's defaults ask. Each command of the project starts a JVM that runs a
few hundred short queries, and a profile of a `dbt build` of the bundled sample (JDK Flight
Recorder, 2026-12-06) showed the JIT's compiler threads using more CPU (107 s, about 59,000
methods compiled) than the queries themselves: most of what it compiled ran too few times to
pay back. With the scaled thresholds the sample's first build used 139-141 CPU-s instead of
172 (wall 77 s instead of 91; a no-op build 115-127 CPU-s instead of 128-137, three
alternated pairs), and the hot loops of a large build still reach the thresholds in their
first seconds. ``-XX:TieredStopAtLevel=1`` (C1 only) used more CPU (208 against 181 s): its
code is slower."""


def driver_memory() -> str:
    """``spark.driver.memory`` of this process: ``CDC_SPARK_DRIVER_MEMORY``, else
    :data:`cdc_lakehouse.runtime.settings.DEFAULT_DRIVER_MEMORY` (3g).

    Raises:
        ConfigError: not a JVM memory size of at least 512m, or another ``CDC_SPARK_*``
            setting Spark would refuse
            (:meth:`cdc_lakehouse.runtime.settings.SparkSettings.from_env`).
    """
    return SparkSettings.from_env().driver_memory


def extra_jars() -> list[str]:
    """Local jar files this process's session loads beside the project's (``spark.jars``):
    ``CDC_SPARK_EXTRA_JARS``, comma-separated absolute paths; empty when unset. Only the
    bench sets it, for its AutoCDC baseline's target catalog (``cdc_lakehouse.runtime.jars``
    class path ``autocdc``); the pipeline's commands never do.

    Raises:
        ConfigError: a path that is not absolute or not an existing ``.jar`` file (or another
            bad ``CDC_SPARK_*`` setting).
    """
    return list(SparkSettings.from_env().extra_jars)


def check_spark_settings() -> SparkSettings:
    """Check every ``CDC_SPARK_*`` setting of this process without starting anything or
    connecting anywhere (:meth:`cdc_lakehouse.runtime.settings.SparkSettings.from_env`: the master
    URL, the driver memory, the shuffle partitions, the UI switch, the extra jars and, for a
    cluster master, the executors' memory and cores); return them. Commands call it first, so
    that a bad value is one line before any work.

    Raises:
        ConfigError: the first bad setting, one line naming it and what it accepts.
    """
    return SparkSettings.from_env()


PARQUET_DICTIONARY = "false"
"""``parquet.enable.dictionary`` of every Parquet file the project writes (bronze, silver and
gold tables). Off: most of what the lake holds is row images and Kafka values,
whose values rarely repeat, so dictionary encoding cost write time and saved little space.
Measured on the 100,000-change Canal lake (bench/HISTORY.md, 2026-11-26): writing
``stg_dts_canal__events`` took 1.24 s instead of 2.0 s, and scans, aggregations and filters of
it read as fast or faster; a warm full build of bronze -> gold took 27.1 s instead of 29.1 s
(median of three paired rounds), ``int_row_versions`` 6.3 s instead of 7.4 s. The tables'
files are 3-12 % larger (``change_events`` 26 -> 29 MB)."""


class MetastoreBusyError(ConfigError):
    """Another process has the embedded Derby metastore open (Derby admits one JVM at a time)."""


class MetastoreUnavailableError(ConfigError):
    """The shared metastore database does not answer or refuses the credentials."""


def spark_conf(settings: Settings) -> dict[str, str]:
    """The Spark configuration for ``settings`` as a dict of ``spark.*`` keys to values: the
    one configuration of ingest, dbt, the summary, the live demo's reader and a cluster's
    applications (``spark.jars``: the local files of :func:`cdc_lakehouse.runtime.jars.class_path`).

    Every value comes from ``settings`` (read and checked by
    :meth:`cdc_lakehouse.runtime.settings.Settings.from_env`).

    Raises:
        cdc_lakehouse.runtime.jars.JarsMissingError: the project's jar folder is missing (one line:
            run ``make install``).
    """
    lake = settings.lake_dir
    spark = settings.spark
    derby_url = f"jdbc:derby:;databaseName={settings.metastore_dir};create=true"
    java_opts = (
        f"-Dderby.system.home={lake} -Djava.io.tmpdir={lake / 'tmp'} "
        f"-Dlog4j2.configurationFile={LOG4J2_CONFIG.as_uri()} {JIT_OPTIONS}"
    )
    conf = {
        "spark.master": spark.master,
        "spark.app.name": "cdc-lakehouse",
        # Delta Lake, Spark's Kafka source, spark-avro: local files, served to executors
        # (and the bench's CDC_SPARK_EXTRA_JARS, see extra_jars)
        "spark.jars": ",".join(
            [*(str(jar) for jar in class_path("spark", settings.jars_dir)), *spark.extra_jars]
        ),
        "spark.sql.extensions": DELTA_EXTENSION,
        "spark.sql.catalog.spark_catalog": DELTA_CATALOG,
        # Delta rebuilds a table's state (its files) in this many tasks (default 50): the
        # lake's tables have a few hundred files at most, and each query of a changed table
        # pays for the tasks (DELTA_SNAPSHOT_PARTITIONS)
        "spark.databricks.delta.snapshotPartitions": DELTA_SNAPSHOT_PARTITIONS,
        # the JVM's heap: most of a build's memory (see settings.DEFAULT_DRIVER_MEMORY)
        "spark.driver.memory": spark.driver_memory,
        "spark.driver.extraJavaOptions": java_opts,
        "spark.executor.extraJavaOptions": java_opts,
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": str(settings.warehouse_dir),
        "spark.hadoop.javax.jdo.option.ConnectionURL": derby_url,
        "spark.hadoop.hive.metastore.warehouse.dir": str(settings.warehouse_dir),
        "spark.hadoop.hive.exec.scratchdir": str(lake / "tmp" / "hive"),
        # Hive retries a failed metastore open 10 times, 2 s apart, logging stack traces each
        # time: a busy Derby metastore took 20 s and about 11,700 lines to be reported. Retry
        # once, without waiting (with 0 attempts Hive never opens the metastore at all). Hive's
        # client calls are serialized in Spark, so embedded Derby has nothing to retry for; a
        # shared metastore may want Hive's defaults back.
        "spark.hadoop.hive.hmshandler.retry.attempts": "1",
        "spark.hadoop.hive.hmshandler.retry.interval": "0ms",
        # A Delta table's columns live in its log; the metastore keeps a placeholder schema
        # that Spark updates when a model replaces a table with other column types, which
        # Hive refuses by default (an ERROR with a stack trace per replaced table)
        "spark.hadoop.hive.metastore.disallow.incompatible.col.type.changes": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.ansi.enabled": "false",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        "spark.sql.shuffle.partitions": str(spark.shuffle_partitions),
        # Parquet files without dictionary pages (PARQUET_DICTIONARY)
        "spark.hadoop.parquet.enable.dictionary": PARQUET_DICTIONARY,
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.ui.enabled": str(spark.ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }
    conf.update(event_log_conf(spark))
    conf.update(master_conf(spark))  # a cluster: driver address, executors
    if settings.metastore is not None:
        conf.update(shared_metastore_conf(settings.metastore))
    return conf


def event_log_conf(spark: SparkSettings) -> dict[str, str]:
    """Spark's event log (the history server's input: every job, stage and task with its
    times and metrics) into the directory ``CDC_SPARK_EVENT_LOG_DIR`` (``spark.event_log_dir``),
    when it is set: one
    uncompressed JSON-lines file per application, ``<dir>/<application id>`` (``.inprogress``
    while it runs; Spark 4 would otherwise write zstd-compressed rolling files); empty
    otherwise. dbt's jobs carry the dbt node that ran them as their description (the
    ``sparksession`` adapter), which :mod:`cdc_lakehouse.tools.bench.spark_stages` reads.
    """
    if spark.event_log_dir is None:
        return {}
    return {
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": spark.event_log_dir.as_uri(),
        "spark.eventLog.compress": "false",
        "spark.eventLog.rolling.enabled": "false",
    }


def shared_metastore_conf(metastore: SharedMetastore) -> dict[str, str]:
    """The ``spark.*`` settings of a shared metastore database: its JDBC connection, its
    driver on the driver's class path, and Spark creating the metastore's tables on first use
    (Hive's ``datanucleus.schema.autoCreateAll``; schema version checks off, as Spark's own
    metastore does). The password goes to Spark's configuration, which Spark redacts in its
    UI and logs (``spark.redaction.regex``)."""
    return {
        "spark.hadoop.javax.jdo.option.ConnectionURL": metastore.jdbc_url,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": metastore.driver,
        "spark.hadoop.javax.jdo.option.ConnectionUserName": metastore.user,
        "spark.hadoop.javax.jdo.option.ConnectionPassword": metastore.password,
        # DataNucleus adds foreign keys with ALTER TABLE on a connection of its own while
        # the metastore transaction that made it create the table holds a lock on the
        # referenced table: on PostgreSQL that waits forever (checked). So it creates tables
        # and columns but no constraints.
        "spark.hadoop.datanucleus.schema.autoCreateAll": "false",
        "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
        "spark.hadoop.datanucleus.schema.autoCreateColumns": "true",
        "spark.hadoop.datanucleus.schema.autoCreateConstraints": "false",
        "spark.hadoop.hive.metastore.schema.verification": "false",
        "spark.driver.extraClassPath": str(metastore.jar),
        # Other processes rewrite tables this session reads (dbt beside a reader, the ingest
        # job beside dbt): without the per-session cache of a table's relation, each query
        # lists the table's files again instead of reading files a rewrite has removed.
        "spark.sql.filesourceTableRelationCacheSize": "0",
    }


def check_metastore_reachable(metastore: SharedMetastore, timeout_s: float = 3.0) -> None:
    """Check that the shared metastore's database accepts TCP connections (before the JVM
    starts, so that a stopped database is one line, not Hive's retries).

    Raises:
        MetastoreUnavailableError: no answer within ``timeout_s`` seconds.
    """
    try:
        with socket.create_connection((metastore.host, metastore.port), timeout=timeout_s):
            return
    except OSError as exc:
        raise MetastoreUnavailableError(
            f"The metastore database at {metastore.host}:{metastore.port} does not answer "
            f"({exc.strerror or exc}): start it (make metastore) or fix CDC_METASTORE_JDBC_URL."
        ) from None


def get_spark(settings: Settings | None = None) -> SparkSession:
    """Return the process's SparkSession, creating it with :func:`spark_conf` if needed.

    Creates ``CDC_LAKE_DIR`` and its sub-directories (and ``CDC_SPARK_EVENT_LOG_DIR`` when it
    is set, see :func:`event_log_conf`).

    Raises:
        ConfigError: the lake directory cannot be created or written, or a ``CDC_*``
            setting is invalid (:meth:`cdc_lakehouse.runtime.settings.Settings.from_env`, when
            ``settings`` is not given; checked before anything is written or started).
        MasterUnreachableError: ``CDC_SPARK_MASTER`` is not a master URL, or a ``spark://``
            master that does not answer (checked before anything is written, see
            :mod:`cdc_lakehouse.runtime.spark_master`).
        MetastoreBusyError: another process has the embedded Derby metastore open (checked
            before the JVM starts, and again when the metastore is opened right after).
        cdc_lakehouse.runtime.jars.JarsMissingError: the project's jars are not installed.
    """
    from pyspark.sql import SparkSession

    # getActiveSession is per thread; dbt runs models in worker threads, so fall back to the
    # process's instantiated session before building a new one. With dbt threads > 1, several
    # connections open at once: the lock lets one thread create the session and the lake tree.
    with _SESSION_LOCK:
        active = SparkSession.getActiveSession() or SparkSession._instantiatedSession
        if active is not None:
            return active
        return _create_spark(settings)


def _create_spark(settings: Settings | None) -> SparkSession:
    """Build the session (the body of :func:`get_spark`, under its lock)."""
    from pyspark.sql import SparkSession

    settings = settings or load_settings()  # checked before anything is written or started
    check_master(settings.spark.master)
    conf = spark_conf(settings)
    # a faster JVM start, see the module
    archive_options, on_started = java_options(conf, settings.jvm_archive)
    if archive_options:
        conf["spark.driver.extraJavaOptions"] += f" {archive_options}"
    derby_dir = embedded_derby_dir(conf)
    if settings.metastore is not None:  # before anything is written
        check_metastore_reachable(settings.metastore)
    ensure_lake_dir(settings)
    if settings.spark.event_log_dir is not None:  # Spark does not create it
        settings.spark.event_log_dir.mkdir(parents=True, exist_ok=True)
    if derby_dir is not None:
        check_metastore_free(derby_dir)
    # Not CDC_* settings but the environment of the JVM child process: pyspark's gateway starts
    # spark-submit with a copy of os.environ and takes no environment of its own, so these
    # defaults must be in this process's environment (the driver's bind address, the Python
    # of the PySpark workers).
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.enableHiveSupport().getOrCreate()
    if on_started is not None:
        on_started(spark)
    if derby_dir is not None:
        open_metastore(spark, derby_dir)
    elif settings.metastore is not None:
        open_shared_metastore(spark, settings.metastore)
    spark.sparkContext.setLogLevel(settings.spark.log_level)
    return spark


def embedded_derby_dir(conf: dict[str, str]) -> Path | None:
    """The database directory of the embedded Derby metastore that ``conf`` configures, or
    ``None`` when the metastore is not an embedded Derby (nothing to check then)."""
    url = conf.get("spark.hadoop.javax.jdo.option.ConnectionURL", "")
    if not url.startswith(DERBY_URL_PREFIX):
        return None
    for attribute in url[len(DERBY_URL_PREFIX) :].split(";"):
        key, _, value = attribute.partition("=")
        if key == "databaseName" and value:
            return Path(value)
    return None


EXITING_JVM_WAIT_S = 20.0
"""How long to wait for the JVM of a command that has just ended to release the metastore
(``make demo`` runs ingest, dbt and the summary back to back; a JVM shuts down in about a
second after its Python process exits, longer on a loaded machine)."""


def check_metastore_free(derby_dir: Path) -> None:
    """Check that no other process has the Derby metastore ``derby_dir`` open; takes no lock.

    A holder that is the JVM of a command that has already ended (see
    :attr:`~cdc_lakehouse.runtime.metastore_lock.LockHolder.exiting`) is waited for, up to
    :data:`EXITING_JVM_WAIT_S` seconds; any other holder fails at once.

    Raises:
        MetastoreBusyError: another process holds Derby's lock; the message names it.
        ConfigError: the lock file cannot be read (permissions).
    """
    deadline = time.monotonic() + EXITING_JVM_WAIT_S
    while True:
        try:
            holder = metastore_holder(derby_dir)
        except OSError as exc:
            raise ConfigError(
                f"The metastore lock {derby_dir / DERBY_LOCK_FILE} cannot be read "
                f"({exc.strerror or exc}): check the permissions of CDC_LAKE_DIR."
            ) from exc
        if holder is None:
            return
        if not holder.exiting or time.monotonic() > deadline:
            raise MetastoreBusyError(busy_message(derby_dir, holder))
        time.sleep(0.2)


def _open_quietly(spark: SparkSession) -> Exception | None:
    """Open the Hive metastore with Spark's log off (Hive logs each failed attempt with stack
    traces); return the failure, or ``None`` when it opened."""
    log4j = spark.sparkContext._jvm.org.apache.logging.log4j  # type: ignore[union-attr]
    log4j.core.config.Configurator.setAllLevels(log4j.LogManager.ROOT_LOGGER_NAME, log4j.Level.OFF)
    try:
        spark.catalog.databaseExists("default")
        return None
    except Exception as exc:
        return exc
    finally:
        log4j.LogManager.getContext(False).reconfigure()  # back to log4j2.properties


def open_metastore(spark: SparkSession, derby_dir: Path) -> None:
    """Open the Hive metastore now rather than at the first query, and report a busy one.

    Covers the race in which another process boots Derby after :func:`check_metastore_free`
    and before this JVM does: the first open runs with Spark's log off (Hive logs each failed
    attempt with stack traces), and when it fails while another process holds Derby's lock,
    the session is stopped (a later :func:`get_spark` checks again). Any other failure is
    retried once with the log on, so that its diagnostics are printed and its exception raised.
    Adds no time to a run (its first query would open the metastore); a busy metastore is
    reported about 2 to 4 s after the session starts.

    Raises:
        MetastoreBusyError: another process has the metastore open.
        pyspark.errors.AnalysisException: the metastore cannot be opened for another reason.
    """
    failure = _open_quietly(spark)
    if failure is None:
        return
    try:
        holder = metastore_holder(derby_dir)
    except OSError:  # the lock file cannot be read: let the retry below report the failure
        holder = None
    if holder is not None:
        spark.stop()
        raise MetastoreBusyError(busy_message(derby_dir, holder)) from failure
    spark.catalog.databaseExists("default")


def open_shared_metastore(spark: SparkSession, metastore: SharedMetastore) -> None:
    """Open the shared metastore now, and report refused credentials in one line.

    The first open runs with Spark's log off (Hive logs each failed attempt with stack
    traces). A failure whose causes say the password or user was refused stops the session
    and raises; any other failure is retried once with the log on, so that its diagnostics are
    printed and its exception raised.

    Raises:
        MetastoreUnavailableError: the database refused the user or password.
        pyspark.errors.AnalysisException: the metastore cannot be opened for another reason.
    """
    failure = _open_quietly(spark)
    if failure is None:
        return
    # the JVM's stack trace text (pyspark's captured exception) names the causes
    text = f"{failure}\n{getattr(failure, '_stackTrace', '') or ''}"
    if any(marker in text for marker in AUTH_FAILURE_MARKERS):
        spark.stop()
        raise MetastoreUnavailableError(
            f"The metastore database at {metastore.host}:{metastore.port} refused user "
            f"{metastore.user!r} or its password: check CDC_METASTORE_USER and "
            "CDC_METASTORE_PASSWORD_FILE (make metastore writes both)."
        ) from None
    spark.catalog.databaseExists("default")


AUTH_FAILURE_MARKERS = (
    "password authentication failed",
    "no password was provided",
    "Access denied for user",
    'role "',
)
"""Texts of a JDBC driver's refusal of a user or password (PostgreSQL, MySQL / MariaDB)."""


def ensure_lake_dir(settings: Settings) -> None:
    """Create the lake directory tree and check that it is writable.

    Raises:
        ConfigError: the directory cannot be created or written; names the path and the fix.
    """
    lake = settings.lake_dir
    try:
        for path in (lake, settings.warehouse_dir, settings.checkpoint_dir, lake / "tmp"):
            path.mkdir(parents=True, exist_ok=True)
        # a probe file of its own: connections of a threaded dbt run check at the same time
        with tempfile.NamedTemporaryFile(dir=lake, prefix=".write-probe-") as probe:
            probe.write(b"ok")
    except OSError as exc:
        raise ConfigError(
            f"The lake directory {lake} cannot be written ({exc.strerror or exc}): set "
            "CDC_LAKE_DIR to a writable directory (default ./lake)."
        ) from exc


def write_class_archive() -> int:
    """``python -m cdc_lakehouse.runtime.spark_session`` (``cdc-class-archive``): write the archive
    of the embedded
    metastore's Spark configuration (the default one) now if there is none; the test session
    runs it before its own JVM starts, so that it and the commands it runs start from one.
    A session on a throwaway lake writes and reads a table, then exits. When another process
    is writing the archive (pytest's other worker), waits for it (up to
    :data:`cdc_lakehouse.runtime.jvm_class_archive.WRITER_WAIT_S`) instead of starting a JVM without
    one. Exit 0, also when archives are off or the archive exists (then at once).

    Here rather than in :mod:`cdc_lakehouse.runtime.jvm_class_archive`, which this module imports:
    it starts a session.
    """
    lake = tempfile.mkdtemp(prefix="cdc-jvm-archive-")
    atexit.register(shutil.rmtree, lake, ignore_errors=True)  # runs after the JVM has exited
    # this process's settings on the throwaway lake, with the embedded metastore (its class
    # path is the archive's); the process's environment itself is left as it is
    env = {**os.environ, "CDC_LAKE_DIR": lake}
    env.pop("CDC_METASTORE_JDBC_URL", None)
    settings = load_settings(env)
    archive = archive_path(spark_conf(settings), settings.jvm_archive)
    if archive is None or archive.exists():
        return 0
    if wait_for_writer(archive):
        return 0
    spark = get_spark(settings)
    spark.range(1000).selectExpr("id", "cast(id as string) as text").write.saveAsTable("archive")
    spark.sql("select count(*), max(text) from archive").collect()
    return 0


if __name__ == "__main__":
    sys.exit(write_class_archive())
