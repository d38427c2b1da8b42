"""mmpath agrees with ns-3 on the peer benchmark's reference scenario (within 3 % goodput).

The ns-3 numbers are measured data: bench/ns3_reference.json records goodputs from real runs of
the ns-3 peer (../shared/peers/ns3/tcp_bulk.cc) on the bundled `ns3-reference` scenario, with the
exact command lines. ns-3 itself is never run here (minutes of wall time at MTU 1500); the live
side-by-side comparison, and every timing, is `make bench` (bench/run_bench.py). Nothing here
asserts wall time.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

import mmpath
from mmpath.scenario import load_scenario

REPO = Path(__file__).resolve().parent.parent
REFERENCE = REPO / "bench" / "ns3_reference.json"
TOLERANCE_PCT = 3.0


def _bench_module():
    """bench/run_bench.py, for the overrides it gives mmpath (one definition for bench and test)."""
    spec = importlib.util.spec_from_file_location("mmpath_run_bench", REPO / "bench" / "run_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench_module()
REF = json.loads(REFERENCE.read_text())
RUNS = REF["runs"]


def test_reference_covers_both_mtus():
    have = {(r["mtu"], r["cc"]) for r in RUNS}
    assert {(7912, "cubic"), (1500, "cubic")} <= have, have


@pytest.mark.parametrize("ref", RUNS, ids=[f"mtu{r['mtu']}-{r['cc']}-{r['sim_s']:g}s" for r in RUNS])
def test_goodput_within_3pct_of_ns3(ref):
    # The recorded run is the peer with this MTU, congestion control and duration.
    args = ref["args"]
    assert (args["mtu"], args["cc"], float(args["time"])) == (
        str(ref["mtu"]), BENCH.NS3_CC[ref["cc"]], float(ref["sim_s"]))
    assert f"--mtu={ref['mtu']}" in ref["command"] and f"--time={ref['sim_s']:g}" in ref["command"]

    base = load_scenario(BENCH.SCENARIO).config
    overrides = BENCH.mmpath_overrides(base, ref["cc"], ref["mtu"], ref["sim_s"])
    res = mmpath.run(BENCH.SCENARIO, overrides=overrides)
    assert res.ok, res.failed_checks
    cfg = res.scenario.config
    assert args["rate"] == f"{cfg['path'][0]['rate_mbps']:g}Mbps"
    assert args["delay"] == f"{cfg['path'][0]['delay_ms']:g}ms"
    assert cfg["path"][0]["mtu_bytes"] == ref["mtu"]
    assert cfg["duration_s"] == pytest.approx(ref["sim_s"])

    ns3 = ref["goodput_mbps"]
    got = res.summary["flows"][0]["goodput_mbps"]
    diff_pct = (got - ns3) / ns3 * 100.0
    assert abs(diff_pct) <= TOLERANCE_PCT, (
        f"MTU {ref['mtu']} {ref['cc']} {ref['sim_s']:g} s: mmpath {got:.2f} Mbit/s vs ns-3 {ns3:.2f} Mbit/s "
        f"({diff_pct:+.2f} %, tolerance {TOLERANCE_PCT} %)"
    )
