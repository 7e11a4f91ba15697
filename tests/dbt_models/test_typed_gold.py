"""Typed gold per source table (written by ``python -m cdc_lakehouse.codegen gold-tables``; the
committed ones, of the bundled sample's and the tests' tables, in
sample_data/models/marts/current_state/tables/examples) on the built lake: Spark column types,
typed values, and no drift between the committed models and what the command generates now."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from tests.dbt_models import typed_gold_cases as cases

pytestmark = pytest.mark.dbt

TABLES_DIR = (
    Path(__file__).resolve().parents[2]
    / "sample_data"
    / "models"
    / "marts"
    / "current_state"
    / "tables"
    / "examples"
)
COMMITTED = sorted(p.stem for p in TABLES_DIR.rglob("*.sql"))


def declared_types() -> dict[str, dict[str, str]]:
    """model -> column -> data_type of the committed ``_<folder>__models.yml`` files."""
    out = {}
    for path in TABLES_DIR.rglob("_*__models.yml"):
        for model in yaml.safe_load(path.read_text(encoding="utf-8"))["models"]:
            out[model["name"]] = {c["name"]: c["data_type"] for c in model["columns"]}
    return out


def micros(moment: datetime) -> int:
    return round((moment - datetime(1970, 1, 1, tzinfo=UTC)).total_seconds() * 1_000_000)


def rows_by_key(spark, relation: str, key: str, timestamps: tuple[str, ...] = ()) -> dict:
    """Rows of ``relation`` by ``key``; ``timestamps`` columns as epoch microseconds (UTC)."""
    columns = spark.sql(f"select * from {relation} limit 0").columns
    select = ", ".join(f"unix_micros({c}) as {c}" if c in timestamps else c for c in columns)
    return {r[key]: r.asDict() for r in spark.sql(f"select {select} from {relation}").collect()}


def test_sample_models_are_committed():
    assert "dataworks__mydatabase__myschema__tablename" in COMMITTED
    assert "qlik_json__sales_to_kafka__sales__customers" in COMMITTED
    assert "dts_avro__shop__all_types" in COMMITTED
    assert set(declared_types()) == set(COMMITTED)


def test_committed_models_have_the_declared_spark_types(spark, built_lake):
    for model, columns in declared_types().items():
        actual = dict(spark.table(f"gold.{model}").dtypes)
        assert actual == columns, model


def test_dataworks_sample_values(spark, built_lake):
    rows = rows_by_key(
        spark, "gold.dataworks__mydatabase__myschema__tablename", "id", ("ts", "last_event_time")
    )
    assert rows[222]["bindata"] == bytearray(b"donald-bytes")  # base64 ZG9uYWxkLWJ5dGVz
    assert rows[222]["ts"] == 1590315269000 * 1000  # DATE = epoch ms 1590315269000, UTC
    assert rows[222]["rowid"] == "AAIUMPAAFAACxExAAE"


def test_qlik_sample_values(spark, built_lake):
    for fmt in ("qlik_json", "qlik_avro"):
        rows = rows_by_key(spark, f"gold.{fmt}__sales_to_kafka__sales__customers", "id")
        assert rows[4]["balance"] == Decimal("12345678.90")  # NUMERIC(10,2), exact
        assert rows[10]["balance"] == Decimal("1500.00")
        assert rows[10]["photo"] == bytearray(b"\x89PNG")  # hex 89504E47
        assert rows[4]["photo"] == bytearray(b"\x00\xff")
        assert rows[4]["updated_at"] == datetime(2024, 1, 15, 10, 45)  # timestamp_ntz


def test_dts_avro_sample_values(spark, built_lake):
    rows = rows_by_key(spark, "gold.dts_avro__shop__all_types", "id", ("created_at",))
    row = rows[1]
    # TIMESTAMP2: Avro Timestamp 1696985000 s + 123456 us, UTC
    assert row["created_at"] == 1696985000 * 1_000_000 + 123456
    assert row["updated_at"] == datetime(2023, 10, 11, 9, 30, 0, 500000)  # DATETIME2 wall clock
    assert row["local_time"] == datetime(2023, 10, 11, 17, 30)  # "... +08:00": wall clock kept
    assert row["birthday"] == date(1990, 1, 31)
    assert row["price"] == "12345678901234567890.123450"  # NEWDECIMAL: text, exact
    assert row["name"] == "中文 name"
    assert row["opens_at"] == "08:30:00"


def test_untyped_formats_are_strings(spark, built_lake):
    types = dict(spark.table("gold.dts_shareplex__cl_biz1__mio_log").dtypes)
    assert {types[c] for c in ("mio_log_id", "cntr_no")} == {"string"}
    rows = rows_by_key(spark, "gold.dts_shareplex__cl_biz1__mio_log", "mio_log_id")
    assert rows["32537893"]["cntr_no"] == "1171201606"


def _runnable(sql: str) -> str:
    """A generated model's SQL for spark.sql: Jinja comments removed, its read of gold's live
    current versions in its table's bucket (macros current_versions and row_bucket) replaced
    by the view of the same rows, kept where the row's table hashes to the model's bucket."""
    sql = re.sub(r"\{#.*?#\}", "", sql, flags=re.DOTALL)
    call = re.search(
        r"\{\{ current_versions\(\s*ref\('int_row_versions'\),\s*live_only=true,"
        r'\s*row_bucket=row_bucket\("([^"\\]*)"\)\s*\) \}\}',
        sql,
    )
    assert call is not None
    identity = "source_format, source_database, source_schema, source_table"
    rows = (
        f"select * from gold.current_rows where pmod(xxhash64({identity}), 16)"
        f" = pmod(xxhash64({call.group(1)}), 16)"
    )
    return sql.replace(call.group(0), rows)


@pytest.fixture(scope="module")
def generated(spark, built_lake):
    from cdc_lakehouse.codegen.gold_tables import plan_models
    from cdc_lakehouse.codegen.silver import read_mappings, read_tables

    tables, mappings = read_tables(spark), read_mappings(spark)
    return tables, mappings, {m.name: m for m in plan_models(tables, mappings)}


@pytest.mark.parametrize("model", sorted(cases.EXPECTED))
def test_generated_models_of_the_type_cases(spark, generated, model):
    from cdc_lakehouse.codegen.gold_tables import render_model_sql

    sql = _runnable(render_model_sql(generated[2][model]))
    view = f"typed_case_{model}"
    spark.sql(sql).createOrReplaceTempView(view)
    types = cases.EXPECTED_TYPES[model]
    actual_types = dict(spark.table(view).dtypes)
    assert {c: actual_types.get(c) for c in types} == types
    key = next(iter(types))
    timestamps = tuple(c for c, t in types.items() if t == "timestamp")
    rows = rows_by_key(spark, view, key, timestamps)
    for key_value, expected in cases.EXPECTED[model].items():
        assert key_value in rows, (model, key_value, list(rows))
        actual = rows[key_value]
        for column, value in expected.items():
            want = micros(value) if column in timestamps and value is not None else value
            assert actual[column] == want, (model, column)


def test_codegen_check_reports_no_drift(generated):
    from cdc_lakehouse.codegen.cli import refresh

    tables, mappings, _ = generated
    report = io.StringIO()
    # DataHub Tuple records carry no database or schema, so the simulator's Tuple table
    # orders (tests/dbt_models/simulation.py) shares the sample's identity and adds columns.
    committed = [name for name in COMMITTED if name != "datahub_tuple__orders"]
    code = refresh(tables, mappings, TABLES_DIR, table_names=committed, check=True, stdout=report)
    assert code == 0, report.getvalue()


def test_the_key_test_names_duplicated_keys_and_nulls(spark, run_dbt, built_lake):
    """The one data test of a typed model (generic test column_checks) passes on the built lake
    and names each broken check: a key held by two rows, a NULL in a not-null column."""
    model = "dataworks__mydatabase__myschema__tablename"  # key id (bigint), live rows
    run_dbt("compile", "--select", f"{model},test_type:generic")
    target = Path(run_dbt.target_path)
    manifest = json.loads((target / "manifest.json").read_text(encoding="utf-8"))
    (node,) = [
        n
        for n in manifest["nodes"].values()
        if n["resource_type"] == "test" and n.get("attached_node") == f"model.cdc_lakehouse.{model}"
    ]
    assert node["test_metadata"]["name"] == "column_checks"
    sql = (target / node["compiled_path"]).read_text(encoding="utf-8")
    assert f"from gold.{model}" in sql
    assert spark.table(f"gold.{model}").count() > 0
    assert spark.sql(sql).collect() == []

    replaced = {"id": "id + 1000000 as id", "last_op": "null as last_op"}
    broken = ", ".join(replaced.get(c, c) for c in spark.table(f"gold.{model}").columns)
    spark.sql(
        f"select * from gold.{model} "
        f"union all (select * from gold.{model} order by id limit 1) "
        f"union all (select {broken} from gold.{model} order by id limit 1)"
    ).createOrReplaceTempView("typed_with_broken_rows")
    failures = spark.sql(sql.replace(f"from gold.{model}", "from typed_with_broken_rows"))
    lowest = spark.sql(f"select min(id) as id from gold.{model}").collect()[0]["id"]
    assert sorted(
        (r["check_name"], r["column_name"], r["failing_rows"], r["example"])
        for r in failures.collect()
    ) == [
        ("not null", "last_op", 1, None),
        ("unique", "id", 1, f'{{"id":{lowest}}}'),
    ]
