"""How an error message names what the user gave: the command line's flags (``--set KEY``,
``--seed``, ``--variant NAME``), the Python API's arguments (``overrides["KEY"]``, ``seed=``,
``variant="NAME"``) or a sweep file's tables (its ``[set]`` / ``[grid]`` keys and ``seeds``).
The same checks serve all three; only the words pointing back at the input differ, so nobody is
told about a flag they did not type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Spelling:
    """The words for one way of giving a scenario's overrides, seed and variant."""

    kind: Literal["cli", "python", "sweep"]

    @property
    def cli(self) -> bool:
        return self.kind == "cli"

    def override(self, key: str) -> str:
        """An override of `key`: ``--set flow.0.cc`` / ``overrides["flow.0.cc"]`` / ``the
        sweep's flow.0.cc``."""
        if self.kind == "cli":
            return f"--set {key}"
        if self.kind == "sweep":
            return f"the sweep's {key}"
        return f'overrides["{key}"]'

    def blame(self, key: str) -> str:
        """The suffix an error about a field gets when an override of `key` set it (what
        scenario.py's `_blame` appends, and what compare.py and the sweep look for)."""
        return f" (from {self.override(key)})"

    @property
    def seed(self) -> str:
        return {"cli": "--seed", "python": "seed=", "sweep": "the sweep's seeds"}[self.kind]

    def variant(self, name: str) -> str:
        return f"--variant {name}" if self.cli else f'variant="{name}"'

    @property
    def no_variant(self) -> str:
        """What to do instead of naming a variant of a scenario that has none."""
        return "leave --variant out" if self.cli else "leave variant out"


CLI = Spelling("cli")
PYTHON = Spelling("python")
SWEEP = Spelling("sweep")
