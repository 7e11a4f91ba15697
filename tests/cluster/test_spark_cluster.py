"""The pipeline on a Spark standalone cluster, and a master URL that does not answer.

The end-to-end test runs ``make demo``'s commands as subprocesses (``python -m ingest --dump
sample_data/dump``, ``dbt build`` of the seeds and models, ``python -m
cdc_lakehouse.tools.summary``;
no data test: they are queries like the models', checked on this sample by every local build;
the test took 339 s without them, 376 s with them; the build decodes five of the nine formats,
:data:`FORMATS`: 379 s in `make test` on 2026-12-04, 431 s with every format) with
``CDC_SPARK_MASTER`` set to the session's cluster (:mod:`tests.cluster.conftest`: a master and
two 1-core workers) and an embedded Derby metastore in a fresh lake, and compares the summary
(rows per layer and per format, every row of ``gold.current_rows``) with
``tests/cluster/sample_summary.txt``: what the same commands print on ``local[*]``. After a
change that alters the sample's summary on purpose, regenerate that file with them::

    export CDC_LAKE_DIR=$(mktemp -d)
    export FORMATS='{cdc_formats: [dataworks_json, datahub_blob, dts_avro, qlik_json, qlik_avro]}'
    python -m ingest --dump sample_data/dump &&
      dbt build --project-dir . --profiles-dir . --exclude tag:typed_gold --vars "$FORMATS" &&
      python -m cdc_lakehouse.tools.summary > tests/cluster/sample_summary.txt

A standalone application has no executor inside the driver, so every
task, the dbt Python models' ``mapInArrow`` decoding on ``cdc_lakehouse`` code included, ran in
the workers' executors; the master's and the workers' JSON show each application with its
cores and one executor per worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.cluster import ClusterInfo

PROJECT_DIR = Path(__file__).resolve().parents[2]
EXPECTED_SUMMARY = Path(__file__).with_name("sample_summary.txt")
DBT = Path(sys.executable).with_name("dbt")
APP_NAME = "cdc-lakehouse"


def _env(lake: Path, master: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        CDC_LAKE_DIR=str(lake),
        CDC_SPARK_MASTER=master,
        CDC_SPARK_DRIVER_MEMORY="1g",
        SPARK_LOCAL_IP="127.0.0.1",
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
    )
    return env


def _run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[int, str, str, float]:
    """Run ``argv`` from the project directory; exit code, stdout, stderr, seconds taken."""
    started = time.monotonic()
    done = subprocess.run(
        argv, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=timeout
    )
    return done.returncode, done.stdout, done.stderr, time.monotonic() - started


FORMATS = ("dataworks_json", "datahub_blob", "dts_avro", "qlik_json", "qlik_avro")
"""The formats the cluster's build decodes (var ``cdc_formats``): three staging folders of
seven, each decoded by a Python model (``mapInArrow`` in the executors), Avro among them; the
others' records go to silver.quarantine (``unsupported_format``), as the summary shows."""

DBT_SELECTION = (
    "--vars",
    "{cdc_formats: [" + ", ".join(FORMATS) + "]}",
    "--exclude",
    "tag:typed_gold",
)
"""The build's selection: :data:`FORMATS`, without the typed gold tables (generated per
source table of the sample; the local builds check them)."""


def _dbt(command: str, work: Path) -> list[str]:
    """``dbt <command>`` on the project; a build decodes :data:`FORMATS` and leaves out the
    typed gold tables, the unit tests (fixed rows, not the cluster's work:
    tests/dbt_models/test_unit_tests.py runs them) and the data tests (see the module's
    docstring)."""
    argv = [str(DBT), command, "--project-dir", ".", "--profiles-dir", "."]
    if command == "build":
        argv += ["--exclude-resource-type", "unit_test", "--exclude-resource-type", "test"]
        argv += DBT_SELECTION
    return [*argv, "--target-path", str(work / "target"), "--log-path", str(work / "logs")]


def _json(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/json/", timeout=10) as response:
        return json.load(response)


@pytest.mark.dbt
def test_sample_dump_on_the_cluster_gives_the_gold_of_local(
    spark_cluster: ClusterInfo, tmp_path: Path
) -> None:
    env = _env(tmp_path / "lake", spark_cluster.master_url)
    apps_before = {a["id"] for a in _json(spark_cluster.webui_url)["completedapps"]}
    seconds = {}
    commands = {
        "ingest": [sys.executable, "-m", "ingest", "--dump", "sample_data/dump"],
        "dbt build": _dbt("build", tmp_path),
        "summary": [sys.executable, "-m", "cdc_lakehouse.tools.summary"],
    }
    outputs = {}
    for name, argv in commands.items():
        code, out, err, seconds[name] = _run(argv, env, timeout=900)
        assert code == 0, f"{name}: {out[-3000:]}\n{err[-3000:]}"
        outputs[name] = out
    print(
        f"\ncluster start {spark_cluster.started_in_s:.1f} s; "
        + ", ".join(f"{name} {s:.1f} s" for name, s in seconds.items())
    )
    assert "Completed successfully" in outputs["dbt build"]
    assert "gold.current_rows (first 10 of 10)" in outputs["summary"]
    assert outputs["summary"] == EXPECTED_SUMMARY.read_text(encoding="utf-8")

    # every command was an application of the cluster, with an executor on each worker
    master = _json(spark_cluster.webui_url)
    apps = [a for a in master["completedapps"] if a["id"] not in apps_before]
    assert len(apps) == len(commands), apps
    for app in apps:
        assert app["name"] == APP_NAME and app["state"] == "FINISHED", app
        assert app["cores"] == 2, app
    app_ids = {a["id"] for a in apps}
    for worker in master["workers"]:
        executors = _json(worker["webuiaddress"])["finishedexecutors"]
        assert app_ids <= {e["appid"] for e in executors}, worker["id"]


REFUSED = "spark://127.0.0.1:1"
UNRESOLVED = "spark://cdc-no-such-master.invalid:7077"


@pytest.mark.parametrize(
    ("command", "master"),
    [
        ("ingest", REFUSED),
        ("dbt build", REFUSED),
        ("summary", REFUSED),
        ("ingest", UNRESOLVED),
        ("summary", UNRESOLVED),
    ],
)
def test_a_master_that_does_not_answer_stops_with_one_line(
    command: str, master: str, tmp_path: Path
) -> None:
    lake = tmp_path / "lake"
    argv = {
        "ingest": [sys.executable, "-m", "ingest", "--dump", "sample_data/dump"],
        "dbt build": _dbt("build", tmp_path),
        "summary": [sys.executable, "-m", "cdc_lakehouse.tools.summary"],
    }[command]
    code, out, err, _seconds = _run(argv, _env(lake, master), timeout=180)
    assert code == 2, out + err
    expected = f"CDC_SPARK_MASTER={master}: no Spark master answers ("
    if command == "dbt build":  # dbt prints the error on stdout, under its own two lines
        assert err == ""
        assert out.count(expected) == 1, out
        message = next(line for line in out.splitlines() if expected in line)
        assert "Encountered an error:" in out and "Configuration Error" in out
        assert " of " not in out and "Traceback" not in out  # no node ran
    else:
        assert out == ""
        assert err.count("\n") == 1, err
        message = err
        assert message.startswith(f"error: {expected}")
    assert "make spark-cluster" in message and "fix CDC_SPARK_MASTER" in message
    assert not lake.exists()
