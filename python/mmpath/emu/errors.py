"""The emulator's error: the machine or the scenario cannot be emulated (one line to the user)."""

from __future__ import annotations

from ..errors import MmpathError


class EmuError(MmpathError):
    """The machine or the scenario cannot be emulated: one line, what is missing and what is allowed."""
