"""What every `mmpath` subcommand shares on the command line: its one-line error output and the
argument types argparse checks."""

from __future__ import annotations

import argparse
import difflib
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


class SuggestingParser(argparse.ArgumentParser):
    """argparse's parser that names the closest flag to a mistyped one: `mmpath run --sett ...`
    ends in "unrecognized arguments: --sett (did you mean --set?)", exit 2. Subcommands' parsers
    are of the same class (argparse makes them so), and the flags looked through are those of the
    command and subcommands the line chose."""

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}{flag_suggestion(self, ns, extras)}")
        return ns


def flag_suggestion(parser: argparse.ArgumentParser, ns: argparse.Namespace, extras: list[str]) -> str:
    """" (did you mean --set?)" for the first flag in `extras` close to one of the flags of
    `parser` and of the subcommands `ns` chose; "" when none is close."""
    flags: list[str] = []
    while parser is not None:
        flags += [f for f in parser._option_string_actions if f.startswith("--")]
        chosen = None
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(getattr(ns, action.dest, None) or "")
        parser = chosen
    for word in extras:
        if not word.startswith("--"):
            continue
        close = difflib.get_close_matches(word.split("=", 1)[0], flags, n=1, cutoff=0.6)
        if close:
            return f" (did you mean {close[0]}?)"
    return ""
