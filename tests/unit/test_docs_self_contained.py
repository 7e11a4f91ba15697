"""The project's docs stand on their own (issue 20).

Every tracked file refers to the project's own docs - ``docs/formats.md`` for what the code
takes from the vendor documents, ``docs/architecture.md`` for the contracts - never to a
directory outside the repository or to a path of one machine. A reference that carries a
section ("docs/formats.md 4c", "docs/formats.md sections 1 and 2", 'docs/formats.md
"Normalized vocabulary"', "docs/formats.md#vendor-documents") must name a section that the
document has, and a vendor document cited as "seed NNN" must be one that docs/formats.md
names. The docs site's pages (docs/**.md) and mkdocs.yml may name them by a path relative to
the page (or, in the site's navigation, to docs/), as the site's links need.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("formats", "architecture")

# Built from pieces so that this file does not contain what it looks for.
OUTSIDE_PATHS = ("." + "./shared", "/" + "work/")

# Any mention of one of the docs, with the path in front of it (if any).
_DOC_MENTION = re.compile(r"(?<![\w.-])((?:[\w.-]+/)*)(" + "|".join(DOCS) + r")\.md\b")

# A sectioned reference: docs/<name>.md, then a section list or a quoted heading or an anchor.
_ITEM = r"\d+[a-z]?\b"
_SECTIONED = re.compile(
    r"docs/(?P<doc>" + "|".join(DOCS) + r")\.md"
    r"(?:#(?P<anchor>[\w-]+)"
    r"|(?:'s)?\s+(?:sections?\s+)?(?P<items>" + _ITEM + r"(?:\s*(?:,|and)\s*" + _ITEM + r")*)"
    r'|(?:\'s)?\s+"(?P<quoted>[^"\n]+)")'
)
_HEADING = re.compile(r"^#{1,6}\s+(?P<text>.+?)\s*$", re.MULTILINE)
_NUMBERED = re.compile(r"^(\d+[a-z]?)\.\s")
_SEEDS = re.compile(r"\bseeds?\s+(0\d\d(?:\s*(?:,|and|to|-)\s*0\d\d)*)\b")
_VENDOR_ROW = re.compile(r"^\|\s*(0\d\d)\s*\|", re.MULTILINE)


@cache
def tracked_texts() -> dict[str, str]:
    """path -> text of every tracked text file (binary files left out)."""
    try:
        listing = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    texts = {}
    for name in listing.decode("utf-8").split("\0"):
        path = ROOT / name
        if not name or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        texts[name] = data.decode("utf-8", errors="replace")
    return texts


def line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def anchor(heading: str) -> str:
    """The anchor a Markdown renderer (GitHub's rules) gives a heading."""
    kept = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return kept.replace(" ", "-")


@cache
def headings(doc: str) -> tuple[str, ...]:
    return tuple(m["text"] for m in _HEADING.finditer((ROOT / "docs" / f"{doc}.md").read_text()))


def section_numbers(doc: str) -> set[str]:
    return {m.group(1) for h in headings(doc) if (m := _NUMBERED.match(h))}


def test_no_file_refers_outside_the_repository():
    found = [
        f"{name}:{line_of(text, text.index(needle))}: {needle}"
        for name, text in tracked_texts().items()
        for needle in OUTSIDE_PATHS
        if needle in text
    ]
    assert not found, "references to paths outside the repository:\n" + "\n".join(found)


def names_the_doc(name: str, mention: re.Match[str]) -> bool:
    """Whether a mention names docs/<doc>.md: by that path, or - in the docs site's own files,
    the pages under docs/ and the navigation of mkdocs.yml, whose links are relative to the
    page or to docs/ - by a relative path that leads there."""
    if mention.group(1) == "docs/":
        return True
    if name == "mkdocs.yml":
        base = "docs"
    elif name.startswith("docs/") and name.endswith(".md"):
        base = posixpath.dirname(name)
    else:
        return False
    target = posixpath.normpath(posixpath.join(base, mention.group(1) + mention.group(2) + ".md"))
    return target == f"docs/{mention.group(2)}.md"


def test_the_docs_are_named_by_their_path_in_the_repository():
    found = [
        f"{name}:{line_of(text, m.start())}: {m.group(0)}"
        for name, text in tracked_texts().items()
        for m in _DOC_MENTION.finditer(text)
        if not names_the_doc(name, m)
    ]
    assert not found, "write docs/formats.md or docs/architecture.md:\n" + "\n".join(found)


def test_the_docs_exist():
    for doc in DOCS:
        assert (ROOT / "docs" / f"{doc}.md").is_file()
    # the numbering that references rely on
    assert {"1", "2", "3", "4", "4a", "4b", "4c", "5"} <= section_numbers("formats")


def test_section_references_name_existing_sections():
    found = []
    for name, text in tracked_texts().items():
        for m in _SECTIONED.finditer(text):
            doc, where = m["doc"], f"{name}:{line_of(text, m.start())}: {m.group(0)!r}"
            if m["anchor"] is not None:
                if m["anchor"] not in {anchor(h) for h in headings(doc)}:
                    found.append(where)
            elif m["quoted"] is not None:
                if not any(m["quoted"].lower() in h.lower() for h in headings(doc)):
                    found.append(where)
            else:
                items = re.findall(r"\d+[a-z]?", m["items"])
                if not set(items) <= section_numbers(doc):
                    found.append(where)
    assert not found, "references to sections that do not exist:\n" + "\n".join(found)


def test_cited_vendor_documents_are_named_in_docs_formats():
    named = set(_VENDOR_ROW.findall((ROOT / "docs/formats.md").read_text()))
    assert named, "docs/formats.md names no vendor document (its table of seeds)"
    found = []
    for name, text in tracked_texts().items():
        for m in _SEEDS.finditer(text):
            cited = set(re.findall(r"0\d\d", m.group(1)))
            if " to " in m.group(1) or "-" in m.group(1):
                low, high = min(cited), max(cited)
                cited = {f"{n:03d}" for n in range(int(low), int(high) + 1)}
            if not cited <= named:
                found.append(f"{name}:{line_of(text, m.start())}: {m.group(0)!r}")
    assert not found, "vendor documents not named in docs/formats.md:\n" + "\n".join(found)
