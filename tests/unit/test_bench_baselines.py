"""The benchmark's baselines (issue 7) compute the simulator oracle's live rows on small
workloads of every format: the Python floor and DuckDB for every format, the PySpark script
for three (Spark is slow to start); a producer-retry duplicate re-delivered at a later offset
does not win; of two topics carrying one table with equal positions, the topic last by name
wins (as in the pipeline); ``check.differences`` reports lost deletes and stale values. Each
format's baselines are found in its plug-in (``baseline.py``); a plug-in without them is named
with the file to add, and no shared bench module names a format."""

from __future__ import annotations

import ast
import dataclasses
import sys
import types
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cdc_lakehouse import formats as manifest
from cdc_lakehouse.formats.plugin import Change, Format
from cdc_lakehouse.tools.bench.baselines import (
    BaselineResult,
    check,
    duckdb_baseline,
    python_floor,
    row_key,
)
from cdc_lakehouse.tools.bench.baselines.formats import (
    BENCH_KEYS,
    MissingBaselineError,
    Value,
    baseline,
    plugin_baseline,
)
from cdc_lakehouse.tools.bench.baselines.plugin_api import Baseline, DuckDbEvents
from cdc_lakehouse.tools.bench.workload import Workload, build
from cdc_lakehouse.tools.simulate.encoders import ENCODERS
from ingest.dump import DumpRecord
from tests.dbt_models import conformance, cross_topic_cases

FORMATS = sorted(ENCODERS)
CHANGES, BATCH_CHANGES, SEED = 400, 50, 17


@cache
def workload(format_: str) -> Workload:
    return build(format_, CHANGES, BATCH_CHANGES, SEED)


def records_of(load: Workload) -> list[DumpRecord]:
    """History and new batch, as the pipeline ingests both."""
    return load.history_delivery.records + load.batch_delivery.records


def values_of(records: list[DumpRecord]) -> list[Value]:
    return [(r.topic, r.partition, r.offset, r.value) for r in records]


def bronze_table(records: list[DumpRecord]) -> pa.Table:
    """The records with the bronze columns the baselines read (``bronze.kafka_records``)."""
    return pa.table(
        {
            "key": pa.array([r.key for r in records], pa.binary()),
            "value": pa.array([r.value for r in records], pa.binary()),
            "topic": pa.array([r.topic for r in records], pa.string()),
            "partition": pa.array([r.partition for r in records], pa.int32()),
            "offset": pa.array([r.offset for r in records], pa.int64()),
        }
    )


def run_duckdb(records: list[DumpRecord], load: Workload, tmp_path: Path) -> BaselineResult:
    path = tmp_path / f"{load.format}.parquet"
    pq.write_table(bronze_table(records), path)
    return duckdb_baseline.run([str(path)], load.topics, load.format, threads=2)


def assert_equals_oracle(load: Workload, result: BaselineResult, records: int) -> None:
    expected = check.oracle_rows(load)
    assert expected, "the workload leaves live rows"
    assert check.differences(expected, result.rows, check.compared_columns(load.history)) == []
    # every row change decoded once per delivered copy (a split update: twice)
    assert len(load.whole.row_changes) <= result.events <= 2 * records * 20  # Canal: 20 a message
    assert result.seconds > 0


@pytest.mark.parametrize("format_", FORMATS)
def test_python_floor_equals_oracle(format_: str) -> None:
    load = workload(format_)
    records = records_of(load)
    result = python_floor.run(values_of(records), format_)
    assert_equals_oracle(load, result, len(records))
    assert result.cores == 1


@pytest.mark.parametrize("format_", FORMATS)
def test_duckdb_equals_oracle(format_: str, tmp_path: Path) -> None:
    load = workload(format_)
    records = records_of(load)
    result = run_duckdb(records, load, tmp_path)
    assert_equals_oracle(load, result, len(records))
    assert result.cores == 2


def test_python_floor_reads_bronze_parquet(tmp_path: Path) -> None:
    load = workload("qlik_json")
    records = records_of(load)
    path = tmp_path / "bronze.parquet"
    table = bronze_table(records)
    other = table.slice(0, 5).set_column(2, "topic", pa.array(["other.topic"] * 5))
    pq.write_table(pa.concat_tables([table, other]), path)
    values = python_floor.load_values([str(path)], load.topics)
    assert sorted(values, key=lambda v: (v[1], v[2])) == sorted(
        values_of(records), key=lambda v: (v[1], v[2])
    )


