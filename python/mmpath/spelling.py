"""How an error message names what the user gave: the command line's flags (``--set KEY``,
``--seed``, ``--variant NAME``) or the Python API's arguments (``overrides["KEY"]``, ``seed=``,
``variant="NAME"``). The same checks serve both; only the words pointing back at the input
differ, so a Python caller is never told about a flag it did not type.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Spelling:
    """The words for one way of giving a scenario's overrides, seed and variant."""

    cli: bool

    def override(self, key: str) -> str:
        """An override of `key`: ``--set flow.0.cc`` / ``overrides["flow.0.cc"]``."""
        return f"--set {key}" if self.cli else f'overrides["{key}"]'

    @property
    def seed(self) -> str:
        return "--seed" if self.cli else "seed="

    def variant(self, name: str) -> str:
        return f"--variant {name}" if self.cli else f'variant="{name}"'

    @property
    def no_variant(self) -> str:
        """What to do instead of naming a variant of a scenario that has none."""
        return "leave --variant out" if self.cli else "leave variant out"


CLI = Spelling(cli=True)
PYTHON = Spelling(cli=False)
