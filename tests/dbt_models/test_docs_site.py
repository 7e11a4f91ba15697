"""The dbt docs site in a real browser: `dbt docs generate` on the session's built lake, the
site served as `dbt docs serve` serves it, opened in headless Debian Chromium (Selenium and
Debian's chromedriver; `make test` installs both). A person searches for ``current_rows``,
opens its page (gold.current_rows, with the column types of the catalog), then its lineage
graph full screen: every upstream and downstream node of the manifest is drawn with its name
and the console has no errors.

Skipped, with the reason, when Debian's chromium or chromium-driver is not installed.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cdc_lakehouse.tools.docs_site import (
    chromium,
    chromium_missing,
    lineage_nodes,
    model_unique_id,
    open_lineage,
    open_model,
    serve,
    upstream_nodes,
)

# checked before any fixture: the session's built lake is not built for nothing
pytestmark = [
    pytest.mark.dbt,
    pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing())),
]

MODEL = "current_rows"
SITE_FILES = ("index.html", "manifest.json", "catalog.json")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium driven by Selenium for this module's tests."""
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def docs_site(
    browser, spark, built_lake, run_dbt, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The docs site of the built session lake: `dbt parse` (manifest.json: the graph), then
    `dbt docs generate --no-compile` (catalog.json from the lake, index.html; it keeps the
    manifest: compiling every node again would cost about 35 s more, and the compiled SQL is
    not checked here); its three files copied out of the session's target directory (later dbt
    commands rewrite manifest.json there). The temporary views that earlier tests and dbt-spark's
    incremental runs left in the session's SparkSession are dropped first: the catalog query
    lists them in every schema, with no schema of their own, and dbt's catalog fails on them
    (a `dbt docs generate` of its own process has none)."""
    for table in spark.catalog.listTables():
        if table.isTemporary:
            spark.catalog.dropTempView(table.name)
    run_dbt("parse")
    run_dbt("docs", "generate", "--no-compile")
    site = tmp_path_factory.mktemp("docs-site")
    for name in SITE_FILES:
        shutil.copy(run_dbt.target_path / name, site / name)
    return site


def test_current_rows_page_and_lineage_graph(browser, docs_site: Path) -> None:
    """The page of gold.current_rows shows its relation and the catalog's column types; its
    lineage graph draws the model, every upstream node (int_row_versions, change_events, ...,
    the bronze source) and every downstream node of the manifest, each with its name, inside
    the graph's area; the console logged no error."""
    manifest = json.loads((docs_site / "manifest.json").read_text())
    catalog = json.loads((docs_site / "catalog.json").read_text())
    unique_id = model_unique_id(manifest, MODEL)
    upstream = upstream_nodes(manifest, unique_id)
    # the manifest's lineage of current_rows is what the graph must draw; guard its derivation
    assert {"int_row_versions", "change_events"} <= set(upstream.values())
    assert "bronze.kafka_records" in upstream.values()

    with serve(docs_site) as url:
        page = open_model(browser, url, MODEL)
        view = open_lineage(browser, MODEL)

    assert page.details["Relation"] == "gold.current_rows"
    catalog_types = {
        name: column["type"] for name, column in catalog["nodes"][unique_id]["columns"].items()
    }
    assert catalog_types, "the catalog of the built lake has current_rows' columns"
    assert page.columns == catalog_types
    assert view.selection == f"+{MODEL}+"
    assert view.outside == []
    missing = {name for node, name in upstream.items() if node not in view.nodes}
    assert missing == set(), f"upstream nodes not drawn: {sorted(missing)}"
    # dbt docs also draws the model's unit tests (fixed rows, no lineage of their own)
    drawn = {k: v for k, v in view.nodes.items() if not k.startswith("unit_test.")}
    assert drawn == lineage_nodes(manifest, unique_id)
    assert view.console_errors == []


def test_lineage_check_sees_a_missing_node_and_a_console_error(
    browser, docs_site: Path, tmp_path: Path
) -> None:
    """The checks above fail when the site is broken: a copy of the site whose manifest lost
    the edge int_row_versions -> current_rows and whose page logs a console error does not
    draw int_row_versions, and the error is reported."""
    manifest = json.loads((docs_site / "manifest.json").read_text())
    unique_id = model_unique_id(manifest, MODEL)
    versions = model_unique_id(manifest, "int_row_versions")
    broken = json.loads(json.dumps(manifest))
    node = broken["nodes"][unique_id]
    node["depends_on"]["nodes"].remove(versions)
    broken["parent_map"][unique_id].remove(versions)
    broken["child_map"][versions].remove(unique_id)
    (tmp_path / "manifest.json").write_text(json.dumps(broken))
    shutil.copy(docs_site / "catalog.json", tmp_path / "catalog.json")
    index = (docs_site / "index.html").read_text()
    injected = "<script>console.error('injected by the test')</script>"
    (tmp_path / "index.html").write_text(index.replace("</head>", injected + "</head>", 1))

    with serve(tmp_path) as url:
        open_model(browser, url, MODEL)
        view = open_lineage(browser, MODEL)

    not_drawn = set(lineage_nodes(manifest, unique_id)) - set(view.nodes)
    # change_events stays drawn: current_rows also depends on it directly (its incremental
    # watermark), so only int_row_versions' own side is lost
    assert versions in not_drawn
    assert unique_id in view.nodes
    assert any("injected by the test" in error for error in view.console_errors)
