"""What `mmpath reproduce` prints and writes: the claim table, one PNG per experiment shaped like
the paper's figure, the runs tables (Parquet + CSV), claims.csv, report.md and report.html."""

from __future__ import annotations

import html
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..outputs import staged_folder
from ..version import __version__

if TYPE_CHECKING:  # pragma: no cover
    from . import ClaimResult, Report

_WIDTH = 100
_MAX_FAILED_SHOWN = 8  # on the terminal; report.md has every check


def _wrap(label: str, text: str, width: int) -> list[str]:
    head = f"  {label:<10} "
    return textwrap.wrap(text, width=width, initial_indent=head, subsequent_indent=" " * len(head),
                         break_on_hyphens=False) or [head.rstrip()]


def _mode_line(rep: "Report") -> str:
    m = rep.mode
    runs = "1 run per point (seed 1)" if m.runs == 1 else f"{m.runs} runs per point (seeds 1-{m.runs})"
    return (f"{runs}, {m.duration_s:g} s scenarios unless the experiment "
            f"fixes its own length (its criterion says so)" + (", fast mode" if m.fast else ""))


def claim_block(r: "ClaimResult", width: int | None = None) -> str:
    width = width or _WIDTH
    c, v = r.claim, r.verdict
    lines = [f"{c.id}  {v.status}"]
    lines += _wrap("claim", c.claim, width)
    lines += _wrap("paper", c.paper, width)
    lines += _wrap("mmpath", v.mmpath, width)
    lines += _wrap("criterion", c.criterion, width)
    if v.status == "ERROR":
        for e in v.errors[:3]:
            lines += _wrap("error", " ".join(e.split()), width)
    elif v.failed:
        shown = v.failed[:_MAX_FAILED_SHOWN]
        for i, chk in enumerate(shown):
            lines += _wrap("failed" if i == 0 else "", chk.text, width)
        if len(v.failed) > len(shown):
            lines += _wrap("", f"... and {len(v.failed) - len(shown)} more (report.md lists every check)", width)
    if v.status != "ERROR":
        lines += _wrap("checks", f"{sum(ch.ok for ch in v.checks)} of {len(v.checks)} hold", width)
    return "\n".join(lines)


def summary_table(rep: "Report") -> str:
    rows = [(cid, r.verdict.status, r.claim.experiment) for cid, r in rep.results.items()]
    w = max([len("id")] + [len(x[0]) for x in rows])
    out = [f"{'id':<{w}}  result  experiment", f"{'-' * w}  ------  ----------"]
    out += [f"{cid:<{w}}  {status:<6}  {exp}" for cid, status, exp in rows]
    counts = {s: sum(1 for _, st, _ in rows if st == s) for s in ("PASS", "FAIL", "ERROR")}
    out.append(", ".join(f"{n} {s}" for s, n in counts.items() if n) + f"  ({_mode_line(rep)})")
    return "\n".join(out)


def console(rep: "Report") -> str:
    blocks = [claim_block(r) for r in rep.results.values()]
    return "\n\n".join(blocks) + "\n\n" + summary_table(rep)


# --------------------------------------------------------------------------- files


def _md_cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _claims_frame(rep: "Report") -> pd.DataFrame:
    return pd.DataFrame([{
        "id": cid,
        "experiment": r.claim.experiment,
        "claim": r.claim.claim,
        "paper": r.claim.paper,
        "mmpath": r.verdict.mmpath,
        "criterion": r.claim.criterion,
        "result": r.verdict.status,
        "checks_held": sum(c.ok for c in r.verdict.checks),
        "checks": len(r.verdict.checks),
        "failed_checks": " | ".join(c.text for c in r.verdict.failed),
        "errors": " | ".join(" ".join(e.split()) for e in r.verdict.errors),
    } for cid, r in rep.results.items()])


def _markdown(rep: "Report", pngs: dict[str, str]) -> str:
    out = ["# mmpath reproduce", "", f"mmpath {__version__}; {_mode_line(rep)}.", "",
           "Criteria follow docs/reproduce.md: a number from the paper must be matched within "
           "15 % (or fall inside the paper's range); an ordering or trend must hold for the mean of the "
           "runs at every point.", "",
           "| id | claim | paper | mmpath | criterion | result |", "|---|---|---|---|---|---|"]
    for cid, r in rep.results.items():
        out.append("| " + " | ".join(_md_cell(x) for x in (
            cid, r.claim.claim, r.claim.paper, r.verdict.mmpath, r.claim.criterion, f"**{r.verdict.status}**")) + " |")
    for cid, r in rep.results.items():
        out += ["", f"## {cid}: {r.verdict.status}", "", f"Experiment `{r.claim.experiment}`.", ""]
        if r.verdict.errors:
            out += ["Errors:", ""] + [f"    {line}" for e in r.verdict.errors for line in e.splitlines()]
        for chk in r.verdict.checks:
            out.append(f"- {'ok' if chk.ok else '**NO**'}: {_md_cell(chk.text)}")
    tables = _tables(rep)
    if tables:
        out += ["", "## Tables", ""]
        for exp_id, text in tables.items():
            out += [f"### {exp_id}: {rep.data[exp_id].experiment.title}", "", text, ""]
    if pngs:
        out += ["", "## Figures", ""]
        for exp_id, name in pngs.items():
            exp = rep.data[exp_id].experiment
            out += [f"### {exp_id}: {exp.title} ({exp.figure})", "", f"![{exp_id}]({name})", ""]
    return "\n".join(out) + "\n"


