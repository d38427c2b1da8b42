"""User-facing error types.

Every mistake a user can make (a bad scenario file, a bad ``--set``, a missing file) is raised as a
subclass of :class:`MmpathError` whose message is ONE line naming what is wrong and what is allowed.
The CLI prints that line as ``mmpath: error: <message>`` and exits with status 2; it never shows a
traceback for these. Anything else that escapes is a bug and keeps its traceback.
"""

from __future__ import annotations


def one_line(msg: object) -> str:
    """A message as the CLI prints it: whitespace runs (line ends included) collapsed to one
    space, and any other unprintable character (an escape sequence typed into a value) written
    as a Python escape, so the message stays one line a terminal shows as it is."""
    text = " ".join(str(msg).split())
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class MmpathError(Exception):
    """Base class of the errors caused by user input (exit status 2 in the CLI)."""


class ScenarioError(MmpathError, ValueError):
    """The scenario (file, dict or override) is invalid.

    The core raises its own ``mmpath._core.ScenarioError``; the Python front converts it to this
    class, prefixed with where the scenario came from, so callers only need one ``except``.
    """


class ScenarioNotFoundError(ScenarioError, FileNotFoundError):
    """Neither a readable file nor a bundled scenario name."""


class OverrideError(ScenarioError):
    """A ``--set KEY=VALUE`` (or an ``overrides`` dict entry) that cannot be applied."""


class OutputError(MmpathError, OSError):
    """The output folder cannot be created or written."""
