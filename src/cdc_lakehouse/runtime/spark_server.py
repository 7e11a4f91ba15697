"""Spark's Thrift (JDBC / ODBC) and Connect servers on the lake, with the project's one Spark
configuration.

``python -m cdc_lakehouse.runtime.spark_server thrift|connect [--port PORT]`` (``make
thrift-server``,
``make connect-server``) runs the server in the foreground until SIGINT / SIGTERM, as
``spark-submit --class <server> --properties-file <file>`` from the pyspark wheel
(``SPARK_HOME`` = the installed ``pyspark`` package), where the properties file holds
:func:`cdc_lakehouse.runtime.spark_session.spark_conf`: the same master, warehouse, metastore, Delta
Lake extension and catalog, and local jars (``spark.jars``) as ingest and dbt, so a BI tool
over JDBC (``jdbc:hive2://127.0.0.1:10000``, e.g. the wheel's ``bin/beeline``) or a Spark
Connect client (``sc://127.0.0.1:15002``) reads the same Delta tables. With the default
embedded Derby metastore the server holds the metastore while it runs (one process at a time);
with a shared metastore (``CDC_METASTORE_JDBC_URL``) it runs beside ingest and dbt.

Errors: :class:`~cdc_lakehouse.runtime.settings.ConfigError` (one line, exit 2): a setting of
:func:`~cdc_lakehouse.runtime.spark_session.spark_conf`, the jars not installed, a port in use.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from cdc_lakehouse.runtime.cli_types import OneLineParser
from cdc_lakehouse.runtime.settings import ConfigError, load_settings
from cdc_lakehouse.runtime.spark_session import ensure_lake_dir, spark_conf

SERVERS = {
    "thrift": ("org.apache.spark.sql.hive.thriftserver.HiveThriftServer2", 10000),
    "connect": ("org.apache.spark.sql.connect.service.SparkConnectServer", 15002),
}
"""Server name -> (main class in the pyspark wheel's jars, default port)."""


def properties_text(conf: dict[str, str]) -> str:
    """``conf`` as a Spark properties file (``key value`` lines, backslashes and newlines
    escaped as java.util.Properties reads them)."""

    def escaped(text: str) -> str:
        return text.replace("\\", "\\\\").replace("\n", "\\n")

    return "".join(f"{escaped(key)} {escaped(value)}\n" for key, value in sorted(conf.items()))


def spark_home() -> Path:
    """The installed pyspark package: Spark's home (``bin/spark-submit``, ``jars/``)."""
    import pyspark

    return Path(pyspark.__file__).parent


def server_conf(conf: dict[str, str]) -> dict[str, str]:
    """``conf`` for a server JVM that spark-submit starts: the jars of ``spark.jars`` also on
    the driver's class path (``spark.driver.extraClassPath``). A server opens each client
    session in threads of its own, whose class loader does not see what ``spark.jars`` adds
    after the JVM started: without it a JDBC session failed with ``ClassNotFoundException:
    org.apache.spark.sql.delta.catalog.DeltaCatalog``."""
    jars = conf["spark.jars"].replace(",", os.pathsep)
    extra = conf.get("spark.driver.extraClassPath")
    return {**conf, "spark.driver.extraClassPath": f"{jars}{os.pathsep}{extra}" if extra else jars}


def server_command(server: str, port: int, properties: Path) -> list[str]:
    """The ``spark-submit`` command line of ``server`` on ``port``."""
    main_class, _default = SERVERS[server]
    port_conf = (
        f"spark.hadoop.hive.server2.thrift.port={port}"
        if server == "thrift"
        else f"spark.connect.grpc.binding.port={port}"
    )
    submit = spark_home() / "bin" / "spark-submit"
    return [
        str(submit),
        "--class",
        main_class,
        "--properties-file",
        str(properties),
        "--conf",
        port_conf,
        "--name",
        f"cdc-lakehouse-{server}-server",
        "spark-internal",
    ]


def _check_port_free(port: int) -> None:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            raise ConfigError(
                f"port {port} is in use: stop what listens there or pass --port."
            ) from None


def main(argv: list[str] | None = None) -> int:
    """Run the server in the foreground; its exit code (2 for a setting error)."""
    parser = OneLineParser(
        prog="python -m cdc_lakehouse.runtime.spark_server",
        description="Spark's Thrift or Connect server on the lake, with the project's config.",
    )
    parser.add_argument("server", choices=sorted(SERVERS))
    parser.add_argument("--port", type=int, default=None, help="default: 10000 / 15002")
    args = parser.parse_args(argv)
    port = args.port or SERVERS[args.server][1]
    try:
        settings = load_settings()
        conf = server_conf(spark_conf(settings))
        ensure_lake_dir(settings)
        _check_port_free(port)
    except ConfigError as exc:
        print(f"error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cdc-spark-server-") as work:
        properties = Path(work) / "spark.properties"
        properties.write_text(properties_text(conf))
        env = {**os.environ, "SPARK_HOME": str(spark_home())}
        print(f"{args.server} server on 127.0.0.1:{port} (Ctrl-C stops it)", flush=True)
        try:
            return subprocess.run(server_command(args.server, port, properties), env=env).returncode
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    sys.exit(main())
