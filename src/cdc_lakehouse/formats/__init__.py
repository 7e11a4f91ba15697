"""The format manifest: every registry message format, found as plug-ins.

A format plug-in is a package ``cdc_lakehouse/formats/<folder>/`` (the folder is the format's
staging folder, ``models/staging/<folder>/``) whose ``__init__`` defines
``FORMATS: tuple[Format, ...]`` (:class:`~cdc_lakehouse.formats.plugin.Format`): the formats it
decodes, with where their pieces live. Everything that is only about those formats lives in the
package:

- ``decoder.py``: its Python decoder, for a format not decoded in SQL;
- ``encoder_<format>.py``: its simulator encoders and their helpers;
- ``baseline.py``: its benchmark baselines (``BASELINES``: the Python floor decoder, DuckDB and
  Spark SQL; :mod:`cdc_lakehouse.tools.bench.baselines.plugin_api`);
- ``macros.sql``: the dbt macros only its staging models use (a ``macro-paths`` folder);
- ``*.java``: its JVM functions, package ``cdc_lakehouse.formats.<folder>``, compiled into the
  exact JSON jar at install (``jvm/exact-json/pom.xml``) and called by ``java_method``;
- ``type_mappings.csv``: the source type -> Spark type rows of its type families.

:data:`MANIFEST` is every plug-in's formats, plug-ins in folder order; nothing lists the
plug-ins by hand.

Readers: the registry (:data:`cdc_lakehouse.formats.registry.FORMATS`), the dbt Python models'
factory (:mod:`cdc_lakehouse.decode.staging_model`), the typed gold generator
(:mod:`cdc_lakehouse.codegen`),
the benchmark (:mod:`cdc_lakehouse.tools.bench`), the simulator's encoders
(:data:`cdc_lakehouse.tools.simulate.encoders.ENCODERS`) and the tests. The dbt side cannot import
Python: what it needs of the manifest (the staging event models' list, each staging folder's
``+enabled``, the registry seed's accepted formats, the type-mapping seed) is written from it by
``python -m cdc_lakehouse.formats generate`` (:mod:`cdc_lakehouse.formats.dbt_side`) and
checked fresh in ``make test`` (``make check-generated``).

Two folders per format, on purpose different:

- ``staging_folder`` (``models/staging/<folder>/``, and the plug-in package) belongs to a
  *decoder*: formats that share one wire layout share one folder, one decoding model and one
  ``*_events`` model (``dataworks_json`` and ``datahub_blob`` are the same DataWorks envelope,
  ``dataworks``; ``qlik_json`` and ``qlik_avro`` the same Qlik messages, ``qlik``).
- ``gold_folder`` (``models/marts/current_state/tables/<folder>/``) belongs to the *format*: it
  starts the name of every typed gold table of the format
  (``<gold_folder>__<database>__<schema>__<table>``), so a table's name says which format it
  came through, and one source table replicated through two formats gives two tables that do
  not clash. Gold folders are unique across formats; they
  are the staging folder where that folder has one format, and otherwise the format name, except
  ``dataworks_json``, whose typed tables have always been ``dataworks__...`` (renaming would
  rename users' tables).

Formats, their ordering keys and images: ``docs/formats.md``.

Errors: :class:`PluginError` (at import) when a plug-in has no ``FORMATS``, declares a format
of another staging folder, or two plug-ins declare one name.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable

from cdc_lakehouse.formats.plugin import Format, ValueEncoding

__all__ = [
    "BY_NAME",
    "MANIFEST",
    "NAMES",
    "Format",
    "PluginError",
    "UnknownFormatError",
    "ValueEncoding",
    "get",
    "in_staging_folder",
    "names",
    "staging_folders",
    "with_value_encoding",
]


class PluginError(ImportError):
    """A format plug-in package is malformed; the message names the package and the fix."""


def discover() -> tuple[Format, ...]:
    """Every format of every plug-in package under ``cdc_lakehouse/formats/``, plug-ins in
    folder-name order, each plug-in's formats in its ``FORMATS`` order.

    Raises:
        PluginError: a plug-in without a non-empty ``FORMATS`` tuple of :class:`Format`, a
            format whose ``staging_folder`` is not its plug-in's folder, or a name declared twice.
    """
    found: list[Format] = []
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not module.ispkg:
            continue
        package = importlib.import_module(f"{__name__}.{module.name}")
        declared = getattr(package, "FORMATS", None)
        if (
            not isinstance(declared, tuple)
            or not declared
            or not all(isinstance(fmt, Format) for fmt in declared)
        ):
            raise PluginError(
                f"format plug-in {package.__name__} must define FORMATS, a non-empty tuple of "
                "cdc_lakehouse.formats.plugin.Format"
            )
        for fmt in declared:
            if fmt.staging_folder != module.name:
                raise PluginError(
                    f"format {fmt.name!r} of plug-in {package.__name__} has staging_folder "
                    f"{fmt.staging_folder!r}: a plug-in's folder is its formats' staging folder"
                )
        found.extend(declared)
    seen: set[str] = set()
    for fmt in found:
        if fmt.name in seen:
            raise PluginError(f"format {fmt.name!r} is declared by two plug-ins")
        seen.add(fmt.name)
    return tuple(found)


MANIFEST: tuple[Format, ...] = discover()
"""Every registry format: the plug-ins' formats, plug-ins in folder order."""

BY_NAME: dict[str, Format] = {fmt.name: fmt for fmt in MANIFEST}
"""Registry format name -> :class:`Format`."""

NAMES: tuple[str, ...] = tuple(BY_NAME)
"""Every registry format name, in manifest order."""


class UnknownFormatError(LookupError):
    """A format name or staging folder the manifest does not list."""


def get(name: str) -> Format:
    """The :class:`Format` named ``name``.

    Raises:
        UnknownFormatError: no format of that name; the message lists the known ones.
    """
    try:
        return BY_NAME[name]
    except KeyError:
        raise UnknownFormatError(
            f"unknown format {name!r}; the manifest lists {', '.join(NAMES)}"
        ) from None


def in_staging_folder(folder: str) -> tuple[Format, ...]:
    """The formats whose staging folder is ``folder``, in manifest order (e.g. ``dataworks``
    -> ``(dataworks_json, datahub_blob)``).

    Raises:
        UnknownFormatError: no format has that staging folder.
    """
    found = tuple(fmt for fmt in MANIFEST if fmt.staging_folder == folder)
    if not found:
        known = ", ".join(staging_folders())
        raise UnknownFormatError(f"no format has staging folder {folder!r}; known: {known}")
    return found


def staging_folders() -> tuple[str, ...]:
    """Every staging folder once, in manifest order of its first format."""
    return tuple(dict.fromkeys(fmt.staging_folder for fmt in MANIFEST))


def names(formats: Iterable[Format]) -> tuple[str, ...]:
    """The names of ``formats``, in their order."""
    return tuple(fmt.name for fmt in formats)


def with_value_encoding(encoding: ValueEncoding) -> frozenset[str]:
    """Names of the formats whose Kafka values are ``encoding`` (``json`` or ``avro``)."""
    return frozenset(fmt.name for fmt in MANIFEST if fmt.value_encoding == encoding)
