"""Unit tests of the typed gold generator (no Spark): type mapping, generated SQL / yml, file
protection and the command's argument errors."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import jinja2
import pytest
import yaml

from cdc_lakehouse.codegen import cli, gold_tables
from cdc_lakehouse.codegen.gold_tables import (
    SchemaVersion,
    SelectionError,
    SilverTable,
    file_state,
    generate_files,
    plan_models,
    plan_writes,
    select_models,
    sql_literal,
)
from cdc_lakehouse.codegen.type_mapping import parse_seed_rows, parse_source_type, resolve

PROJECT = Path(__file__).resolve().parents[2]
SEED = PROJECT / "seeds" / "cdc_type_mappings.csv"


@pytest.fixture(scope="module")
def mappings():
    with SEED.open(encoding="utf-8") as handle:
        return parse_seed_rows(csv.DictReader(handle))


def version(columns: dict[str, str | None], keys=None, number="1", first="0001") -> SchemaVersion:
    return SchemaVersion(number, tuple(columns), columns, tuple(keys) if keys else None, first)


def table(fmt: str, db: str | None, name: str, *versions, **kwargs) -> SilverTable:
    return SilverTable(fmt, db, kwargs.pop("schema", None), name, tuple(versions), **kwargs)


DATAWORKS = table(
    "dataworks_json",
    "shop",
    "orders",
    version(
        {
            "id": "LONG",
            "binData": "BYTES",
            "ts": "DATE",
            "ok": "BOOLEAN",
            "#alibaba_rds_row_id#": "LONG",
        },
        keys=["id"],
    ),
)
CANAL = table(
    "dts_canal_json",
    "shop",
    "items",
    version(
        {
            "id": "bigint(20) unsigned",
            "price": "decimal(12,2)",
            "wide": "decimal(65,30)",
            "made": "datetime(3)",
            "stamp": "timestamp",
            "geo": "geometry",
        },
        keys=["id"],
    ),
    source_dialect="mysql",
)
SHAREPLEX = table(
    "dts_shareplex_json",
    "CL_BIZ1",
    "MIO_LOG",
    image_columns=("MIO_LOG_ID", "CNTR_NO"),
    event_key_sets=(("MIO_LOG_ID",),),
)
QLIK = table(
    "qlik_json",
    "task",
    "CUSTOMERS",
    version({"ID": "INT4", "BALANCE": "NUMERIC(10,2)", "PHOTO": "BYTES(16)"}, keys=["ID"]),
    schema="SALES",
)


def test_source_type_normalization():
    assert parse_source_type("DECIMAL(12, 2) UNSIGNED ZEROFILL").base == "decimal unsigned"
    assert parse_source_type("DECIMAL(12, 2)").params == (12, 2)
    assert parse_source_type("varchar(255)").params == (255,)
    assert parse_source_type("enum('a','b,c')").base == "enum"
    assert (
        parse_source_type("int64 (org.apache.kafka.connect.data.Timestamp)").base
        == "int64 org.apache.kafka.connect.data.timestamp"
    )


@pytest.mark.parametrize(
    ("family", "source_type", "spark_type", "expression"),
    [
        ("mysql", "decimal(12,2)", "decimal(12,2)", "cast(v as decimal(12,2))"),
        ("mysql", "decimal(12)", "decimal(12,0)", "cast(v as decimal(12,0))"),
        ("mysql", "decimal", "decimal(10,0)", "cast(v as decimal(10,0))"),  # MySQL default
        ("mysql", "int(11) unsigned", "bigint", "cast(v as bigint)"),
        ("mysql", "varchar(20)", "string", "v"),
        ("mysql", "timestamp", "timestamp", "cast(concat(v, 'Z') as timestamp)"),
        ("oracle", "NUMBER(12,2)", "decimal(12,2)", "cast(v as decimal(12,2))"),
        ("qlik", "NUMERIC(38,10)", "decimal(38,10)", "cast(v as decimal(38,10))"),
        ("qlik", "BYTES(16)", "binary", "unhex(v)"),
        ("dataworks", "DATE", "timestamp", "timestamp_millis(cast(v as bigint))"),
        ("dataworks", "BYTES", "binary", "unbase64(v)"),
        ("sqlserver", "decimal", "decimal(18,0)", "cast(v as decimal(18,0))"),
    ],
)
def test_type_templates_with_parameters(mappings, family, source_type, spark_type, expression):
    resolved = resolve(family, source_type, mappings)
    assert (resolved.spark_type, resolved.render("v"), resolved.fallback_reason) == (
        spark_type,
        expression,
        None,
    )


@pytest.mark.parametrize(
    ("family", "source_type", "reason"),
    [
        ("mysql", "decimal(65,30)", "does not fit a Spark decimal"),
        ("oracle", "NUMBER", "gives no parameters"),  # floating NUMBER: no safe type
        ("qlik", "NUMERIC", "gives no parameters"),
        ("mysql", "geometry_collection_x", "no mapping for mysql type"),
        ("no_such_family", "int", "no mapping for no_such_family"),
        (None, "int", "declares no column types"),
        ("mysql", None, "declares no column types"),
    ],
)
def test_unknown_or_unsafe_types_become_string(mappings, family, source_type, reason):
    resolved = resolve(family, source_type, mappings)
    assert resolved.spark_type == "string"
    assert resolved.render("row_values['x']") == "row_values['x']"
    assert reason in resolved.fallback_reason


def test_seed_reads_dbt_spark_none_as_empty():
    parsed = parse_seed_rows(
        [
            {
                "type_family": "qlik",
                "source_type": "int4",
                "spark_type": "int",
                "value_expression": "None",
                "default_precision": None,
            }
        ]
    )
    assert parsed[("qlik", "int4")].value_expression == ""
    with pytest.raises(ValueError, match="listed twice"):
        parse_seed_rows([{"type_family": "a", "source_type": "b", "spark_type": "c"}] * 2)


def files_for(*tables, mappings) -> dict[str, str]:
    models = plan_models(list(tables), mappings)
    return generate_files(models, models)


def test_dataworks_model_sql_and_yml(mappings):
    files = files_for(DATAWORKS, mappings=mappings)
    assert sorted(files) == [
        "dataworks/_dataworks__models.yml",
        "dataworks/dataworks__shop__orders.sql",
    ]
    sql = files["dataworks/dataworks__shop__orders.sql"]
    assert (
        "    {{ current_versions(\n"
        "        ref('int_row_versions'),\n"
        "        live_only=true,\n"
        "        row_bucket=row_bucket(\"'dataworks_json', 'shop', null, 'orders'\")\n"
        "    ) }}\n"
    ) in sql
    assert (
        "    where source_format = 'dataworks_json'\n"
        "        and source_database = 'shop'\n"
        "        and source_schema is null\n"
        "        and source_table = 'orders'\n"
    ) in sql
    typed = [
        "        cast(row_values['id'] as bigint) as id,",
        "        unbase64(row_values['binData']) as bindata,",
        "        timestamp_millis(cast(row_values['ts'] as bigint)) as ts,",
        "        cast(row_values['ok'] as boolean) as ok,",
        "        cast(row_values['#alibaba_rds_row_id#'] as bigint) as alibaba_rds_row_id,",
        "        last_op,",
        "        last_ordering_key,",
        "        last_event_time",
        "    from table_rows",
    ]
    assert "\n".join(typed) in sql
    yml = files["dataworks/_dataworks__models.yml"]
    assert "  - name: dataworks__shop__orders\n" in yml
    # public, with an enforced contract of the columns' Spark types (docs/how-to/contracts.md
    # "How to change a public model: contracts and access")
    (model,) = yaml.safe_load(yml)["models"]
    # meta cdc_typed_gold: what it was generated from, read by the stale-model warning
    # (tests/dbt/assert_typed_gold_matches_the_newest_schema.sql)
    assert model["config"] == {
        "access": "public",
        "contract": {"enforced": True},
        "meta": {
            "cdc_typed_gold": {
                "source": "'dataworks_json', 'shop', null, 'orders'",
                "schema_version": "'1'",
            }
        },
    }
    types = {column["name"]: column["data_type"] for column in model["columns"]}
    assert types["ts"] == "timestamp" and types["bindata"] == "binary", types
    assert '"Source column binData: BYTES -> binary (from base64' in yml
    assert "      - name: id\n" in yml
    # one test node: the key id unique, and id, last_op, last_ordering_key never NULL
    assert yml.count("    data_tests:\n") == 1
    assert (
        "    data_tests:\n"
        "      - column_checks:\n"
        "          name: column_checks_dataworks__shop__orders\n"
        "          arguments:\n"
        "            not_null: [id, last_op, last_ordering_key]\n"
        "            unique:\n"
        "              - [id]\n"
    ) in yml


def test_canal_fallbacks_are_described(mappings):
    files = files_for(CANAL, mappings=mappings)
    sql = files["dts_canal/dts_canal__shop__items.sql"]
    assert "cast(row_values['id'] as decimal(20, 0)) as id," in sql
    assert "cast(row_values['price'] as decimal(12, 2)) as price," in sql
    assert "        row_values['wide'] as wide," in sql
    assert "cast(row_values['made'] as timestamp_ntz) as made," in sql
    assert "cast(concat(row_values['stamp'], 'Z') as timestamp) as stamp," in sql
    yml = files["dts_canal/_dts_canal__models.yml"]
    assert "Source column wide: decimal(65,30) -> string (decimal(65,30) does not fit" in yml


def test_untyped_format_emits_strings_and_says_so(mappings):
    files = files_for(SHAREPLEX, mappings=mappings)
    sql = files["dts_shareplex/dts_shareplex__cl_biz1__mio_log.sql"]
    assert "        row_values['MIO_LOG_ID'] as mio_log_id,\n" in sql
    assert "        row_values['CNTR_NO'] as cntr_no,\n" in sql
    assert "declares no column types: every column is string" in sql
    yml = files["dts_shareplex/_dts_shareplex__models.yml"]
    assert "declares no column types: every column is string" in yml
    assert "unique:\n              - [mio_log_id]\n" in yml


def test_schema_versions_keys_and_qlik_names(mappings):
    older = version({"ID": "INT4", "GONE": "INT8"}, keys=["ID"], number="1", first="0001")
    newer = version({"ID": "INT4", "NAME": "STRING"}, keys=["ID"], number="2", first="0002")
    qlik = table("qlik_json", None, "T", older, newer, schema="S", image_columns=("EXTRA",))
    (model,) = plan_models([qlik], mappings)
    assert model.name == "qlik_json__s__t"
    assert [(c.name, c.resolved.spark_type) for c in model.columns] == [
        ("id", "int"),
        ("name", "string"),
        ("gone", "bigint"),
        ("extra", "string"),
    ]
    assert model.schema_version == "2"
    # silver keyed the changes in two ways (HBase ROW and SQL id): no key, no key tests
    mixed = table("lindorm_debezium", "c", "t", event_key_sets=(("ROW",), ("id",)))
    (mixed_model,) = plan_models([mixed], mappings)
    assert mixed_model.key_columns == ()
    yml = generate_files([mixed_model], [mixed_model])["lindorm/_lindorm__models.yml"]
    assert "unique:" not in yml
    assert "not_null: [last_op, last_ordering_key]" in yml
    assert "more than one way" in yml


def test_names_are_unique_and_columns_never_clash(mappings):
    a = table("dataworks_json", "db", "a.b", version({"x": "LONG"}))
    b = table(
        "dataworks_json", "db", "a_b", version({"X": "LONG", "x ": "LONG", "last_op": "LONG"})
    )
    models = plan_models([a, b], mappings)
    assert [m.name for m in models] == ["dataworks__db__a_b", "dataworks__db__a_b_2"]
    assert [c.name for c in models[1].columns] == ["x", "x_2", "last_op_2"]


def test_quotes_in_names_are_escaped(mappings):
    odd = table("dataworks_json", "d'b", "t\\x", version({"it's": "LONG"}))
    sql = files_for(odd, mappings=mappings)["dataworks/dataworks__d_b__t_x.sql"]
    assert "source_database = 'd\\'b'" in sql
    assert "source_table = 't\\\\x'" in sql
    assert "row_values['it\\'s']" in sql
    # the table's bucket: dbt's Jinja reads the argument back as the same SQL literals
    argument = re.search(r'row_bucket=row_bucket\(("(?:[^"\\]|\\.)*")\)', sql)
    assert argument is not None
    literals = jinja2.Environment().compile_expression(argument.group(1))()
    assert literals == "'dataworks_json', 'd\\'b', null, 't\\\\x'"


def test_generated_sql_follows_the_sql_style(mappings):
    """The generated models pass sqlfluff as generated (.sqlfluff and
    models/marts/current_state/tables/.sqlfluff): `make sql-fix` never edits one, which would
    make it a hand edit the command leaves alone."""
    from sqlfluff.core import FluffConfig, Linter

    tables_dir = PROJECT / "models" / "marts" / "current_state" / "tables"
    linter = Linter(config=FluffConfig.from_path(str(tables_dir)))
    files = files_for(DATAWORKS, CANAL, SHAREPLEX, mappings=mappings)
    for path, text in files.items():
        if path.endswith(".sql"):
            result = linter.lint_string(text, fname=str(tables_dir / path))
            assert [v.get_info_dict()["description"] for v in result.get_violations()] == [], path


def test_generated_file_protection(mappings):
    files = files_for(QLIK, mappings=mappings)
    path = "qlik_json/qlik_json__task__sales__customers.sql"
    text = files[path]
    assert file_state(text) == "generated"
    edited = text.replace("as balance", "as balance_eur")
    assert file_state(edited) == "edited"
    assert file_state("select 1\n") == "manual"

    newer = {**files, path: text.replace("as photo", "as picture")}
    by_path = {a.path: a.status for a in plan_writes(newer, files)}
    assert by_path[path] == "update"  # pristine generated file: refreshed
    assert {a.status for a in plan_writes(files, files)} == {"unchanged"}
    kept = {a.path: a.status for a in plan_writes(newer, {path: edited})}
    assert kept[path] == "kept_edited"
    assert {a.path: a.status for a in plan_writes(newer, {path: "x\n"})}[path] == "kept_manual"
    forced = {a.path: a.status for a in plan_writes(newer, {path: edited}, force=True)}
    assert forced[path] == "overwrite"


def test_refresh_writes_checks_and_keeps_hand_edits(tmp_path, mappings):
    out = tmp_path / "tables"
    run = io.StringIO()
    assert cli.refresh([DATAWORKS, QLIK], mappings, out, stdout=run) == 0
    sql = out / "dataworks" / "dataworks__shop__orders.sql"
    assert sql.is_file() and (out / "qlik_json" / "_qlik_json__models.yml").is_file()
    assert cli.refresh([DATAWORKS, QLIK], mappings, out, check=True, stdout=io.StringIO()) == 0

    sql.write_text(sql.read_text() + "-- hand edit\n")
    report = io.StringIO()
    assert cli.refresh([DATAWORKS], mappings, out, check=True, stdout=report) == 0
    assert "edited by hand" in report.getvalue()
    assert cli.refresh([DATAWORKS], mappings, out, stdout=io.StringIO()) == 0
    assert sql.read_text().endswith("-- hand edit\n")  # not overwritten silently
    assert cli.refresh([DATAWORKS], mappings, out, check=True, force=True, stdout=run) == 1
    assert cli.refresh([DATAWORKS], mappings, out, force=True, stdout=run) == 0
    assert "hand edit" not in sql.read_text()

    changed = table("dataworks_json", "shop", "orders", version({"id": "STRING"}, keys=["id"]))
    drift = io.StringIO()
    assert cli.refresh([changed], mappings, out, check=True, stdout=drift) == 1
    assert f"would update {sql}" in drift.getvalue()


def test_refreshing_one_table_keeps_the_folder_yml_of_the_others(tmp_path, mappings):
    other = table("dataworks_json", "shop", "users", version({"id": "LONG"}, keys=["id"]))
    out = tmp_path / "tables"
    cli.refresh([DATAWORKS, other], mappings, out, stdout=io.StringIO())
    before = (out / "dataworks" / "_dataworks__models.yml").read_text()
    cli.refresh([DATAWORKS, other], mappings, out, table_names=["users"], stdout=io.StringIO())
    assert (out / "dataworks" / "_dataworks__models.yml").read_text() == before


def test_selection_errors(mappings):
    models = plan_models([DATAWORKS, QLIK], mappings)
    assert [m.name for m in select_models(models, tables=["SALES.CUSTOMERS"])] == [
        "qlik_json__task__sales__customers"
    ]
    assert [m.name for m in select_models(models, formats=["dataworks_json"])] == [
        "dataworks__shop__orders"
    ]
    with pytest.raises(SelectionError, match="no table 'nope' in silver"):
        select_models(models, tables=["nope"])
    with pytest.raises(SelectionError, match="no table of format 'dts_avro'"):
        select_models(models, formats=["dts_avro"])
    with pytest.raises(SelectionError, match="silver has no source tables"):
        select_models([])


def test_bad_arguments_stop_with_a_message(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["gold-tables", "--format", "csv"])
    assert exited.value.code == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 2


LOG_CALL = '{{ log("HOSTILE", info=true) }}'
HOSTILE_NAMES = [
    LOG_CALL,
    '{% do run_query("create table pwned as select 1") %}t',
    "c$}{%",
    "{# unclosed",
    "#}",
    "{% raw %}{% endraw %}" + LOG_CALL,
    "{%- endraw -%}" + LOG_CALL + "{%- raw -%}",
    "${spark.app.name}",
    "it's",
    "back\\slash\\",
    "back`tick",
    '"double"',
    "'; drop table t; --",
    "*/ -- /*",
    "new\nline\r\n",
    "nul\x00",
    "esc\x1b[31m",
    "\u2028\x85\ufeff\u202e",
    "\ud800 lone surrogate",
    "中文 😀",
    "ON",
    "yes",
    "null",
    "x" * 1000,
]


class _Refused(Exception):
    pass


def _render_like_dbt(sql: str) -> tuple[str, list[str]]:
    """``sql`` rendered by a Jinja environment like dbt's, with the generator's macros stubbed;
    returns the text and the row_bucket arguments. Any other call (log, run_query, ...)
    raises :class:`_Refused`."""

    def refuse(*_args, **_kwargs):
        raise _Refused

    buckets: list[str] = []

    def row_bucket(literals: str) -> str:
        buckets.append(literals)
        return "bucket"

    class Context(dict):
        def __missing__(self, key):
            return refuse

    env = jinja2.Environment(undefined=jinja2.StrictUndefined, extensions=["jinja2.ext.do"])
    context = Context(
        ref=lambda name: name,
        current_versions=lambda *args, **kwargs: "rows",
        row_bucket=row_bucket,
    )
    return env.from_string(sql).render(context), buckets


def test_hostile_names_are_inert_in_every_generated_file(mappings):
    """Names are data: whatever a message names its table and columns (and declares as their
    types), the files hold no Jinja of theirs, dbt's Jinja renders the model with the
    generator's macros alone, the yml loads with every description as it is, and each name
    reaches the SQL as one string literal."""
    columns = {"id": "LONG", **{name: "STRING" for name in HOSTILE_NAMES}, "odd": LOG_CALL}
    hostile = [
        table(
            "dataworks_json",
            database,
            name,
            version(columns, keys=["id", "ON", "yes", "null"], number=LOG_CALL),
            schema=LOG_CALL,
        )
        for database, name in ((LOG_CALL, HOSTILE_NAMES[1]), ("db", "x" * 300))
    ]
    benign = files_for(DATAWORKS, mappings=mappings)["dataworks/dataworks__shop__orders.sql"]
    files = files_for(*hostile, mappings=mappings)
    (model, _long) = plan_models(hostile, mappings)
    for path, text in files.items():
        text.encode("utf-8")  # no lone surrogate: the file can be written
        if path.endswith(".sql"):
            # the braces of the file are the template's own: the same as a benign model's
            assert (text.count("{"), text.count("}")) == (benign.count("{"), benign.count("}"))
            # log() or run_query() would raise _Refused; the names pass through as they are
            rendered, buckets = _render_like_dbt(text)
            assert len(buckets) == 1
            assert [line for line in rendered.splitlines() if "row_values[" in line] == [
                line for line in text.splitlines() if "row_values[" in line
            ]
        else:
            # its only braces: the contracts' flow mappings
            braces = [line for line in text.splitlines() if "{" in line or "}" in line]
            assert braces == ["      contract: {enforced: true}"] * 2, path
    sql = files[model.path]
    for column in model.columns:
        assert f"row_values[{sql_literal(column.source_name)}]" in sql
        assert "\n" not in sql_literal(column.source_name)
    # the yml: names as YAML strings, descriptions as shown() gives them (no Jinja left)
    (doc,) = [
        m
        for m in yaml.safe_load(files["dataworks/_dataworks__models.yml"])["models"]
        if m["name"] == model.name
    ]
    described = {c["name"]: c["description"] for c in doc["columns"]}
    for column in model.columns:
        shown = gold_tables.shown(column.source_name)
        assert described[column.name].startswith(f"Source column {shown}: ")
        assert isinstance(column.name, str) and len(column.name) <= 130
    check = doc["data_tests"][0]["column_checks"]["arguments"]
    assert check["not_null"][:4] == ["id", "on", "yes", "null"]
    assert check["unique"] == [["id", "on", "yes", "null"]]
    assert gold_tables.shown(LOG_CALL) in doc["description"]


def test_literals_and_shown_text_are_one_printable_line_without_braces():
    assert sql_literal("a\nb{\\'\U000e0041 😀") == "'a\\u000ab\\u007b\\\\\\'\\udb40\\udc41 😀'"
    assert sql_literal("shop.orders") == "'shop.orders'"
    shown = gold_tables.shown
    for name in HOSTILE_NAMES:
        for text in (sql_literal(name), shown(name)):
            assert text.isprintable() and "{" not in text and "}" not in text
    assert shown("shop.orders") == "shop.orders"
    assert shown("a\nb{") == "a\\u000ab\\u007b"
    assert shown("\U000e0041 😀") == "\\U000e0041 😀"
    for word in ("on", "yes", "null", "true", "off"):
        assert yaml.safe_load(word) != word  # why such column names are quoted in the yml


def test_long_names_become_files_of_bounded_names(tmp_path, mappings):
    """A 300-character table name (and a 1,000-character column) gets its model, under a name
    cut to 180 characters that ends in a hash of the table's identity: two tables whose long
    names share their start get two models."""
    long_a = table(
        "dataworks_json", "db", "a" * 300 + "1", version({"id": "LONG", "c" * 1000: "LONG"})
    )
    long_b = table("dataworks_json", "db", "a" * 300 + "2", version({"id": "LONG"}))
    out = tmp_path / "tables"
    assert cli.refresh([long_a, long_b], mappings, out, stdout=io.StringIO()) == 0
    names = sorted(p.name for p in (out / "dataworks").iterdir())
    assert len(names) == 3 and names[0] == "_dataworks__models.yml"
    for name in names[1:]:
        assert name.startswith("dataworks__db__aaaa") and len(name) == 180 + len(".sql")
    models = plan_models([long_a, long_b], mappings)
    assert len({m.name for m in models}) == 2
    assert [len(c.name) for c in models[0].columns] == [2, 128]


def _refresh_through_main(monkeypatch, tables, mappings, out) -> int:
    """cli.main on ``tables`` instead of the lake's silver (no Spark)."""
    import cdc_lakehouse.runtime.spark_session
    from cdc_lakehouse.codegen import silver

    monkeypatch.setattr(cdc_lakehouse.runtime.spark_session, "get_spark", lambda: None)
    monkeypatch.setattr(silver, "read_tables", lambda _spark: tables)
    monkeypatch.setattr(silver, "read_mappings", lambda _spark: mappings)
    return cli.main(["gold-tables", "--out", str(out)])


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): (p.read_text() if p.is_file() else "<dir>")
        for p in sorted(root.rglob("*"))
    }


