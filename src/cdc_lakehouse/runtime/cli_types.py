"""argparse argument types the command lines share (the message says what to give)."""

from __future__ import annotations

import argparse
from typing import NoReturn


def positive_int(text: str) -> int:
    """A whole number of 1 or more.

    Raises:
        argparse.ArgumentTypeError: not a whole number, or below 1.
    """
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def positive_float(text: str) -> float:
    """A number above 0.

    Raises:
        argparse.ArgumentTypeError: not a number, or not above 0.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
    return value


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one ``error:`` line naming the fix (exit 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")
