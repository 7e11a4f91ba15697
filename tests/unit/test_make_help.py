"""`make help`: every target of the Makefile with the first line of its `## target:` comment."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def make(*args: str) -> str:
    # not a sub-make of `make test` (no "Entering directory" lines)
    environment = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MAKELEVEL"}}
    return subprocess.run(
        ["make", "--no-print-directory", *args],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_help_describes_every_target() -> None:
    listed = set()
    for line in make("help").splitlines():
        names, _, text = line.strip().partition("  ")
        assert text.strip(), line
        listed.update(name.strip() for name in names.split(" / "))
    makefile = (ROOT / "Makefile").read_text("utf-8")
    targets = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.MULTILINE))
    assert targets - listed == set(), "add a `## target: description` line above them"


def test_plain_make_lists_the_targets() -> None:
    assert make() == make("help")
