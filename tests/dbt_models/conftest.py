"""Fixtures for tests that run the whole pipeline: ingest a dump, then dbt in-process.

dbt runs with dbtRunner in this process, on the session's SparkSession (the sparksession
adapter reuses it), with its target and log directories in a temporary directory.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.dbt_models
from cdc_lakehouse import formats
from tests.dbt_models.formats.qlik import late_metadata_cases, real_stream_cases
from tests.dbt_models.helpers import Readers, gold_rows, node_windows, write_dump
from tests.dbt_models.simulation import (
    INCREMENTAL_TABLES,
    Simulation,
    gold_tables,
    latest_version,
    simulate_all,
    table_differences,
    table_state,
    write_records,
)

SAMPLE_DUMP = Path(__file__).resolve().parents[2] / "sample_data" / "dump"


EXCLUDE_UNIT_TESTS = ("--exclude-resource-type", "unit_test")
"""dbt arguments that leave out the unit tests (the ``unit_tests:`` of the models' YAML): they
read fixed rows, not the lake, so the many builds of the test session would run the same
unit tests again and again; tests/dbt_models/test_unit_tests.py runs them once. dbt's docs
recommend the same for production builds (docs/how-to/unit-tests.md "How to write and run
dbt unit tests")."""


@pytest.fixture(scope="session")
def table_property(spark) -> Callable[[str, str], str | None]:
    """``read(table, key)``: the table property ``key`` of a table or view of the lake, None
    when it is not set (the project's properties: macros/cdc_table_properties.sql)."""

    def read(table: str, key: str) -> str | None:
        rows = spark.sql(f"show tblproperties {table}").collect()
        return {row["key"]: row["value"] for row in rows}.get(key)

    return read


@pytest.fixture(scope="session")
def run_dbt(spark, project_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Callable:
    """Run a dbt command in-process; fail the test with dbt's output if it fails.

    ``dbt build`` and ``dbt test`` leave out the unit tests (:data:`EXCLUDE_UNIT_TESTS`)
    unless ``unit_tests=True``. ``manifest=`` (the result of ``run("parse")``) skips parsing:
    for commands that differ only in ``--vars`` read at run time, each of which would
    otherwise parse the whole project again (dbt's partial parsing starts over when the vars
    change)."""
    from dbt.cli.main import dbtRunner

    work = tmp_path_factory.mktemp("dbt")

    def run(
        *args: str, expect_success: bool = True, unit_tests: bool = False, manifest: Any = None
    ) -> Any:
        in_build_or_test = bool(args) and args[0] in ("build", "test")
        exclude = EXCLUDE_UNIT_TESTS if in_build_or_test and not unit_tests else ()
        argv = [
            *args,
            *exclude,
            "--project-dir",
            str(project_dir),
            "--profiles-dir",
            str(project_dir),
            "--target-path",
            str(work / "target"),
            "--log-path",
            str(work / "logs"),
        ]
        result = dbtRunner(manifest=manifest).invoke(argv)
        if expect_success and not result.success:
            failures = []
            for node_result in getattr(result.result, "results", None) or []:
                if str(node_result.status) in ("error", "fail", "runtime error"):
                    failures.append(f"{node_result.node.unique_id}: {node_result.message}")
            pytest.fail(f"dbt {' '.join(args)} failed: {result.exception or failures}")
        return result

    run.target_path = work / "target"  # type: ignore[attr-defined]
    return run


@pytest.fixture(scope="session")
def ingest_dump(spark, project_dir: Path, lake_dir: Path) -> Callable[..., Any]:
    """Ingest a dump file or directory into bronze.kafka_records (the real ingest job), with
    the project's registry or another one (``registry=``)."""
    from ingest.job import IngestOptions, plan_ingest, run_ingest

    def ingest(dump: Path, registry: Path | None = None) -> Any:
        options = IngestOptions(
            dump=dump,
            registry=registry or project_dir / "seeds" / "cdc_topics.csv",
            table="bronze.kafka_records",
            checkpoint=lake_dir / "checkpoints" / "bronze.kafka_records",
        )
        return run_ingest(spark, plan_ingest(options))

    return ingest


def case_modules() -> list[Any]:
    """Every cases module: each has ``dump_lines()``, its edge-case records as topic dump lines
    (:func:`helpers.write_dump` writes them), in the order of :func:`dump_name`.

    The shared ones are ``tests/dbt_models/*_cases.py``; each staging folder of the manifest
    (:data:`cdc_lakehouse.formats.MANIFEST`) has its own in
    ``tests/dbt_models/formats/<staging_folder>/``: ``cases.py`` (the conformance protocol's,
    tests/dbt_models/conformance.py) and any other ``*_cases.py`` of the format."""
    names = [
        f"tests.dbt_models.{info.name}"
        for info in pkgutil.iter_modules(tests.dbt_models.__path__)
        if info.name.endswith("_cases")
    ]
    for folder in sorted({fmt.staging_folder for fmt in formats.MANIFEST}):
        try:
            package = importlib.import_module(f"tests.dbt_models.formats.{folder}")
        except ModuleNotFoundError as exc:  # tests/unit/test_conformance.py names the format
            if exc.name != f"tests.dbt_models.formats.{folder}":
                raise
            continue
        names += [
            f"{package.__name__}.{info.name}"
            for info in pkgutil.iter_modules(package.__path__)
            if info.name == "cases" or info.name.endswith("_cases")
        ]
    modules = [importlib.import_module(name) for name in names]
    return sorted(modules, key=dump_name)


def dump_name(module: Any) -> str:
    """The name of a cases module's dump files: ``<module>`` for a shared one
    (``cross_topic_cases``), ``<staging_folder>_<module>`` for a format's (``qlik_cases``,
    ``qlik_late_metadata_cases``)."""
    parts = module.__name__.split(".")
    if parts[-3] == "formats":
        return f"{parts[-2]}_{parts[-1]}"
    return parts[-1]


@pytest.fixture(scope="session")
def simulations() -> dict[str, Simulation]:
    """The simulated topics of every format with an encoder (tests/dbt_models/simulation.py)."""
    return simulate_all()


@pytest.fixture(scope="session")
def built_lake(
    spark,
    project_dir: Path,
    ingest_dump,
    run_dbt,
    simulations,
    tmp_path_factory: pytest.TempPathFactory,
) -> Any:
    """The bundled sample dump, every cases module's edge cases (:func:`case_modules`) and
    part 1 of every simulated history, ingested and built with one `dbt build` for the whole
    test session.

    A cases module may also write records of topics missing from the registry
    (``unregistered_dump_lines() -> (lines, registry row)``): they are ingested with a
    registry that has the row (as a topic removed from the registry after ingest would be)."""
    cases_dir = tmp_path_factory.mktemp("cases")
    unregistered_dir = tmp_path_factory.mktemp("unregistered")
    registry_lines = (project_dir / "seeds" / "cdc_topics.csv").read_text().splitlines()
    for module in case_modules():
        name = dump_name(module)
        write_dump(cases_dir / f"{name}.jsonl", module.dump_lines())
        if hasattr(module, "unregistered_dump_lines"):
            lines, registry_row = module.unregistered_dump_lines()
            write_dump(unregistered_dir / f"{name}.jsonl", lines)
            registry_lines.append(registry_row)
    registry = unregistered_dir.parent / "registry-with-unregistered-topics.csv"
    registry.write_text("\n".join(registry_lines) + "\n")
    # one topic dump directory for every format's part 1 (their topics differ): one ingest
    sim_dir = tmp_path_factory.mktemp("simulated")
    for simulation in simulations.values():
        write_records(sim_dir, simulation.first_delivery.records)
    first = ingest_dump(SAMPLE_DUMP)
    second = ingest_dump(cases_dir)
    if any(unregistered_dir.iterdir()):
        ingest_dump(unregistered_dir, registry=registry)
    ingest_dump(sim_dir)
    run_dbt("build")
    return {"sample_ingest": first, "cases_ingest": second}


@pytest.fixture(scope="session")
def simulated_increments(
    spark, built_lake, ingest_dump, run_dbt, simulations, tmp_path_factory
) -> dict[str, Any]:
    """Part 2 of every simulated history, ingested in two batches, each followed by an
    incremental `dbt run` (the last one a `dbt build`, with every data test); then the gold
    of the incremental runs and of `dbt run --full-refresh`, per format, for comparison.

    Runs after every test that only needs ``built_lake`` has had its chance to read part 1
    (pytest orders the files; test_simulated_gold.py reads part 1 first). While the first
    incremental run writes, a reader queries the public tables (``readers_during_run``,
    tests/dbt_models/test_simulated_readers_during_build.py)."""
    directory = tmp_path_factory.mktemp("simulated-increments")
    batches = max(len(s.second_delivery.batches) for s in simulations.values())
    for index in range(batches):
        batch_dir = directory / f"batch-{index + 1}"
        for simulation in simulations.values():
            if index < len(simulation.second_delivery.batches):
                write_records(batch_dir, simulation.second_delivery.batches[index])
        # the edge cases that need later batches: ``increment_dump_lines(batch)``
        for module in case_modules():
            lines = getattr(module, "increment_dump_lines", lambda _batch: None)(index)
            if lines is not None:
                name = dump_name(module)
                write_dump(batch_dir / f"{name}-increment.jsonl", lines)
        ingest_dump(batch_dir)  # one ingest batch for every format's records of the batch
        command = ("build" if index == batches - 1 else "run",)
        if index == 0:  # a reader queries the public tables while the first run writes them
            with Readers(spark) as readers:
                result = run_dbt(*command)
            readers_during_run = {"readers": readers, "windows": node_windows(result)}
        else:
            result = run_dbt(*command)
    # what the last build said of each model (a model with nothing new: "nothing new")
    last_build_messages = {r.node.name: r.message for r in result.result.results}
    incremental = {name: gold_tables(spark, s) for name, s in simulations.items()}
    late_keyed = gold_rows(spark, "source_schema = 'EDGE' and source_table = 'LATE_KEYED'")
    late_metadata = qlik_late_state(spark)
    real_stream = qlik_real_stream_state(spark)
    # the incremental tables' last commits: the full refresh replaces them (Delta keeps
    # their history), and they are read back with VERSION AS OF
    versions = {table: latest_version(spark, table) for table in INCREMENTAL_TABLES}
    run_dbt("run", "--full-refresh")
    full_refresh = {name: gold_tables(spark, s) for name, s in simulations.items()}
    return {
        "incremental": incremental,
        "full_refresh": full_refresh,
        "late_keyed": late_keyed,
        "late_metadata": late_metadata,
        "late_metadata_full_refresh": qlik_late_state(spark),
        "real_stream": real_stream,
        "real_stream_full_refresh": qlik_real_stream_state(spark),
        "readers_during_run": readers_during_run,
        "last_build_messages": last_build_messages,
        "table_differences": {
            table: table_differences(table_state(spark, table, version), table_state(spark, table))
            for table, version in versions.items()
        },
    }


def qlik_late_state(spark) -> dict[str, Any]:
    """What formats/qlik/late_metadata_cases.py's records became: gold rows per table and the
    (topic, offset) of the records in quarantine, with their reasons."""
    late = late_metadata_cases
    topics = f"'{late.JSON_TOPIC}', '{late.AVRO_TOPIC}'"
    return {
        "gold": {
            table: gold_rows(spark, f"source_database = '{late.TASK}' and source_table = '{table}'")
            for table in late.EXPECTED
        },
        "quarantined": {
            (r["kafka_topic"], r["kafka_offset"]): r["reason"]
            for r in spark.sql(
                "select kafka_topic, kafka_offset, reason from silver.quarantine "
                f"where kafka_topic in ({topics})"
            ).collect()
        },
        "versions": {
            (r["source_table"], r["row_key"]): r["source_schema_version"]
            for r in spark.sql(
                "select source_table, row_key, source_schema_version from silver.change_events "
                f"where kafka_topic in ({topics})"
            ).collect()
        },
    }


def qlik_real_stream_state(spark) -> dict[str, Any]:
    """What formats/qlik/real_stream_cases.py's records became: gold rows per table, the (topic,
    offset) of the records in quarantine with their reasons, and per change how it found its
    metadata and whether it was decoded in a later batch than its own."""
    real = real_stream_cases
    topics = ", ".join(f"'{topic}'" for topic in real.TOPICS)
    return {
        "gold": {
            table: gold_rows(spark, f"source_database = '{real.TASK}' and source_table = '{table}'")
            for table in real.EXPECTED
        },
        "quarantined": {
            (r["kafka_topic"], r["kafka_offset"]): r["reason"]
            for r in spark.sql(
                "select kafka_topic, kafka_offset, reason from silver.quarantine "
                f"where kafka_topic in ({topics})"
            ).collect()
        },
        "changes": {
            (r["source_table"], r["row_key"]): (
                r["source_op"],
                r["metadata_match"],
                r["resolved_batch_id"] > r["ingest_batch_id"],
            )
            for r in spark.sql(
                "select e.source_table, e.row_key, e.source_op, s.metadata_match, "
                "e.resolved_batch_id, e.ingest_batch_id from silver.change_events e "
                "join silver.stg_qlik__events s on s.record_kind = 'change' "
                "and s.kafka_topic = e.kafka_topic and s.kafka_partition = e.kafka_partition "
                "and s.kafka_offset = e.kafka_offset "
                f"where e.kafka_topic in ({topics})"
            ).collect()
        },
    }