def _stale_redelivery(load: Workload) -> tuple[list[DumpRecord], DumpRecord]:
    """The workload's records plus an exact copy of an old record re-delivered at the end of
    its partition: the record of a row change whose row changes again later and is live at the
    end, with a compared value the oracle does not hold (an offset-ordered "latest" would be
    wrong)."""
    records = records_of(load)
    expected = check.oracle_rows(load)
    columns = check.compared_columns(load.history)
    decode = baseline(load.format).changes
    seen: dict[tuple[str, tuple[object, ...]], int] = {}
    candidates: list[tuple[DumpRecord, tuple[str, tuple[object, ...]], dict]] = []
    # keyless records (Qlik MD messages, DTS BEGIN / COMMIT) go along: a Qlik DT message
    # needs its MD message to be decoded
    keyless = [r for r in records if r.key is None]
    for record in sorted(records, key=lambda r: (r.partition, r.offset)):
        for table, _order, deleted, row in decode(values_of([*keyless, record])):
            identity = (table, tuple(str(row.get(c)) for c in BENCH_KEYS[table]))
            seen[identity] = seen.get(identity, 0) + 1
            if not deleted:
                candidates.append((record, identity, row))
    for record, identity, row in candidates:
        table = identity[0]
        key_values = dict(zip(BENCH_KEYS[table], identity[1], strict=True))
        live = expected.get((table, row_key(BENCH_KEYS[table], key_values)))
        if live is None or seen[identity] < 3:
            continue
        if any(str(row.get(c)) != str(live.get(c)) for c in columns[table] if c in row):
            last = max(r.offset for r in records if r.partition == record.partition)
            copy = dataclasses.replace(record, offset=last + 1)
            return [*records, copy], copy
    raise AssertionError(f"{load.format}: no row changed three times and live at the end")


@pytest.mark.parametrize("format_", ["dataworks_json", "dts_canal_json", "qlik_avro"])
def test_duplicate_redelivered_later_does_not_win(format_: str, tmp_path: Path) -> None:
    load = workload(format_)
    records, copy = _stale_redelivery(load)
    assert copy.offset > max(r.offset for r in records_of(load) if r.partition == copy.partition)
    floor = python_floor.run(values_of(records), format_)
    duck = run_duckdb(records, load, tmp_path)
    for result in (floor, duck):
        assert_equals_oracle(load, result, len(records))


def _cross_topic_records(format_: str, *, a_first: bool) -> list[DumpRecord]:
    """One row of table xtopic_items through topics ``xtopic.<format>.a`` and ``.b`` whose
    changes share the format ordering fields, partition and offset, with different values
    (tests/dbt_models/cross_topic_cases.py, the format's ``cross_topic_case``); topic a's
    records first or last."""
    sides = cross_topic_cases.SIDES if a_first else tuple(reversed(cross_topic_cases.SIDES))
    records = []
    for side in sides:
        messages = conformance.provide(format_, "cross_topic_case").messages(side)
        for offset, value in enumerate(messages):
            raw = value if isinstance(value, bytes) else value.encode("utf-8")
            topic = cross_topic_cases.topic(format_, side)
            records.append(DumpRecord(topic, 0, offset, 0, 0, None, raw, (), "cross_topic", 1))
    return records


@pytest.mark.parametrize("a_first", [True, False])
@pytest.mark.parametrize("format_", FORMATS)
def test_equal_positions_in_two_topics_order_by_topic_name(
    format_: str, a_first: bool, tmp_path: Path
) -> None:
    """As in the pipeline, the topic is the last part of the ordering key: of two changes
    with equal format fields, partition and offset, the one of the topic last by name wins,
    whatever the delivery order."""
    case = conformance.provide(format_, "cross_topic_case")
    keys = {cross_topic_cases.TABLE: (case.key,)}
    records = _cross_topic_records(format_, a_first=a_first)
    expected = {
        (cross_topic_cases.TABLE, f'{{"{case.key}":"1"}}'): {
            case.key: "1",
            case.name: cross_topic_cases.EXPECTED_CURRENT,
        }
    }
    floor = python_floor.run(values_of(records), format_, keys=keys)
    path = tmp_path / "bronze.parquet"
    pq.write_table(bronze_table(records), path)
    topics = sorted({r.topic for r in records})
    duck = duckdb_baseline.run([str(path)], topics, format_, threads=2, keys=keys)
    for result in (floor, duck):
        assert result.rows == expected, result.engine


