"""The groups of cdc_lakehouse.runtime.settings.Settings: each variable read once, typed, with the
defaults the modules had when they read os.environ themselves."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cdc_lakehouse.runtime.settings import (
    ConfigError,
    IngestSettings,
    JvmArchiveSettings,
    MasterUnreachableError,
    Settings,
    SparkSettings,
    lake_dir_setting,
    load_settings,
)


def test_defaults_of_an_empty_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    settings = Settings.from_env({})
    assert settings == load_settings({})
    assert settings.lake_dir == tmp_path / "lake" == lake_dir_setting({})
    assert settings.metastore is None
    assert settings.spark == SparkSettings()
    assert (settings.spark.master, settings.spark.driver_memory) == ("local[*]", "3g")
    assert (settings.spark.shuffle_partitions, settings.spark.ui) == (8, False)
    assert (settings.spark.extra_jars, settings.spark.event_log_dir) == ((), None)
    assert (settings.spark.log_level, settings.spark.driver_host) == ("WARN", "127.0.0.1")
    assert (settings.spark.executor_memory, settings.spark.executor_cores) == ("2g", None)
    assert settings.spark.executor_python == sys.executable
    assert settings.jars_dir == Path(sys.prefix) / "share" / "cdc-lakehouse" / "jars"
    assert settings.jvm_archive == JvmArchiveSettings(
        True, Path(sys.prefix) / "share" / "cdc-lakehouse" / "jvm"
    )
    assert settings.ingest.crash_after_write is None


def test_every_group_reads_its_variables(tmp_path: Path) -> None:
    jar = tmp_path / "extra.jar"
    jar.write_bytes(b"")
    settings = Settings.from_env(
        {
            "CDC_LAKE_DIR": str(tmp_path / "l"),
            "CDC_JARS_DIR": str(tmp_path / "jars"),
            "CDC_SPARK_MASTER": "spark://h:7077",
            "CDC_SPARK_EXECUTOR_MEMORY": "1g",
            "CDC_SPARK_EXECUTOR_CORES": "3",
            "CDC_SPARK_EXTRA_JARS": f" {jar} ,",
            "CDC_SPARK_EVENT_LOG_DIR": str(tmp_path / "events"),
            "CDC_SPARK_LOG_LEVEL": "INFO",
            "CDC_JVM_ARCHIVE": "OFF",
            "CDC_JVM_ARCHIVE_DIR": str(tmp_path / "jvm"),
            "CDC_INGEST_CRASH_AFTER_WRITE": "2",
        }
    )
    assert settings.lake_dir == tmp_path / "l"
    assert settings.jars_dir == tmp_path / "jars"
    assert settings.spark.master == "spark://h:7077" and not settings.spark.is_local
    assert (settings.spark.executor_memory, settings.spark.executor_cores) == ("1g", 3)
    assert settings.spark.extra_jars == (str(jar),)
    assert settings.spark.event_log_dir == tmp_path / "events"
    assert settings.spark.log_level == "INFO"
    assert settings.jvm_archive == JvmArchiveSettings(False, tmp_path / "jvm")
    assert settings.ingest == IngestSettings(2)


@pytest.mark.parametrize("value", ["off", "0", "False", "no"])
def test_the_class_archive_switches_off(value: str) -> None:
    assert not JvmArchiveSettings.from_env({"CDC_JVM_ARCHIVE": value}).enabled
    assert JvmArchiveSettings.from_env({"CDC_JVM_ARCHIVE": "on"}).enabled


def test_a_crash_hook_that_is_not_a_batch_id_is_off() -> None:
    assert IngestSettings.from_env({"CDC_INGEST_CRASH_AFTER_WRITE": "x"}).crash_after_write is None
    assert IngestSettings.from_env({"CDC_INGEST_CRASH_AFTER_WRITE": "0"}).crash_after_write == 0


def test_executor_settings_are_checked_for_a_cluster_master_only() -> None:
    bad = {"CDC_SPARK_EXECUTOR_MEMORY": "2 g"}
    assert SparkSettings.from_env(bad).executor_memory == "2g"  # local[*]: not used
    with pytest.raises(ConfigError, match=r"^CDC_SPARK_EXECUTOR_MEMORY='2 g' is not a"):
        SparkSettings.from_env({**bad, "CDC_SPARK_MASTER": "yarn"})


def test_the_master_url_is_checked_first() -> None:
    env = {"CDC_SPARK_MASTER": "bogus://x", "CDC_SPARK_DRIVER_MEMORY": "3gb"}
    with pytest.raises(MasterUnreachableError, match=r"^CDC_SPARK_MASTER=bogus://x is not"):
        load_settings(env)


def test_extra_jars_must_be_existing_absolute_jar_files(tmp_path: Path) -> None:
    for value in ("relative.jar", str(tmp_path / "missing.jar"), str(tmp_path)):
        with pytest.raises(ConfigError, match=r"^CDC_SPARK_EXTRA_JARS: .* is not an existing"):
            SparkSettings.from_env({"CDC_SPARK_EXTRA_JARS": value})
