"""Claims, experiments and the registry `mmpath reproduce` draws from.

An *experiment* is a set of scenario points (one scenario each, labelled by a key such as
``{"mtu": 7912, "signal": "strong", "proto": "udp", "mcs": 6}``) that are each run with seeds
1..N, and a ``measure`` function turning one finished run into a row of metrics.

A *claim* (one id of docs/reproduce.md) names the experiment that provides its data,
which of its points it needs, what the paper says, and its criterion: a ``check`` function
beside the claim that evaluates the runs table and returns the individual checks, each with its
tolerance written into its text. A claim passes when every one of its checks holds.

The rules (docs/reproduce.md): where the paper gives a number, mmpath's mean must be within
``TOLERANCE`` (15 %) of it or inside the paper's min-max range; where it gives an ordering or a
trend, it must hold for the mean of the runs at every point. Claims never special-case anything
and the model never knows about them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from ..lazy import numpy as np  # on first use (start-up time): lazy.py

if TYPE_CHECKING:  # pragma: no cover
    from pathlib import Path

    import pandas as pd

    from ..api import Result

# docs/reproduce.md: "mmpath's mean must be within 15 % of it". One constant for every claim.
TOLERANCE = 0.15

# Default and fast-mode run settings (docs/reproduce.md: 10 runs of 10 s, as the papers' iperf3 runs;
# fast: 2 runs of 3 s, used by the test suite).
RUNS_DEFAULT = 10
DURATION_DEFAULT_S = 10.0
RUNS_FAST = 2
DURATION_FAST_S = 3.0


@dataclass(frozen=True)
class Mode:
    """How much to run: runs per point, scenario length, and whether sweeps may be thinned."""

    runs: int = RUNS_DEFAULT
    duration_s: float = DURATION_DEFAULT_S
    fast: bool = False

    @classmethod
    def make(cls, fast: bool = False, runs: int | None = None) -> "Mode":
        if fast:
            return cls(runs=runs or RUNS_FAST, duration_s=DURATION_FAST_S, fast=True)
        return cls(runs=runs or RUNS_DEFAULT, duration_s=DURATION_DEFAULT_S, fast=False)

    @property
    def seeds(self) -> list[int]:
        """Deterministic seeds 1..N, the same for every point."""
        return list(range(1, self.runs + 1))


@dataclass(frozen=True)
class Point:
    """One scenario of an experiment, labelled by ``key`` (the columns of the runs table)."""

    key: Mapping[str, Any]
    scenario: Mapping[str, Any]

    @property
    def label(self) -> tuple:
        return tuple(sorted((k, v) for k, v in self.key.items()))


# measure(result, point, mode) -> dict of scalar metrics, or (dict, DataFrame of a time series)
Measure = Callable[["Result", Point, Mode], Any]
Plot = Callable[["pd.DataFrame", "pd.DataFrame | None", "Path"], None]


@dataclass
class Experiment:
    id: str
    paper: str  # "000", "001": the seed paper (docs/facts.md, Sources)
    title: str
    figure: str  # which figure(s) of the paper the plot mirrors
    points: Callable[[Mode], list[Point]]
    measure: Measure
    plot: Plot | None = None
    # How one run is done: run(point, seed) -> a result `measure` reads (default: mmpath.run
    # on the point's scenario, i.e. the simulator).
    run: Callable[[Point, int], Any] | None = None
    # Its runs take wall-clock time on this machine (emulation): they run one at a time in the
    # main process after every other run, so that neither they nor the others share the CPU.
    exclusive: bool = False
    # At most this many runs per point whatever the mode asks (real-time runs: x-kernel's battery
    # keeps its full mode under 10 minutes); None: the mode's.
    max_runs: int | None = None
    # table(runs) -> a Markdown table the report prints under the claims (x-kernel's battery).
    table: Callable[["pd.DataFrame"], str] | None = None

    def seeds(self, mode: Mode) -> list[int]:
        return mode.seeds[: self.max_runs] if self.max_runs else mode.seeds


@dataclass
class Check:
    """One criterion line: what was compared, with the numbers and the tolerance, and if it held."""

    text: str
    ok: bool

    def __str__(self) -> str:
        return f"[{'ok' if self.ok else 'NO'}] {self.text}"


@dataclass
class Verdict:
    status: str  # PASS | FAIL | ERROR
    mmpath: str  # what mmpath measured, in one or two short sentences
    checks: list[Check] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.ok]


@dataclass
class Claim:
    id: str
    experiment: str  # id of the Experiment whose runs it evaluates
    claim: str  # the claim, as docs/reproduce.md states it
    paper: str  # what the paper measured (numbers where it gives them)
    criterion: str  # the criterion in words, with its tolerance
    # check(runs, mode) -> (mmpath summary text, [Check]); runs holds only the points it needs
    check: Callable[["pd.DataFrame", Mode], tuple[str, list[Check]]]
    needs: Callable[[Mapping[str, Any]], bool] = lambda key: True


# --------------------------------------------------------------------------- the registry

EXPERIMENTS: dict[str, Experiment] = {}
CLAIMS: dict[str, Claim] = {}


def experiment(exp: Experiment) -> Experiment:
    if exp.id in EXPERIMENTS:
        raise ValueError(f"experiment {exp.id} registered twice")
    EXPERIMENTS[exp.id] = exp
    return exp


def claim(c: Claim) -> Claim:
    if c.id in CLAIMS:
        raise ValueError(f"claim {c.id} registered twice")
    CLAIMS[c.id] = c
    return c


# --------------------------------------------------------------------------- check helpers


def select_rows(runs: pd.DataFrame, **where: Any) -> pd.DataFrame:
    """The runs whose columns have the given values, e.g. select_rows(runs, dir="down", demand=0)."""
    m = np.ones(len(runs), dtype=bool)
    for k, v in where.items():
        m &= (runs[k] == v).to_numpy()
    return runs[m]


def mean_of(runs: pd.DataFrame, col: str = "goodput_mbps", **where: Any) -> float:
    """The mean of `col` over the runs select_rows picks."""
    return stats(select_rows(runs, **where)[col])["mean"]


def fmt(x: float, unit: str = "") -> str:
    """A number for a criterion line: 3 significant figures, no scientific notation."""
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "n/a"
    x = float(x)
    if abs(x) >= 100:
        s = f"{x:.0f}"
    elif abs(x) >= 10:
        s = f"{x:.1f}"
    elif abs(x) >= 1:
        s = f"{x:.2f}"
    else:
        s = f"{x:.3f}"
    return f"{s} {unit}".rstrip() if unit else s


class Checks:
    """Collects the checks of one claim; every helper writes its numbers and tolerance into the
    text, so what is printed is exactly what was tested."""

    def __init__(self) -> None:
        self.items: list[Check] = []

    def add(self, text: str, ok: bool) -> bool:
        self.items.append(Check(text, bool(ok)))
        return bool(ok)

    def within(self, what: str, value: float, target: float, unit: str = "",
               tol: float = TOLERANCE, ref: str = "paper") -> bool:
        ok = np.isfinite(value) and abs(value - target) <= tol * abs(target)
        return self.add(f"{what} = {fmt(value, unit)}, {ref} {fmt(target, unit)} "
                        f"(within {tol:.0%}: {fmt(target * (1 - tol))}..{fmt(target * (1 + tol))})", ok)

    def inside(self, what: str, value: float, lo: float, hi: float, unit: str = "") -> bool:
        ok = np.isfinite(value) and lo <= value <= hi
        return self.add(f"{what} = {fmt(value, unit)}, paper's range {fmt(lo)}..{fmt(hi, unit)}", ok)

    def above(self, what: str, value: float, bound: float, unit: str = "", bound_text: str = "") -> bool:
        ok = np.isfinite(value) and value > bound
        return self.add(f"{what} = {fmt(value, unit)} > {bound_text or fmt(bound, unit)}", ok)

    def below(self, what: str, value: float, bound: float, unit: str = "", bound_text: str = "") -> bool:
        ok = np.isfinite(value) and value < bound
        return self.add(f"{what} = {fmt(value, unit)} < {bound_text or fmt(bound, unit)}", ok)

    def at_least(self, what: str, value: float, bound: float, unit: str = "", bound_text: str = "") -> bool:
        ok = np.isfinite(value) and value >= bound
        return self.add(f"{what} = {fmt(value, unit)} >= {bound_text or fmt(bound, unit)}", ok)

    def at_most(self, what: str, value: float, bound: float, unit: str = "", bound_text: str = "") -> bool:
        ok = np.isfinite(value) and value <= bound
        return self.add(f"{what} = {fmt(value, unit)} <= {bound_text or fmt(bound, unit)}", ok)

    def increasing(self, what: str, xs: list, ys: list[float], unit: str = "") -> bool:
        """Strictly increasing means at every step."""
        bad = [f"{xs[i]}->{xs[i + 1]}: {fmt(ys[i])}->{fmt(ys[i + 1])}"
               for i in range(len(ys) - 1) if not (ys[i + 1] > ys[i])]
        series = ", ".join(fmt(y) for y in ys)
        text = f"{what} rises at every step: [{series}]{' ' + unit if unit else ''}"
        if bad:
            text += f"; not at {'; '.join(bad)}"
        return self.add(text, not bad and len(ys) >= 2)

    def present(self, what: str, n: int, needed: int) -> bool:
        return self.add(f"{what}: {n} of {needed}", n >= needed and needed > 0)


def stats(values: Iterable[float]) -> dict[str, float]:
    """mean / min / max / std (sample std, ddof 1) of a set of runs; NaNs are left out."""
    v = np.asarray(list(values), dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return {"mean": float("nan"), "min": float("nan"), "max": float("nan"), "std": float("nan"), "n": 0}
    return {"mean": float(v.mean()), "min": float(v.min()), "max": float(v.max()),
            "std": float(v.std(ddof=1)) if len(v) > 1 else 0.0, "n": int(len(v))}
