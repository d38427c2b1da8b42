"""A one-line progress bar on stderr, shown only on a terminal.

Hand-written (no dependency): it only needs a carriage return. When stderr is piped or redirected
(CI logs, `2>file`, notebooks) it prints nothing at all, so logs stay clean.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 30  # characters of the bar itself
_MIN_INTERVAL_S = 0.1  # redraw at most 10 times a second; drawing is cheap but terminals are not


class Progress:
    """Simulated seconds done out of `total_s`, with a percentage."""

    def __init__(self, total_s: float, enabled: bool = True, stream: TextIO | None = None,
                 label: str = "simulating") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total_s = max(float(total_s), 0.0)
        self.label = label
        self.enabled = bool(enabled) and _is_tty(self.stream)
        self._last_draw = 0.0
        self._drawn = False

    def update(self, done_s: float, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if not force and self._drawn and now - self._last_draw < _MIN_INTERVAL_S:
            return
        self._last_draw = now
        self._drawn = True
        frac = 1.0 if self.total_s == 0 else min(max(done_s / self.total_s, 0.0), 1.0)
        filled = int(round(frac * _WIDTH))
        bar = "#" * filled + "-" * (_WIDTH - filled)
        self.stream.write(
            f"\r{self.label} [{bar}] {done_s:8.2f} / {self.total_s:.2f} s {frac * 100:5.1f}%"
        )
        self.stream.flush()

    def close(self) -> None:
        """Erase the bar so the results table starts on a clean line."""
        if self.enabled and self._drawn:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
            self._drawn = False


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed or exotic streams: treat as not a terminal
        return False


class RunCounter:
    """Runs done / total on one stderr line (`mmpath reproduce`, `mmpath sweep`), only on a
    terminal, like Progress."""

    def __init__(self, total: int, enabled: bool = True, stream: TextIO | None = None,
                 label: str = "running") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.label = label
        self.enabled = bool(enabled) and _is_tty(self.stream) and total > 0
        self.done = 0
        self.what = ""
        self._last = 0.0

    def step(self, what: str = "") -> None:
        """One more run done; `what`: the run (a sweep point), named after the count."""
        self.done += 1
        self.what = what
        if not self.enabled:
            return
        now = time.monotonic()
        if self.done < self.total and now - self._last < _MIN_INTERVAL_S:
            return
        self._last = now
        frac = self.done / self.total
        bar = "#" * int(round(frac * _WIDTH))
        what = f"; done: {self.what}" if self.what else ""
        self.stream.write(f"\r\x1b[2K{self.label} [{bar:<{_WIDTH}}] {self.done}/{self.total} runs {frac * 100:5.1f}%{what}")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()
