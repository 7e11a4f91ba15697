"""How ``make test`` splits the tests between its pytest-xdist workers.

Each worker is a pytest process of its own, with its own session fixtures (SparkSession, lake,
Kafka broker), so tests that share a fixture beyond a module must run on one worker, in file
order: :func:`group` names that unit of work. :func:`run_order` puts the longest units first
(measured: bench/HISTORY.md, "Test suite time"), so that the two workers end together.

xdist's own ``--dist loadgroup`` (``xdist_group`` marks) does not work with pytest 9.2: it
renames ``item._nodeid``, which pytest 9.2 no longer reads; this scheduler groups by the test's
path instead.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

SHARED_FOLDERS = (
    "tests/dbt_models/",  # one session lake, built once and moved on from file to file
    "tests/kafka/",  # one Kafka broker for the session
    "tests/cluster/",  # one standalone cluster for the package
)
"""Folders whose modules share a session or package fixture: one unit of work each."""

LONGEST_FIRST = (
    "tests/dbt_models/",  # about 21 min: the session lake, its increments and their tests
    "tests/faults/test_kill_and_rerun.py",  # 11-12 min: eleven processes on a lake of its own
    "tests/live/test_shared_metastore.py",  # 7 min: the live demo, then slim CI on its metastore
    "tests/cluster/",  # 4-5 min: make demo's commands on a standalone cluster
    "tests/kafka/",
    "tests/ingest/test_ingest_job.py",
)
"""Units of work known to be long, longest first; the rest follow in file order."""


def group(nodeid: str) -> str:
    """The unit of work of the test ``nodeid`` (``tests/x/test_y.py::test_z[p]``): its folder
    for a folder in :data:`SHARED_FOLDERS`, else its module (module-scoped fixtures such as
    the metastore server stay on one worker)."""
    module = nodeid.split("::", 1)[0]
    return next((folder for folder in SHARED_FOLDERS if module.startswith(folder)), module)


def run_order(nodeid: str) -> int:
    """The rank of the test's unit in :data:`LONGEST_FIRST` (after them all: its length)."""
    unit = group(nodeid)
    return LONGEST_FIRST.index(unit) if unit in LONGEST_FIRST else len(LONGEST_FIRST)


class GroupScheduling(LoadScopeScheduling):
    """xdist's ``loadscope`` scheduling with :func:`group` as the scope: each unit goes whole
    to one worker, units in collection order (:func:`run_order`'s)."""

    def _split_scope(self, nodeid: str) -> str:
        return group(nodeid)
