"""The benchmark's workload, report and command line (no Spark): what `make bench` writes and
how it refuses bad flags."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cdc_lakehouse.tools.bench import cli, report, workload

MILLION = 1_000_000


def _stage(seconds: float, events: int) -> dict:
    return {
        "seconds": seconds,
        "events": events,
        "events_per_s": events / seconds,
        "events_per_s_per_core": events / seconds / 2,
        "peak_rss_bytes": 2**30,
        "cores": 2,
    }


def _baseline(seconds: float, equals_gold: bool = True) -> dict:
    return {
        "engine": "x",
        "seconds": seconds,
        "events": 1000,
        "events_per_s": 1000 / seconds,
        "events_per_s_per_core": 500 / seconds,
        "peak_rss_bytes": 2**28,
        "cores": 2,
        "equals_gold": equals_gold,
    }


def _format_result(
    name: str, silver_s: float, gold_s: float, pyspark_s: float, changes: int = 1000
) -> dict:
    return {
        "format": name,
        "changes": changes,
        "records": changes,
        "events": 1000,
        "batch_events": 100,
        "gold_equals_oracle": True,
        "stages": {
            "dump_to_bronze": _stage(2.0, 1000),
            "bronze_to_silver": _stage(silver_s, 1000),
            "silver_to_gold": _stage(gold_s, 1000),
            "bronze_to_gold": _stage(silver_s + gold_s, 1000),
            "incremental_batch": _stage(5.0, 100),
        },
        "baselines": {
            "pyspark": _baseline(pyspark_s),
            "duckdb": _baseline(0.5),
            "python_floor": _baseline(0.2),
        },
    }


def _growth(factor: int, full_s: float, incremental_s: float) -> dict:
    return {
        "format": "dts_canal_json",
        "factor": factor,
        "events": 1000 * factor,
        "batch_events": 60,
        "full_build_s": full_s,
        "incremental_build_s": incremental_s,
    }


def _document(formats: list[dict], growth: list[dict]) -> dict:
    return {
        "machine": {
            "cpu": "test cpu",
            "cores": 2,
            "memory_gib": 24.0,
            "os": "Linux",
            "python": "3.11",
            "versions": {"pyspark": "4.2.0", "dbt-core": "1.11", "duckdb": "2.0.0"},
            "spark_driver_memory": "4g",
        },
        "config": {
            "changes": 1000,
            "batch_changes": 100,
            "growth_format": "dts_canal_json",
            "growth_batch_changes": 60,
            "seed": 11,
        },
        "formats": formats,
        "growth": growth,
        "wall_s": 60.0,
    }


def test_summary_ratios_are_pipeline_time_over_pyspark_time() -> None:
    doc = _document(
        [_format_result("a", 3.0, 1.0, 2.0), _format_result("b", 1.0, 1.0, 2.0)],
        [_growth(1, 10.0, 8.0), _growth(4, 20.0, 8.5), _growth(16, 60.0, 9.0)],
    )
    s = report.summary(doc)
    assert s["pyspark_ratio_by_format"] == {"a": 2.0, "b": 1.0}
    assert s["pyspark_ratio_overall"] == 1.5  # (4 + 2) / (2 + 2)
    assert s["pyspark_target_met"] is True
    assert s["incremental_growth"] == 1.12
    assert s["full_build_growth"] == 6.0
    assert s["growth_target_met"] is True


def test_a_baseline_that_differs_from_gold_does_not_count() -> None:
    result = _format_result("a", 3.0, 1.0, 2.0)
    result["baselines"]["pyspark"]["equals_gold"] = False
    doc = _document([result], [])
    s = report.summary(doc)
    assert s["pyspark_ratio_by_format"] == {"a": None}
    assert s["pyspark_target_met"] is False
    assert s["baselines_equal_gold"] is False
    assert "✗" in report.markdown(doc)


def test_growth_target_missed_when_incremental_grows() -> None:
    doc = _document([], [_growth(1, 10.0, 8.0), _growth(16, 60.0, 12.0)])
    s = report.summary(doc)
    assert s["incremental_growth"] == 1.5
    assert s["growth_target_met"] is False
    assert "NOT met" in report.markdown(doc)


def test_write_gives_json_markdown_and_plots(tmp_path: Path) -> None:
    doc = _document(
        [_format_result("a", 3.0, 1.0, 2.0)], [_growth(1, 10.0, 8.0), _growth(4, 20.0, 8.5)]
    )
    paths = report.write(doc, tmp_path / "out")
    assert [p.name for p in paths] == [
        "results.json",
        "results.md",
        "throughput.png",
        "cost_growth.png",
    ]
    written = json.loads(paths[0].read_text(encoding="utf-8"))
    assert written["summary"]["pyspark_ratio_overall"] == 2.0
    markdown = paths[1].read_text(encoding="utf-8")
    assert "| a | 1,000 |" in markdown
    assert "test cpu, 2 cores" in markdown
    assert paths[2].read_bytes().startswith(b"\x89PNG")
    assert paths[3].read_bytes().startswith(b"\x89PNG")


def _incremental(build_s: float, script_s: float) -> dict:
    return {
        "format": "dts_canal_json",
        "changes": 200_000,
        "batch_changes": 1_000,
        "events": 210_000,
        "batch_events": 1_050,
        "full_build_s": 300.0,
        "incremental_build_s": build_s,
        "incremental_build_peak_rss_bytes": 2**31,
        "script_s": script_s,
        "script_equals_gold": True,
        "gold_equals_oracle": True,
        "gold_differences": [],
        "incremental_build_nodes": {
            "nodes": 300,
            "seconds_by_type": {"model": 30.0, "test": 20.0},
            "slowest": {"row_states": 4.0},
        },
    }


def _statuses(doc: dict) -> dict[int, str]:
    return {t["target"]: t["status"] for t in report.summary(doc)["targets"]}


def test_targets_say_met_not_met_or_not_measured() -> None:
    # 1: overall 1.5x but format a at 2.0x... b at 1.0x: met; 3: 45 / 20 = 2.25x: not met
    doc = _document(
        [_format_result("a", 3.0, 1.0, 2.0), _format_result("b", 1.0, 1.0, 2.0)],
        [_growth(1, 10.0, 8.0), _growth(16, 60.0, 9.0)],
    )
    doc["incremental"] = [_incremental(45.0, 20.0)]
    statuses = _statuses(doc)
    assert statuses == {
        1: "met",
        2: "not measured",  # Canal not run at 1,000,000 changes
        3: "NOT met",
        4: "not measured",  # the dumps were not 1,000,000 records
        5: "not measured",
        6: "not measured",
    }
    doc["incremental"] = [_incremental(35.0, 20.0)]
    assert _statuses(doc)[3] == "met"
    markdown = report.markdown(doc)
    assert "| 3 | incremental build <= 2x" in markdown
    assert "## Incremental build against recomputing (dts_canal_json)" in markdown


def test_one_format_above_two_and_a_half_misses_target_one() -> None:
    # overall (4 + 2 + 2) / (1 + 4 + 4) = 0.89x, but a alone is 4.0x
    doc = _document(
        [
            _format_result("a", 3.0, 1.0, 1.0),
            _format_result("b", 1.0, 1.0, 4.0),
            _format_result("c", 1.0, 1.0, 4.0),
        ],
        [],
    )
    assert _statuses(doc)[1] == "NOT met"
    assert report.summary(doc)["pyspark_target_met"] is False


def test_targets_at_a_million_changes() -> None:
    canal = _format_result("dts_canal_json", 10.0, 5.0, 12.0, changes=1_000_000)
    canal["stages"]["dump_to_bronze"] = _stage(40.0, 1000)  # 25,000 records/s
    statuses = _statuses(_document([canal], []))
    assert statuses[2] == "met"  # 15 / 12 = 1.25x
    assert statuses[4] == "met"
    assert statuses[6] == "met"  # 1 GiB
    canal["stages"]["silver_to_gold"]["peak_rss_bytes"] = 7 * 2**30
    canal["stages"]["dump_to_bronze"] = _stage(60.0, 1000)  # 16,667 records/s
    statuses = _statuses(_document([canal], []))
    assert (statuses[4], statuses[6]) == ("NOT met", "NOT met")


def test_memory_target_takes_the_largest_peak_of_the_formats_at_the_largest_size() -> None:
    canal = _format_result("dts_canal_json", 10.0, 5.0, 12.0, changes=1_000_000)
    avro = _format_result("dts_avro", 10.0, 5.0, 12.0, changes=1_000_000)
    avro["stages"]["silver_to_gold"]["peak_rss_bytes"] = 7 * 2**30
    small = _format_result("dataworks_json", 10.0, 5.0, 12.0, changes=1_000)
    small["stages"]["silver_to_gold"]["peak_rss_bytes"] = 9 * 2**30
    memory = report.targets(_document([canal, avro, small], []))[5]
    assert memory["status"] == "NOT met"
    assert memory["figure"] == "7,168 MiB at 1,000,000 changes (dts_avro)"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--format", "nope"], "unknown format nope"),
        (["--changes", "0"], "must be 1 or more"),
        (["--factors", "4,1"], "increasing history sizes"),
        (["--factors", "1;4"], "comma-separated"),
        (["--part", "table"], "invalid choice: 'table'"),
        (["--history-changes", "0"], "must be 1 or more"),
        (["--ingest-records", "0"], "must be 1 or more"),
        (["--ingest-records", "1e6"], "'1e6' is not a whole number"),
        (["--ingest-format", "nope"], "unknown format nope"),
        (["--tables", "0"], "must be 1 or more"),
        (["--base-tables", "-3"], "must be 1 or more"),
        (["--tables-rounds", "0"], "must be 1 or more"),
        (["--deployment", "canal"], "invalid choice: 'canal'"),
        (["--tables-changes", "x"], "'x' is not a whole number"),
        (["--part", "tables", "--tables", "10"], "--tables 10 must be above --base-tables 10"),
    ],
)
def test_bad_flags_stop_with_one_line_saying_what_to_fix(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        cli.main(argv)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert len(err.strip().splitlines()) == 1, err


def test_project_dir_without_dbt_project_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--project-dir", str(tmp_path)])
    assert "holds no dbt_project.yml" in capsys.readouterr().err


def test_workload_is_what_a_latest_per_key_baseline_can_compute() -> None:
    load = workload.build("dts_canal_json", 600, 60, seed=3)
    changes = load.whole.row_changes
    assert len(load.history.row_changes) == 600
    assert {c.op for c in changes} == {"insert", "update", "delete"}
    assert not any(c.moves_key for c in changes)
    assert {t.name for t in load.history.tables} == {"customers", "orders"}
    # duplicates are redelivered copies: same value at another offset
    values = Counter(r.value for r in load.history_delivery.records)
    assert any(n > 1 for n in values.values())
    # the new batch continues the history's offsets in every partition
    last = {}
    for record in load.history_delivery.records:
        last[(record.topic, record.partition)] = record.offset
    for record in load.batch_delivery.records:
        assert record.offset > last.get((record.topic, record.partition), -1)


def test_workload_refuses_unknown_formats_and_sizes() -> None:
    with pytest.raises(ValueError, match="no simulator encoder"):
        workload.build("nope", 10, 1)
    with pytest.raises(ValueError, match="sizes must be >= 1"):
        workload.build("dts_canal_json", 0, 1)


def _ingest(source: str, records: int, records_per_s: float) -> dict:
    return {
        "source": source,
        "format": "dts_canal_json",
        "records": records,
        "changes": records * 23 // 20,
        "dump_bytes": records * 1300,
        "spark_startup_s": 6.0,
        "ingest_s": records / records_per_s,
        "records_per_s": records_per_s,
        "records_per_s_with_startup": records / (records / records_per_s + 6.0),
        "peak_rss_bytes": 2**31,
        "driver_peak_rss_bytes": 2**30,
        "cores": 2,
        **({"produce_s": 40.0} if source == "kafka" else {}),
    }


def _ingest_target(ingest: list[dict], formats: list[dict] | None = None) -> dict:
    doc = _document(formats or [], [])
    doc["ingest"] = ingest
    return report.targets(doc)[3]


def test_ingest_target_is_the_dump_at_a_million_records_with_kafka_judged_apart() -> None:
    met = _ingest_target([_ingest("dump", MILLION, 25_000.0), _ingest("kafka", MILLION, 8_000.0)])
    assert met["status"] == "met"  # Kafka below its 10,000/s is shown, not counted
    assert met["figure"] == (
        "25,000/s at 1,000,000 records (Spark start 6.0 s apart); Kafka -> bronze 8,000/s at "
        "1,000,000 records (target >= 10,000/s: NOT met)"
    )
    slow = _ingest_target([_ingest("dump", MILLION, 19_999.0), _ingest("kafka", MILLION, 12e3)])
    assert slow["status"] == "NOT met"
    assert "(target >= 10,000/s: met)" in slow["figure"]
    small = _ingest_target([_ingest("dump", 999_999, 90_000.0)])
    assert small["status"] == "not measured"
    assert small["figure"].endswith("Kafka -> bronze not measured")


def test_ingest_target_reports_a_failed_kafka_run_and_prefers_the_ingest_part() -> None:
    failed = {"source": "kafka", "format": "dts_canal_json", "records": MILLION}
    failed["error"] = "KafkaSourceError: flush timed out"
    canal = _format_result("dts_canal_json", 10.0, 5.0, 12.0, changes=MILLION)
    canal["stages"]["dump_to_bronze"] = _stage(200.0, 1000)  # 5,000 records/s
    row = _ingest_target([_ingest("dump", MILLION, 30_000.0), failed], [canal])
    assert row["status"] == "met"
    assert "Kafka -> bronze failed at 1,000,000 records: KafkaSourceError" in row["figure"]
    doc = _document([], [])
    doc["ingest"] = [_ingest("dump", MILLION, 30_000.0), failed]
    markdown = report.markdown(doc)
    assert "| kafka | 1,000,000 | failed: KafkaSourceError: flush timed out |" in markdown
    assert "| dump | 1,000,000 | 1,240 | 6.0 | 33.3 | 30,000 |" in markdown


def _tables(count: int, build_s: float, full_s: float = 100.0, right: bool = True) -> dict:
    return {
        "format": "dts_canal_json",
        "tables": count,
        "changes": 20_000,
        "batch_changes": 1_000,
        "events": 21_000,
        "batch_events": 1_050,
        "full_build_s": full_s,
        "codegen_s": 3.0,
        "typed_gold_models": count,
        "typed_gold_build_s": 120.0,
        "incremental_build_s": build_s,
        "typed_gold_nodes": {"models": count, "tests": 2 * count, "seconds": 1.5 * count},
        "gold_equals_oracle": right,
        "gold_differences": [] if right else ["1 rows expected, 0 found"],
    }


def _tables_doc(results: list[dict]) -> dict:
    doc = _document([], [])
    doc["tables"] = results
    return doc


def test_tables_target_per_table_cost_ratio_and_the_estimate_at_two_thousand() -> None:
    doc = _tables_doc([_tables(200, 176.0, 150.0), _tables(10, 100.0)])
    s = report.summary(doc)
    assert s["tables_ratio"] == 1.76
    assert s["tables_full_build_ratio"] == 1.5
    assert s["tables_per_table_s"] == 0.4  # (176 - 100) / 190
    assert s["tables_estimate_s"] == 896.0  # 176 + 0.4 x 1,800
    five = s["targets"][4]
    assert five["status"] == "met"
    assert five["figure"] == (
        "1.76x (176.0 s at 200 tables, 100.0 s at 10; 20,000 changes); 0.40 s per table, "
        "about 896 s at 2,000 tables"
    )
    markdown = report.markdown(doc)
    assert (
        "| 1 | 200 | 21,000 | 150.0 | 3.0 | 120.0 | 176.0 | 200 / 400 | 300.0 | yes |" in markdown
    )
    # a result of the bench before the first typed build was measured apart
    del doc["tables"][1]["typed_gold_build_s"]
    assert (
        "| 2 | 10 | 21,000 | 100.0 | 3.0 | - | 100.0 | 10 / 20 | 15.0 | yes |"
        in report.markdown(doc)
    )
    assert "first build with it -)" in report.tables_line(doc["tables"][1])
    assert "= 0.40 s. 200 / 10 tables = 1.76x" in markdown
    assert "At 2,000 tables" in markdown and "about 896 s per build (9.0x" in markdown


def test_tables_runs_alternate_and_each_count_is_its_runs_median() -> None:
    assert cli.tables_order(10, 200, 1) == [10, 200]
    assert cli.tables_order(10, 200, 2) == [10, 200, 200, 10]
    assert cli.tables_order(10, 200, 3) == [10, 200, 200, 10, 10, 200]
    # the machine slowed down by 40 s during the part: A B B A still compares like with like
    runs = [_tables(10, 100.0), _tables(200, 160.0), _tables(200, 200.0), _tables(10, 140.0)]
    s = report.summary(_tables_doc(runs))
    assert s["tables_ratio"] == 1.5  # 180 / 120, where the first pair alone says 1.6
    assert s["tables_per_table_s"] == 0.316  # (180 - 120) / 190
    five = s["targets"][4]
    assert five["status"] == "met"
    assert five["figure"].startswith(
        "1.50x (medians of 2 runs each: 180.0 s at 200 tables, 120.0 s at 10;"
    )
    markdown = report.markdown(_tables_doc(runs))
    assert "| 3 | 200 | 21,000 | 100.0 | 3.0 | 120.0 | 200.0 |" in markdown
    assert "| 4 | 10 | 21,000 | 100.0 | 3.0 | 120.0 | 140.0 |" in markdown
    assert "Per source table (medians): (180.0 - 120.0 s)" in markdown
    # one wrong run of a count makes the count's gold wrong
    runs[2] = _tables(200, 170.0, right=False)
    assert report.targets(_tables_doc(runs))[4]["status"] == "NOT met"


def test_tables_target_not_met_not_measured_and_wrong_gold() -> None:
    assert report.targets(_tables_doc([_tables(10, 100.0), _tables(200, 201.0)]))[4]["status"] == (
        "NOT met"
    )
    wrong = _tables_doc([_tables(10, 100.0), _tables(200, 150.0, right=False)])
    assert report.targets(wrong)[4]["status"] == "NOT met"
    assert "gold DIFFERS from the oracle" in report.targets(wrong)[4]["figure"]
    # other table counts than 10 and 200: the figure, but no verdict
    other = report.targets(_tables_doc([_tables(2, 100.0), _tables(6, 300.0)]))[4]
    assert other["status"] == "not measured" and other["figure"].startswith("3.00x")
    assert report.targets(_tables_doc([_tables(10, 100.0)]))[4]["status"] == "not measured"
    # more tables but faster (noise): met, and no estimate drawn from a negative cost
    faster = _tables_doc([_tables(10, 100.0), _tables(200, 90.0)])
    assert report.targets(faster)[4]["status"] == "met"
    assert "2,000 tables" not in report.targets(faster)[4]["figure"]
    assert "no per-table cost to extrapolate" in report.markdown(faster)
    assert _statuses(_document([], []))[5] == "not measured"


def test_markdown_splits_each_stages_peak_by_process_kind() -> None:
    result = _format_result("a", 3.0, 1.0, 2.0)
    incremental = result["stages"]["incremental_batch"]
    incremental["peak_rss_bytes"] = 13 * 2**29
    incremental["rss_by_kind_at_peak_bytes"] = {"jvm": 5 * 2**30, "pyspark_worker": 3 * 2**29}
    incremental["processes_by_kind_at_peak"] = {"jvm": 1, "pyspark_worker": 4}
    lines = report.memory_markdown([result])
    assert lines[-1] == "| a | incremental batch | 6,656 | 5,120 (1) | - | 1,536 (4) | - | - |"
    assert len(lines) == 6  # only the stage measured with the split has a row
    assert report.memory_markdown([_format_result("b", 3.0, 1.0, 2.0)]) == []


def test_the_incremental_target_names_a_one_format_deployment() -> None:
    doc = _document([_format_result("a", 3.0, 1.0, 2.0)], [])
    doc["incremental"] = [_incremental(45.0, 20.0)]
    shipped = {t["target"]: t["figure"] for t in report.summary(doc)["targets"]}[3]
    assert "deployed" not in shipped
    doc["incremental"] = [{**_incremental(45.0, 20.0), "cdc_formats": ["dts_canal_json"]}]
    figure = {t["target"]: t["figure"] for t in report.summary(doc)["targets"]}[3]
    assert "on 200,000, the project deployed for dts_canal_json alone; script 20.0 s" in figure


def test_the_incremental_build_shows_its_spark_stages_beside_its_nodes() -> None:
    doc = _document([_format_result("a", 3.0, 1.0, 2.0)], [])
    doc["incremental"] = [_incremental(45.0, 20.0)]
    assert "Spark stages" not in report.markdown(doc)  # the event log was off
    nodes = doc["incremental"][0]["incremental_build_nodes"]
    nodes["task_seconds_of_slowest"] = {"row_states": 2.5}
    nodes["slowest_stages"] = [
        {
            "node": "row_states",
            "stage_id": 41,
            "seconds": 1.5,
            "tasks": 8,
            "task_s": 2.4,
            "input_rows": 76260,
            "shuffle_read_mb": 0.0,
            "shuffle_write_mb": 12.0,
            "output_mb": 0.0,
        }
    ]
    text = report.markdown(doc)
    assert (
        "Spark task time (event log) of the slowest nodes: row_states 2.5 s in 4.0 s; slowest "
        "stages (wall time, which counts waiting for a core too): row_states #41 1.50 s (8 "
        "tasks, 2.40 s of task time; read 76,260 rows; shuffle in / out 0.0 / 12.0 MB)."
    ) in text


def test_the_script_as_first_written_is_shown_beside_the_one_that_parses_once() -> None:
    canal = _format_result("dts_canal_json", 3.0, 1.0, 2.0)
    canal["baselines"][report.AS_WRITTEN] = _baseline(5.0)
    avro = _format_result("dts_avro", 3.0, 1.0, 2.0)  # no as-written script: Python decoding
    markdown = report.markdown(_document([canal, avro], []))
    rows = [line for line in markdown.splitlines() if line.startswith("| dts_") and "x)" in line]
    assert rows == [
        "| dts_canal_json | 4.0 | 2.00 (2.0x) | 0.50 (8.0x) | 0.20 (20.0x) | 5.00 (0.8x) |",
        "| dts_avro | 4.0 | 2.00 (2.0x) | 0.50 (8.0x) | 0.20 (20.0x) | - |",
    ]
    assert report.summary(_document([canal, avro], []))["pyspark_ratio_overall"] == 2.0
