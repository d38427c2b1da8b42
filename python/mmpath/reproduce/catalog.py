"""Every claim and experiment of `mmpath reproduce`: importing the seed modules registers them in
registry.py's EXPERIMENTS and CLAIMS (in this order), and the claims are picked here by id."""

from __future__ import annotations

from typing import Iterable

# Imported for what they register (registry.experiment / registry.claim), in registry order.
from . import seed000, seed000_mptcp, seed001, seed002, seed003, seed004, xkernel, xpm  # noqa: F401
from .registry import CLAIMS, Claim


def known_ids() -> list[str]:
    return list(CLAIMS)


class UnknownClaim(ValueError):
    pass


def select(ids: Iterable[str]) -> list[Claim]:
    """Claims by id, in registry order; "all" (or nothing) means every claim."""
    ids = list(ids)
    if not ids or "all" in ids:
        unknown = [i for i in ids if i != "all" and i not in CLAIMS]
    else:
        unknown = [i for i in ids if i not in CLAIMS]
    if unknown:
        plural = "s" if len(unknown) > 1 else ""
        raise UnknownClaim(
            f"unknown claim id{plural} {', '.join(unknown)}; known: {', '.join(CLAIMS)} (or all)"
        )
    if not ids or "all" in ids:
        return list(CLAIMS.values())
    wanted = set(ids)
    return [c for c in CLAIMS.values() if c.id in wanted]
