"""The Spark master a command runs on: ``CDC_SPARK_MASTER`` and what the driver needs for it.

``CDC_SPARK_MASTER`` (default ``local[*]``) is any Spark master URL: ``local[...]``, a
standalone ``spark://HOST:PORT`` (``make spark-cluster`` starts one on this machine, see
:mod:`cdc_lakehouse.runtime.cluster`; ``spark://H1:P1,H2:P2`` lists standby masters), ``yarn`` or
``k8s://https://HOST:PORT``.

:func:`check_master` runs before the JVM starts and before anything is written: a URL Spark
would refuse (:func:`check_master_url`: ``bogus://x``, ``local[0]``, ``localhost``) or a
``spark://`` master that does not answer is one :class:`MasterUnreachableError` line instead
of Spark's stack trace or its minute of connection retries and stack traces.
:func:`master_conf` gives the ``spark.*`` settings of a cluster master (driver address,
executor size, executors' Python); they are ignored by ``local[...]`` and not set for it.

Settings (environment; read and checked by :class:`cdc_lakehouse.runtime.settings.SparkSettings`,
which also holds :func:`check_master_url`, re-exported here):

- ``CDC_SPARK_MASTER``: the master URL (default ``local[*]``).
- ``CDC_SPARK_DRIVER_HOST`` (default ``127.0.0.1``): the address executors reach the driver
  at (``spark.driver.host``; the driver also binds to it). On a real cluster: the driver
  machine's address as the executors see it.
- ``CDC_SPARK_EXECUTOR_MEMORY`` (default ``2g``): ``spark.executor.memory``, a JVM memory
  size (:func:`cdc_lakehouse.runtime.settings.memory_setting`); must fit a worker's memory
  (``make spark-cluster`` gives each worker 2g).
- ``CDC_SPARK_EXECUTOR_CORES`` (default: Spark's, i.e. every core of a standalone worker, 1
  on YARN and Kubernetes): ``spark.executor.cores``, a positive integer.
- ``CDC_SPARK_EXECUTOR_PYTHON`` (default: the driver's interpreter, ``sys.executable``):
  ``spark.pyspark.python``, the Python that executors start for the Python models, UDFs and
  the ingest source; it must exist at that path on every node and import ``cdc_lakehouse``.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping

from cdc_lakehouse.runtime.settings import (
    DEFAULT_DRIVER_HOST,
    DEFAULT_EXECUTOR_MEMORY,
    DEFAULT_MASTER,
    MASTER_URLS,
    MasterUnreachableError,
    SparkSettings,
    check_master_url,
    is_local,
    master_setting,
    standalone_addresses,
)

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DEFAULT_DRIVER_HOST",
    "DEFAULT_EXECUTOR_MEMORY",
    "DEFAULT_MASTER",
    "MASTER_URLS",
    "MasterUnreachableError",
    "check_master",
    "check_master_url",
    "is_local",
    "master_conf",
    "spark_master",
    "standalone_addresses",
]

CONNECT_TIMEOUT_S = 3.0
"""How long :func:`check_master` waits for each ``spark://`` address to accept a connection."""


def spark_master(environ: Mapping[str, str] | None = None) -> str:
    """The master URL of ``CDC_SPARK_MASTER`` (stripped), default ``local[*]``
    (:func:`cdc_lakehouse.runtime.settings.master_setting`; ``environ`` default: the process's)."""
    return master_setting(environ)


def _connect_problem(host: str, port: int, timeout_s: float) -> str | None:
    """Why a TCP connection to ``host:port`` fails within ``timeout_s`` seconds, or ``None``."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return None
    except socket.gaierror:
        return f"host {host} does not resolve"
    except TimeoutError:
        return f"no answer from {host}:{port} within {timeout_s:g} s"
    except OSError as exc:
        return f"{host}:{port}: {(exc.strerror or str(exc)).lower()}"


def check_master(master: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Check that Spark accepts the URL ``master`` (:func:`check_master_url`) and that a
    ``spark://`` master answers; other masters (``local[...]``, ``yarn``, ``k8s://...``) are
    not connected to. Takes at most ``timeout_s`` seconds per listed master.

    Only a TCP connection is made (nothing is sent): it tells a stopped or mistyped master
    from a running one, not a Spark master from another server on that port.

    Raises:
        MasterUnreachableError: no master of the URL accepts a connection, or the URL is
            malformed; one line naming the URL, each failure, and what to do.
    """
    check_master_url(master)
    problems = []
    for host, port in standalone_addresses(master):
        problem = _connect_problem(host, port, timeout_s)
        if problem is None:
            return
        problems.append(problem)
    if problems:
        raise MasterUnreachableError(
            f"CDC_SPARK_MASTER={master}: no Spark master answers ({'; '.join(problems)}): "
            "start the local cluster with `make spark-cluster` and export the CDC_SPARK_MASTER "
            "it prints, or fix CDC_SPARK_MASTER (unset: local[*])."
        )


def master_conf(spark: SparkSettings) -> dict[str, str]:
    """The ``spark.*`` settings for running on ``spark.master``: empty for ``local[...]``.

    For a cluster master: the driver's address (``spark.driver.host`` and
    ``spark.driver.bindAddress`` from ``CDC_SPARK_DRIVER_HOST``), the executor memory and cores,
    and the executors' Python (``spark.pyspark.python``); see the module docstring. The values
    were checked when ``spark`` was read
    (:meth:`cdc_lakehouse.runtime.settings.SparkSettings.from_env`).
    """
    if spark.is_local:
        return {}
    conf = {
        "spark.driver.host": spark.driver_host,
        "spark.driver.bindAddress": spark.driver_host,
        "spark.executor.memory": spark.executor_memory,
        "spark.pyspark.python": spark.executor_python,
    }
    if spark.executor_cores:
        conf["spark.executor.cores"] = str(spark.executor_cores)
    return conf
