"""The topic registry: which Kafka topics exist and their format.

The user's registry is the project's ``seeds/cdc_topics.csv`` (shipped with its header only).
When the environment variable ``CDC_EXAMPLES`` is true
(:func:`cdc_lakehouse.runtime.settings.examples_setting`; ``make demo`` and ``make test`` set
it), the project's example registry ``sample_data/seeds/cdc_example_topics.csv`` (the bundled
sample's and the tests' topics) is read after it: a topic in both keeps the user's row. Another
registry file (``--registry PATH`` not named ``seeds/cdc_topics.csv``) is read alone.
:func:`load_registry` does this; the ingest job, ``python -m cdc_lakehouse.tools.kafka.produce``
and the benchmark use it.

One row per topic. Columns (contract of ``docs/architecture.md``):

- ``topic``: Kafka topic name (required, unique).
- ``format``: one of :data:`FORMATS` (required).
- ``source_dialect``: SQL dialect of captured DDL (``mysql``, ``oracle``, ``postgres``,
  ``tsql``); empty when unknown.
- ``canal_legacy_swap``: ``true`` for DTS Canal JSON topics of instances created before
  2022-03-20, whose ``data`` / ``old`` meanings are swapped (docs/formats.md 4c); else ``false``.
- ``description``: free text.

The same files are dbt seeds (``cdc_topics``, ``cdc_example_topics``); SQL models join on
their union ``stg_bronze__topics`` (the same rule: the user's row wins).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from cdc_lakehouse.formats import NAMES
from cdc_lakehouse.runtime.settings import ConfigError, examples_setting

FORMATS = NAMES
"""Every registry format name, from the format manifest (:mod:`cdc_lakehouse.formats`)."""
REQUIRED_COLUMNS = ("topic", "format")
DEFAULT_REGISTRY = Path("seeds") / "cdc_topics.csv"  # relative to the project directory
EXAMPLE_REGISTRY = Path("sample_data") / "seeds" / "cdc_example_topics.csv"
"""The example topics (the bundled sample's and the tests'), relative to the project
directory; read when ``CDC_EXAMPLES`` is true."""


def registry_files(
    path: Path | str | None = None, project_dir: Path | str | None = None
) -> tuple[Path, ...]:
    """The registry files :func:`load_registry` reads, in order: the user's (``path``, default
    ``<project_dir>/seeds/cdc_topics.csv``; ``project_dir`` defaults to the current directory,
    the project root), then, when it is a project's registry (a file ``seeds/cdc_topics.csv``)
    and ``CDC_EXAMPLES`` is true (:func:`~cdc_lakehouse.runtime.settings.examples_setting`),
    that project's example registry
    ``sample_data/seeds/cdc_example_topics.csv``. Any other file is read alone."""
    base = Path(project_dir) if project_dir is not None else Path()
    user = Path(path) if path is not None else base / DEFAULT_REGISTRY
    if (user.parent.name, user.name) != DEFAULT_REGISTRY.parts or not examples_setting():
        return (user,)
    return (user, user.parent.parent / EXAMPLE_REGISTRY)


@dataclass(frozen=True)
class TopicConfig:
    """One registry row."""

    topic: str
    format: str
    source_dialect: str = ""
    canal_legacy_swap: bool = False
    description: str = ""


def load_registry(
    path: Path | str | None = None, project_dir: Path | str | None = None
) -> dict[str, TopicConfig]:
    """Read the topic registry: the user's CSV at ``path`` (default ``seeds/cdc_topics.csv`` of
    ``project_dir``, default the current directory) and, when it is a project's
    ``seeds/cdc_topics.csv`` and ``CDC_EXAMPLES`` is true, the project's example registry after
    it (:func:`registry_files`). A topic listed in both keeps the user's row; a topic listed
    twice in one file is an error.

    Returns:
        topic name -> :class:`TopicConfig` (the user's topics first).

    Raises:
        ConfigError: a file missing, a required column missing, an empty or duplicate topic, an
            unknown format, a ``canal_legacy_swap`` value other than true / false, or
            ``CDC_EXAMPLES`` neither true nor false; the message gives the file and line.
    """
    topics: dict[str, TopicConfig] = {}
    for registry_path in registry_files(path, project_dir):
        for topic, config in read_registry_file(registry_path).items():
            topics.setdefault(topic, config)
    return topics


def read_registry_file(registry_path: Path) -> dict[str, TopicConfig]:
    """The rows of one registry CSV (see :func:`load_registry`)."""
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
