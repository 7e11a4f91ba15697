"""The pipeline as the benchmark drives it, inside one worker process: the real ingest job and
dbt (in-process ``dbtRunner``, on this process's SparkSession through the ``sparksession``
adapter), on the lake of ``CDC_LAKE_DIR``.

dbt writes its ``target/`` and ``logs/`` under the worker's own directory, never the
project's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_lakehouse import formats
from cdc_lakehouse.tools.bench import spark_stages

if TYPE_CHECKING:
    from cdc_lakehouse.tools.bench.baselines import LatestRows
    from ingest.job import IngestOptions

BRONZE_TABLE = "bronze.kafka_records"

STAGING_FOLDERS: dict[str, str] = {fmt.name: fmt.staging_folder for fmt in formats.MANIFEST}
"""Registry format -> its staging folder (``models/staging/<folder>``: SQL and Python
models), from the format manifest."""

SILVER_SELECTION = ("path:models/marts/changes", "int_schema_versions_by_batch")
"""Silver's tables (``models/marts/changes``) and silver's own intermediate model."""
GOLD_SELECTION = ("path:models/marts/current_state", "int_row_versions")
"""Gold's tables (``models/marts/current_state``) and gold's intermediate model."""
GOLD_EXCLUDE = ("tag:typed_gold",)
"""The typed gold tables (tag ``typed_gold``: the examples' in
``sample_data/models/marts/current_state/tables/examples``, a user's in
``models/marts/current_state/tables``) are generated for other source tables than the
benchmark's, so the gold stage leaves them out."""


class BenchError(RuntimeError):
    """A pipeline step failed during a benchmark; the message says which and why."""


def staging_selection(format_: str, *, other_formats: bool = False) -> tuple[str, ...]:
    """dbt selectors of the bronze view, the staging models of ``format_`` and the
    ``models/intermediate`` models built directly on them (split-update pairing, Shareplex key
    learning; silver reads those, and the intermediate models further down - silver's and
    gold's - wait for their stages); with ``other_formats``: of every other format instead."""
    folder = STAGING_FOLDERS[format_]
    folders = sorted(set(STAGING_FOLDERS.values()) - {folder}) if other_formats else [folder]
    return (
        "stg_bronze__kafka_records",
        *(f"path:models/staging/{each}" for each in folders),
        # intersection: the intermediates built directly on this folder's staging models
        *(f"path:models/staging/{each}+1,path:models/intermediate" for each in folders),
    )


