"""Unit tests of settings, the Spark configuration and the topic registry (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_lakehouse.formats.registry import (
    EXAMPLE_REGISTRY,
    FORMATS,
    load_registry,
    registry_files,
)
from cdc_lakehouse.runtime.jars import JarsMissingError, class_path, jars_dir
from cdc_lakehouse.runtime.settings import ConfigError, examples_setting, load_settings
from cdc_lakehouse.runtime.spark_session import extra_jars, spark_conf

PROJECT = Path(__file__).resolve().parents[2]


def test_defaults_put_the_lake_under_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = load_settings({})
    assert settings.lake_dir == tmp_path / "lake"


def test_every_spark_path_is_under_the_lake(tmp_path):
    settings = load_settings({"CDC_LAKE_DIR": str(tmp_path / "l")})
    conf = spark_conf(settings)
    lake = str(tmp_path / "l")
    assert conf["spark.sql.warehouse.dir"].startswith(lake)
    derby_url = conf["spark.hadoop.javax.jdo.option.ConnectionURL"]
    assert f"databaseName={lake}/metastore_db" in derby_url
    assert f"-Dderby.system.home={lake}" in conf["spark.driver.extraJavaOptions"]
    assert conf["spark.sql.session.timeZone"] == "UTC"
    assert conf["spark.sql.ansi.enabled"] == "false"


def test_every_table_is_delta_from_the_installed_jars():
    conf = spark_conf(load_settings({}))
    assert conf["spark.sql.extensions"] == "io.delta.sql.DeltaSparkSessionExtension"
    assert conf["spark.sql.catalog.spark_catalog"].endswith("DeltaCatalog")
    # the test session's CDC_SPARK_EXTRA_JARS (the bench's AutoCDC catalog) left out
    extra = set(extra_jars())
    jars = [Path(jar) for jar in conf["spark.jars"].split(",") if jar not in extra]
    names = {jar.name.rsplit("-", 1)[0] for jar in jars}
    assert {"delta-spark_4.2_2.13", "delta-storage", "spark-sql-kafka-0-10_2.13"} <= names
    assert {"spark-avro_2.13", "spark-token-provider-kafka-0-10_2.13", "commons-pool2"} <= names
    assert "exact-json" in names  # built from jvm/exact-json (cdc_lakehouse.decode.exact_json)
    assert all(jar.is_file() and jar.parent == jars_dir() / "spark" for jar in jars)


def test_a_table_format_other_than_delta_is_a_clear_error():
    with pytest.raises(ConfigError, match="every table of the lake is a Delta Lake table"):
        load_settings({"CDC_TABLE_FORMAT": "parquet"})
    assert load_settings({"CDC_TABLE_FORMAT": "delta"})


def test_missing_jars_say_to_run_make_install(tmp_path, monkeypatch):
    with pytest.raises(JarsMissingError, match="run make install"):
        spark_conf(load_settings({"CDC_JARS_DIR": str(tmp_path / "nowhere")}))
    monkeypatch.setenv("CDC_JARS_DIR", str(tmp_path / "nowhere"))
    assert jars_dir() == tmp_path / "nowhere"
    with pytest.raises(JarsMissingError, match="run make install"):
        class_path("spark")


def test_project_registry_is_valid():
    topics = load_registry(project_dir=PROJECT)  # tests/conftest.py: CDC_EXAMPLES=true
    assert {t.format for t in topics.values()} <= set(FORMATS)
    assert topics["dataworks.sample.mysql"].format == "dataworks_json"
    assert topics["datahub.sample.yunshi_db"].format == "datahub_blob"


def test_the_users_registry_ships_empty_and_the_examples_are_switched_on(monkeypatch):
    with (PROJECT / "seeds" / "cdc_topics.csv").open(encoding="utf-8") as handle:
        assert handle.read().splitlines() == [
            "topic,format,source_dialect,canal_legacy_swap,description"
        ]
    with (PROJECT / "seeds" / "cdc_declared_keys.csv").open(encoding="utf-8") as handle:
        assert handle.read().splitlines() == ["topic,source_table,key_columns,description"]
    monkeypatch.setenv("CDC_EXAMPLES", "false")
    assert load_registry(project_dir=PROJECT) == {}
    assert registry_files(project_dir=PROJECT) == (PROJECT / "seeds" / "cdc_topics.csv",)
    monkeypatch.setenv("CDC_EXAMPLES", "")
    assert not examples_setting()
    monkeypatch.setenv("CDC_EXAMPLES", "TRUE")
    assert examples_setting()
    assert registry_files(project_dir=PROJECT)[1] == PROJECT / EXAMPLE_REGISTRY
    monkeypatch.setenv("CDC_EXAMPLES", "yes")
    with pytest.raises(ConfigError, match="CDC_EXAMPLES='yes' is not true or false"):
        load_registry(project_dir=PROJECT)


def test_the_users_row_wins_over_the_examples(tmp_path, monkeypatch):
    monkeypatch.setenv("CDC_EXAMPLES", "true")
    (tmp_path / "seeds").mkdir()
    (tmp_path / "seeds" / "cdc_topics.csv").write_text(
        "topic,format,source_dialect\ndts.sample.canal,dts_avro,oracle\nmine,qlik_json,\n"
    )
    (tmp_path / EXAMPLE_REGISTRY).parent.mkdir(parents=True)
    (tmp_path / EXAMPLE_REGISTRY).write_text(
        "topic,format\ndts.sample.canal,dts_canal_json\nexample,dts_avro\n"
    )
    topics = load_registry(project_dir=tmp_path)
    assert list(topics) == ["dts.sample.canal", "mine", "example"]
    assert topics["dts.sample.canal"].format == "dts_avro"
    assert topics["dts.sample.canal"].source_dialect == "oracle"
    # the project's registry named by its path: the same; any other file is read alone
    assert load_registry(tmp_path / "seeds" / "cdc_topics.csv") == topics
    other = tmp_path / "other.csv"
    other.write_text("topic,format\nthird,dts_avro\n")
    assert list(load_registry(other, project_dir=tmp_path)) == ["third"]
    monkeypatch.setenv("CDC_EXAMPLES", "false")
    assert list(load_registry(project_dir=tmp_path)) == ["dts.sample.canal", "mine"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("topic\nx\n", "missing column"),
        ("topic,format\nx,avro\n", "unknown format 'avro'"),
        ("topic,format\nx,dts_avro\nx,dts_avro\n", "listed twice"),
        ("topic,format\n,dts_avro\n", "empty topic"),
        ("topic,format,canal_legacy_swap\nx,dts_canal_json,maybe\n", "true or false"),
    ],
)
def test_registry_errors_name_the_line(tmp_path, content, message):
    path = tmp_path / "cdc_topics.csv"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message):
        load_registry(path)


def test_missing_registry_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_registry(tmp_path / "nope.csv")


def test_driver_memory_defaults_to_the_heap_that_keeps_a_build_within_target_six(
    tmp_path, monkeypatch
):
    """3g: at 1,000,000 Canal changes the JVM and its Python workers stay near 5 GiB (issue 20,
    target 6: 6 GiB); ``CDC_SPARK_DRIVER_MEMORY`` still sets it."""
    lake = {"CDC_LAKE_DIR": str(tmp_path)}
    assert spark_conf(load_settings(lake))["spark.driver.memory"] == "3g"
    six = load_settings({**lake, "CDC_SPARK_DRIVER_MEMORY": "6g"})
    assert spark_conf(six)["spark.driver.memory"] == "6g"
    monkeypatch.setenv("CDC_SPARK_DRIVER_MEMORY", "6g")
    assert spark_conf(load_settings())["spark.driver.memory"] == "6g"
