"""Generation writes: rewrite partitions of a Parquet table without a reader ever seeing it half
written (issue 21).

Spark's dynamic partition overwrite commits partition by partition: it deletes each old
partition directory and renames the new one in. A query that listed the table's files before
that fails (``FileNotFoundException``) or misses a partition. A generation write never touches
the files a partition points at:

1. The run's rows are written as a new *generation* beside the old data:
   ``<table dir>/_generations/<generation>/<col>=<value>/part-*.parquet`` (a plain partitioned
   Parquet write, no table).
2. Partitions the table does not have yet are added pointing at empty directories
   (``<generation>/_pending/<col>=<value>``): one metastore call, and readers see no new row.
3. Every written partition is switched to its generation directory - and every partition the
   run must empty (``emptied``) to an empty one (``<generation>/_empty/...``) - with one
   ``alterPartitions`` call of the session catalog: one Hive ``alter_partitions``, one
   metastore transaction. A query plans against the partitions before it or after it.
4. ``REFRESH TABLE``: this session forgets the table's cached file listing.

The directories a switch stops referencing stay for a grace period (``grace_s``, dbt var
``cdc_reader_grace_s``), so that a query planned before the switch can still read them; the
switch sets their modification time to its own time. :func:`remove_unreferenced` removes the
unreferenced ones older than that at the start of the next generation write of the table and at
the start of every dbt command (``cdc_lakehouse.interrupted_writes.remove_write_leftovers``).
A generation whose write did not finish (it still has ``_temporary``) was never referenced by
any partition: it is removed whatever its age.

A write killed at any point leaves the table as it was before it (the switch is one call), so
the next run can trust the table: no interrupted-write bracket is needed for these writes.

Unpartitioned tables (dbt ``table`` models) are switched whole by :func:`switch_table`: the
rows are written as ``<table dir>/_generations/<generation>/part-*.parquet`` and the table is
pointed at that directory with one ``ALTER TABLE .. SET LOCATION``; the location it had is
kept for the grace period the same way.

Limits: the table's directory must be on the local file system (the lake's, as everywhere in
this project); NULL partition values are not supported (Spark writes them as
``__HIVE_DEFAULT_PARTITION__``; no model here has one).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

GENERATIONS_DIR = "_generations"
"""Directory inside a table's directory that holds its generations."""
PENDING_DIR = "_pending"
"""Directory inside a generation: empty locations of the partitions added before the switch."""
EMPTY_DIR = "_empty"
"""Directory inside a generation: empty locations of the partitions the switch empties."""
UNFINISHED = "_temporary"
"""A generation that still holds this directory was never committed, hence never switched in."""

Spec = dict[str, str]
"""A partition spec: partition column -> value as text (``{"row_bucket": "3"}``)."""


@dataclass(frozen=True)
class Switch:
    """What one generation write did.

    Attributes:
        generation: the generation's directory.
        written: specs of the partitions switched to the generation, in directory order.
        added: how many of them were new partitions.
        emptied: specs of the partitions switched to an empty directory.
        removed: the unreferenced directories removed before the write.
    """

    generation: Path
    written: list[Spec]
    added: int
    emptied: list[Spec]
    removed: list[Path] = field(default_factory=list)


def _local_path(location: str) -> Path:
    """The local path of a ``file:`` (or scheme-less) URI.

    Raises:
        ValueError: the location is not on the local file system.
    """
    parsed = urlparse(location)
    if parsed.scheme not in ("", "file"):
        raise ValueError(f"generation writes need a local table directory, not {location}")
    return Path(unquote(parsed.path))


def _spec_path(spec: Mapping[str, str], columns: Sequence[str]) -> str:
    """``col=value/...`` as Spark names a partition's directory (values %-escaped)."""
    return "/".join(f"{column}={quote(spec[column], safe='')}" for column in columns)


