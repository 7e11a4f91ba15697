"""Where a dbt command's Spark time goes, per stage: read from Spark's event log.

With ``CDC_SPARK_EVENT_LOG_DIR`` set (:func:`cdc_lakehouse.runtime.spark_session.event_log_conf`),
Spark writes every job, stage and task of the application to one JSON-lines file, and the
``sparksession`` adapter gives each job the dbt node that ran it (``model.<project>.<name>``,
``test....``) as its description. This module reads that file: each completed stage with its
node, wall seconds (submission to completion), tasks, executor run time (the tasks' work),
rows read and bytes written and shuffled - the per-stage profile issue 20 asks the bench to
show beside dbt's ``run_results.json``. The same file opens in Spark's history server
(``bin/spark-class org.apache.spark.deploy.history.HistoryServer`` of the pyspark wheel).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

DESCRIPTION = "spark.job.description"
_READ_EVENTS = ('"SparkListenerJobStart"', '"SparkListenerStageCompleted"')
_METRICS = {
    "internal.metrics.executorRunTime": "executor_run_ms",
    "internal.metrics.input.recordsRead": "input_records",
    "internal.metrics.output.bytesWritten": "output_bytes",
    "internal.metrics.shuffle.read.localBytesRead": "shuffle_read_bytes",
    "internal.metrics.shuffle.read.remoteBytesRead": "shuffle_read_bytes",
    "internal.metrics.shuffle.write.bytesWritten": "shuffle_write_bytes",
}


@dataclass(frozen=True)
class StageRun:
    """One completed stage.

    Attributes:
        node: the dbt node whose query ran it (its unique_id), "" for a job without one.
        stage_id: Spark's stage id (unique in the application).
        name: Spark's stage name (the call site, e.g. ``collect at ...``).
        submitted_ms: submission time, ms since the epoch (UTC).
        seconds: wall time from submission to completion, s.
        tasks: number of tasks.
        executor_run_ms: the tasks' run time added up, ms (up to cores x wall time).
        input_records: rows read from tables and files (Spark's bytes-read figure is left
            out: for Parquet scans it counts a fraction of the bytes).
        output_bytes: bytes written to tables and files.
        shuffle_read_bytes / shuffle_write_bytes: bytes the stage read from and wrote to a
            shuffle.
    """

    node: str
    stage_id: int
    name: str
    submitted_ms: int
    seconds: float
    tasks: int
    executor_run_ms: int
    input_records: int
    output_bytes: int
    shuffle_read_bytes: int
    shuffle_write_bytes: int


def node_name(description: str) -> str:
    """A job description as the report names its node: for a dbt unique_id the model, seed
    or test name (``test.p.column_checks_change_events.2123235004`` ->
    ``column_checks_change_events``, ``model.p.int_row_versions`` -> ``int_row_versions``);
    another description's first line (the ingest job's streaming query names itself);
    "(no dbt node)" for ""."""
    if not description:
        return "(no dbt node)"
    first = description.splitlines()[0].strip()
    parts = first.split(".")
    if parts[0] == "test" and len(parts) > 3:
        return parts[2]
    return parts[-1] if len(parts) > 2 else first


def event_log_file(log_dir: str, application_id: str) -> Path:
    """The event log file of ``application_id`` in ``log_dir`` (a path or a ``file:`` URI, as
    ``spark.eventLog.dir`` holds it): ``<dir>/<id>.inprogress`` while the application runs,
    ``<dir>/<id>`` after.

    Raises:
        FileNotFoundError: neither exists (event logging off, or another directory).
    """
    directory = Path(unquote(urlparse(log_dir).path) if "://" in log_dir else log_dir)
    for name in (f"{application_id}.inprogress", application_id):
        if (directory / name).is_file():
            return directory / name
    raise FileNotFoundError(f"no event log of {application_id} in {directory}")


def read_stages(path: Path, since_ms: int = 0) -> list[StageRun]:
    """The completed stages of the event log at ``path`` submitted at or after ``since_ms``
    (ms since the epoch), in completion order. A last line still being written is skipped.
    """
    job_of_stage: dict[int, str] = {}
    stages: list[StageRun] = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if not any(kind in line for kind in _READ_EVENTS):
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:  # the line Spark is writing
                continue
            if event["Event"] == "SparkListenerJobStart":
                node = (event.get("Properties") or {}).get(DESCRIPTION) or ""
                for stage_id in event.get("Stage IDs", []):
                    job_of_stage[stage_id] = node
            elif event["Event"] == "SparkListenerStageCompleted":
                run = _stage_run(event["Stage Info"], job_of_stage)
                if run is not None and run.submitted_ms >= since_ms:
                    stages.append(run)
    return stages


def _stage_run(info: dict[str, Any], job_of_stage: dict[int, str]) -> StageRun | None:
    submitted, completed = info.get("Submission Time"), info.get("Completion Time")
    if submitted is None or completed is None:  # a skipped stage
        return None
    metrics = dict.fromkeys(_METRICS.values(), 0)
    for accumulable in info.get("Accumulables", []):
        key = _METRICS.get(accumulable.get("Name", ""))
        if key is not None:
            metrics[key] += int(accumulable.get("Value") or 0)
    return StageRun(
        node=job_of_stage.get(info["Stage ID"], ""),
        stage_id=info["Stage ID"],
        name=info.get("Stage Name", ""),
        submitted_ms=submitted,
        seconds=(completed - submitted) / 1000,
        tasks=info.get("Number of Tasks", 0),
        **metrics,
    )


def slowest(stages: list[StageRun], top: int = 8) -> list[dict[str, Any]]:
    """The ``top`` longest stages (wall time) as report entries: node (:func:`node_name`),
    stage id, wall seconds, tasks, task seconds (the tasks' run time added up: the work, where
    the wall time also counts waiting for a core while other nodes' stages run), rows read and
    MB shuffled / written (MB = 10^6 bytes)."""
    entries = []
    for run in sorted(stages, key=lambda r: r.seconds, reverse=True)[:top]:
        entries.append(
            {
                "node": node_name(run.node),
                "stage_id": run.stage_id,
                "seconds": round(run.seconds, 2),
                "tasks": run.tasks,
                "task_s": round(run.executor_run_ms / 1000, 2),
                "input_rows": run.input_records,
                "shuffle_read_mb": _mb(run.shuffle_read_bytes),
                "shuffle_write_mb": _mb(run.shuffle_write_bytes),
                "output_mb": _mb(run.output_bytes),
            }
        )
    return entries


def task_seconds_by_node(stages: list[StageRun]) -> dict[str, float]:
    """The tasks' run time (s) added up per node name, largest first: the Spark work each
    node did (on 2 cores up to twice its wall time)."""
    totals: dict[str, float] = {}
    for run in stages:
        name = node_name(run.node)
        totals[name] = totals.get(name, 0.0) + run.executor_run_ms / 1000
    return {name: round(s, 2) for name, s in sorted(totals.items(), key=lambda kv: -kv[1])}


def stage_text(entry: dict[str, Any]) -> str:
    """One :func:`slowest` entry as report text, e.g. ``int_row_versions #41 3.10 s (8
    tasks, 5.20 s of task time; read 76,260 rows; shuffle in / out 0.0 / 12.0 MB; wrote 38.9
    MB)``; zeros are left out."""
    parts = []
    if entry["input_rows"]:
        parts.append(f"read {entry['input_rows']:,} rows")
    if entry["shuffle_read_mb"] or entry["shuffle_write_mb"]:
        shuffled = f"{entry['shuffle_read_mb']} / {entry['shuffle_write_mb']}"
        parts.append(f"shuffle in / out {shuffled} MB")
    if entry["output_mb"]:
        parts.append(f"wrote {entry['output_mb']} MB")
    work = f"{entry['tasks']} tasks, {entry['task_s']:.2f} s of task time"
    detail = "; ".join([work, *parts])
    return f"{entry['node']} #{entry['stage_id']} {entry['seconds']:.2f} s ({detail})"


def _mb(value: int) -> float:
    return round(value / 1e6, 1)
