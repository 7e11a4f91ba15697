"""The JVM libraries of the project: resolved from Maven Central, or built from its own
sources (``jvm/exact-json``), at install time.

Three class paths, each a folder of jars under :func:`jars_dir` (default
``<virtual environment>/share/cdc-lakehouse/jars``, ``CDC_JARS_DIR`` moves it), never in git:

- ``spark/``: what the project's Spark applications load beside the pyspark wheel's own jars
  (``jvm/spark/pom.xml``: Delta Lake with ``delta-storage``, Spark's Kafka source with
  ``kafka-clients``, ``spark-token-provider-kafka-0-10`` and ``commons-pool2``, and
  ``spark-avro``; and the project's exact JSON function, built from ``jvm/exact-json``:
  :mod:`cdc_lakehouse.decode.exact_json`). :func:`cdc_lakehouse.runtime.spark_session.spark_conf`
  passes them by ``spark.jars``: the driver loads the local files and serves them to a cluster's
  executors, so nothing downloads at run time. Jars the pyspark wheel ships already (Scala,
  Hadoop, Parquet, Jackson, log4j, ...) are left out: Spark's own versions stay the ones
  loaded.
- ``kafka/``: an Apache Kafka broker, KRaft mode (``jvm/kafka/pom.xml``), which
  :mod:`cdc_lakehouse.tools.kafka.broker` runs as ``java -cp kafka/* kafka.Kafka``: a class path of
  its own, since the broker's ``kafka-clients`` is not the one Spark's source uses.
- ``autocdc/``: spark-catalyst's test jar (``jvm/autocdc/pom.xml``), whose in-memory
  row-level catalog is the MERGE-capable target of the bench's AutoCDC baseline
  (:mod:`cdc_lakehouse.tools.bench.baselines.autocdc`); only the bench's format workers load it
  (``CDC_SPARK_EXTRA_JARS``).

``python -m cdc_lakehouse.runtime.jars install`` (run by ``make install``) resolves each with Maven
(``mvn dependency:copy-dependencies``, the versions pinned in the poms) into a new folder, adds
the jars the project builds for it (:data:`BUILDS`: ``mvn -q -f jvm/exact-json/pom.xml
package``, which compiles against the pyspark wheel's versions and resolves nothing for the
folder) and moves it into place whole, so a failed or interrupted resolution or build leaves
the last good folder.

Errors: :class:`JarsMissingError` (a :class:`~cdc_lakehouse.runtime.settings.ConfigError`: one line
saying to run ``make install``) when a folder is missing; the install command prints Maven's
error line and exits 2 when Maven cannot resolve an artifact or build a jar.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree

from cdc_lakehouse.runtime.settings import ConfigError, jars_dir_setting

PROJECT_DIR = Path(__file__).resolve().parents[3]
POMS = {
    "spark": "jvm/spark/pom.xml",
    "kafka": "jvm/kafka/pom.xml",
    "autocdc": "jvm/autocdc/pom.xml",
}
"""Class path name -> its pom, relative to the project directory."""
BUILDS = {
    "spark": ("jvm/exact-json/pom.xml",),
}
"""Class path name -> the poms of the jars the project builds into it (``mvn package``; each
pom's one jar, ``target/<artifactId>-<version>.jar``), relative to the project directory."""


def built_sources() -> list[Path]:
    """The source folders (``src``) of the jars the project builds (:data:`BUILDS`), under
    :data:`PROJECT_DIR`, that exist: what the project's JVM functions do (the exact JSON
    function that decodes DTS Canal JSON)."""
    poms = [pom for built in BUILDS.values() for pom in built]
    return [
        PROJECT_DIR / Path(pom).parent / "src"
        for pom in poms
        if (PROJECT_DIR / Path(pom).parent / "src").is_dir()
    ]


_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[^-]*(?:-[^-]+)*)\.jar$")


class JarsMissingError(ConfigError):
    """A class path folder of the project's JVM libraries is missing or empty."""


def jars_dir() -> Path:
    """The root of the jar folders: ``CDC_JARS_DIR``, else
    ``<sys.prefix>/share/cdc-lakehouse/jars`` (the virtual environment ``make install`` made;
    :func:`cdc_lakehouse.runtime.settings.jars_dir_setting` of the process's environment)."""
    return jars_dir_setting()


def class_path(name: str, root: Path | None = None) -> list[Path]:
    """The jars of class path ``name`` (``spark``, ``kafka`` or ``autocdc``) under ``root``
    (default :func:`jars_dir`; a session passes its ``Settings.jars_dir``), sorted by file
    name.

    Raises:
        JarsMissingError: the folder is missing or holds no jar.
    """
    folder = (root or jars_dir()) / name
    jars = sorted(folder.glob("*.jar"))
    if not jars:
        raise JarsMissingError(
            f"The project's JVM libraries are not in {folder} (Delta Lake, Spark's Kafka "
            "source, spark-avro, the Kafka broker): run make install (it resolves them with "
            "Maven), or set CDC_JARS_DIR to the folder that holds spark/ and kafka/."
        )
    return jars


