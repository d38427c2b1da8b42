"""Scans in the emulator: a scanned path's dwells off channel are held by the delay line (both
ways; nothing dropped, released at the dwell's end in order) and its shaper runs at the capacity
the path has without the scan (docs/emulate.md).

The first part needs neither root nor the tools: the dwell windows the emulator computes are the
simulator's own (its `down` / `up` events of the scanned path), the capacity probe leaves the
scans out, and mmpath-delay refuses bad windows. The last part emulates a TCP download over an
11ac path that scans, as root, and skips otherwise (as tests/test_emu.py does)."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import mmpath
from mmpath.emu import capacity, delay
from mmpath.emu import holds
from mmpath.scenario import load_scenario
from conftest import emulation_marks

needs_root = emulation_marks(("ip", "tc", "iperf3", "tcpdump", "iptables"), delay_line=True)

UPSTREAM = {"flow.0.kernel": "linux-upstream", "flow.0.scheduler": "default"}


def _ac(events: list[dict]) -> dict:
    return {"name": "11ac", "technology": "11ac", "device": "rog-phone-2", "distance_m": 1.0, "mtu_bytes": 1500,
            "event": events}


def _download(events: list[dict], duration: float) -> dict:
    return {"name": "scan-hold", "duration_s": duration, "path": [_ac(events)],
            "flow": [{"name": "dl", "kind": "tcp", "direction": "download", "cc": "cubic"}]}


def _sim_dwells(res, path: str) -> list[tuple[float, float]]:
    """The simulator's dwells of `path`: each `down` to the next `up` (the run's end if none)."""
    ev = res.events
    ev = ev[ev["path"] == path]
    out, down = [], None
    for t, kind in zip(ev["t_s"], ev["kind"]):
        if kind == "down" and down is None:
            down = float(t)
        elif kind == "up" and down is not None:
            out.append((down, float(t)))
            down = None
    if down is not None:
        out.append((down, float(res.summary["sim_s"])))
    return out


def _same(ours: list[tuple[float, float]], sim: list[tuple[float, float]]) -> None:
    assert len(ours) == len(sim), (ours, sim)
    assert np.allclose(np.array(ours), np.array(sim), rtol=0, atol=1e-9), (ours, sim)


def test_the_bundled_scan_scenarios_dwells_are_the_simulators():
    # Seed 004's scan (110 ms passive dwells, 100 ms home, 1 s every 4 s from 2 s) on the
    # default variant as the emulator runs it (kernel MPTCP).
    res = mmpath.run("scan", variant="default", overrides=UPSTREAM)
    cfg = load_scenario("scan").config
    ours = holds.dwells_s(cfg["path"][1], float(res.summary["sim_s"]))
    assert len(ours) == 10 and ours[0] == (2.0, 2.11) and ours[-1][1] == pytest.approx(6.95)
    _same(ours, _sim_dwells(res, "11ac"))
    assert holds.dwells_s(cfg["path"][0]) == []  # 11ad does not scan


@pytest.mark.parametrize("events", [
    # rest_ms = 0: one continuous absence of scan_ms, every every_s while the event lasts.
    [{"kind": "scan", "t_s": 0.5, "duration_s": 3.0, "every_s": 1.3, "scan_ms": 250.0, "rest_ms": 0.0}],
    # Defaults (40 ms dwell, 100 ms rest); 300 ms: dwells at 0, 140, 280 (the last cut at 300).
    [{"kind": "scan", "t_s": 0.25, "duration_s": 2.0, "every_s": 1.0, "scan_ms": 300.0}],
    # A dwell longer than what is left of the scan, uneven times, a scan running past the end.
    [{"kind": "scan", "t_s": 0.1234567, "duration_s": 3.6, "every_s": 0.777, "scan_ms": 333.3, "dwell_ms": 75.5,
      "rest_ms": 12.25}],
    # Two scan events on one path: a request while the other's scan runs is dropped.
    [{"kind": "scan", "t_s": 0.2, "duration_s": 3.0, "every_s": 1.0, "scan_ms": 500.0, "rest_ms": 0.0},
     {"kind": "scan", "t_s": 0.5, "duration_s": 3.0, "every_s": 0.9, "scan_ms": 100.0, "dwell_ms": 20.0,
      "rest_ms": 30.0}],
])
def test_dwell_windows_match_the_simulators_down_and_up_events(events):
    sc = _download(events, 3.7)
    res = mmpath.run(sc)
    cfg = load_scenario(sc).config
    _same(holds.dwells_s(cfg["path"][0], float(res.summary["sim_s"])), _sim_dwells(res, "11ac"))


def test_dwells_are_sorted_disjoint_whole_nanoseconds():
    p = load_scenario(_download([{"kind": "scan", "t_s": 0.1, "duration_s": 5.0, "every_s": 0.5, "scan_ms": 330.0,
                                  "dwell_ms": 33.3, "rest_ms": 10.0}], 5.0)).config["path"][0]
    w = holds.dwells_ns(p)
    assert all(isinstance(a, int) and isinstance(b, int) and a < b for a, b in w)
    assert all(w[i][1] <= w[i + 1][0] for i in range(len(w) - 1))
    assert holds.dwells_ns(p, until_s=1.0)[-1][1] <= 1_000_000_000


def test_the_capacity_probe_leaves_scans_out():
    events = [{"kind": "scan", "t_s": 0.5, "duration_s": 1.0, "every_s": 2.0, "scan_ms": 500.0, "rest_ms": 0.0}]
    cfg = load_scenario(_download(events, 2.0)).config
    with_scan = capacity.probe(cfg, 0, "download", 2.0, 1, tcp=False)
    assert with_scan.mbps[6:10].max() == 0  # the simulator's path is silent off channel
    held = capacity.probe(holds.without_scans(cfg), 0, "download", 2.0, 1, tcp=False)
    plain = capacity.probe(load_scenario(_download([], 2.0)).config, 0, "download", 2.0, 1, tcp=False)
    assert held.stalled is None and held.mbps.min() > 0.8 * held.mbps.mean()
    assert np.array_equal(held.mbps, plain.mbps)
    assert cfg["path"][0]["event"], "without_scans works on a copy"


def test_the_shaper_pauses_a_scanned_path_through_its_dwells_and_kicks_it_after():
    import io
    import time

    from mmpath.emu import shaper

    sent = []
    kicks = {"ap": io.StringIO(), "cli": io.StringIO()}
    ifaces = [("ap", "p0a", 1500, 200_000), ("cli", "p0c", 1500, 200_000)]
    # Two dwells back to back (one pause) and one more.
    shp = shaper.Shaper([], [(ifaces, [(0.0, 0.01), (0.01, 0.02), (0.03, 0.04)])])
    shp._send = lambda ns, lines: sent.extend((ns, x) for x in lines) or True
    shp._kickers = {ns: type("P", (), {"stdin": f})() for ns, f in kicks.items()}
    shp._run_pauses(time.monotonic() - 1.0)
    tbf = [(ns, x) for ns, x in sent]
    assert len(tbf) == 8 and shp.paused == 2
    assert all("root handle 2: tbf" in x for _, x in tbf)
    paused = [x for _, x in tbf if f"rate {shaper.PAUSE_KBIT}kbit" in x]
    assert len(paused) == 4 and all("burst 3028" in x for x in paused)  # two frames
    assert [("rate 40000mbit" in x) for _, x in tbf] == [False, False, True, True] * 2
    assert kicks["ap"].getvalue() == "p0a\np0a\n" and kicks["cli"].getvalue() == "p0c\np0c\n"


@pytest.mark.skipif(delay.binary() is None, reason="mmpath-delay is not built (make setup)")
@pytest.mark.parametrize("hold, says", [
    ("0:5-30,20-40", "overlaps 5-30"),
    ("0:20-30,5-9", "starts before the one before it"),
    ("0:9-5", "ends before it starts"),
    ("0:5", "expected START_NS-END_NS"),
])
def test_the_delay_line_refuses_bad_windows_in_one_line(hold, says):
    p = subprocess.run([delay.binary(), "--queue", "0:0", "--origin-unix-ns", "1", "--hold", hold],
                       capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and says in p.stderr and len(p.stderr.strip().splitlines()) == 1, p.stderr


# A long absence (600 ms: longer than TCP's 200 ms minimum RTO) at 2 s and a train of seed 004's
# 110 ms dwells with 100 ms home in between at 4 s.
LONG = (2.0, 2.6)
TRAIN = (4.0, 4.7)
EVENTS = [{"kind": "scan", "t_s": LONG[0], "duration_s": 1.0, "every_s": 10.0, "scan_ms": 600.0, "rest_ms": 0.0},
          {"kind": "scan", "t_s": TRAIN[0], "duration_s": 1.0, "every_s": 10.0, "scan_ms": 700.0, "dwell_ms": 110.0,
           "rest_ms": 100.0}]


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_a_scanning_11ac_download_is_held_not_dropped(tmp_path, _):
    import mmpath.emu

    sc = _download(EVENTS, 6.0)
    res = mmpath.emu.run(sc, out=tmp_path / "emu", capture=False)
    sim = mmpath.run(sc)
    cap = float(res.capacities["11ac"].mbps.mean())
    # The capacity is the path's without the scan: no silent bins, no slow ones.
    assert res.capacities["11ac"].mbps.min() > 0.8 * cap, res.capacities["11ac"].mbps
    iv = res.intervals
    t, mbps = iv["t_s"].to_numpy(), iv["mbps"].to_numpy()

    def between(a, b):
        return mbps[(t >= a - 1e-9) & (t + 0.1 <= b + 1e-9)]

    # Inside the long dwell nothing arrives: not even what the shaper's queue held when it began
    # (paused). iperf3's intervals sit where its clock starts (emu.json flows[].iperf3_clock_s,
    # its first data packet: at or after the test's start, so a bin is never placed earlier than
    # it was), at any phase against the shaper's bins: at least 5 whole ones fit in the 0.6 s.
    inside = between(LONG[0], LONG[1])
    assert len(inside) >= 5 and inside.max() < 0.05 * cap, inside
    # Away from the scans: the path's rate (the slow start aside).
    outside = np.concatenate([between(0.5, LONG[0]), between(LONG[1] + 0.3, TRAIN[0]), between(TRAIN[1] + 0.2, 6.0)])
    assert outside.mean() > 0.8 * cap, (outside.mean(), cap)
    m = json.loads((tmp_path / "emu" / "emu.json").read_text())
    q = m["delay_line"]["queues"][0]
    # Held: the line moved packets to the dwells' ends (both ways) and dropped none.
    n = len(holds.dwells_ns(load_scenario(sc).config["path"][0], 6.0))
    assert m["holds"]["11ac"]["cause"] == "scan" and m["holds"]["11ac"]["windows"] == q["hold_windows"] == n == 5
    assert q["held_by_window"] > 0 and sum(m["delay_line"]["kernel_drops"].values()) == 0
    assert m["delay_line"]["held_at_exit"] == 0
    assert "stalled_bins_as_outages" not in m
    assert m["shaper"]["scan_pauses"] == n
    # No loss burst from the train of short dwells (each shorter than the RTO): the sender's
    # retransmissions in that second (iperf3's server, the sender of a download, counts per
    # second) are the simulator's few, not a dropped queue's hundreds.
    srv = json.loads((tmp_path / "emu" / "iperf3-dl-server.json").read_text())
    per_s = [int(x["sum"].get("retransmits") or 0) for x in srv["intervals"]]
    tl = sim.timeline
    sim_rtx = {s: int(tl[(tl.t_s >= s) & (tl.t_s < s + 1)]["retransmits"].max()
                      - tl[(tl.t_s < s)]["retransmits"].max()) for s in (2, 4)}
    assert per_s[4] <= sim_rtx[4] + 10, (per_s, sim_rtx)
    # The long dwell outlasts the RTO: in both, the RTO fires, is undone when the held data is
    # acknowledged, and the restored window overflows the AP's queue once. Not the whole queue
    # lost (the shaper's outage would drop ~1000 packets held there).
    assert per_s[2] <= 3 * sim_rtx[2] + 20, (per_s, sim_rtx)