def test_a_file_that_cannot_be_written_stops_with_one_line_and_writes_nothing(
    tmp_path, mappings, monkeypatch, capsys
):
    out = tmp_path / "tables"
    other = table("dataworks_json", "shop", "users", version({"id": "LONG"}, keys=["id"]))
    assert _refresh_through_main(monkeypatch, [DATAWORKS], mappings, out) == 0
    # a new table whose file the system refuses (a folder in its place), and a change of the
    # folder's yml: neither is written
    (out / "dataworks" / "dataworks__shop__users.sql").mkdir()
    before = _tree(out)
    capsys.readouterr()
    assert _refresh_through_main(monkeypatch, [DATAWORKS, other], mappings, out) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith(f"error: cannot write {out / 'dataworks' / 'dataworks__shop__users.sql'}")
    assert "nothing was written" in err
    assert _tree(out) == before
    # a folder that cannot be made (a file in its place): nothing either, one line
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "qlik_json").write_text("not a folder\n")
    assert _refresh_through_main(monkeypatch, [DATAWORKS, QLIK], mappings, fresh) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert _tree(fresh) == {"qlik_json": "not a folder\n"}


def test_too_wide_tables_get_no_model_and_a_notice(tmp_path, mappings):
    """A table of more than 4,096 columns gets no model and one line saying so; the other
    tables are generated, one of 4,096 columns included."""
    wide = table("dataworks_json", "db", "wide", version({f"c{i}": "LONG" for i in range(4097)}))
    widest = table("dataworks_json", "db", "ok", version({f"c{i}": "LONG" for i in range(4096)}))
    out = tmp_path / "tables"
    report = io.StringIO()
    assert cli.refresh([wide, widest, DATAWORKS], mappings, out, stdout=report) == 0
    assert sorted(p.name for p in (out / "dataworks").iterdir()) == [
        "_dataworks__models.yml",
        "dataworks__db__ok.sql",
        "dataworks__shop__orders.sql",
    ]
    lines = report.getvalue().splitlines()
    assert [line for line in lines if line.startswith("skipped")] == [
        "skipped   db.wide: 4,097 columns, more than the 4,096 of a typed model: no typed model "
        "(its rows are in gold.current_rows)"
    ]
    assert lines[-1] == "3 table(s) (1 skipped): 3 file(s) written, 0 unchanged"
    yml = yaml.safe_load((out / "dataworks" / "_dataworks__models.yml").read_text())
    assert [m["name"] for m in yml["models"]] == ["dataworks__db__ok", "dataworks__shop__orders"]