def artifact_name(jar: Path) -> str:
    """The artifact id of a Maven jar file name: ``delta-storage-4.4.0.jar`` ->
    ``delta-storage``, ``zstd-jni-1.5.7-3.jar`` -> ``zstd-jni``."""
    match = _VERSIONED_JAR.match(jar.name)
    return match.group("artifact") if match else jar.stem


def spark_bundled_artifacts() -> set[str]:
    """The artifact ids of the jars the installed pyspark wheel ships (``pyspark/jars``)."""
    import pyspark

    return {artifact_name(jar) for jar in (Path(pyspark.__file__).parent / "jars").glob("*.jar")}


def _maven_error(output: str) -> str:
    """Maven's first ``[ERROR]`` line of ``output`` (its reason), else its last line."""
    for line in output.splitlines():
        if line.startswith("[ERROR]") and line.strip() != "[ERROR]":
            return line.strip()
    lines = [line for line in output.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _run_maven(maven: str, what: str, *args: str) -> None:
    """Run ``maven --batch-mode <args>``; ``what`` names the step in the error (``build
    <pom>``).

    Raises:
        ConfigError: Maven is missing, or failed (its error line in the message).
    """
    try:
        done = subprocess.run(
            [maven, "--batch-mode", *args], capture_output=True, text=True, check=False
        )
    except FileNotFoundError:
        raise ConfigError(
            f"Maven ({maven}) is not installed: install it (Debian: apt-get install maven)."
        ) from None
    if done.returncode != 0:
        raise ConfigError(f"Maven could not {what}: {_maven_error(done.stdout + done.stderr)}")


def resolve(name: str, pom: Path, out: Path, maven: str = "mvn") -> list[Path]:
    """Resolve the runtime dependencies of ``pom`` with Maven into the new folder ``out``;
    for ``spark``, remove the jars the pyspark wheel ships. Returns the jars kept.

    Raises:
        ConfigError: Maven is missing, or failed (its error line in the message).
    """
    _run_maven(
        maven,
        f"resolve {pom}",
        "--quiet",
        "--file",
        str(pom),
        "dependency:copy-dependencies",
        "-DincludeScope=runtime",
        f"-DoutputDirectory={out}",
    )
    if name == "spark":
        bundled = spark_bundled_artifacts()
        for jar in out.glob("*.jar"):
            if artifact_name(jar) in bundled:
                jar.unlink()
    return sorted(out.glob("*.jar"))


def build(pom: Path, out: Path, maven: str = "mvn") -> Path:
    """Build the jar of ``pom`` (``mvn -q -f <pom> package``) and copy it into ``out``.
    Returns the copy.

    Raises:
        ConfigError: Maven is missing, or failed (its error line in the message), or the
            build left no ``target/<artifactId>-<version>.jar``.
    """
    _run_maven(maven, f"build {pom}", "--quiet", "--file", str(pom), "package")
    name = f"{_pom_coordinate(pom, 'artifactId')}-{_pom_coordinate(pom, 'version')}.jar"
    jar = pom.parent / "target" / name
    if not jar.is_file():
        raise ConfigError(f"Maven built {pom} but left no {jar}")
    return Path(shutil.copy2(jar, out / jar.name))


_POM_NAMESPACE = "{http://maven.apache.org/POM/4.0.0}"


def _pom_coordinate(pom: Path, name: str) -> str:
    """The project's own ``artifactId`` / ``version`` in ``pom`` (not its parent's)."""
    element = ElementTree.parse(pom).getroot().find(f"{_POM_NAMESPACE}{name}")
    text = (element.text or "").strip() if element is not None else ""
    if not text:
        raise ConfigError(f"{pom} names no {name}")
    return text


def install(project_dir: Path = PROJECT_DIR, maven: str = "mvn") -> dict[str, list[Path]]:
    """Resolve every class path of :data:`POMS` into :func:`jars_dir`, with the jars
    :data:`BUILDS` builds for it, each folder moved into place whole (the folder before stays
    until its replacement is complete).

    Raises:
        ConfigError: see :func:`resolve` and :func:`build`.
    """
    root = jars_dir()
    root.mkdir(parents=True, exist_ok=True)
    installed: dict[str, list[Path]] = {}
    for name, pom in POMS.items():
        staging = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=root))
        try:
            jars = resolve(name, project_dir / pom, staging, maven)
            jars += [build(project_dir / built, staging, maven) for built in BUILDS.get(name, ())]
            target = root / name
            if target.exists():
                shutil.rmtree(target)
            staging.rename(target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        installed[name] = [target / jar.name for jar in jars]
    return installed


def main(argv: list[str] | None = None) -> int:
    """``python -m cdc_lakehouse.runtime.jars install | list``: resolve the jars, or print them."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.runtime.jars", description=__doc__
    )
    parser.add_argument("command", choices=("install", "list"))
    parser.add_argument("--maven", default="mvn", help="the Maven command (default mvn)")
    args = parser.parse_args(argv)
    try:
        if args.command == "install":
            for name, jars in install(maven=args.maven).items():
                print(f"{name}: {len(jars)} jars in {jars_dir() / name}")
        else:
            for name in POMS:
                for jar in class_path(name):
                    print(f"{name}\t{jar}")
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