@dataclass
class Pipeline:
    """Ingest and dbt on one lake.

    Attributes:
        spark: the process's SparkSession (:func:`cdc_lakehouse.runtime.spark_session.get_spark`).
        project_dir: the dbt project (holds ``dbt_project.yml`` and ``seeds/cdc_topics.csv``).
        work_dir: this worker's scratch directory (dbt target and logs).
        cdc_formats: the formats the project is deployed for (var ``cdc_formats``, passed to
            every dbt command that sets no ``--vars`` of its own); empty: every format, the
            project as shipped.
    """

    spark: Any
    project_dir: Path
    work_dir: Path
    cdc_formats: tuple[str, ...] = ()
    _command_started_ms: int = field(default=0, init=False, repr=False)

    def ingest(self, dump: Path) -> int:
        """Ingest a topic dump into ``bronze.kafka_records``; returns the records written."""
        # local: pyspark (ingest.job), not loaded by the live demo's supervisor (topic_current_rows)
        from ingest.job import IngestOptions

        return self._ingest(IngestOptions(dump=dump, **self._ingest_target()))

    def ingest_kafka(self, bootstrap_servers: str, topics: list[str]) -> int:
        """Ingest ``topics`` from Kafka (batch mode: up to the end of every partition, from
        the earliest offset) into ``bronze.kafka_records``; returns the records written.

        Raises:
            KafkaSourceError: the broker or a topic cannot be read.
        """
        # local: pyspark (ingest.job), not loaded by the live demo's supervisor (topic_current_rows)
        from ingest.job import IngestOptions
        from ingest.kafka_stream import KafkaOptions

        kafka = KafkaOptions(bootstrap_servers=bootstrap_servers, topics=tuple(topics))
        return self._ingest(IngestOptions(dump=None, kafka=kafka, **self._ingest_target()))

    def _ingest_target(self) -> dict[str, Any]:
        return {
            "registry": self.project_dir / "seeds" / "cdc_topics.csv",
            "table": BRONZE_TABLE,
            "checkpoint": self.work_dir / "checkpoints" / BRONZE_TABLE,
        }

    def _ingest(self, options: IngestOptions) -> int:
        """Plan and run the ingest job (its progress appended to ``work_dir/ingest.log``)."""
        # local: pyspark (ingest.job), not loaded by the live demo's supervisor (topic_current_rows)
        from ingest.job import plan_ingest, run_ingest

        with (self.work_dir / "ingest.log").open("a", encoding="utf-8") as log:
            return run_ingest(self.spark, plan_ingest(options), out=log).records

    def ensure_bronze(self) -> None:
        """Create the (empty) bronze table, as the first ingest would."""
        # local: pyspark (ingest.job), not loaded by the live demo's supervisor (topic_current_rows)
        from ingest.bronze import ensure_table

        ensure_table(self.spark, BRONZE_TABLE)

    def dbt(self, *args: str) -> None:
        """Run one dbt command in-process.

        Raises:
            BenchError: dbt failed; names the failed nodes and their messages.
        """
        from dbt.cli.main import dbtRunner

        argv = [
            *args,
            # a benchmark measures a production build: without the unit tests, which dbt's
            # docs keep to development and CI (docs/how-to/unit-tests.md "How to write and
            # run dbt unit tests")
            *(("--exclude-resource-type", "unit_test") if args[:1] == ("build",) else ()),
            *self._deployment_vars(args),
            "--project-dir",
            str(self.project_dir),
            "--profiles-dir",
            str(self.project_dir),
            "--target-path",
            str(self.work_dir / "target"),
            "--log-path",
            str(self.work_dir / "logs"),
        ]
        self._command_started_ms = int(time.time() * 1000)
        result = dbtRunner().invoke(argv)
        if result.success:
            return
        failures = [
            f"{node.node.unique_id}: {node.message}"
            for node in getattr(result.result, "results", None) or []
            if str(node.status) not in ("success", "pass")
        ]
        raise BenchError(f"dbt {' '.join(args)} failed: {result.exception or failures}")

    def _deployment_vars(self, args: tuple[str, ...]) -> tuple[str, ...]:
        if not self.cdc_formats or "--vars" in args:
            return ()
        return ("--vars", "{cdc_formats: [" + ", ".join(self.cdc_formats) + "]}")

    def node_times(self, top: int = 8) -> dict[str, Any]:
        """Where the last dbt command's time went (its ``run_results.json``): seconds per
        resource type (model, test, seed) and the ``top`` slowest nodes; with Spark's event
        log on (``CDC_SPARK_EVENT_LOG_DIR``, which the bench sets for each worker) also its
        ``top`` slowest Spark stages (:func:`.spark_stages.slowest`) and the Spark task
        seconds of each of the slowest nodes (``task_seconds_of_slowest``: the work Spark's
        tasks did for it; a node whose task time is a fraction of its own spent the rest in
        dbt, the metastore, planning, or waiting for a core)."""
        import json

        results = json.loads((self.work_dir / "target" / "run_results.json").read_text())
        by_type: dict[str, float] = {}
        nodes = []
        for result in results["results"]:
            kind = result["unique_id"].split(".", 1)[0]
            by_type[kind] = by_type.get(kind, 0.0) + result["execution_time"]
            nodes.append((result["execution_time"], spark_stages.node_name(result["unique_id"])))
        nodes.sort(reverse=True)
        times: dict[str, Any] = {
            "elapsed_s": round(results["elapsed_time"], 1),
            "seconds_by_type": {kind: round(sec, 1) for kind, sec in sorted(by_type.items())},
            "nodes": len(nodes),
            "slowest": {name: round(sec, 1) for sec, name in nodes[:top]},
        }
        log_dir = self.spark.conf.get("spark.eventLog.dir", None)
        if log_dir and self.spark.conf.get("spark.eventLog.enabled", "false") == "true":
            path = spark_stages.event_log_file(log_dir, self.spark.sparkContext.applicationId)
            stages = spark_stages.read_stages(path, since_ms=self._command_started_ms)
            times["slowest_stages"] = spark_stages.slowest(stages, top)
            by_node = spark_stages.task_seconds_by_node(stages)
            times["task_seconds_of_slowest"] = {
                name: by_node.get(name, 0.0) for name in times["slowest"]
            }
        return times

    def events(self, topics: list[str]) -> int:
        """Rows of ``silver.change_events`` from ``topics`` (every batch so far)."""
        listed = ", ".join(f"'{topic}'" for topic in topics)
        return self.spark.sql(
            f"select count(*) as n from silver.change_events where kafka_topic in ({listed})"
        ).first()["n"]

    def bronze_files(self) -> list[str]:
        """Local paths of the parquet files of ``bronze.kafka_records``."""
        from urllib.parse import unquote, urlparse

        files = self.spark.table(BRONZE_TABLE).inputFiles()
        return sorted(unquote(urlparse(uri).path) for uri in files)

    def gold_rows(self, topics: list[str]) -> LatestRows:
        """``gold.current_rows`` of the source tables ``topics`` carry, as
        (lower-case table, row_key) -> row_values."""
        return {
            (row["source_table"].lower(), row["row_key"]): dict(row["row_values"])
            for row in topic_current_rows(self.spark, topics)
        }


def topic_current_rows(spark: Any, topics: list[str]) -> list[Any]:
    """``gold.current_rows`` rows (source_table, row_key, row_values) of the source tables
    that ``topics`` carry (their identities in ``silver.change_events``)."""
    listed = ", ".join(f"'{topic}'" for topic in topics)
    return spark.sql(
        f"""
        with identities as (
            select distinct source_format, source_database, source_schema, source_table
            from silver.change_events
            where kafka_topic in ({listed})
        )
        select current_rows.source_table, current_rows.row_key, current_rows.row_values
        from gold.current_rows
        inner join identities
            on current_rows.source_format = identities.source_format
            and current_rows.source_database <=> identities.source_database
            and current_rows.source_schema <=> identities.source_schema
            and current_rows.source_table = identities.source_table
        """
    ).collect()
