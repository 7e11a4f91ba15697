"""The dbt docs site in a real browser: serve a generated target directory (as `dbt docs serve`
does), open a model's lineage graph in headless Chromium, read what the graph shows and what
the browser console logged, and take the screenshot of docs/how-to/dbt-docs.md.

The browser is Debian's ``chromium``, driven through Debian's ``chromium-driver`` by Selenium
(`make chromium-packages` installs both). Chromium starts with ``--headless=new --no-sandbox``
(its sandbox does not start as root in containers), without GPU or ``/dev/shm``, and without
the background connections it makes to Google's hosts (refused on a closed network).

Regenerate the screenshot of docs/how-to/dbt-docs.md (after `make docs`)::

    python -m cdc_lakehouse.tools.docs_site screenshot --target-path target \\
        --output docs/images/current_rows_lineage.png
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

if TYPE_CHECKING:
    from selenium.webdriver.chrome.webdriver import WebDriver

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = (
    "--headless=new",
    "--no-sandbox",  # Chromium's sandbox cannot start as root in a container
    "--disable-gpu",
    "--disable-dev-shm-usage",  # small /dev/shm in containers
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
)
GRAPH_NODE_TYPES = frozenset(
    {"model", "seed", "snapshot", "source", "exposure", "metric", "semantic_model", "saved_query"}
)
"""Resource types the docs site draws as nodes of the lineage graph (tests are not drawn)."""

KNOWN_SITE_ERRORS = frozenset(
    {
        "/{{ getIcon(item.type, 'on') }}",
        "/{{ getIcon(item.type, 'off') }}",
        "/${require('./assets/favicons/favicon.ico')}",
    }
)
"""Paths that dbt-core 1.11's bundled docs site (dbt/task/docs/index.html) asks the server for
and gets 404: the sidebar's ``<use xlink:href="{{ getIcon(...) }}">`` is fetched before
Angular fills it in, and the favicon link holds a webpack placeholder never substituted. They
are the site's own, not the project's; every other console error counts."""

# The graph's cytoscape instance lives on its container (the site's template: <div id="cy">).
_GRAPH_STATE_JS = """
const container = document.getElementById('cy');
const cy = container && container._cyreg && container._cyreg.cy;
const select = Array.from(document.querySelectorAll('.launcher-footer input'))
    .map(input => input.value)[0];
if (!cy || !document.querySelector('.launcher.on')) { return null; }
const width = container.clientWidth, height = container.clientHeight;
return {
    selection: select || '',
    width: width,
    height: height,
    nodes: cy.nodes().filter(node => node.visible()).map(node => {
        const box = node.renderedBoundingBox();
        return {
            id: node.id(),
            label: node.data('label'),
            inside: box.x1 >= 0 && box.y1 >= 0 && box.x2 <= width && box.y2 <= height,
            x: Math.round(box.x1),
            y: Math.round(box.y1),
        };
    }),
};
"""


@dataclass(frozen=True)
class LineageView:
    """What the docs site showed for a model's full-screen lineage graph."""

    selection: str
    """The graph's ``--select`` field (``+<model>+`` for a model's lineage)."""
    nodes: dict[str, str]
    """Drawn nodes inside the graph's area: unique_id -> the label drawn on the node."""
    outside: list[str]
    """Nodes drawn but (partly) outside the graph's visible area: unique_ids."""
    console_errors: list[str]
    """Browser console errors (uncaught exceptions, console.error, failed loads), except the
    site's own (:data:`KNOWN_SITE_ERRORS`)."""


@dataclass(frozen=True)
class ModelPage:
    """What a model's page of the docs site shows."""

    title: str
    """The page's heading: the model's name."""
    details: dict[str, str]
    """The Details panel: label (Owner, Type, Relation, ...) -> value."""
    columns: dict[str, str]
    """The Columns table: column -> type (the catalog's type; empty without a catalog)."""


_MODEL_PAGE_JS = """
const text = element => element ? element.textContent.replace(/\\s+/g, ' ').trim() : '';
const details = {};
document.querySelectorAll('.app-details dl.detail').forEach(dl => {
    details[text(dl.querySelector('dt'))] = text(dl.querySelector('dd'));
});
const columns = {};
document.querySelectorAll('tr.column-row').forEach(row => {
    const cells = row.querySelectorAll('td');
    columns[text(cells[0])] = text(cells[1]);
});
const heading = document.querySelector('.app-title h1');
return {title: heading ? text(heading).split(' ')[0] : '', details: details, columns: columns};
"""


