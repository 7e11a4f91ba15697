"""The ingest part's pieces that need no Spark: the records dump (an exact number of
records, dense offsets, written once and reused by the Kafka worker) and the part's handling
of a failed Kafka worker."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.formats.registry import load_registry
from cdc_lakehouse.tools.bench import cli, ingest_bench
from ingest.dump import load_dump

PROJECT = Path(__file__).resolve().parents[2]
REGISTRY = PROJECT / "seeds" / "cdc_topics.csv"


def test_the_records_dump_holds_exactly_the_records_asked_with_dense_offsets(
    tmp_path: Path,
) -> None:
    dump = tmp_path / "dump"
    made = ingest_bench.ensure_dump("dts_canal_json", 777, 5, dump)
    assert made["records"] == 777 and made["changes"] > 777  # Canal packs several rows
    records = load_dump(dump, load_registry(REGISTRY))
    assert len(records) == 777
    offsets = defaultdict(list)
    for record in records:
        offsets[(record.topic, record.partition)].append(record.offset)
    assert len(offsets) == 3
    assert all(sorted(o) == list(range(len(o))) for o in offsets.values())
    assert ingest_bench.dump_topics(dump) == ["sim.dts_canal_json"]
    assert json.loads(ingest_bench.marker_path(dump).read_text())["bytes"] == sum(
        p.stat().st_size for p in dump.glob("*.jsonl")
    )


def test_the_records_dump_is_reused_when_its_marker_matches(tmp_path: Path) -> None:
    dump = tmp_path / "dump"
    first = ingest_bench.ensure_dump("dts_canal_json", 300, 5, dump)
    (dump / "sim.dts_canal_json.jsonl").write_text("")  # a reuse would keep this
    assert ingest_bench.ensure_dump("dts_canal_json", 300, 5, dump) == first
    assert (dump / "sim.dts_canal_json.jsonl").read_text() == ""
    ingest_bench.ensure_dump("dts_canal_json", 300, 6, dump)  # another seed: written anew
    assert len(load_dump(dump, load_registry(REGISTRY))) == 300


def _fake_workers(monkeypatch: pytest.MonkeyPatch, failing: str | None) -> list[dict[str, Any]]:
    specs: list[dict[str, Any]] = []

    def run_worker(kind: str, spec: dict, work_dir: Path, project_dir: Path) -> dict:
        assert kind == "ingest"
        specs.append(spec)
        Path(spec["dump"]).mkdir(parents=True, exist_ok=True)
        ingest_bench.marker_path(Path(spec["dump"])).write_text("{}")
        if spec["source"] == failing:
            raise cli.WorkerFailed(
                f"ingest worker failed; log x\nTraceback\nBenchError: no {failing}"
            )
        return {
            "source": spec["source"],
            "records": spec["records"],
            "ingest_s": 2.0,
            "records_per_s": spec["records"] / 2.0,
            "spark_startup_s": 5.0,
        }

    monkeypatch.setattr(cli, "run_worker", run_worker)
    return specs


def test_a_failed_kafka_worker_is_reported_and_the_dump_figure_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = _fake_workers(monkeypatch, failing="kafka")
    results = cli.ingest_part("dts_canal_json", 1000, 11, tmp_path, PROJECT)
    assert [s["source"] for s in specs] == ["dump", "kafka"]
    assert len({s["dump"] for s in specs}) == 1, "both workers ingest the same dump"
    assert results[0]["records_per_s"] == 500.0
    assert results[1]["error"] == "BenchError: no kafka"
    assert results[1]["log"] == str(tmp_path / "ingest-kafka" / "worker.log")
    dump = Path(specs[0]["dump"])
    assert not dump.exists() and not ingest_bench.marker_path(dump).exists()


def test_a_failed_dump_worker_stops_the_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = _fake_workers(monkeypatch, failing="dump")
    with pytest.raises(cli.WorkerFailed):
        cli.ingest_part("dts_canal_json", 1000, 11, tmp_path, PROJECT)
    assert [s["source"] for s in specs] == ["dump"]
    assert not Path(specs[0]["dump"]).exists()
