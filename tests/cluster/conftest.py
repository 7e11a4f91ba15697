"""The Spark standalone cluster of the cluster tests: a master and two workers (1 core, 2g
each) on free loopback ports, started once for this package's tests and stopped after them, so
its three JVMs (about 650 MB) do not idle through the rest of the test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cdc_lakehouse.runtime.cluster import ClusterInfo, start, stop


@pytest.fixture(scope="package")
def spark_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterInfo]:
    """A running cluster (``make spark-cluster``'s defaults, on free ports)."""
    directory = tmp_path_factory.mktemp("spark-cluster")
    info = start(directory, port=0, webui_port=0)
    try:
        yield info
    finally:
        stop(directory)
