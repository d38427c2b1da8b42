"""A sweep's grid values as the results table's cells (results.py) and the plot's axes (plot.py)."""

from __future__ import annotations

import json
from typing import Any

from .spec import SweepSpec


def cell(v: Any, text: bool = False) -> Any:
    # Grid values go into one column each; a list or table value is kept as its JSON text, and
    # so is every value of a key in text_keys (JSON text is TOML's for numbers and booleans).
    if isinstance(v, (list, dict)):
        return json.dumps(v, sort_keys=True)
    return json.dumps(v, default=str) if text and not isinstance(v, str) else v


def _kind(v: Any) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return "text" if isinstance(v, (str, list, dict)) else type(v).__name__


def text_keys(spec: SweepSpec) -> frozenset[str]:
    """Grid keys whose values are of different kinds, e.g. ``"flow.0.tcp.rcvbuf_bytes" =
    ["auto", 65536]``: a Parquet column has one type, so such a key's column holds each value
    as its text ("auto", "65536"). Integers and decimals together are one kind (float64)."""
    kinds: dict[str, set[str]] = {}
    for point in spec.points:
        for k, v in point:
            kinds.setdefault(k, set()).add(_kind(v))
    return frozenset(k for k, ks in kinds.items() if len(ks) > 1)


def grid_values(spec: SweepSpec) -> dict[str, list[Any]]:
    """Each grid key's distinct values, in the order the grid's points first use them."""
    grid: dict[str, list[Any]] = {k: [] for k in spec.keys}
    for point in spec.points:
        for k, v in point:
            if not any(cell(v) == cell(w) for w in grid[k]):
                grid[k].append(v)
    return grid
