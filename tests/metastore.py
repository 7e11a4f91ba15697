"""A PostgreSQL metastore server for tests (tests/faults and tests/live): the ``metastore``
fixture of tests/conftest.py and directories its server can reach.

PostgreSQL refuses to run as root and must reach its directory as its own system user, so the
servers live under ``/var/tmp`` (pytest's temporary directories are closed to other users).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cdc_lakehouse.runtime.metastore_server import MetastoreServer, export_lines, export_values


def shared_dir(prefix: str) -> Path:
    """A new directory under /var/tmp that other users can enter."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp"))
    path.chmod(0o755)
    return path


@contextmanager
def running_metastore() -> Iterator[dict[str, str]]:
    """A metastore server of its own, running until the block ends (then stopped and its
    directory removed); yields its ``CDC_METASTORE_*`` variables."""
    root = shared_dir("cdc-metastore-test-")
    server = MetastoreServer(root / "pg")
    try:
        port = server.start()
        yield export_values(export_lines(server, port))
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
