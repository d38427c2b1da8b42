"""A sweep's results: one table (a row per run and flow), written as Parquet and CSV beside a
sweep.json that records what was run, and the per-point summary `mmpath sweep` prints.

The table's columns: `point` (grid point index), `seed`, one column per grid key (named as in the
sweep file, e.g. ``flow.0.scheduler``), `flow`, the flow's metrics (execute.FLOW_FIELDS, RTT
mean / p95, ``subflow_<path>_mbps`` for MPTCP), the run's `sim_s`, `wall_s`, `events`,
`invariants_ok`, and `error` (empty unless that run failed). Rows are ordered by point, seed and
flow, whatever order the runs finished in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..outputs import staged_folder
from ..table import align
from .cells import cell, grid_values, text_keys
from .execute import FLOW_FIELDS, RUN_FIELDS
from .plot import plot
from .spec import Run, SweepSpec

ID_COLUMNS = ("point", "seed")
# Metric columns: always numeric (float64 when a run has no value for them).
NUMERIC_COLUMNS = ("goodput_mbps", "bytes_delivered", "retransmits", "loss_pct", "energy_j", "nj_per_bit",
                   "rtt_mean_ms", "rtt_p95_ms", "sim_s", "wall_s", "events", "energy_total_j",
                   "delay_late_mean_ms", "delay_late_max_ms")


def table(spec: SweepSpec, done: dict[int, list[dict[str, Any]]], errors: dict[int, str]) -> pd.DataFrame:
    rows: list[dict[str, Any]] = []
    text = text_keys(spec)
    for r in spec.runs:
        ident: dict[str, Any] = {"point": r.point, "seed": r.seed}
        for k, v in r.values:
            ident[k] = cell(v, k in text)
        if r.index in errors:
            rows.append({**ident, "error": errors[r.index]})
            continue
        for fr in done.get(r.index, []):
            rows.append({**ident, **fr, "error": ""})
    df = pd.DataFrame(rows)
    if "error" not in df:
        df["error"] = ""
    df["error"] = df["error"].fillna("")
    df = df[_ordered_columns(spec, list(df.columns))]
    # A metric that no run had (energy without a metered device) or that a failed run lacks
    # would otherwise be an `object` column of None (Parquet type null): keep every metric a
    # number column, NaN where undefined, whatever the runs gave.
    for col in df.columns:
        if col in NUMERIC_COLUMNS or (col.startswith(("subflow_", "path_")) and col.endswith("_mbps")):
            if df[col].dtype == object:
                df[col] = pd.to_numeric(df[col], errors="coerce").astype("float64")
    return df


def _ordered_columns(spec: SweepSpec, cols: list[str]) -> list[str]:
    """The documented column order (docs/sweep.md), whatever the first row held: a failed run or
    a TCP flow first would otherwise put `error` or the run's columns before the MPTCP flows'
    ``subflow_<path>_mbps``."""
    head = [*ID_COLUMNS, *spec.keys, "flow", *FLOW_FIELDS, "rtt_mean_ms", "rtt_p95_ms"]
    head += [c for c in cols if c.startswith("subflow_") and c not in head]
    head += list(RUN_FIELDS)
    order = [c for c in head if c in cols]
    order += [c for c in cols if c not in order and c != "error"]
    return order + ["error"]


def summary_rows(spec: SweepSpec, df: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """Per grid point and flow: goodput mean and std over the seeds, with a metered device the
    mean energy per bit (what seed 002's ratio sweeps compare), runs done / failed."""
    metered = "nj_per_bit" in df and pd.to_numeric(df["nj_per_bit"], errors="coerce").notna().any()
    header = [*spec.keys, "flow", "runs", "goodput Mbps", "std", *(["nJ/bit"] if metered else []), "failed"]
    out = []
    for pi, values in enumerate(spec.points):
        sel = df[df["point"] == pi]
        failed = int((sel["error"] != "").sum())
        ok = sel[sel["error"] == ""]
        flows = list(dict.fromkeys(ok["flow"])) if "flow" in ok else []
        cells = [str(cell(v)) for _, v in values]
        if not flows:
            out.append([*cells, "-", "0", "-", "-", *(["-"] if metered else []), str(failed)])
            continue
        for f in flows:
            g = ok[ok["flow"] == f]
            x = pd.to_numeric(g["goodput_mbps"], errors="coerce").dropna()
            m, sd = x.mean(), (x.std() if len(x) > 1 else 0.0)
            energy = []
            if metered:
                nj = pd.to_numeric(g["nj_per_bit"], errors="coerce").dropna()
                energy = [f"{nj.mean():.2f}" if len(nj) else "-"]
            out.append([*cells, str(f), str(len(g)), f"{m:.1f}", f"{sd:.1f}", *energy, str(failed)])
    return header, out


def format_rows(header: list[str], rows: list[list[str]]) -> str:
    # The grid's keys and the flow are text; runs, goodput, std, nJ/bit and failed are numbers.
    return align(header, rows, len(header) - (5 if "nJ/bit" in header else 4))


def write(spec: SweepSpec, df: pd.DataFrame, out: Path, meta: dict[str, Any]) -> None:
    """results.parquet, results.csv, sweep.json and (one- or two-key grids) sweep.png into `out`
    (created if needed), all or none: they are written into a hidden sibling folder and moved in together (outputs.py), so an
    interrupted or failed write leaves `out` as it was. File-system errors: OutputError."""
    # sweep.png only for one- and two-key grids: an earlier sweep's must not stay (docs/sweep.md).
    with staged_folder(out, stale=("sweep.png",)) as tmp:
        _write_files(spec, df, tmp, meta)


def _write_files(spec: SweepSpec, df: pd.DataFrame, out: Path, meta: dict[str, Any]) -> None:
    df.to_parquet(out / "results.parquet", index=False)
    df.to_csv(out / "results.csv", index=False)

    plot(spec, df, out / "sweep.png")  # one- and two-key grids (plot.py)
    grid = grid_values(spec)
    doc = {
        "name": spec.name,
        "description": spec.description,
        "source": spec.source,
        "scenario": spec.scenario if isinstance(spec.scenario, str) else "<inline table>",
        "set": spec.base,
        "grid": grid,
        "points": [{k: v for k, v in p} for p in spec.points],
        "seeds": spec.seeds,
        "runs": len(spec.runs),
        **meta,
    }
    (out / "sweep.json").write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")


def failed_runs(spec: SweepSpec, errors: dict[int, str]) -> list[tuple[Run, str]]:
    return [(r, errors[r.index]) for r in spec.runs if r.index in errors]