def _tables(rep: "Report") -> dict[str, str]:
    """Each experiment's own Markdown table (Experiment.table), for those that have one and runs."""
    return {k: d.experiment.table(d.runs) for k, d in rep.data.items()
            if d.experiment.table is not None and len(d.runs)}


def _html(rep: "Report", pngs: dict[str, str]) -> str:
    e = html.escape
    colour = {"PASS": "#1a7f37", "FAIL": "#cf222e", "ERROR": "#9a6700"}
    rows = []
    for cid, r in rep.results.items():
        rows.append("<tr>" + "".join(f"<td>{e(x)}</td>" for x in (
            cid, r.claim.claim, r.claim.paper, r.verdict.mmpath, r.claim.criterion))
            + f"<td style='color:{colour[r.verdict.status]};font-weight:bold'>{r.verdict.status}</td></tr>")
    details = []
    for cid, r in rep.results.items():
        items = "".join(f"<li class='{'ok' if c.ok else 'no'}'>{'ok' if c.ok else 'NO'}: {e(c.text)}</li>"
                        for c in r.verdict.checks)
        errs = "".join(f"<pre>{e(x)}</pre>" for x in r.verdict.errors)
        details.append(f"<h3>{e(cid)}: {r.verdict.status}</h3>{errs}<ul>{items}</ul>")
    tabs = "".join(f"<h3>{e(k)}: {e(rep.data[k].experiment.title)}</h3><pre>{e(v)}</pre>"
                   for k, v in _tables(rep).items())
    figs = "".join(f"<h3>{e(k)}: {e(rep.data[k].experiment.title)} ({e(rep.data[k].experiment.figure)})</h3>"
                   f"<img src='{e(v)}' style='max-width:100%'>" for k, v in pngs.items())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>mmpath reproduce</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1400px}} table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 6px;vertical-align:top;font-size:90%}} li.no{{color:#cf222e}}</style>
</head><body>
<h1>mmpath reproduce</h1>
<p>mmpath {e(__version__)}; {e(_mode_line(rep))}. A number from the paper must be matched within 15 %
(or fall inside the paper's range); an ordering or trend must hold for the mean of the runs at every point.</p>
<table><tr><th>id</th><th>claim</th><th>paper</th><th>mmpath</th><th>criterion</th><th>result</th></tr>
{''.join(rows)}</table>
<h2>Checks</h2>{''.join(details)}
{'<h2>Tables</h2>' + tabs if tabs else ''}
<h2>Figures</h2>{figs}
</body></html>
"""


def write(rep: "Report", out: Path, plots: bool = True) -> list[Path]:
    """Write everything into ``out``; return the files written. All of them or none: they are
    written into a hidden sibling folder and moved in together (outputs.staged_folder), so an
    interrupted or failed write leaves ``out`` as it was; file-system errors are OutputError."""
    with staged_folder(out) as tmp:
        files = _write_into(rep, tmp, plots)
    return [out / f.name for f in files]


def _write_into(rep: "Report", out: Path, plots: bool) -> list[Path]:
    files: list[Path] = []
    pngs: dict[str, str] = {}
    for exp_id, d in rep.data.items():
        if len(d.runs):
            for suffix, frame in (("", d.runs), ("-series", d.series)):
                if frame is None or not len(frame):
                    continue
                pq, csv = out / f"{exp_id}{suffix}.parquet", out / f"{exp_id}{suffix}.csv"
                frame.to_parquet(pq, index=False)
                frame.to_csv(csv, index=False)
                files += [pq, csv]
        if plots and d.experiment.plot is not None and len(d.runs):
            png = out / f"{exp_id}.png"
            try:
                d.experiment.plot(d.runs, d.series, png)
            except Exception as ex:  # a broken plot must not hide the verdicts
                d.failures.append(({}, None, f"plot failed: {type(ex).__name__}: {ex}"))
            if png.exists():
                pngs[exp_id] = png.name
                files.append(png)
    claims = _claims_frame(rep)
    claims.to_csv(out / "claims.csv", index=False)
    files.append(out / "claims.csv")
    (out / "report.md").write_text(_markdown(rep, pngs), encoding="utf-8")
    (out / "report.html").write_text(_html(rep, pngs), encoding="utf-8")
    files += [out / "report.md", out / "report.html"]
    return files
