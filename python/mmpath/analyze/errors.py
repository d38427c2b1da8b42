"""The analyzer's user-facing error: one line naming the file, what is wrong and what is allowed."""

from __future__ import annotations

import re

from ..errors import MmpathError


class AnalyzeInputError(MmpathError, ValueError):
    """An input file the analyzer cannot read (exit status 2 in the CLI)."""

    def __init__(self, path, problem: str, allowed: str | None = None, line: int | None = None):
        # FILE:N: for a line of the file, as the scenario and trace readers write it.
        msg = f"{path}:{line}: {problem}" if line is not None else f"{path}: {problem}"
        if allowed:
            msg += f" (allowed: {allowed})"
        super().__init__(" ".join(msg.split()))
        self.path = str(path)


def from_core(path, e: ValueError) -> AnalyzeInputError:
    """A parse error of the simulator core (the CSV trace and wil6210 parsers, which name the file
    and line: FILE:LINE: what (allowed: ...)) as the analyzer's own, in the same form."""
    msg = str(e)
    prefix = f"{path}:"
    msg = msg[len(prefix):].strip() if msg.startswith(prefix) else msg
    at = re.match(r"(\d+): ", msg)
    return AnalyzeInputError(path, msg[at.end():] if at else msg, line=int(at.group(1)) if at else None)


def read_text(path, allowed: str, what: str = "") -> str:
    """A whole UTF-8 file's text, or the one error saying why it cannot be read (`what` names
    what the file should have been, e.g. ", so not an iperf3 -J report")."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise AnalyzeInputError(path, f"not UTF-8 text{what}", allowed) from None
    except OSError as e:
        raise AnalyzeInputError(path, f"cannot read: {e.strerror}") from None


def open_text(path):
    """A text log opened for line-by-line reading (undecodable bytes replaced, as the logs'
    readers only parse ASCII fields), or the one error saying why it cannot be read."""
    try:
        return open(path, encoding="utf-8", errors="replace")
    except OSError as e:
        raise AnalyzeInputError(path, f"cannot read: {e.strerror}") from None