def _spec_key(spec: Mapping[str, str], columns: Sequence[str]) -> tuple[str, ...]:
    return tuple(spec[column] for column in columns)


def _written_specs(directory: Path, columns: Sequence[str]) -> list[Spec]:
    """The partition specs of a partitioned Parquet write, from its ``col=value`` directories."""
    found: list[Spec] = [{}]
    for column in columns:
        found = [
            {**spec, column: unquote(child.name.split("=", 1)[1])}
            for spec in found
            for child in sorted((directory / _spec_path(spec, list(spec))).iterdir())
            if child.is_dir() and child.name.startswith(f"{column}=")
        ]
    return found


class _Catalog:
    """The session catalog of one table, through py4j (Scala objects built by hand)."""

    def __init__(self, spark: SparkSession, schema: str, identifier: str) -> None:
        self.spark = spark
        self.jvm: Any = spark._jvm
        self.catalog: Any = spark._jsparkSession.sessionState().catalog()
        self.ident: Any = self.jvm.org.apache.spark.sql.catalyst.TableIdentifier(
            identifier, self.jvm.scala.Some(schema)
        )
        meta = self.catalog.getTableMetadata(self.ident)
        names = meta.partitionColumnNames()
        self.columns: list[str] = [names.apply(i) for i in range(names.size())]
        self.directory = _local_path(meta.location().toString())
        self.name = f"`{schema}`.`{identifier}`"

    def partitions(self) -> dict[tuple[str, ...], Any]:
        """Every partition of the table (``CatalogTablePartition``) by its spec values."""
        seq = self.catalog.listPartitions(self.ident, self.jvm.scala.Option.empty())
        converters = self.jvm.scala.jdk.javaapi.CollectionConverters
        result: dict[tuple[str, ...], Any] = {}
        for i in range(seq.size()):
            partition = seq.apply(i)
            spec = dict(converters.asJava(partition.spec()))
            result[_spec_key(spec, self.columns)] = partition
        return result

    def locations(self) -> list[Path]:
        """The local directories the table's partitions point at."""
        return [_local_path(p.location().toString()) for p in self.partitions().values()]

    def uri(self, directory: Path) -> Any:
        """``directory`` as the ``java.net.URI`` Spark makes of a location string."""
        return self.jvm.org.apache.spark.sql.catalyst.catalog.CatalogUtils.stringToURI(
            str(directory)
        )

    def relocated(self, partition: Any, directory: Path) -> Any:
        """A copy of ``partition`` (``CatalogTablePartition``) located at ``directory``."""
        storage = partition.storage()
        uri = self.uri(directory)
        # copy(locationUri = Some(uri)): the other arguments are the case class's copy$default$i
        # (the current values), however many the Spark version has
        methods = storage.getClass().getMethods()
        arity = next(m.getParameterCount() for m in methods if m.getName() == "copy")
        defaults = [getattr(storage, f"copy$default${i}")() for i in range(2, arity + 1)]
        new_storage = storage.copy(self.jvm.scala.Some(uri), *defaults)
        return partition.copy(
            partition.spec(),
            new_storage,
            partition.parameters(),
            partition.createTime(),
            partition.lastAccessTime(),
            self.jvm.scala.Option.empty(),
        )

    def alter(self, partitions: Sequence[Any]) -> None:
        """Store ``partitions`` (existing ones, changed) in one metastore call."""
        java_list = self.jvm.java.util.ArrayList()
        for partition in partitions:
            java_list.add(partition)
        seq = self.jvm.org.apache.spark.api.python.PythonUtils.toSeq(java_list)
        self.catalog.alterPartitions(self.ident, seq)


def _sql_literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _touch(paths: Iterable[Path], now: float) -> None:
    """Set the modification time of the existing ``paths`` to ``now`` (their grace starts)."""
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            os.utime(path, (now, now))