def test_differences_reports_lost_delete_and_stale_update() -> None:
    load = workload("dataworks_json")
    expected = check.oracle_rows(load)
    columns = check.compared_columns(load.history)
    assert columns["customers"] == {"customer_id", "name", "email"}
    assert check.differences(expected, dict(expected), columns) == []

    actual = {key: dict(row) for key, row in expected.items()}
    lost = ("customers", '{"customer_id":"999999"}')  # a deleted row still there
    actual[lost] = {"customer_id": "999999", "name": "gone", "email": None}
    stale_key = next(key for key in sorted(actual) if key[0] == "orders")
    actual[stale_key]["note"] = "an older value"  # an older update won
    actual[stale_key]["amount"] = "1.5"  # not compared (decimal)
    problems = check.differences(expected, actual, columns)
    text = "\n".join(problems)
    assert f"{len(expected)} rows expected, {len(expected) + 1} found" in text
    assert "1 extra" in text and '{"customer_id":"999999"}' in text
    assert "1 differing values" in text
    assert "note: expected" in text and "'an older value'" in text
    assert "amount" not in text

    missing = dict(expected)
    del missing[stale_key]
    assert "1 missing" in "\n".join(check.differences(expected, missing, columns))


def test_row_key_is_canonical() -> None:
    assert row_key(["order_id", "line_no"], {"order_id": "7", "line_no": "1"}) == (
        '{"line_no":"1","order_id":"7"}'
    )
    assert row_key(["k"], {"k": 'Zoë "x"'}) == '{"k":"Zoë \\"x\\""}'


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown format"):
        python_floor.run([], "debezium_avro")


@pytest.mark.parametrize("format_", manifest.NAMES)
def test_every_format_has_its_baselines_in_its_plugin(format_: str) -> None:
    """Found by discovery: ``BASELINES`` of ``cdc_lakehouse.formats.<folder>.baseline``."""
    found = baseline(format_)
    module = sys.modules[f"{manifest.get(format_).package}.baseline"]
    assert module.BASELINES[format_] is found
    assert found.duckdb is not None or found.python_decode
    assert found.spark_sql or found.python_decode


def _fake_format(monkeypatch: pytest.MonkeyPatch, baselines: dict | None) -> Format:
    """A format of plug-in ``cdc_lakehouse.formats.fake_plugin``, whose ``baseline`` module
    holds ``baselines`` (None: no ``baseline`` module)."""
    package = types.ModuleType("cdc_lakehouse.formats.fake_plugin")
    package.__path__ = []
    monkeypatch.setitem(sys.modules, package.__name__, package)
    if baselines is not None:
        module = types.ModuleType(f"{package.__name__}.baseline")
        module.BASELINES = baselines  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, module.__name__, module)
    return dataclasses.replace(
        manifest.MANIFEST[0], name="fake_json", staging_folder="fake_plugin", gold_folder="fake"
    )


def test_a_plugin_without_baselines_is_named_with_the_file_to_add(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fmt = _fake_format(monkeypatch, None)
    with pytest.raises(
        MissingBaselineError,
        match=r"'fake_json'.*add src/cdc_lakehouse/formats/fake_plugin/baseline\.py with BASELINES",
    ):
        plugin_baseline(fmt)
    fmt = _fake_format(monkeypatch, {"other_json": None})
    with pytest.raises(
        MissingBaselineError,
        match=r"'fake_json'.*BASELINES of src/cdc_lakehouse/formats/fake_plugin/baseline\.py "
        "must map it",
    ):
        plugin_baseline(fmt)
    found = Baseline(
        changes=lambda values: iter(()),
        duckdb=DuckDbEvents("select 1"),
        spark_schema="string",
        spark_events="select 1",
    )
    assert plugin_baseline(_fake_format(monkeypatch, {"fake_json": found})) is found


def test_a_baseline_says_why_a_part_is_decoded_in_python() -> None:
    def changes(values: Iterable[Value]) -> Iterator[Change]:
        return iter(())

    with pytest.raises(ValueError, match="python_decode"):
        Baseline(changes=changes)
    with pytest.raises(ValueError, match="together"):
        Baseline(changes=changes, spark_schema="string", python_decode="why")
    with pytest.raises(ValueError, match="spark_changes"):
        Baseline(
            changes=changes,
            spark_schema="string",
            spark_events="select 1",
            spark_changes=lambda raw: changes,
            python_decode="why",
        )
    assert Baseline(changes=changes, python_decode="Avro").spark_decoder(None) is changes  # type: ignore[arg-type]


SHARED = Path(duckdb_baseline.__file__).resolve().parents[1]
"""``src/cdc_lakehouse/tools/bench``: the benchmark's shared modules."""


@pytest.mark.parametrize("path", sorted(SHARED.glob("baselines/*.py")), ids=lambda path: path.name)
def test_no_shared_baseline_module_names_a_format(path: Path) -> None:
    """A format's baselines live in its plug-in: no string of a shared baseline module's code
    (docstrings aside) names a registry format or a plug-in folder."""
    names = set(manifest.NAMES) | set(manifest.staging_folders())
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    named = sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and any(name in node.value for name in names)
    )
    assert named == []