def model_unique_id(manifest: Mapping[str, Any], name: str) -> str:
    """The unique_id of the project's model ``name`` (the manifest's root project)."""
    project = manifest["metadata"]["project_name"]
    unique_id = f"model.{project}.{name}"
    if unique_id not in manifest["nodes"]:
        raise KeyError(f"no model {name!r} in the manifest of project {project!r}")
    return unique_id


def display_name(manifest: Mapping[str, Any], unique_id: str) -> str:
    """The label the docs site draws for a node: ``source_name.name`` for a source, the
    ``kind:name`` of exposures, metrics, semantic models and saved queries, else the name."""
    if unique_id in manifest["sources"]:
        source = manifest["sources"][unique_id]
        return f"{source['source_name']}.{source['name']}"
    for kind in ("exposures", "metrics", "semantic_models", "saved_queries"):
        if unique_id in manifest.get(kind, {}):
            node = manifest[kind][unique_id]
            return f"{node['resource_type']}:{node['name']}"
    return manifest["nodes"][unique_id]["name"]


def _resource_type(unique_id: str) -> str:
    return unique_id.split(".", 1)[0]


def _closure(edges: Mapping[str, list[str]], start: str) -> set[str]:
    seen: set[str] = set()
    stack = list(edges.get(start, []))
    while stack:
        unique_id = stack.pop()
        if unique_id not in seen:
            seen.add(unique_id)
            stack.extend(edges.get(unique_id, []))
    return seen


def upstream_nodes(manifest: Mapping[str, Any], unique_id: str) -> dict[str, str]:
    """Every graph node a node depends on, directly or not (the manifest's parent map):
    unique_id -> the name the docs site draws."""
    return {
        parent: display_name(manifest, parent)
        for parent in _closure(manifest["parent_map"], unique_id)
        if _resource_type(parent) in GRAPH_NODE_TYPES
    }


def lineage_nodes(manifest: Mapping[str, Any], unique_id: str) -> dict[str, str]:
    """The nodes of a node's lineage graph (``+<node>+``): itself, its upstream and its
    downstream graph nodes: unique_id -> the name the docs site draws."""
    related = {unique_id} | _closure(manifest["parent_map"], unique_id)
    related |= _closure(manifest["child_map"], unique_id)
    return {
        node: display_name(manifest, node)
        for node in related
        if _resource_type(node) in GRAPH_NODE_TYPES
    }


class _QuietHandler(SimpleHTTPRequestHandler):
    """dbt docs serve's handler (SimpleHTTPRequestHandler), without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:
        """Drop the access log."""


@contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` (a dbt target directory with index.html, manifest.json and
    catalog.json) over HTTP on a free loopback port, as `dbt docs serve` does; yields the
    site's URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def chromium_missing() -> str | None:
    """Why Debian's Chromium cannot be driven here (a missing program), or None."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if shutil.which(path) is None]
    if missing:
        return (
            f"{' and '.join(missing)} not installed: Debian's chromium and chromium-driver "
            "packages (`make chromium-packages` installs them)"
        )
    return None


@contextmanager
def chromium(width: int = 1400, height: int = 900, scale: float = 1.0) -> Iterator[WebDriver]:
    """Headless Debian Chromium driven by Selenium through Debian's chromedriver, with a fresh
    profile, a ``width`` x ``height`` window (CSS pixels, ``scale`` device pixels each) and
    every console message kept for :meth:`get_log`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="cdc-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = CHROMIUM
        for flag in CHROMIUM_FLAGS:
            options.add_argument(flag)
        options.add_argument(f"--user-data-dir={profile}")
        options.add_argument(f"--window-size={width},{height}")
        options.add_argument(f"--force-device-scale-factor={scale}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
        try:
            yield driver
        finally:
            driver.quit()


def console_errors(driver: WebDriver) -> list[str]:
    """The console's errors since the last call, except :data:`KNOWN_SITE_ERRORS`."""
    errors = []
    for entry in driver.get_log("browser"):
        if entry["level"] != "SEVERE":
            continue
        message = entry["message"]
        if entry.get("source") == "network":
            path = "/" + unquote(message.split(" ", 1)[0]).split("/", 3)[-1]
            if path in KNOWN_SITE_ERRORS:
                continue
        errors.append(message)
    return errors


def _wait(driver: WebDriver, what: str, condition: Any, timeout: float) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(
        condition, f"docs site: {what} within {timeout:.0f} s"
    )


