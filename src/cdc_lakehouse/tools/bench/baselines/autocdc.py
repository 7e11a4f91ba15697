"""A peer baseline: Spark's own AutoCDC (Spark Declarative Pipelines, ``pyspark.pipelines``
``create_auto_cdc_flow``, SCD type 1) on the project's change events, ``silver.change_events``.

What it computes: one row per row identity (``source_format``, ``source_database``,
``source_schema``, ``source_table``, ``row_key``) holding the ``row_values`` of its change
with the greatest ``ordering_key``, none where that change is a delete (``op = 'delete'``).
``row_values`` is the change's own image: the before image of a delete, else the after image,
else (a split update's before half) the before image. That is the plain latest-per-key the
PySpark script computes, done by Spark's AutoCDC: a streaming flow whose every micro-batch is
reduced to the latest change per key and MERGEd into the target, with deletes kept as
tombstones in an auxiliary table so that a late older change does not bring a row back.

How it runs (inside the bench worker's process, on its SparkSession and lake):

1. A Spark Connect server is started in the session's own JVM
   (``org.apache.spark.sql.connect.service.SparkConnectService.start``, loopback, an
   ephemeral port, a random token): what ``spark-pipelines run --spec`` does with
   ``--remote local``, without a second JVM, which the embedded Derby metastore would refuse.
   The Connect session shares the JVM's configuration: Delta's extension and catalog,
   ``spark.jars``, the warehouse under ``CDC_LAKE_DIR``.
2. The pipeline is defined and run as the ``spark-pipelines`` command does
   (``pyspark.pipelines.cli.run``): ``create_dataflow_graph`` (default catalog
   :data:`CATALOG`, database :data:`DATABASE`), the definitions registered through a
   ``SparkConnectGraphElementRegistry`` - a temporary view streaming the change events
   (``spark.readStream.table``), ``create_streaming_table`` and ``create_auto_cdc_flow`` -
   then ``start_run`` and its event stream until the run completes. Its storage (streaming
   checkpoints) is a fresh directory per run. The equivalent spec file is
   :func:`pipeline_spec`.

The target cannot be Delta: AutoCDC writes only to a table whose catalog returns a
``SupportsRowLevelOperations`` table (``AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE`` otherwise),
and neither of Delta 4.4.0's tables is one. It is the one such catalog Spark ships, its
in-memory row-level catalog from spark-catalyst's test jar (:data:`CATALOG_CLASS`,
``jvm/autocdc/pom.xml``), which the session must load: ``CDC_SPARK_EXTRA_JARS`` (the bench's
format workers set it). The target's rows live in the JVM's heap, so its writes cost less than
a Delta table's would.

AutoCDC refuses NULL key values (``AUTOCDC_MICROBATCH_VALIDATION.NULL_KEY``), and MySQL
sources have no schema: the source view gives ``source_database`` and ``source_schema`` as
``coalesce(..., '')``.

Timed: from creating the dataflow graph to the run's completion. Not timed: starting the
Connect server, reading the target back, counting the events.

The comparison with gold (:func:`classify`): every identity whose row differs, by class, each
with the reason - see :data:`CLASSES`. :func:`identity_traits` reads what each identity's
changes hold from silver.
"""

from __future__ import annotations

import contextlib
import secrets
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil

from cdc_lakehouse.tools.bench.baselines import BaselineResult, LatestRows
from cdc_lakehouse.tools.bench.measure import cpu_times

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "autocdc"
"""The catalog of the target (a Spark SQL catalog name of the Connect session)."""
CATALOG_CLASS = (
    "org.apache.spark.sql.connector.catalog.SharedTablesInMemoryRowLevelOperationTableCatalog"
)
"""Spark's in-memory row-level catalog whose tables every session of the JVM shares (the
pipeline's flows run in sessions of their own)."""
DATABASE = "bench"
DELTA_DATABASE = "autocdc_bench"
"""The session catalog's database of :func:`run`'s ``delta_target``."""
TARGET = "current_rows"
SOURCE_VIEW = "autocdc_change_events"
KEYS = ("source_format", "source_database", "source_schema", "source_table", "row_key")
"""The row identity, gold.current_rows' unique key."""
SOURCE_TABLE = "silver.change_events"
ROW_VALUES = (
    "case when op = 'delete' then before_image else coalesce(after_image, before_image) end"
)
"""A change's own image (see the module docstring)."""
PIPELINE_CONF = {
    f"spark.sql.catalog.{CATALOG}": CATALOG_CLASS,
    # a failed flow fails the run at once (the default retries it twice)
    "spark.sql.pipelines.maxFlowRetryAttempts": "0",
}