def write_generation(
    spark: SparkSession,
    source: str,
    schema: str,
    identifier: str,
    emptied: Sequence[Mapping[str, Any]] = (),
    grace_s: float = 300.0,
) -> Switch:
    """Write the rows of ``source`` as a new generation of the partitioned Parquet table
    ``schema.identifier`` and switch its partitions to it in one metastore call.

    Args:
        spark: the session (dbt's, when called by the adapter).
        source: a table or view name with the table's columns (dbt's ``__dbt_tmp`` relation).
        schema: the table's database.
        identifier: the table's name.
        emptied: specs of existing partitions that must have no row after the write unless the
            source writes them (e.g. silver.quarantine's batches whose records all left it);
            specs the table does not have are ignored.
        grace_s: seconds an unreferenced directory is kept for the readers that planned before
            the switch that unreferenced it (removed before this write when older).

    Returns:
        What was written, switched and removed.

    Raises:
        ValueError: the table is not partitioned or not on the local file system.
        py4j.protocol.Py4JJavaError: Spark or the metastore failed; the table is then as it
            was before the call unless the failure was in ``alterPartitions`` itself (one
            metastore transaction) or in the final ``REFRESH TABLE``.
    """
    table = _Catalog(spark, schema, identifier)
    if not table.columns:
        raise ValueError(f"{table.name} is not partitioned: generation writes need partitions")
    existing = table.partitions()  # one listing for the clean-up and the switch
    locations = [_local_path(p.location().toString()) for p in existing.values()]
    removed = remove_unreferenced(table.directory, locations, grace_s)

    generation = table.directory / GENERATIONS_DIR / _generation_name(time.time())
    columns = spark.table(table.name).columns
    frame = spark.table(source).select(*[f"`{column}`" for column in columns])
    frame.write.partitionBy(*table.columns).mode("errorifexists").parquet(str(generation))

    written = _written_specs(generation, table.columns)
    emptied_specs = [
        {column: str(spec[column]) for column in table.columns}
        for spec in emptied
        if _spec_key({c: str(spec[c]) for c in table.columns}, table.columns) in existing
    ]
    written_keys = {_spec_key(spec, table.columns) for spec in written}
    emptied_specs = [s for s in emptied_specs if _spec_key(s, table.columns) not in written_keys]
    if not written and not emptied_specs:
        shutil.rmtree(generation)  # nothing to switch: never referenced
        return Switch(generation, [], 0, [], removed)

    new = [spec for spec in written if _spec_key(spec, table.columns) not in existing]
    if new:
        clauses = " ".join(
            "partition ("
            + ", ".join(f"`{c}` = {_sql_literal(spec[c])}" for c in table.columns)
            + ") location "
            + _sql_literal(str(generation / PENDING_DIR / _spec_path(spec, table.columns)))
            for spec in new
        )
        spark.sql(f"alter table {table.name} add {clauses}")
        existing = table.partitions()

    targets = [(spec, generation / _spec_path(spec, table.columns)) for spec in written]
    for spec in emptied_specs:
        empty = generation / EMPTY_DIR / _spec_path(spec, table.columns)
        empty.mkdir(parents=True)
        targets.append((spec, empty))
    switched = [existing[_spec_key(spec, table.columns)] for spec, _ in targets]
    superseded = [_local_path(p.location().toString()) for p in switched]
    table.alter([table.relocated(p, d) for p, (_, d) in zip(switched, targets, strict=True)])
    switch_time = time.time()
    _touch({*superseded, *(_generation_of(table.directory, p) for p in superseded)}, switch_time)
    spark.sql(f"refresh table {table.name}")
    return Switch(generation, written, len(new), emptied_specs, removed)


@dataclass(frozen=True)
class TableSwitch:
    """What one :func:`switch_table` did.

    Attributes:
        switched: true when the table now points at ``generation``; false when its columns
            differed from the rows' and it was dropped (the caller creates it again).
        generation: the new location (``None`` when not switched).
        previous: the location the table had.
        removed: the unreferenced directories and files removed before the write.
    """

    switched: bool
    generation: Path | None
    previous: Path
    removed: list[Path] = field(default_factory=list)


