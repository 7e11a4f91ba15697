"""The topic registry ``seeds/cdc_topics.csv``: which Kafka topics exist and their format.

One row per topic. Columns (contract of ``docs/architecture.md``):

- ``topic``: Kafka topic name (required, unique).
- ``format``: one of :data:`FORMATS` (required).
- ``source_dialect``: SQL dialect of captured DDL (``mysql``, ``oracle``, ``postgres``,
  ``tsql``); empty when unknown.
- ``canal_legacy_swap``: ``true`` for DTS Canal JSON topics of instances created before
  2022-03-20, whose ``data`` / ``old`` meanings are swapped (docs/formats.md 4c); else ``false``.
- ``description``: free text.

The same file is a dbt seed (``cdc_topics``), so SQL models join on it too.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from cdc_lakehouse.formats import NAMES
from cdc_lakehouse.runtime.settings import ConfigError

FORMATS = NAMES
"""Every registry format name, from the format manifest (:mod:`cdc_lakehouse.formats`)."""
REQUIRED_COLUMNS = ("topic", "format")
DEFAULT_REGISTRY = Path("seeds") / "cdc_topics.csv"  # relative to the project directory


@dataclass(frozen=True)
class TopicConfig:
    """One registry row."""

    topic: str
    format: str
    source_dialect: str = ""
    canal_legacy_swap: bool = False
    description: str = ""


def load_registry(path: Path | str | None = None) -> dict[str, TopicConfig]:
    """Read the registry CSV at ``path`` (default:
    ``seeds/cdc_topics.csv`` of the current directory, the project root).

    Returns:
        topic name -> :class:`TopicConfig`.

    Raises:
        ConfigError: file missing, a required column missing, an empty or duplicate topic, an
            unknown format, or a ``canal_legacy_swap`` value other than true / false; the
            message gives the file and line.
    """
    registry_path = Path(path) if path is not None else DEFAULT_REGISTRY
    if not registry_path.is_file():
        raise ConfigError(f"Topic registry {registry_path} not found: pass --registry PATH.")
    topics: dict[str, TopicConfig] = {}
    with registry_path.open(newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ConfigError(f"{registry_path}: missing column(s) {', '.join(missing)}.")
        for line_no, row in enumerate(reader, start=2):
            where = f"{registry_path}:{line_no}"
            topic = (row.get("topic") or "").strip()
            fmt = (row.get("format") or "").strip()
            if not topic:
                raise ConfigError(f"{where}: empty topic name.")
            if topic in topics:
                raise ConfigError(f"{where}: topic {topic!r} is listed twice.")
            if fmt not in FORMATS:
                raise ConfigError(
                    f"{where}: unknown format {fmt!r} for topic {topic!r}; use one of "
                    f"{', '.join(FORMATS)}."
                )
            swap_text = (row.get("canal_legacy_swap") or "false").strip().lower()
            if swap_text not in ("true", "false"):
                raise ConfigError(f"{where}: canal_legacy_swap must be true or false.")
            topics[topic] = TopicConfig(
                topic=topic,
                format=fmt,
                source_dialect=(row.get("source_dialect") or "").strip().lower(),
                canal_legacy_swap=swap_text == "true",
                description=(row.get("description") or "").strip(),
            )
    return topics