class AutoCdcError(RuntimeError):
    """The AutoCDC pipeline could not run; the message says why."""


@dataclass(frozen=True)
class AutoCdcResult:
    """One AutoCDC run.

    Attributes:
        baseline: rows (``(source_table lower-case, row_key) -> row_values``), seconds
            (graph creation to the run's completion), events (source rows), engine, cores.
        cpu_seconds: user + system CPU seconds of this process and its descendants (the JVM)
            over the same span (:func:`cdc_lakehouse.tools.bench.measure.cpu_times`).
        target_rows: rows the target holds; above ``len(baseline.rows)`` when an identity is
            held twice.
        messages: the pipeline's event messages, in order (flow states, the run's end).
    """

    baseline: BaselineResult
    cpu_seconds: float
    target_rows: int
    messages: list[str] = field(default_factory=list)


_SERVER: dict[str, Any] = {}
"""This process's Connect server and client session: ``port``, ``token``, ``session``."""


def connect_session(spark: SparkSession) -> Any:
    """A Spark Connect client session on a Connect server running in ``spark``'s own JVM,
    started on the first call (loopback only, an ephemeral port, a random token).

    Returns:
        ``pyspark.sql.connect.session.SparkSession``.

    Raises:
        AutoCdcError: the server did not start.
    """
    if "session" in _SERVER:
        return _SERVER["session"]
    jvm = spark.sparkContext._jvm
    assert jvm is not None
    token = secrets.token_hex(16)
    conf = jvm.org.apache.spark.SparkEnv.get().conf()  # the server reads these at its start
    conf.set("spark.connect.grpc.binding.address", "127.0.0.1")
    conf.set("spark.connect.grpc.binding.port", "0")
    conf.set("spark.connect.authenticate.token", token)
    jvm.org.apache.spark.sql.connect.service.SparkConnectService.start(spark.sparkContext._jsc.sc())
    module = getattr(jvm.org.apache.spark.sql.connect.service, "SparkConnectService$")
    port = int(getattr(module, "MODULE$").localPort())
    if port <= 0:
        raise AutoCdcError("the Spark Connect server did not start (no port)")
    from pyspark.sql.connect.session import SparkSession as RemoteSparkSession

    session = RemoteSparkSession.builder.remote(
        f"sc://localhost:{port}/;token={token}"
    ).getOrCreate()
    _SERVER.update(port=port, token=token, session=session)
    return session


def stop_server() -> None:
    """Close the client session and stop this process's Connect server, if started (the
    JVM goes on); errors on the way are ignored (the JVM's exit stops it anyway)."""
    session = _SERVER.pop("session", None)
    _SERVER.clear()
    if session is None:
        return
    with contextlib.suppress(Exception):  # best effort: the server may be gone
        session.stop()
    from pyspark import SparkContext

    context = SparkContext._active_spark_context
    jvm = context._jvm if context is not None else None
    if jvm is None:
        return
    with contextlib.suppress(Exception):  # best effort, as above
        module = getattr(jvm.org.apache.spark.sql.connect.service, "SparkConnectService$")
        service = getattr(module, "MODULE$")
        service.stop(getattr(service, "stop$default$1")(), getattr(service, "stop$default$2")())


def pipeline_spec(storage: Path) -> dict[str, Any]:
    """The ``spark-pipeline.yaml`` equivalent of a run (for ``spark-pipelines run --spec``
    with a definitions file doing what :func:`_register` does): name, storage URI, catalog,
    database, configuration."""
    return {
        "name": "autocdc_baseline",
        "storage": storage.resolve().as_uri(),
        "catalog": CATALOG,
        "database": DATABASE,
        "configuration": dict(PIPELINE_CONF),
    }