def _generation_name(now: float) -> str:
    """A generation's directory name: its UTC time to the microsecond, sortable."""
    return time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)) + f"{now % 1:.6f}"[1:] + "Z"


def _table_dir(location: Path) -> Path:
    """The table's own directory: ``location``, or the one holding its ``_generations``."""
    if GENERATIONS_DIR in location.parts:
        return Path(*location.parts[: location.parts.index(GENERATIONS_DIR)])
    return location


def switch_table(
    spark: SparkSession, source: str, schema: str, identifier: str, grace_s: float = 300.0
) -> TableSwitch:
    """Replace the rows of the unpartitioned Parquet table ``schema.identifier`` by those of
    ``source`` without a reader ever seeing it missing or half written: write them as a new
    generation and point the table at it with one ``ALTER TABLE .. SET LOCATION``.

    Args:
        spark: the session (dbt's, when called by the adapter).
        source: a table or view name (the model's rows: a temporary view).
        schema: the table's database.
        identifier: the table's name.
        grace_s: seconds a replaced location is kept for the readers that planned before the
            switch (removed by a later switch or dbt command when older).

    Returns:
        What was switched and removed. When the columns of ``source`` (names, types, order;
        nullability aside) differ from the table's, the table is dropped, its directory removed, and
        ``switched`` is false: the caller creates it again.

    Raises:
        ValueError: the table is partitioned (see :func:`write_generation`) or not local.
        py4j.protocol.Py4JJavaError: Spark or the metastore failed; the table is then as it
            was before the call unless the failure was in the final ``REFRESH TABLE``.
    """
    table = _Catalog(spark, schema, identifier)
    if table.columns:
        raise ValueError(f"{table.name} is partitioned: use write_generation")
    location = table.directory
    table_dir = _table_dir(location)
    # names and types, not nullability (a view's nested fields may differ in it from the table)
    current = [(f.name.lower(), f.dataType.simpleString()) for f in spark.table(table.name).schema]
    new = [(f.name.lower(), f.dataType.simpleString()) for f in spark.table(source).schema]
    if current != new:
        spark.sql(f"drop table {table.name}")
        shutil.rmtree(table_dir, ignore_errors=True)
        return TableSwitch(False, None, location)
    removed = remove_unreferenced(table_dir, [location], grace_s)
    generation = table_dir / GENERATIONS_DIR / _generation_name(time.time())
    spark.table(source).write.mode("errorifexists").parquet(str(generation))
    spark.sql(f"alter table {table.name} set location {_sql_literal(str(generation))}")
    _touch([location], time.time())
    spark.sql(f"refresh table {table.name}")
    return TableSwitch(True, generation, location, removed)


def remove_dropped_table_dir(spark: SparkSession, schema: str, identifier: str) -> Path | None:
    """After ``schema.identifier`` was dropped, remove the directory it leaves behind when
    :func:`switch_table` had pointed it at a generation: dropping it removed only that
    generation, and a new managed table of the name fails on the remaining directory
    (``LOCATION_ALREADY_EXISTS``). Returns the removed directory, else ``None`` (the table
    exists, or its directory holds no ``_generations``: never switched)."""
    if spark.catalog.tableExists(f"`{schema}`.`{identifier}`"):
        return None
    database = _local_path(spark.catalog.getDatabase(schema).locationUri)
    directory = database / identifier.lower()
    if not (directory / GENERATIONS_DIR).is_dir():
        return None
    shutil.rmtree(directory)
    return directory


def _generation_of(table_dir: Path, location: Path) -> Path:
    """The generation directory holding ``location``, else ``location`` itself."""
    generations = table_dir / GENERATIONS_DIR
    if generations in location.parents:
        return generations / location.relative_to(generations).parts[0]
    return location


