"""The Spark master a command runs on: ``CDC_SPARK_MASTER`` and what the driver needs for it.

``CDC_SPARK_MASTER`` (default ``local[*]``) is any Spark master URL: ``local[...]``, a
standalone ``spark://HOST:PORT`` (``make spark-cluster`` starts one on this machine, see
:mod:`cdc_lakehouse.cluster`; ``spark://H1:P1,H2:P2`` lists standby masters), ``yarn`` or
``k8s://https://HOST:PORT``.

:func:`check_master` runs before the JVM starts and before anything is written: a URL Spark
would refuse (:func:`check_master_url`: ``bogus://x``, ``local[0]``, ``localhost``) or a
``spark://`` master that does not answer is one :class:`MasterUnreachableError` line instead
of Spark's stack trace or its minute of connection retries and stack traces.
:func:`master_conf` gives the ``spark.*`` settings of a cluster master (driver address,
executor size, executors' Python); they are ignored by ``local[...]`` and not set for it.

Settings (environment):

- ``CDC_SPARK_MASTER``: the master URL (default ``local[*]``).
- ``CDC_SPARK_DRIVER_HOST`` (default ``127.0.0.1``): the address executors reach the driver
  at (``spark.driver.host``; the driver also binds to it). On a real cluster: the driver
  machine's address as the executors see it.
- ``CDC_SPARK_EXECUTOR_MEMORY`` (default ``2g``): ``spark.executor.memory``, a JVM memory
  size (:func:`cdc_lakehouse.settings.memory_setting`); must fit a worker's memory
  (``make spark-cluster`` gives each worker 2g).
- ``CDC_SPARK_EXECUTOR_CORES`` (default: Spark's, i.e. every core of a standalone worker, 1
  on YARN and Kubernetes): ``spark.executor.cores``, a positive integer.
- ``CDC_SPARK_EXECUTOR_PYTHON`` (default: the driver's interpreter, ``sys.executable``):
  ``spark.pyspark.python``, the Python that executors start for the Python models, UDFs and
  the ingest source; it must exist at that path on every node and import ``cdc_lakehouse``.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping
from urllib.parse import urlsplit

from cdc_lakehouse.settings import ConfigError, memory_setting, positive_int_setting

DEFAULT_MASTER = "local[*]"
CONNECT_TIMEOUT_S = 3.0
"""How long :func:`check_master` waits for each ``spark://`` address to accept a connection."""
DEFAULT_DRIVER_HOST = "127.0.0.1"
DEFAULT_EXECUTOR_MEMORY = "2g"
MASTER_URLS = (
    "local, local[N], local[*], local[N,F], spark://HOST:PORT, yarn or k8s://https://HOST:PORT"
)
"""The master URLs :func:`check_master_url` accepts (for its message)."""
_LOCAL = re.compile(r"local(?:\[(?:[0-9]+|\*)(?:\s*,\s*[0-9]+)?\])?")
"""Spark's local master URLs (``SparkMasterRegex``: ``local``, ``local[N]``, ``local[*]``,
``local[N,F]``, ``local[*,F]``)."""


class MasterUnreachableError(ConfigError):
    """``CDC_SPARK_MASTER`` names a standalone master that does not answer (or cannot be
    parsed); the message says what was tried and what to do."""


def spark_master(environ: Mapping[str, str] | None = None) -> str:
    """The master URL of ``CDC_SPARK_MASTER`` (stripped), default ``local[*]``."""
    env = os.environ if environ is None else environ
    return (env.get("CDC_SPARK_MASTER") or "").strip() or DEFAULT_MASTER


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


def master_conf(master: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The ``spark.*`` settings for running on ``master``: empty for ``local[...]``.

    For a cluster master: the driver's address (``spark.driver.host`` and
    ``spark.driver.bindAddress`` from ``CDC_SPARK_DRIVER_HOST``), the executor memory and cores,
    and the executors' Python (``spark.pyspark.python``); see the module docstring.

    Raises:
        ConfigError: ``CDC_SPARK_EXECUTOR_MEMORY`` is not a JVM memory size or
            ``CDC_SPARK_EXECUTOR_CORES`` not a positive integer (cluster masters only).
    """
    if is_local(master):
        return {}
    env = os.environ if environ is None else environ
    driver_host = env.get("CDC_SPARK_DRIVER_HOST") or DEFAULT_DRIVER_HOST
    conf = {
        "spark.driver.host": driver_host,
        "spark.driver.bindAddress": driver_host,
        "spark.executor.memory": memory_setting(
            env, "CDC_SPARK_EXECUTOR_MEMORY", DEFAULT_EXECUTOR_MEMORY
        ),
        "spark.pyspark.python": env.get("CDC_SPARK_EXECUTOR_PYTHON") or sys.executable,
    }
    cores = positive_int_setting(env, "CDC_SPARK_EXECUTOR_CORES", 0, default_text="Spark's")
    if cores:
        conf["spark.executor.cores"] = str(cores)
    return conf
