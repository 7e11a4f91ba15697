"""argparse argument types the command lines share (the message says what to give)."""

from __future__ import annotations

import argparse


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
