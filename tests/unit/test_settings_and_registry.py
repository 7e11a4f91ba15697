"""Unit tests of settings, the Spark configuration and the topic registry (no Spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cdc_lakehouse.formats.registry import FORMATS, load_registry
from cdc_lakehouse.runtime.jars import JarsMissingError, class_path, jars_dir
from cdc_lakehouse.runtime.settings import ConfigError, load_settings
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
    topics = load_registry(PROJECT / "seeds" / "cdc_topics.csv")
    assert {t.format for t in topics.values()} <= set(FORMATS)
    assert topics["dataworks.sample.mysql"].format == "dataworks_json"
    assert topics["datahub.sample.yunshi_db"].format == "datahub_blob"


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
