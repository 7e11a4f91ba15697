"""Recovery from writes killed half way (``kill -9``, the OOM killer, a lost machine).

A Spark write to a Parquet table is a job, then a commit that moves files into place one at a
time, then metastore updates: nothing makes them atomic together. A killed write leaves one of
three traces, and the next `dbt` command must neither fail on it nor build on it:

1. A table being created (``CREATE TABLE AS SELECT``: the first build of an incremental model,
   every build of a ``table`` model, a Python model's ``__dbt_tmp`` table) leaves its directory
   but no table in the metastore; Spark then refuses to create the table again
   (``LOCATION_ALREADY_EXISTS``) until someone deletes the directory.
2. An append (a decoding Python model's ``insert into``) leaves the files of its finished tasks
   in the table's ``_temporary`` directory, and the next append to that table commits them
   with its own: rows twice. An ``insert overwrite`` leaves ``.spark-staging-<job>``.
3. A write into an existing table can stop half committed: an ``insert overwrite`` with some
   partitions new, some old and one half deleted; an append with some of its files in place.
   A watermark read from the table would then skip what is missing. (On Parquet the
   ``insert_overwrite`` models are written by generation switches instead,
   :mod:`cdc_lakehouse.generations`: a killed one leaves only an unfinished generation
   directory, and the table as it was.)

:func:`remove_write_leftovers` removes the traces of 1 and 2 at the start of every dbt command
(``on-run-start`` in ``dbt_project.yml``; one process at a time uses a lake, so nothing is
writing then), with the generations no partition references. For 3, each write of an
incremental model not written by generations is bracketed by a table property
(``macros/cdc_interrupted_writes.sql``): set before the write, removed after it. A model whose
property is still set at the next run is computed as on its first run (``is_incremental()`` is
false) and written over its table; a Python model then appends only the rows its table lacks
(:func:`cdc_lakehouse.incremental.unheld_rows`).
"""

from __future__ import annotations

import shutil
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

WRITE_LEFTOVERS = ("_temporary", ".spark-staging-*")
"""Directories a killed write leaves inside a table's directory (``FileOutputCommitter``'s task
output, dynamic partition overwrite's staging)."""


def _local_dir(location: str) -> Path | None:
    """The local directory of a ``file:`` (or scheme-less) location URI, else ``None``."""
    parsed = urlparse(location)
    if parsed.scheme not in ("", "file"):
        return None
    return Path(unquote(parsed.path))


def database_dirs(spark: SparkSession) -> list[tuple[str, Path]]:
    """(name, local directory) of every database but ``default`` (whose tables would sit next
    to the other databases' directories) whose location is an existing local directory."""
    found: list[tuple[str, Path]] = []
    for database in spark.sql("SHOW DATABASES").collect():
        name = database[0]
        if name == "default":
            continue
        location = spark.sql(f"DESCRIBE DATABASE `{name}`").collect()
        uri = next((row[1] for row in location if row[0] == "Location"), None)
        directory = _local_dir(uri) if uri else None
        if directory is not None and directory.is_dir():
            found.append((name, directory))
    return found


def remove_write_leftovers(
    spark: SparkSession, grace_s: float = 300.0, keep: Collection[str] = ()
) -> list[Path]:
    """Remove what killed writes left in the databases' directories; return what was removed.

    In the directory of every database but ``default``: each sub-directory that no table or
    view of the database is named after (an interrupted ``CREATE TABLE AS SELECT``), and the
    :data:`WRITE_LEFTOVERS` inside the directories of existing tables. Hidden and ``_``
    directories of a database are left alone, so is any location that is not on the local file
    system, and so are the tables named in ``keep`` (``database.table``, any case): tables
    another process writes (the ingest job's ``bronze.kafka_records``, which may be writing a
    batch right now, with a shared metastore). Then, in tables written by generations
    (:mod:`cdc_lakehouse.generations`), the directories no partition references: a
    generation whose write was killed, and the data a switch replaced more than ``grace_s``
    seconds ago
    (:func:`cdc_lakehouse.generations.remove_unreferenced_generations`).
    """
    from cdc_lakehouse.generations import remove_unreferenced_generations

    kept = {name.lower() for name in keep}
    removed: list[Path] = []
    for name, directory in database_dirs(spark):
        tables = {
            row["tableName"].lower() for row in spark.sql(f"SHOW TABLES IN `{name}`").collect()
        }
        for entry in sorted(directory.iterdir()):
            if not entry.is_dir() or entry.name.startswith((".", "_")):
                continue
            if f"{name}.{entry.name}".lower() in kept:
                continue
            if entry.name.lower() not in tables:
                shutil.rmtree(entry)
                removed.append(entry)
                continue
            for pattern in WRITE_LEFTOVERS:
                for leftover in sorted(entry.glob(pattern)):
                    if leftover.is_dir():
                        shutil.rmtree(leftover)
                        removed.append(leftover)
    return removed + remove_unreferenced_generations(spark, grace_s)
