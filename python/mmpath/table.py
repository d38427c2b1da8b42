"""The results table `mmpath run` prints (and report.html reuses)."""

from __future__ import annotations

from typing import Any

HEADER = ["flow", "kind", "cc", "path", "goodput Mbps", "retransmits", "loss %", "mean RTT ms", "p95 RTT ms"]
_LEFT = 4  # text columns (left-aligned); the rest are numbers (right-aligned)


def _f(x: Any, fmt: str) -> str:
    if x is None:
        return "-"
    try:
        return format(float(x), fmt)
    except (TypeError, ValueError):
        return str(x)


def _row(f: dict[str, Any], name: str, kind: str) -> list[str]:
    rtt = f.get("rtt_ms") or {}
    tcp = f.get("kind") != "udp"
    return [
        name,
        kind,
        str(f.get("cc") or "-"),
        str(f.get("path", "")),
        _f(f.get("goodput_mbps"), ".1f"),
        str(f.get("retransmits", 0)) if tcp else "-",
        _f(f.get("loss_pct"), ".2f"),
        _f(rtt.get("mean"), ".2f"),
        _f(rtt.get("p95"), ".2f"),
    ]


# With a metered device (the phone, docs/models.md "Energy"): each flow's joules and energy per bit
# (summary flows[].energy_j / nj_per_bit: the radios it may use and the phone's receive-side host).
ENERGY_HEADER = ["energy J", "nJ/bit"]


def flow_rows(summary: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    rows = []
    flows = summary.get("flows", [])
    metered = any(f.get("energy_j") is not None for f in flows)
    for f in flows:
        kind = str(f.get("kind", ""))
        if kind == "mptcp":
            kind = f"mptcp/{f.get('scheduler')}" + ("/backup" if f.get("mode") == "backup" else "")
        row = _row(f, str(f.get("name", "")), kind)
        if f.get("subflows"):
            row[3] = "+".join(dict.fromkeys(str(sf.get("path", "")) for sf in f["subflows"]))
        if metered:
            row += [_f(f.get("energy_j"), ".2f"), _f(f.get("nj_per_bit"), ".2f")]
        rows.append(row)
        # MPTCP: one indented row per subflow (its own subflow-level goodput, RTT, losses), named
        # as the run names it after the connection ("11ad", or "11ad>11n" in an address mesh).
        for sf in f.get("subflows") or []:
            label = "subflow" + (" (backup)" if sf.get("backup") else "")
            short = str(sf.get("name", "")).removeprefix(f"{f.get('name', '')}/") or str(sf.get("path", ""))
            # A subflow's radio is charged to its connection, not split: no energy of its own.
            rows.append(_row(sf, f"  - {short}", label) + (["-", "-"] if metered else []))
    return (HEADER + ENERGY_HEADER if metered else HEADER), rows


def align(header: list[str], rows: list[list[str]], n_left: int) -> str:
    """A plain-text table: the first `n_left` columns left-aligned (text), the rest
    right-aligned (numbers), a dashed rule under the header. Shared by `mmpath run`, the variant
    comparison (compare.py) and `mmpath sweep`."""
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) if i < n_left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return "\n".join([line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)])


def format_table(summary: dict[str, Any]) -> str:
    header, rows = flow_rows(summary)
    return align(header, rows, _LEFT)


def _si(x: float) -> str:
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.2f} {unit}"
    return f"{x:.0f} "


def run_line(summary: dict[str, Any]) -> str:
    """One line: simulated vs wall seconds, events/s and the invariant verdict."""
    inv = summary.get("invariants", {})
    checks = inv.get("checks", [])
    if inv.get("ok"):
        verdict = f"invariants ok ({len(checks)} checks)"
    else:
        bad = sum(1 for c in checks if not c.get("ok"))
        verdict = f"invariants FAILED ({bad} of {len(checks)} checks)"
    sim_s = float(summary.get("sim_s") or 0.0)
    wall_s = float(summary.get("wall_s") or 0.0)
    speed = summary.get("sim_s_per_wall_s")
    eps = summary.get("events_per_s")
    speed_txt = f" ({speed:.1f}x real time)" if speed else ""
    eps_txt = f" ({_si(eps)}events/s)" if eps else ""
    return (f"simulated {sim_s:g} s in {wall_s:.2f} s wall{speed_txt}, "
            f"{int(summary.get('events') or 0):,} events{eps_txt}; {verdict}")
