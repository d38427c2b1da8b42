"""examples/tour.ipynb runs from top to bottom (nbclient, the notebook's own folder as working
directory, outputs into a temporary folder): a cell that raises fails the test, and the steps the
notebook's text describes are checked on what it wrote and printed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import nbformat
import pandas as pd
from nbclient import NotebookClient

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _text(cell) -> str:
    out = []
    for o in cell.get("outputs", []):
        out.append(o.get("text") or o.get("data", {}).get("text/plain", ""))
    return "".join(out)


def test_tour_notebook_runs_every_cell_and_says_what_each_step_teaches(tmp_path, monkeypatch):
    monkeypatch.setenv("MMPATH_TOUR_OUT", str(tmp_path))
    monkeypatch.delenv("MPLBACKEND", raising=False)  # the kernel draws inline, as in Jupyter
    nb = nbformat.read(EXAMPLES / "tour.ipynb", as_version=4)
    t0 = time.monotonic()
    # execute() raises CellExecutionError, naming the cell, when any cell raises.
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    assert time.monotonic() - t0 < 60  # short runs: the tour is meant to be run, not waited for
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(o.get("output_type") != "error" for c in code for o in c.get("outputs", []))

    # Readable: each of the five steps is a markdown section saying what a researcher learns.
    sections = [c.source for c in nb.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
    assert [s.splitlines()[0][3:5] for s in sections[:5]] == ["1.", "2.", "3.", "4.", "5."]
    assert all("What you learn" in s for s in sections[:5])

    # 1. the run, 3. the comparison, 4. the sweep, 5. the analyses: written where they were sent.
    summary = json.loads((tmp_path / "blockage" / "summary.json").read_text())
    assert summary["scenario"] == "blockage" and summary["sim_s"] == 4.0
    table = pd.read_csv(tmp_path / "default" / "compare.csv")
    assert set(table["variant"]) == {"tcp-11ad", "fullmesh", "backup", "musher", "amuse"}
    sweep = pd.read_parquet(tmp_path / "sweep" / "results.parquet")
    assert len(sweep) == 6 and not sweep["error"].fillna("").any()
    a = json.loads((tmp_path / "analysis-tcp" / "summary.json").read_text())
    (agree,) = a["iperf3_agreement"]
    assert abs(agree["diff_pct"]) < 2.0
    assert (tmp_path / "analysis-iso" / "summary.json").is_file()

    # What the cells printed: the best variant's line, and the blockage in the link events.
    printed = "\n".join(_text(c) for c in code)
    assert "x single-path TCP over 11ad" in printed
    assert "down" in printed and "up" in printed
    # 2. the plot was drawn (an image output), not only computed.
    assert any("image/png" in o.get("data", {}) for c in code for o in c.get("outputs", []))