def open_model(driver: WebDriver, base_url: str, model: str, timeout: float = 60) -> ModelPage:
    """Open the site, search for ``model`` with the search box and open its page from the
    results, as a person would; return what the page shows. Forgets earlier console
    messages (:func:`open_lineage` reports those from here on)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get_log("browser")
    driver.get(base_url)
    # the overview shows once the site has loaded manifest.json and catalog.json
    _wait(
        driver, "the overview", lambda d: d.find_elements(By.CSS_SELECTOR, ".app-title h1"), timeout
    )
    search = driver.find_element(By.CSS_SELECTOR, "input[placeholder^='Search for models']")
    search.send_keys(model, Keys.ENTER)

    def result(d: WebDriver) -> Any:
        for name in d.find_elements(By.CSS_SELECTOR, ".search-result h4 > span"):
            if name.text.strip() == model:
                return name
        return False

    _wait(driver, f"a search result {model!r}", result, timeout).click()

    def page(d: WebDriver) -> Any:
        shown = d.execute_script(_MODEL_PAGE_JS)
        return shown if shown["title"] == model and shown["columns"] else False

    shown = _wait(driver, f"the page of {model!r}", page, timeout)
    return ModelPage(title=shown["title"], details=shown["details"], columns=shown["columns"])


def open_lineage(driver: WebDriver, model: str, timeout: float = 60) -> LineageView:
    """On ``model``'s page (:func:`open_model`), open its lineage graph full screen (the
    "View Lineage Graph" button, then "View Fullscreen": selection ``+<model>+``); return what
    it shows once the drawn nodes stop moving, and the console's errors since the page opened."""
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, "a[title='View Lineage Graph']").click()
    _wait(driver, "the lineage graph", lambda d: d.execute_script(_GRAPH_STATE_JS), timeout)
    expand = driver.find_element(
        By.CSS_SELECTOR, "a[title='View Fullscreen'][ng-click='showExpanded()']"
    )
    expand.click()
    previous: list[Any] = []

    def settled(d: WebDriver) -> Any:
        state = d.execute_script(_GRAPH_STATE_JS)
        if not state or state["selection"] != f"+{model}+" or not state["nodes"]:
            return False
        nodes = sorted((n["id"], n["x"], n["y"]) for n in state["nodes"])
        if nodes != previous:
            previous[:] = nodes
            return False
        return state

    state = _wait(driver, f"the full-screen lineage graph of {model!r}", settled, timeout)
    return LineageView(
        selection=state["selection"],
        nodes={n["id"]: n["label"] for n in state["nodes"] if n["inside"]},
        outside=sorted(n["id"] for n in state["nodes"] if not n["inside"]),
        console_errors=console_errors(driver),
    )


def screenshot_graph(driver: WebDriver, output: Path, colors: int = 64) -> None:
    """Save the open lineage graph's window (header, graph and selection bar) as a PNG of
    ``colors`` colours (a third of the size of the full-colour one), without tooltips."""
    from PIL import Image
    from selenium.webdriver.common.by import By

    driver.execute_script(
        "document.querySelectorAll('.tooltip').forEach(t => t.remove());"
        "document.activeElement && document.activeElement.blur();"
    )
    time.sleep(0.3)  # one more frame of the canvas after the tooltip is gone
    output.parent.mkdir(parents=True, exist_ok=True)
    window = driver.find_element(By.CSS_SELECTOR, ".launcher.on .launcher-window")
    image = Image.open(io.BytesIO(window.screenshot_as_png)).convert("RGB")
    image.quantize(colors=colors).save(output, optimize=True)


def main(argv: list[str] | None = None) -> int:
    """``screenshot``: the lineage graph of a model, from a generated docs site; exits 1
    (after saving it) when the graph misses a node of the manifest or the console logged an
    error."""
    parser = argparse.ArgumentParser(
        prog="python -m cdc_lakehouse.tools.docs_site", description=__doc__
    )
    commands = parser.add_subparsers(dest="command", required=True)
    shot = commands.add_parser("screenshot", help="save a model's lineage graph as a PNG")
    shot.add_argument("--target-path", type=Path, default=Path("target"))
    shot.add_argument("--model", default="current_rows")
    shot.add_argument("--output", type=Path, default=Path("docs/images/current_rows_lineage.png"))
    args = parser.parse_args(argv)
    if reason := chromium_missing():
        parser.error(reason)
    manifest = json.loads((args.target_path / "manifest.json").read_text())
    expected = lineage_nodes(manifest, model_unique_id(manifest, args.model))
    with serve(args.target_path) as url, chromium(width=1800, height=800, scale=2) as driver:
        open_model(driver, url, args.model)
        view = open_lineage(driver, args.model)
        screenshot_graph(driver, args.output)
    print(f"{args.output}: lineage graph of {args.model} ({len(view.nodes)} nodes)")
    missing = sorted(set(expected) - set(view.nodes))
    if missing or view.console_errors:
        print(
            f"error: nodes of the manifest not drawn: {missing}; "
            f"browser console errors: {view.console_errors}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