def _is_live(path: Path, referenced: Sequence[Path]) -> bool:
    """True when a referenced location is ``path``, inside it or contains it."""
    return any(ref == path or path in ref.parents or ref in path.parents for ref in referenced)


def remove_unreferenced(
    table_dir: Path, referenced: Iterable[Path], grace_s: float, now: float | None = None
) -> list[Path]:
    """Remove the directories of a generation-written table that no partition references any
    more and whose modification time is more than ``grace_s`` seconds before ``now``; return
    them.

    Looked at: the table directory's own ``col=value`` directories (where its first
    ``CREATE TABLE AS SELECT`` put the partitions), its own files when an unpartitioned table
    points at a generation instead (stale from the time the switch away from them set on the
    table directory), and each generation under
    ``_generations`` - as a whole, else its ``col=value``, ``_pending`` and ``_empty``
    children one by one. A generation with ``_temporary`` left (its write was killed before
    it committed) is removed at any age: no partition ever referenced it. A table directory
    without ``_generations`` is left alone (it was never written by generations).

    Args:
        table_dir: the table's directory.
        referenced: the directories its partitions point at (metastore locations).
        grace_s: seconds an unreferenced directory is kept.
        now: the current time (``time.time()`` when ``None``).
    """
    generations = table_dir / GENERATIONS_DIR
    if not generations.is_dir():
        return []
    now = time.time() if now is None else now
    live = [Path(os.path.normpath(p)) for p in referenced]
    removed: list[Path] = []

    def remove_if_stale(path: Path) -> bool:
        if _is_live(path, live):
            return False
        try:
            age = now - path.stat().st_mtime
        except FileNotFoundError:
            return False
        if age <= grace_s and not (path.parent == generations and (path / UNFINISHED).exists()):
            return False
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
        return True

    # an unpartitioned table pointed at a generation (switch_table) since over grace_s: its
    # own files go (their directory's time, read once: removing a file changes it)
    relocated = any(ref.parent == generations for ref in live)
    first_create_stale = relocated and now - table_dir.stat().st_mtime > grace_s
    for entry in sorted(table_dir.iterdir()):
        if entry.is_dir() and "=" in entry.name:
            remove_if_stale(entry)
        elif first_create_stale and entry.is_file():
            entry.unlink()  # the data of its first CREATE TABLE AS SELECT
            removed.append(entry)
    for generation in sorted(generations.iterdir()):
        if not generation.is_dir() or remove_if_stale(generation):
            continue
        for child in sorted(generation.iterdir()):
            if child.is_dir() and "=" in child.name:
                remove_if_stale(child)
            elif child.is_dir() and child.name in (PENDING_DIR, EMPTY_DIR):
                for grandchild in sorted(child.iterdir()):
                    if grandchild.is_dir():
                        remove_if_stale(grandchild)
                if not any(child.iterdir()):
                    child.rmdir()
    return removed


def remove_unreferenced_generations(spark: SparkSession, grace_s: float) -> list[Path]:
    """:func:`remove_unreferenced` for every generation-written table of every database but
    ``default`` whose directory is local (tables whose directory has ``_generations``)."""
    from cdc_lakehouse.interrupted_writes import database_dirs

    removed: list[Path] = []
    for database, directory in database_dirs(spark):
        for table_dir in sorted(directory.glob(f"*/{GENERATIONS_DIR}")):
            table_dir = table_dir.parent
            if not spark.catalog.tableExists(f"`{database}`.`{table_dir.name}`"):
                continue
            catalog = _Catalog(spark, database, table_dir.name)
            if _table_dir(catalog.directory) != table_dir:
                continue
            if catalog.columns:
                removed += remove_unreferenced(table_dir, catalog.locations(), grace_s)
            else:
                removed += remove_unreferenced(table_dir, [catalog.directory], grace_s)
    return removed