@pytest.mark.parametrize(
    ("format_", "parse_once"),
    [
        ("dts_canal_json", True),
        ("dts_canal_json", False),
        ("qlik_avro", True),
        ("debezium_json", True),
    ],
)
def test_pyspark_script_equals_oracle(spark, format_: str, parse_once: bool) -> None:
    from cdc_lakehouse.tools.bench.baselines import pyspark_script

    load = workload(format_)
    records = records_of(load)
    source = f"baseline_test.bronze_{format_}"
    output = f"baseline_test.latest_{format_}"
    if not spark.catalog.databaseExists("baseline_test"):
        spark.sql("create database baseline_test")
    spark.createDataFrame(bronze_table(records)).write.mode("overwrite").format(
        "parquet"
    ).saveAsTable(source)
    try:
        result = pyspark_script.run(
            spark, source, load.topics, format_, output, parse_once=parse_once
        )
        assert_equals_oracle(load, result, len(records))
        assert spark.table(output).count() == len(result.rows)
    finally:
        spark.sql(f"drop table if exists {source}")
        spark.sql(f"drop table if exists {output}")


def test_pyspark_script_parses_each_json_message_once(spark) -> None:
    """The optimized plan of each JSON format's script holds one from_json (Qlik JSON two: its
    metadata messages are read again for the join); the script as first written parses a
    Canal message once per pushed-down filter and once for the projection."""
    from cdc_lakehouse.tools.bench.baselines import pyspark_script

    spark.sql(
        "select 't' as topic, 0 as `partition`, id as `offset`, cast(concat("
        """'{"data":[{"id":"', id, '"}],"table":"t","type":"INSERT","es":1,"isDdl":false}'"""
        ") as binary) as value from range(3)"
    ).createOrReplaceTempView(pyspark_script.RAW_VIEW)
    counts = {
        (format_, parse_once): pyspark_script.parse_count(
            pyspark_script.events_frame(spark, format_, parse_once=parse_once)[0]
        )
        for format_ in ("dts_canal_json", "dataworks_json", "lindorm_debezium", "qlik_json")
        for parse_once in (True, False)
    }
    assert counts[("dts_canal_json", False)] == 5
    assert {k: v for k, v in counts.items() if k[1]} == {
        ("dts_canal_json", True): 1,
        ("dataworks_json", True): 1,
        ("lindorm_debezium", True): 1,
        ("qlik_json", True): 2,
    }
    rows = pyspark_script.events_frame(spark, "dts_canal_json")[0].collect()
    assert [(r.tbl, r.offset, r.row) for r in rows] == [("t", i, {"id": str(i)}) for i in range(3)]


@pytest.mark.parametrize("format_", ["dts_canal_json", "qlik_avro"])
def test_pyspark_script_orders_equal_positions_by_topic_name(spark, format_: str) -> None:
    from cdc_lakehouse.tools.bench.baselines import pyspark_script

    case = conformance.provide(format_, "cross_topic_case")
    records = _cross_topic_records(format_, a_first=True)
    source = f"baseline_test.bronze_xtopic_{format_}"
    output = f"baseline_test.latest_xtopic_{format_}"
    if not spark.catalog.databaseExists("baseline_test"):
        spark.sql("create database baseline_test")
    spark.createDataFrame(bronze_table(records)).write.mode("overwrite").format(
        "parquet"
    ).saveAsTable(source)
    try:
        topics = sorted({r.topic for r in records})
        keys = {cross_topic_cases.TABLE: (case.key,)}
        result = pyspark_script.run(spark, source, topics, format_, output, keys=keys)
        assert result.rows == {
            (cross_topic_cases.TABLE, f'{{"{case.key}":"1"}}'): {
                case.key: "1",
                case.name: cross_topic_cases.EXPECTED_CURRENT,
            }
        }
    finally:
        spark.sql(f"drop table if exists {source}")
        spark.sql(f"drop table if exists {output}")


def test_pyspark_script_cli_errors(capsys: pytest.CaptureFixture[str]) -> None:
    from cdc_lakehouse.tools.bench.baselines import pyspark_script

    with pytest.raises(SystemExit):
        pyspark_script.main(["--format", "nope", "--source-table", "a.b", "--topic", "t"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        pyspark_script.main(
            [
                "--format",
                "qlik_json",
                "--source-table",
                "a;b",
                "--topic",
                "t",
                "--output-table",
                "o",
            ]
        )
    assert "--source-table 'a;b'" in capsys.readouterr().err
