"""Environment settings shared by the ingest job, dbt and the tests.

Every setting comes from an environment variable so that ``python -m ingest``, ``dbt`` and
``pytest`` read the same values without a config file:

- ``CDC_LAKE_DIR`` (default ``./lake``, resolved against the current directory): root of the
  lakehouse: Spark warehouse, Derby metastore, ingest checkpoints.
- ``CDC_TABLE_FORMAT`` (default ``parquet``): ``parquet`` or ``delta``.
- ``CDC_DELTA_JARS_DIR`` (optional): a local directory holding the Delta Lake jars
  (``delta-spark_*.jar`` and ``delta-storage-*.jar``); without it Delta jars are resolved the
  usual way (``spark.jars.packages``, which needs a Maven repository).

Errors: :class:`ConfigError` with a message that says what to fix.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

TABLE_FORMATS = ("parquet", "delta")


class ConfigError(ValueError):
    """A setting is invalid; the message names the setting and what to do."""


@dataclass(frozen=True)
class Settings:
    """Resolved settings.

    Attributes:
        lake_dir: absolute path of the lakehouse root.
        table_format: ``"parquet"`` or ``"delta"``.
        delta_jars_dir: absolute path of a local Delta jar directory, or ``None``.
    """

    lake_dir: Path
    table_format: str
    delta_jars_dir: Path | None

    @property
    def warehouse_dir(self) -> Path:
        """Spark SQL warehouse (managed tables of the bronze, silver and gold schemas)."""
        return self.lake_dir / "warehouse"

    @property
    def metastore_dir(self) -> Path:
        """Derby metastore database directory."""
        return self.lake_dir / "metastore_db"

    @property
    def checkpoint_dir(self) -> Path:
        """Root of Structured Streaming checkpoints (one sub-directory per ingest query)."""
        return self.lake_dir / "checkpoints"


def load_settings(environ: dict[str, str] | None = None) -> Settings:
    """Read the settings from ``environ`` (default: ``os.environ``).

    Raises:
        ConfigError: unknown ``CDC_TABLE_FORMAT``, or ``CDC_DELTA_JARS_DIR`` not a directory.
    """
    env = os.environ if environ is None else environ
    lake_dir = Path(env.get("CDC_LAKE_DIR") or "./lake").expanduser().resolve()
    table_format = (env.get("CDC_TABLE_FORMAT") or "parquet").strip().lower()
    if table_format not in TABLE_FORMATS:
        raise ConfigError(
            f"CDC_TABLE_FORMAT={table_format!r} is not supported: use one of "
            f"{', '.join(TABLE_FORMATS)} (default parquet)."
        )
    jars = env.get("CDC_DELTA_JARS_DIR")
    delta_jars_dir = Path(jars).expanduser().resolve() if jars else None
    if delta_jars_dir is not None and not delta_jars_dir.is_dir():
        raise ConfigError(
            f"CDC_DELTA_JARS_DIR={jars!r} is not a directory: point it at a directory holding "
            "delta-spark_*.jar and delta-storage-*.jar, or unset it."
        )
    return Settings(lake_dir=lake_dir, table_format=table_format, delta_jars_dir=delta_jars_dir)
