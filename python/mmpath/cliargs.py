"""What every `mmpath` subcommand shares on the command line: its one-line error output and the
argument types argparse checks."""

from __future__ import annotations

import argparse
import sys

from .errors import one_line


def print_error(msg: object) -> None:
    """`mmpath: <msg>` on stderr, one line, control characters a user typed escaped."""
    print("mmpath: " + one_line(msg), file=sys.stderr)


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})")
    return n