def _register(
    remote: Any, graph_id: str, source_table: str, topics: Sequence[str], target_format: str | None
) -> None:
    """Register the graph's elements: the change events as a streaming temporary view, the
    streaming table and its AutoCDC flow (SCD type 1)."""
    from pyspark import pipelines as dp
    from pyspark.pipelines.add_pipeline_analysis_context import add_pipeline_analysis_context
    from pyspark.pipelines.graph_element_registry import graph_element_registration_context
    from pyspark.pipelines.spark_connect_graph_element_registry import (
        SparkConnectGraphElementRegistry,
    )

    listed = ", ".join("'" + topic.replace("'", "''") + "'" for topic in topics)
    qualified = source_table if source_table.count(".") == 2 else f"spark_catalog.{source_table}"

    def change_events() -> Any:
        return (
            remote.readStream.table(qualified)
            .where(f"kafka_topic in ({listed})")
            .selectExpr(
                "source_format",
                "coalesce(source_database, '') as source_database",
                "coalesce(source_schema, '') as source_schema",
                "source_table",
                "row_key",
                "op",
                "ordering_key",
                f"{ROW_VALUES} as row_values",
            )
        )

    registry = SparkConnectGraphElementRegistry(remote, graph_id)
    with (
        graph_element_registration_context(registry),
        add_pipeline_analysis_context(spark=remote, dataflow_graph_id=graph_id, flow_name=None),
    ):
        dp.temporary_view(name=SOURCE_VIEW)(change_events)
        dp.create_streaming_table(name=TARGET, format=target_format)
        dp.create_auto_cdc_flow(
            target=TARGET,
            source=SOURCE_VIEW,
            keys=list(KEYS),
            sequence_by="ordering_key",
            apply_as_deletes="op = 'delete'",
            except_column_list=["op", "ordering_key"],
            stored_as_scd_type=1,
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _events(results: Iterator[dict[str, Any]]) -> list[str]:
    """The run's event messages, read to the end of its stream."""
    messages = []
    for result in results:
        if "pipeline_event_result" in result:
            messages.append(result["pipeline_event_result"].event.message)
    return messages


def run(
    spark: SparkSession,
    topics: Sequence[str],
    storage: Path,
    *,
    source_table: str = SOURCE_TABLE,
    delta_target: bool = False,
) -> AutoCdcResult:
    """Run the AutoCDC pipeline once on ``topics``' rows of ``source_table`` into a fresh
    target and read the target back (then drop it).

    Args:
        spark: the process's SparkSession (its JVM hosts the Connect server).
        topics: the Kafka topics whose change events are read.
        storage: a directory for the pipeline's checkpoints (emptied first).
        source_table: a Delta table with silver.change_events' columns (at least the key
            columns, ``op``, ``ordering_key``, ``before_image``, ``after_image``,
            ``kafka_topic``).
        delta_target: make the target a Delta table of the session catalog
            (``spark_catalog.`` :data:`DELTA_DATABASE`) instead: AutoCDC refuses it with
            Delta 4.4.0 (an :class:`AutoCdcError` naming
            ``AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE``); kept to check that it still does.

    Returns:
        :class:`AutoCdcResult`.

    Raises:
        ValueError: no topics.
        AutoCdcError: the target catalog cannot be loaded (the session lacks the
            ``autocdc`` jars), the Connect server did not start, or the pipeline failed
            (its error's first line).
    """
    if not topics:
        raise ValueError("autocdc baseline: give at least one topic")
    from pyspark.errors import PySparkException
    from pyspark.pipelines.spark_connect_pipeline import create_dataflow_graph, start_run

    remote = connect_session(spark)
    for key, value in PIPELINE_CONF.items():
        remote.conf.set(key, value)
    catalog, database = ("spark_catalog", DELTA_DATABASE) if delta_target else (CATALOG, DATABASE)
    target = f"{catalog}.{database}.{TARGET}"
    try:
        remote.sql(f"drop namespace if exists {catalog}.{database} cascade")
        remote.sql(f"create namespace {catalog}.{database}")
    except PySparkException as exc:
        raise AutoCdcError(
            f"the target catalog {CATALOG_CLASS} cannot be loaded ({_first_line(exc)}): start "
            "the session with CDC_SPARK_EXTRA_JARS naming the jars of class path autocdc "
            "(`python -m cdc_lakehouse.runtime.jars list`; make install resolves them)"
        ) from exc
    shutil.rmtree(storage, ignore_errors=True)
    storage.mkdir(parents=True)
    process = psutil.Process()
    cpu_at_start = cpu_times(process, include_children=True)
    start = time.perf_counter()
    try:
        graph_id = create_dataflow_graph(
            remote, default_catalog=catalog, default_database=database, sql_conf=PIPELINE_CONF
        )
        _register(remote, graph_id, source_table, topics, "delta" if delta_target else None)
        messages = _events(
            start_run(
                remote,
                graph_id,
                full_refresh=None,
                full_refresh_all=False,
                refresh=None,
                dry=False,
                storage=storage.resolve().as_uri(),
            )
        )
    except PySparkException as exc:
        if delta_target:
            remote.sql(f"drop namespace if exists {catalog}.{database} cascade")
        raise AutoCdcError(f"the AutoCDC pipeline failed: {_first_line(exc)}") from exc
    seconds = time.perf_counter() - start
    cpu_at_end = cpu_times(process, include_children=True)
    cpu_seconds = sum(max(cpu - cpu_at_start.get(key, 0.0), 0.0) for key, cpu in cpu_at_end.items())
    records = remote.table(target).select("source_table", "row_key", "row_values").collect()
    rows: LatestRows = {
        (record["source_table"].lower(), record["row_key"]): dict(record["row_values"] or {})
        for record in records
    }
    listed = ", ".join("'" + topic.replace("'", "''") + "'" for topic in topics)
    counted = spark.sql(
        f"select count(*) as n from {source_table} where kafka_topic in ({listed})"
    ).first()
    assert counted is not None  # count(*) has one row
    events = counted["n"]
    remote.sql(f"drop namespace if exists {catalog}.{database} cascade")
    context = spark.sparkContext
    return AutoCdcResult(
        baseline=BaselineResult(
            rows=rows,
            seconds=seconds,
            events=events,
            engine=f"pyspark.pipelines AutoCDC, SCD type 1 (Spark {spark.version}, "
            f"{context.master}, Spark Connect in the same JVM; target: Spark's in-memory "
            "row-level catalog)",
            cores=context.defaultParallelism,
        ),
        cpu_seconds=cpu_seconds,
        target_rows=len(records),
        messages=messages,
    )


CLASSES: dict[str, str] = {
    "partial_image": (
        "a change carried a partial after image (only the columns it changed): gold merges it "
        "column by column into the row before it, AutoCDC replaces the whole row with it, so "
        "the columns it did not carry are gone"
    ),
    "key_move": (
        "an update moved the row to another key (before_row_key differs from row_key): gold "
        "ends the row under its old key, AutoCDC sees only the change of the new key and "
        "keeps the old key's row live (and a partial move starts from nothing, not from the "
        "old key's row)"
    ),
    "truncate": (
        "the table was truncated (silver.table_truncates): gold ends every row live before "
        "the truncate, AutoCDC reads row changes only and keeps them"
    ),
    "split_before_half": (
        "the identity's last change is the before half of a split update whose after half "
        "is elsewhere: gold does not make a version of a before half (it is half of one "
        "change), AutoCDC applies its before image as the row"
    ),
    "ordering_tie": (
        "two changes of the identity have the same ordering key: AutoCDC keeps either, gold "
        "applies a delete last"
    ),
    "redelivery": (
        "a change of the identity was delivered twice (producer retry): gold keeps the first "
        "delivery's ordering key, AutoCDC the greatest, which can order it after a newer change"
    ),
    "held_twice": (
        "the target holds the identity in more than one row (AutoCDC's MERGE matched no row of it)"
    ),
    "other": "none of the above: unexplained, a bug in one of the two",
}
"""Difference classes, in the order an identity's difference is attributed (the first trait
it has wins), each with its reason."""
SHOWN = 3


def classify(
    gold: LatestRows,
    autocdc_rows: LatestRows,
    traits: Mapping[tuple[str, str], set[str]],
    held_twice: int = 0,
) -> dict[str, Any]:
    """Compare AutoCDC's rows with gold's, whole ``row_values`` maps (both come from the same
    decoded events), and attribute each differing identity to the first class of
    :data:`CLASSES` among its ``traits``.

    Args:
        gold: gold.current_rows as ``(source_table lower-case, row_key) -> row_values``.
        autocdc_rows: the AutoCDC target, keyed alike.
        traits: per identity, the trait names (keys of :data:`CLASSES`) its changes have
            (:func:`identity_traits`); an identity absent has none.
        held_twice: target rows beyond one per identity.

    Returns:
        ``{"equal_rows": n, "differing": n, "by_class": {class: {"missing": n, "extra": n,
        "values": n, "reason": text, "examples": [...]}}}``, where missing = live in gold
        only, extra = live in AutoCDC only, values = live in both with other values; only
        classes with a difference are listed.
    """
    by_class: dict[str, dict[str, Any]] = {}

    def add(key: tuple[str, str], kind: str, example: str) -> None:
        names = traits.get(key, set())
        name = next((c for c in CLASSES if c in names), "other")
        entry = by_class.setdefault(
            name, {"missing": 0, "extra": 0, "values": 0, "reason": CLASSES[name], "examples": []}
        )
        entry[kind] += 1
        if len(entry["examples"]) < SHOWN:
            entry["examples"].append(f"{key[0]}:{key[1]} {example}")

    equal = 0
    for key in sorted(gold.keys() | autocdc_rows.keys()):
        want, got = gold.get(key), autocdc_rows.get(key)
        if want is None:
            add(key, "extra", "live in AutoCDC only")
        elif got is None:
            add(key, "missing", "live in gold only")
        elif want != got:
            columns = sorted(c for c in want.keys() | got.keys() if want.get(c) != got.get(c))
            shown = ", ".join(
                f"{c}: gold {want.get(c)!r:.40}, AutoCDC {got.get(c)!r:.40}" for c in columns[:2]
            )
            add(key, "values", shown)
        else:
            equal += 1
    if held_twice:
        by_class["held_twice"] = {
            "missing": 0,
            "extra": held_twice,
            "values": 0,
            "reason": CLASSES["held_twice"],
            "examples": [],
        }
    differing = sum(e["missing"] + e["extra"] + e["values"] for e in by_class.values())
    return {"equal_rows": equal, "differing": differing, "by_class": by_class}


def identity_traits(
    spark: SparkSession,
    topics: Sequence[str],
    *,
    source_table: str = SOURCE_TABLE,
    truncates_table: str | None = "silver.table_truncates",
) -> dict[tuple[str, str], set[str]]:
    """What each row identity's changes in ``source_table`` (of ``topics``) hold, as trait
    names of :data:`CLASSES`: ``partial_image`` (a partial after image), ``key_move`` (the
    identity is the old or the new key of an update that moved the key), ``truncate`` (its
    table has a truncate in ``truncates_table``, when given and present),
    ``split_before_half`` (its last change by ordering key is an update without an after
    image), ``ordering_tie`` (two changes share an ordering key), ``redelivery`` (the same
    change - op, images, times, source positions - at two Kafka coordinates).

    Returns:
        ``(source_table lower-case, row_key) -> traits``, identities with at least one.
    """
    listed = ", ".join("'" + topic.replace("'", "''") + "'" for topic in topics)
    spark.sql(
        f"select * from {source_table} where kafka_topic in ({listed})"
    ).createOrReplaceTempView("autocdc_trait_events")
    truncated: set[str] = set()
    if truncates_table and spark.catalog.tableExists(truncates_table):
        truncated = {
            r["t"]
            for r in spark.sql(
                f"select distinct lower(source_table) as t from {truncates_table}"
            ).collect()
        }
    rows = spark.sql(
        """
        with keyed as (
            select lower(source_table) as t, row_key as k, * from autocdc_trait_events
        ),
        moved as (
            select lower(source_table) as t, before_row_key as k from autocdc_trait_events
            where before_row_key is not null and before_row_key != row_key
            union
            select lower(source_table) as t, row_key as k from autocdc_trait_events
            where before_row_key is not null and before_row_key != row_key
        ),
        per_identity as (
            select
                t,
                k,
                max(after_image_is_partial and op != 'delete') as partial_image,
                max_by(op = 'update' and after_image is null, ordering_key)
                    as split_before_half,
                count(distinct ordering_key) < count(*) as ordering_tie,
                count(distinct to_json(named_struct(
                    'op', op, 'before', before_image, 'after', after_image,
                    'event_time', event_time, 'sequence', source_sequence_id,
                    'scn', source_scn, 'position', source_position,
                    'transaction', transaction_id
                )))
                    < count(*) as redelivery
            from keyed
            group by t, k
        )
        select
            coalesce(p.t, m.t) as t,
            coalesce(p.k, m.k) as k,
            coalesce(p.partial_image, false) as partial_image,
            m.k is not null as key_move,
            coalesce(p.split_before_half, false) as split_before_half,
            coalesce(p.ordering_tie, false) as ordering_tie,
            coalesce(p.redelivery, false) as redelivery
        from per_identity p
        full outer join (select distinct t, k from moved) m on p.t = m.t and p.k = m.k
        """
    ).collect()
    names = ("partial_image", "key_move", "split_before_half", "ordering_tie", "redelivery")
    traits: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        found = {name for name in names if row[name]}
        if row["t"] in truncated:
            found.add("truncate")
        if found:
            traits[(row["t"], row["k"])] = found
    return traits
