"""Recovery from a table creation killed half way (``kill -9``, the OOM killer, a lost machine).

Every table of the lake is a Delta Lake table, and a Delta write becomes visible only with its
commit (one file in ``_delta_log``): a write killed before it leaves the table as its last
commit left it, and the data files it had written are never read (``VACUUM`` removes them,
see docs/how-to/maintenance.md "How to maintain the lake: change data feed, time travel,
OPTIMIZE and VACUUM"). Nothing to repair there.

One trace remains: a table being created (``CREATE TABLE AS SELECT``: the first build of an
incremental model, a ``--full-refresh``, a table model's first build) writes its data files
into the new table's directory before the commit and the metastore entry; killed before them,
it leaves a directory that is not a table, and Delta refuses to create the table there again
(``DELTA_CREATE_TABLE_WITH_NON_EMPTY_LOCATION``) until someone deletes it.
:func:`remove_write_leftovers` removes such directories at the start of every dbt command
(``on-run-start`` in ``dbt_project.yml``).
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _local_dir(location: str) -> Path | None:
    """The local directory of a ``file:`` (or scheme-less) location URI, else ``None``."""
    parsed = urlparse(location)
    if parsed.scheme not in ("", "file"):
        return None
    return Path(unquote(parsed.path))


def database_dirs(
    spark: SparkSession, schemas: Collection[str] | None = None
) -> list[tuple[str, Path]]:
    """(name, local directory) of every database but ``default`` (whose tables would sit next
    to the other databases' directories) whose location is an existing local directory; only
    those named in ``schemas`` (any case) when given."""
    wanted = None if schemas is None else {schema.lower() for schema in schemas}
    found: list[tuple[str, Path]] = []
    for database in spark.sql("SHOW DATABASES").collect():
        name = database[0]
        if name == "default" or (wanted is not None and name.lower() not in wanted):
            continue
        location = spark.sql(f"DESCRIBE DATABASE `{name}`").collect()
        uri = next((row[1] for row in location if row[0] == "Location"), None)
        directory = _local_dir(uri) if uri else None
        if directory is not None and directory.is_dir():
            found.append((name, directory))
    return found


def remove_write_leftovers(
    spark: SparkSession, keep: Collection[str] = (), schemas: Collection[str] | None = None
) -> list[Path]:
    """Remove the directories killed table creations left; return what was removed.

    In the directory of every database but ``default`` (with ``schemas``: of those databases
    only, any case; the dbt hook passes the schemas of the target it builds, so a dev or CI
    build on a shared metastore never touches production's or another engineer's tables, which
    may be being created right now): each sub-directory that no table or
    view of the database is named after. Hidden and ``_`` directories of a database are left
    alone, so is any location that is not on the local file system, and so are the tables
    named in ``keep`` (``database.table``, any case): tables another process writes (the
    ingest job's ``bronze.kafka_records``, which it may be creating right now).
    """
    kept = {name.lower() for name in keep}
    removed: list[Path] = []
    for name, directory in database_dirs(spark, schemas):
        tables = {
            row["tableName"].lower() for row in spark.sql(f"SHOW TABLES IN `{name}`").collect()
        }
        for entry in sorted(directory.iterdir()):
            if not entry.is_dir() or entry.name.startswith((".", "_")):
                continue
            if f"{name}.{entry.name}".lower() in kept or entry.name.lower() in tables:
                continue
            shutil.rmtree(entry)
            removed.append(entry)
    return removed
