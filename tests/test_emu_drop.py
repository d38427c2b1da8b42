"""A wired path's two outage kinds in the emulator (docs/emulate.md): `up = false` holds the path's
packets in the delay line until `up = true`; `up = false, drop = true` takes the path's link down
for real (`ip link set down` of the client's veth end, the AP's end losing its carrier), so what
is queued is discarded and what is sent is lost until the link is back (drops.py).

The first part needs neither root nor the tools: which windows are held and which dropped, the
commands and their timing thread, and how the link monitors' lines become emu.json `outages`.
The last part emulates TCP through each kind as root, and skips otherwise (as tests/test_emu.py
does)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import time

import pytest

from mmpath.emu import delay, drops, holds, netns

_S = 1_000_000_000


def _wired(schedule: list[dict], **more) -> dict:
    return {"name": "a", "technology": "wired", "rate_mbps": 200.0, "schedule": schedule, **more}


# ---------------------------------------------------------------------------------------------
# The plan: which windows are held, which dropped


def test_each_outage_is_a_hold_or_a_drop_from_the_step_that_takes_the_link_down():
    p = _wired([{"t_s": 1.0, "up": False}, {"t_s": 2.0, "up": True},
                {"t_s": 3.0, "up": False, "drop": True}, {"t_s": 3.5, "rate_mbps": 50.0}, {"t_s": 4.0, "up": True},
                # a hold that turns into a drop: the hold ends where the drop begins
                {"t_s": 5.0, "up": False}, {"t_s": 5.25, "up": False, "drop": True},
                # a step without drop does not turn a drop back into a hold
                {"t_s": 5.5, "up": False}, {"t_s": 6.0, "up": True},
                # still down at the run's end: cut there
                {"t_s": 7.0, "up": False, "drop": True}])
    assert holds.outages_ns(p, 8.0) == [(1 * _S, 2 * _S, "hold"), (3 * _S, 4 * _S, "drop"),
                                       (5 * _S, 5_250_000_000, "hold"), (5_250_000_000, 6 * _S, "drop"),
                                       (7 * _S, 8 * _S, "drop")]
    assert holds.outages_ns(p, 3.2) == [(1 * _S, 2 * _S, "hold"), (3 * _S, 3_200_000_000, "drop")]
    # `drop = false` is a hold; a radio path has no schedule outages (its link down drops its
    # queue through the shaper).
    assert holds.outages_ns(_wired([{"t_s": 1.0, "up": False, "drop": False}]), 2.0) == [(1 * _S, 2 * _S, "hold")]
    assert holds.outages_ns({**_wired([{"t_s": 1.0, "up": False, "drop": True}]), "technology": "11ad"}, 2.0) == []


def test_the_delay_line_holds_only_the_hold_windows_and_the_drops_go_to_the_link():
    cfg = {"path": [_wired([{"t_s": 1.0, "up": False}, {"t_s": 2.0, "up": True}]),
                    {**_wired([{"t_s": 1.0, "up": False, "drop": True}, {"t_s": 2.0, "up": True}]), "name": "b"},
                    {**_wired([{"t_s": 0.5, "up": False}, {"t_s": 1.0, "up": True},
                               {"t_s": 3.0, "up": False, "drop": True}, {"t_s": 4.0, "up": True}]), "name": "c"}]}
    assert holds.holds_ns(cfg, 5.0) == {0: [(1 * _S, 2 * _S)], 2: [(_S // 2, 1 * _S)]}
    assert holds.drops_ns(cfg, 5.0) == {1: [(1 * _S, 2 * _S)], 2: [(3 * _S, 4 * _S)]}
    assert holds.hold_cause(cfg["path"][0]) == "link down" and holds.hold_cause(cfg["path"][2]) == "link down"
    # A path whose only down steps drop, and that stalls: held for the stall alone.
    stall_and_drop = _wired([{"t_s": 1.0, "rate_mbps": 0.0}, {"t_s": 2.0, "up": False, "drop": True}])
    assert holds.hold_cause(stall_and_drop) == "stall"


def test_the_capacity_probe_sees_neither_outage():
    cfg = {"path": [_wired([{"t_s": 1.0, "up": False, "drop": True}, {"t_s": 1.5, "rate_mbps": 80.0},
                            {"t_s": 2.0, "up": True}])]}
    assert holds.without_held(cfg)["path"][0]["schedule"] == [{"t_s": 1.5, "rate_mbps": 80.0}]
    assert cfg["path"][0]["schedule"][0]["drop"] is True, "without_held works on a copy"


def test_held_windows_leave_out_the_time_a_drop_takes():
    m = holds._minus
    assert m([(0, 10)], [(2, 4), (6, 8)]) == [(0, 2), (4, 6), (8, 10)]
    assert m([(0, 10), (20, 30)], [(5, 25)]) == [(0, 5), (25, 30)]
    assert m([(0, 10)], [(0, 10)]) == [] and m([(3, 4)], []) == [(3, 4)]


def test_emu_json_lists_each_window_with_its_kind_and_what_was_measured():
    from mmpath.emu import _outages

    cfg = {"path": [{"name": "radio", "technology": "11ad"},
                    _wired([{"t_s": 1.0, "up": False}, {"t_s": 2.0, "up": True},
                            {"t_s": 3.0, "up": False, "drop": True}, {"t_s": 4.0, "up": True}])]}
    measured = {1: {"kind": "drop", "how": "ip link set dev p1c down", "max_error_ms": 1.5, "measured": True,
                    "windows": [{"planned_s": [3.0, 4.0], "client_down_s": 3.001, "client_up_s": 4.0015}]}}
    out = _outages(cfg, ["radio", "a"], 5.0, measured)
    assert list(out) == ["a"]
    assert out["a"]["kinds"] == ["drop", "hold"] and out["a"]["max_error_ms"] == 1.5
    assert out["a"]["windows"] == [{"kind": "hold", "planned_s": [1.0, 2.0], "applied_by": "delay line"},
                                   {"kind": "drop", "planned_s": [3.0, 4.0], "client_down_s": 3.001,
                                    "client_up_s": 4.0015}]


# ---------------------------------------------------------------------------------------------
# The drop's commands, its thread and its record


def _topo() -> netns.Topology:
    topo = netns.Topology(tag="mmpath1-2")
    for k in range(2):
        topo.paths.append(netns.PathLink(index=k, name="ab"[k], mtu=1500, cli_if=f"p{k}c", ap_if=f"p{k}a",
                                         cli_addr=f"10.199.{k + 1}.2", ap_addr=f"10.199.{k + 1}.1"))
    return topo


def test_a_drop_takes_the_client_end_down_and_its_return_puts_the_routes_back():
    topo = _topo()
    topo.route_attrs[topo.cli] = ["initcwnd", "20"]
    assert drops.commands(topo, 1, True) == ["link set dev p1c down"]
    assert drops.commands(topo, 1, False) == [
        "link set dev p1c up", "route replace default via 10.199.2.1 dev p1c table 101 initcwnd 20"]
    # Path 0 also carries the main table's default route.
    assert drops.commands(topo, 0, False)[1:] == [
        "route replace default via 10.199.1.1 dev p0c table 100 initcwnd 20",
        "route replace default via 10.199.1.1 dev p0c initcwnd 20"]


def test_the_changes_are_made_in_time_order_and_a_link_left_down_comes_back_at_stop():
    assert drops.plan({0: [(2 * _S, 3 * _S)], 1: [(1 * _S, 2 * _S)]}) == [
        (1.0, True, 1), (2.0, False, 1), (2.0, True, 0), (3.0, False, 0)]

    class Batch:
        def __init__(self):
            self.stdin = io.StringIO()

        def communicate(self, timeout=None):
            self.sent = self.stdin.getvalue()
            return "", ""

    topo = _topo()
    d = drops.LinkDrops(topo, {0: [(0, 10 * _S)]})
    d._batch = batch = Batch()
    d.start(time.monotonic() - 0.001)  # bin 0 just passed: the link goes down at once ...
    for _ in range(200):
        if d.written:
            break
        time.sleep(0.01)
    assert d.written and d.written[0][:3] == (0, True, 0.0) and d._down == {0}
    d.stop()  # ... and the run stops 10 s early: the link is brought back
    assert batch.sent.splitlines()[0] == "link set dev p0c down"
    assert batch.sent.splitlines()[1] == "link set dev p0c up"
    assert not d._down


MONITOR_CLI = """\
[2026-12-06T03:00:02.000300] 2: p0c@if3: <BROADCAST,MULTICAST> mtu 1500 qdisc htb state DOWN group default
[2026-12-06T03:00:03.001000] 2: p0c@if3: <NO-CARRIER,BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc htb state DOWN
[2026-12-06T03:00:03.002000] 2: p0c@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc htb state UP group default
"""
MONITOR_AP = """\
[2026-12-06T03:00:02.000400] 3: p0a@if2: <NO-CARRIER,BROADCAST,MULTICAST,UP> mtu 1500 qdisc htb state DOWN group d
[2026-12-06T03:00:03.003000] 3: p0a@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc htb state UP group default
"""


def test_the_record_has_the_times_the_monitors_saw_against_the_plan():
    import datetime

    d = drops.LinkDrops(_topo(), {0: [(1 * _S, 2 * _S)]})
    d.t0_unix = datetime.datetime.fromisoformat("2026-12-06T03:00:01").timestamp()
    d.written = [(0, True, 1.0, 1.0001), (0, False, 2.0, 2.0002)]
    rec = d.record(MONITOR_CLI, MONITOR_AP)[0]
    w = rec["windows"][0]
    assert w["planned_s"] == [1.0, 2.0] and w["written_s"] == [1.0001, 2.0002]
    assert (w["client_down_s"], w["ap_carrier_off_s"]) == pytest.approx((1.0003, 1.0004))
    assert (w["client_up_s"], w["ap_carrier_on_s"]) == pytest.approx((2.001, 2.003))
    # The link is back when both ends are: 3 ms after the plan.
    assert rec["kind"] == "drop" and rec["measured"] and rec["max_error_ms"] == pytest.approx(3.0)
    # Nothing seen: the times are missing, not made up.
    none = d.record("", "")[0]
    assert not none["measured"] and none["windows"][0]["client_down_s"] is None and none["max_error_ms"] is None


# ---------------------------------------------------------------------------------------------
# As root: TCP through each kind

TOOLS = ("ip", "tc", "iperf3", "tcpdump", "iptables")
_missing = [t for t in TOOLS if shutil.which(t) is None]
needs_root = [
    pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (network namespaces, tc)"),
    pytest.mark.skipif(bool(_missing), reason=f"emulation needs {', '.join(_missing)} (make emu-tools)"),
    pytest.mark.skipif(delay.binary() is None, reason="mmpath-delay is not built (make setup)"),
]
DOWN, UP = 2.0, 3.0
SERVER = netns.SERVER_ADDR


def _scenario(kind: str, flow: dict, second_path: bool = False) -> dict:
    step = {"t_s": DOWN, "up": False, **({"drop": True} if kind == "drop" else {})}
    paths = [{"name": "a", "rate_mbps": 200.0, "mtu_bytes": 1500}]
    if second_path:
        paths.append({"name": "b", "rate_mbps": 100.0, "mtu_bytes": 1500})
    paths[-1]["schedule"] = [step, {"t_s": UP, "up": True}]
    return {"name": f"emu-{kind}", "duration_s": 6.0, "backbone": {"enabled": False}, "path": paths,
            "flow": [{"name": "f", "cc": "cubic", "stop_s": 6.0, **flow}]}


def _packets(pcap, t0: float, bpf: str) -> list[float]:
    """Times (s from the shaper's bin 0) of the capture's packets matching `bpf`."""
    out = subprocess.run(["tcpdump", "-tt", "-n", "-r", str(pcap), bpf], capture_output=True, text=True).stdout
    return [float(line.split()[0]) - t0 for line in out.splitlines() if line.strip()]


def _namespaces() -> set[str]:
    ls = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {w for w in ls.split() if w.startswith(f"mmpath{os.getpid()}-")}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=needs_root) for k in ("drop", "hold")])
def test_a_tcp_download_through_a_drop_waits_for_its_rto_and_through_a_hold_resumes_at_once(tmp_path, kind):
    import mmpath.emu

    out = tmp_path / "emu"
    mmpath.emu.run(_scenario(kind, {"kind": "tcp", "direction": "download"}), out=out, capture=True)
    assert not _namespaces()
    m = json.loads((out / "emu.json").read_text())
    o = m["outages"]["a"]
    assert o["kinds"] == [kind] and [w["kind"] for w in o["windows"]] == [kind]
    # The server's data as the client received it (its ACKs are 0-length).
    data = _packets(out / "a.pcap", m["t0_unix"], f"src {SERVER} and greater 100")
    srv = json.loads((out / "iperf3-f-server.json").read_text())
    rtx = sum(int(x["sum"].get("retransmits") or 0) for x in srv["intervals"][int(DOWN):int(UP) + 2])
    if kind == "hold":
        # Held by the delay line, released at the window's end: the flow is back with the link.
        assert "a" in m["holds"] and "ip link" not in json.dumps(o)
        first = min(t for t in data if t > DOWN + 0.1)
        assert UP - 0.01 <= first < UP + 0.1, first
        return
    w = o["windows"][0]
    assert "a" not in m["holds"] and o["measured"], o
    assert w["client_down_s"] < w["client_up_s"] and w["ap_carrier_off_s"] < w["ap_carrier_on_s"]
    back = max(w["client_up_s"], w["ap_carrier_on_s"])
    # Nothing arrives while the link is down; what was queued and sent then is lost: the first
    # data after the outage is what the RTO sends once it fires after the return (the timer
    # backed off through the outage: 0.7-0.9 s after the return measured here), not what was
    # sent into the outage (without the AP's permanent neighbour entry, netns.py, a TLP and two
    # RTOs sent into it waited in the AP's ARP queue and arrived 0.13 s after the return); and the
    # window lost is retransmitted (a 1.5 MB queue at 200 Mbit/s: ~1000 segments).
    assert not [t for t in data if w["client_down_s"] + 0.005 < t < back]
    first = min(t for t in data if t > back)
    assert first > back + 0.3, (first, back)
    assert rtx > 100, rtx


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_a_dropped_path_s_packets_do_not_leave_by_another_path(tmp_path, _):
    """A TCP upload bound to path b's address: with b's link down, its retransmissions fail
    (EHOSTUNREACH: b's table ends in an unreachable route) instead of leaving by the main
    table's default route over path a (measured without it: 8 of them crossed a)."""
    import mmpath.emu

    out = tmp_path / "emu"
    mmpath.emu.run(_scenario("drop", {"kind": "tcp", "direction": "upload", "path": "b"}, second_path=True),
                   out=out, capture=True)
    m = json.loads((out / "emu.json").read_text())
    assert m["outages"]["b"]["kinds"] == ["drop"] and "a" not in m["outages"]
    assert not _packets(out / "a.pcap", m["t0_unix"], "src 10.199.2.2")
    # ... and b carries the flow again after the outage.
    w = m["outages"]["b"]["windows"][0]
    assert [t for t in _packets(out / "b.pcap", m["t0_unix"], "src 10.199.2.2 and greater 100") if t > w["client_up_s"]]
