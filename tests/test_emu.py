"""The emulation engine on this machine's kernel: real iperf3 over shaped veth pairs in network
namespaces. Needs root and iperf3 / tcpdump / mptcpize (`make test` installs them as root); skips
otherwise, saying what is missing. Each run is a few seconds of real traffic at a few hundred
Mbit/s, far below what veth and iperf3 sustain on two cores, so the shaper, not the machine, sets
the rates these tests check."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from conftest import to_toml, emulation_marks
from mmpath.cli import main
from mmpath.emu import traffic


pytestmark = emulation_marks(("ip", "tc", "iperf3", "tcpdump", "mptcpize"))


def _namespaces() -> set[str]:
    """This process's emulation namespaces (mmpath<pid>-*; other emulations may run beside it)."""
    ls = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {w for w in ls.split() if w.startswith(f"mmpath{os.getpid()}-")}


def _wired(name: str, rate: float, **more) -> dict:
    return {"name": name, "rate_mbps": rate, "mtu_bytes": 1500, **more}


def _scenario(paths: list[dict], flow: dict, duration: float = 3.0) -> dict:
    return {"name": "emu-test", "duration_s": duration, "backbone": {"enabled": False},
            "path": paths, "flow": [{"name": "f", "stop_s": duration, **flow}]}


def _emulate(sc: dict, out=None, capture=False):
    import mmpath.emu

    return mmpath.emu.run(sc, out=out, capture=capture)


def test_single_path_tcp_fills_the_shaped_rate():
    res = _emulate(_scenario([_wired("a", 300.0)], {"kind": "tcp", "path": "a", "cc": "cubic"}))
    cap = float(res.capacities["a"].mbps.mean())
    # The probe's rate of IP packets on a 300 Mbit/s wired link: the link's rate.
    assert cap == pytest.approx(300.0, rel=5e-3), cap
    # TCP over the shaped veth: ~all of it (IP/TCP headers and the slow-start second aside).
    assert 0.85 * cap < res.goodput_mbps <= 1.02 * cap, (res.goodput_mbps, cap)
    # The shaper, not the machine, set the rate: what left the interface is the shaped rate.
    assert 0.9 * 300 < res.path_mbps["a"] <= 1.03 * 300, res.path_mbps


def test_kernel_mptcp_adds_both_paths():
    res = _emulate(_scenario([_wired("a", 200.0), _wired("b", 100.0)],
                             {"kind": "mptcp", "paths": ["a", "b"], "kernel": "linux-upstream",
                              "scheduler": "default", "cc": "cubic"}))
    # Both subflows carried data on their own path (interface counters), and the connection got
    # more than either path alone could carry.
    assert res.path_mbps["a"] > 150 and res.path_mbps["b"] > 70, res.path_mbps
    assert res.goodput_mbps > 230, res.goodput_mbps


def test_the_analysis_sees_the_mptcp_connection_across_the_per_path_captures(tmp_path):
    # One capture per path, each with one subflow: the analysis reads them as one capture set,
    # so the connection is found (its MP_JOIN subflow named by the other file's keys) and its
    # data-level bytes are what iperf3 reports, over both paths named by their captures.
    out = tmp_path / "emu"
    res = _emulate(_scenario([_wired("a", 200.0), _wired("b", 100.0)],
                             {"kind": "mptcp", "paths": ["a", "b"], "kernel": "linux-upstream",
                              "scheduler": "default", "cc": "cubic"}), out=out, capture=True)
    summary = json.loads((out / "analysis" / "summary.json").read_text())
    pcaps = [s["path"] for s in summary["sources"] if s["kind"] == "pcap"]
    # Named relative to the output folder, not by the staging folder it was written in.
    assert pcaps == ["a.pcap+b.pcap"], pcaps
    assert not any(".tmp-" in s["path"] for s in summary["sources"]), summary["sources"]
    conns = [f for f in summary["flows"] if f.get("kind") == "mptcp" and f["bytes"] > 1_000_000]
    assert len(conns) == 1, conns
    c = conns[0]
    assert set(c["path_shares"]) == {"a", "b"} and min(c["path_shares"].values()) > 0.2, c["path_shares"]
    assert abs(c["mbps"] - res.goodput_mbps) < 0.05 * res.goodput_mbps, (c["mbps"], res.goodput_mbps)


def test_kernel_trace_records_the_mptcp_timer_and_scheduling_passes(tmp_path):
    # --kernel-trace: the kernel's own view of the run (ftrace tracepoints) lands in
    # kernel-trace.txt, in an ftrace instance of its own that is gone afterwards.
    from mmpath.emu import ktrace, reaper

    try:
        ktrace.check()
    except Exception as e:  # noqa: BLE001 - a kernel without tracefs or the tracepoints
        pytest.skip(str(e))
    out = tmp_path / "emu"
    sc = _scenario([_wired("a", 200.0, schedule=[{"t_s": 1.5, "up": False}]), _wired("b", 100.0)],
                   {"kind": "mptcp", "paths": ["a", "b"], "mode": "backup", "kernel": "linux-upstream",
                    "scheduler": "default", "cc": "cubic"})
    res = _emulate_traced(sc, out)
    text = (out / "kernel-trace.txt").read_text()
    kt = json.loads((out / "emu.json").read_text())["kernel_trace"]
    assert kt == res.meta["kernel_trace"] and kt["file"] == "kernel-trace.txt"
    # Scheduling passes while both paths work, and the connection timer firing once path a is
    # gone (no data ACK moves): what decides the backup's take-over.
    assert kt["events"]["mptcp_subflow_get_send"] > 100 and "backup=1" in text
    assert kt["events"].get("timer_expire_entry", 0) >= 1 and "function=mptcp_retransmit_timer" in text
    # Where the kernel has it, the receive window's scaling_ratio is in the trace too.
    if (ktrace.TRACEFS / "events" / "tcp" / "tcp_rcvbuf_grow").is_dir():
        assert "tcp_rcvbuf_grow" in kt["recorded"]
    assert not (ktrace.TRACEFS / "instances" / reaper.tag()).exists()
    # The receiving end's sockets: each subflow's own buffer (rb) and rcv_ssthresh, and the
    # MPTCP connection's line, sampled through the run.
    rss = (out / "receiver-ss.log").read_text()
    assert rss.count("# mmpath-capture ss-receiver t=") > 10
    assert re.search(r"skmem:\(r\d+,rb\d+", rss) and "rcv_ssthresh:" in rss
    assert "subflows:" in rss, "the MPTCP socket's line (ss -M)"
    # The sending end's: each subflow's send buffer (tb) and queued bytes (w), and the MPTCP
    # socket's line.
    sss = (out / "sender-ss.log").read_text()
    assert sss.count("# mmpath-capture ss-sender t=") > 10
    assert re.search(r"skmem:\(r\d+,rb\d+,t\d+,tb\d+,f\d+,w\d+", sss) and "subflows:" in sss


def _emulate_traced(sc: dict, out):
    import mmpath.emu

    return mmpath.emu.run(sc, out=out, capture=False, kernel_trace=True)


def test_backup_path_stays_idle_while_the_first_works():
    res = _emulate(_scenario([_wired("a", 200.0), _wired("b", 100.0)],
                             {"kind": "mptcp", "paths": ["a", "b"], "mode": "backup", "kernel": "linux-upstream",
                              "scheduler": "default", "cc": "cubic"}))
    assert res.path_mbps["a"] > 150, res.path_mbps
    assert res.path_mbps["b"] < 5, res.path_mbps


def test_blockage_stops_the_flow_and_it_comes_back(tmp_path):
    # A radio path whose beam is blocked 1.5-2.5 s (then 0.5 s re-training): the capacity trace
    # is 0 there, the shaper drops everything, TCP stalls and then resumes.
    path = {"name": "ad", "technology": "11ad", "device": "generic-11ad", "mcs": 4, "mtu_bytes": 1500,
            "event": [{"kind": "blockage", "t_s": 1.5, "duration_s": 1.0, "retrain_ms": 500.0}]}
    out = tmp_path / "emu"
    res = _emulate(_scenario([path], {"kind": "tcp", "path": "ad", "cc": "cubic"}, duration=5.0), out=out,
                   capture=True)
    cap = res.capacities["ad"]
    assert cap.at(2.0) == 0 and cap.at(1.0) > 500 and cap.at(4.0) > 500
    iv = res.intervals
    before = iv[(iv.t_s >= 0.5) & (iv.t_s < 1.4)]["mbps"].mean()
    during = iv[(iv.t_s >= 1.7) & (iv.t_s < 2.9)]["mbps"].max()
    after = iv[(iv.t_s >= 4.2)]["mbps"].mean()
    assert before > 400 and during < 5 and after > 300, (before, during, after)
    # The output folder: the real iperf3 -J, a capture, the capacity trace, and the analysis of them.
    doc = json.loads((out / "iperf3-f.json").read_text())
    assert doc["start"]["test_start"]["protocol"] == "TCP"
    assert (out / "ad.pcap").stat().st_size > 10_000
    assert (out / "capacity-ad.csv").read_text().startswith("t_s,rate_mbps,link_up\n")
    # The sender's sockets, sampled by ss: the data socket backs its RTO off during the blockage.
    ss = (out / "ss.log").read_text()
    assert ss.count("# mmpath-capture ss t=") > 50 and "backoff:" in ss
    summary = json.loads((out / "analysis" / "summary.json").read_text())
    assert summary["flows"], summary
    # The capacity trace is placed at the shaper's start among the captures: the analysis has
    # the link going down at the blockage (1.5 s into the run) and up again.
    assert "trace" in {s["kind"] for s in summary["sources"]}
    assert summary["events"].get("down", 0) >= 1 and summary["events"].get("up", 0) >= 1, summary["events"]
    ev = res.analysis.events
    down = ev[(ev["kind"] == "down") & (ev["path"] == "ad")]["t_s"].min()
    assert abs(down - 1.5) < 0.2, down
    # `mmpath analyze` on the output folder itself reads what the emulator's analysis read
    # (not emu.json, nor the servers' reports) and places the capacity trace the same way.
    import mmpath

    again = mmpath.analyze([out])
    assert sorted(s["kind"] for s in again.summary["sources"]) == ["iperf3", "pcap", "ss", "trace"]
    ev2 = again.events
    assert ev2[(ev2["kind"] == "down") & (ev2["path"] == "ad")]["t_s"].min() == pytest.approx(down)
    meta = json.loads((out / "emu.json").read_text())
    assert meta["goodput_mbps"] == res.goodput_mbps
    # The radio's access latency (docs/emulate.md, step 4): the simulated MAC's, held by the
    # delay line both ways on top of the path's zero propagation delay, so the emulated round
    # trip is twice it.
    access = meta["access_latency_ms"]["ad"]
    assert 0.01 < access < 1.0, access
    assert meta["delay_line"]["one_way_ms"] == [access]
    assert meta["base_rtt_ms"]["emulated"] == {"ad": pytest.approx(2 * access)}


@pytest.mark.parametrize("flow, message", [
    ({"kind": "mptcp", "paths": ["a", "b"], "kernel": "linux-v0.9x", "scheduler": "minrtt"},
     "flow.0.kernel: 'linux-v0.9x': the emulator runs this machine's kernel MPTCP"),
    ({"kind": "mptcp", "paths": ["a", "b"], "kernel": "linux-upstream", "scheduler": "musher"},
     "flow.0.scheduler: 'musher' exists only in the simulator"),
    ({"kind": "tcp", "path": "a", "cc": "vegas"}, None),
    ({"kind": "tcp", "path": "a", "tcp": {"hystart": False}}, "flow.0.tcp.hystart: false cannot be emulated"),
    ({"kind": "tcp", "path": "a", "tcp": {"limit_output_bytes": 0}},
     "flow.0.tcp.limit_output_bytes: 0 (TCP Small Queues off) has no Linux equivalent"),
    ({"kind": "tcp", "path": "a", "tcp": {"rcvbuf_bytes": 65536, "sndbuf_bytes": 131072}},
     "rcvbuf_bytes 65536 and sndbuf_bytes 131072 differ"),
    ([{"kind": "tcp", "path": "a"}, {"name": "u", "kind": "tcp", "path": "b", "tcp": {"min_rto_ms": 300}}],
     "flow.1.tcp differs from flow.0.tcp"),
    ({"kind": "tcp", "path": "a", "tcp": {"rcvbuf_bytes": 1 << 31, "sndbuf_bytes": 1 << 31}},
     "flow.0.tcp.rcvbuf_bytes: 2147483648 is above this machine's net.core.rmem_max"),
])


def test_what_cannot_be_emulated_is_refused_in_one_line(tmp_path, capsys, flow, message):
    have = open("/proc/sys/net/ipv4/tcp_available_congestion_control").read().split()
    if message is None:
        if "vegas" in have:
            pytest.skip("this kernel has Vegas")
        message = "flow.0.cc: this kernel has no 'vegas'"
    flows = flow if isinstance(flow, list) else [flow]
    sc = _scenario([_wired("a", 100.0), _wired("b", 100.0)], flows[0])
    sc["flow"] += flows[1:]
    f = tmp_path / "sc.toml"
    f.write_text(to_toml(sc))
    out = tmp_path / "out"
    before = _namespaces()
    assert main(["emu", "run", str(f), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0], err
    assert not out.exists()
    # Nothing is left behind in the kernel either.
    assert _namespaces() == before, "namespaces left behind"


def test_two_flows_share_a_path_each_with_its_own_iperf3(tmp_path):
    # Two Cubic downloads over one 300 Mbit/s path, the second from t = 1 s: both carry data, the
    # second's intervals start at 1 s on the scenario's clock, and together they fill the path.
    sc = _scenario([_wired("a", 300.0)], {"kind": "tcp", "path": "a", "cc": "cubic"}, duration=4.0)
    sc["flow"].append({"name": "g", "kind": "tcp", "path": "a", "cc": "cubic", "start_s": 1.0, "stop_s": 4.0})
    out = tmp_path / "emu"
    res = _emulate(sc, out=out)
    f, g = res.flows["f"], res.flows["g"]
    # Both carry data. (How fairly is the kernel's business: a Cubic flow that joins a full
    # 40 ms FIFO may get 50 or 150 Mbit/s of the 300 within 3 s.)
    assert f.goodput_mbps > 20 and g.goodput_mbps > 20, (f.goodput_mbps, g.goodput_mbps)
    assert g.intervals["t_s"].min() >= 1.0 and f.intervals["t_s"].min() < 0.2, (g.intervals.head(), f.intervals.head())
    assert 0.8 * 280 < res.path_mbps["a"] <= 1.03 * 300, res.path_mbps
    # All flows: every byte received over the 4 s, so f's 4 s and g's 3 s weigh by their spans.
    # (iperf3 times each flow itself, so its rates hold a few % of start-up jitter.)
    weighted = (4 * f.goodput_mbps + 3 * g.goodput_mbps) / 4
    assert abs(res.goodput_mbps - weighted) < 0.05 * res.goodput_mbps, (res.goodput_mbps, weighted)
    assert {p.name for p in out.glob("iperf3-*.json")} == {"iperf3-f.json", "iperf3-f-server.json",
                                                         "iperf3-g.json", "iperf3-g-server.json"}
    meta = json.loads((out / "emu.json").read_text())
    assert [x["name"] for x in meta["flows"]] == ["f", "g"]


def test_flows_both_ways_share_a_radio_s_airtime():
    # A download and an upload at once over one 802.11ac link: the probe saturates the radio both
    # ways together, so each direction's shaped capacity is its share of the airtime. Together
    # they are far from twice one direction alone (half-duplex; the simulated MAC gives ~1.15x:
    # two contending stations waste less backoff time than one), and each flow fills its own.
    path = {"name": "ac", "technology": "11ac", "bandwidth_mhz": 80, "streams": 2, "mcs": 9, "mtu_bytes": 1500,
            "signal": "strong"}
    sc = _scenario([path], {"kind": "tcp", "path": "ac", "cc": "cubic"}, duration=4.0)
    sc["flow"].append({"name": "up", "kind": "tcp", "path": "ac", "cc": "cubic", "direction": "upload"})
    res = _emulate(sc)
    caps = res.capacities
    assert set(caps) == {"ac/download", "ac/upload"}
    down, up = caps["ac/download"].mbps.mean(), caps["ac/upload"].mbps.mean()
    import mmpath.emu.capacity as capacity
    from mmpath.scenario import load_scenario

    alone = capacity.probe(load_scenario(sc).config, 0, "download", 4.0, 1).mbps.mean()
    assert 0.3 * alone < down < 0.7 * alone and 0.3 * alone < up < 0.7 * alone, (down, up, alone)
    assert down + up < 1.4 * alone, (down, up, alone)
    # Each flow's steady rate: the median of iperf3's 100 ms intervals after the first second.
    # (The mean of the same intervals came out at 55 % of the upload's share in two CI runs of
    # many, 2026-11-22 and 2026-11-23: a stall of the real kernel's flow over part of the run,
    # whose cause was not kept; typical runs give 275-280 of 299 Mbit/s. The median is the rate
    # the flow holds, which is what this test is about: each direction fills its share.)
    def steady(name: str) -> float:
        iv = res.flows[name].intervals
        return float(iv[iv["t_s"] >= 1.0]["mbps"].median())

    f, g = steady("f"), steady("up")
    assert 0.6 * down < f < 1.05 * down and 0.6 * up < g < 1.05 * up, (f, g, down, up)
    assert set(res.path_mbps) == {"ac/download", "ac/upload"}


def _ss_values(ss_log: str, key: str) -> list[float]:
    """Every `key:VALUE` of the data socket's lines in an ss.log (cubic: iperf3's control socket
    runs the namespace's default controller)."""
    vals = []
    for line in ss_log.splitlines():
        if " cubic " in line and f" {key}:" in line:
            vals.append(float(line.split(f" {key}:")[1].split()[0].split("/")[0]))
    return vals


def test_the_delay_line_gives_the_scenarios_rtt_and_the_tcp_settings_reach_the_kernel(tmp_path):
    # No sch_netem here: mmpath-delay holds each forwarded packet 10 ms each way (path delay_ms).
    # The sender's RTT floor is then 20 ms (+ ~0.05 ms of veth), and the route carries the
    # scenario's rto_min, so the kernel's RTO is 300 ms plus the RTT terms, never the default 200.
    sc = _scenario([_wired("a", 200.0, delay_ms=10.0)],
                   {"kind": "tcp", "path": "a", "cc": "cubic",
                    "tcp": {"min_rto_ms": 300, "initial_cwnd": 20, "slow_start_after_idle": False}})
    out = tmp_path / "emu"
    res = _emulate(sc, out=out, capture=True)
    ss = (out / "ss.log").read_text()
    minrtt = _ss_values(ss, "minrtt")
    assert minrtt and 20.0 <= min(minrtt) < 21.0, minrtt[:5]
    rto = _ss_values(ss, "rto")
    assert rto and min(rto) >= 300, rto[:5]
    meta = res.meta
    assert meta["base_rtt_ms"]["emulated"] == {"a": 20.0}
    # No backbone: the server is in the AP's namespace and each direction is delayed where it
    # arrives, by a line in the client's namespace (the data) and one in the AP's (the ACKs).
    q = meta["delay_line"]["queues"]
    assert sorted(x["namespace"] for x in q) == ["ap", "cli"], q
    assert all(x["delay_ms"] == 10.0 and x["packets"] > 1000 for x in q), q
    assert meta["tcp_settings"]["sender routes"] == "initcwnd 20 rto_min 300ms"
    assert meta["tcp_settings"]["sender net.ipv4.tcp_slow_start_after_idle"] == 0
    # 200 Mbit/s x 20 ms is 0.5 MB: the default buffers hold that, so the path is full.
    assert res.goodput_mbps > 0.8 * 190, res.goodput_mbps
    # iperf3's clock starts after its control exchange and the data connection's handshake
    # (traffic.ClockProbe), a few RTTs after the client started at 0; its intervals are placed
    # there, and the first one carries data (it does not start before the data does).
    at = meta["flows"][0]["iperf3_clock_s"]
    assert 2 * 0.020 <= at < 0.5, at
    iv = res.intervals
    assert iv["t_s"].min() >= at - 0.1 and iv["mbps"].iloc[0] > 0, iv.head()


def test_without_a_backbone_the_server_is_at_the_ap_and_tcp_small_queues_see_the_path(tmp_path, monkeypatch):
    """`backbone.enabled = false`: the simulator's server sits at the AP, its queue the path's, and
    TCP Small Queues hold a backlogged CUBIC to about 1 ms of its rate there (srtt 11.7 ms on
    this path in the simulator: docs/path-manager.md). The emulator runs the server in the AP's
    namespace (two namespaces, no backbone veth), so the kernel's TSQ sees the path's queue too.
    Behind a router, the AP's forwarding drops each packet's socket reference (ip_rcv_core,
    skb_orphan) and CUBIC fills the path's 1.5 MB queue: an RTT of ~130 ms (measured 121-126)."""
    sc = _scenario([_wired("a", 100.0, delay_ms=5.0)], {"kind": "tcp", "path": "a", "cc": "cubic"}, duration=4.0)
    out = tmp_path / "emu"
    seen: list[set[str]] = []
    start = traffic.start_server

    def spy(topo, *a, **k):  # the namespaces as they are while the run's traffic starts
        seen.append(_namespaces())
        return start(topo, *a, **k)

    monkeypatch.setattr(traffic, "start_server", spy)
    res = _emulate(sc, out=out, capture=True)
    assert len(seen) == 1 and {n.rsplit("-", 1)[-1] for n in seen[0]} == {"ap", "cli"}, seen
    assert res.meta["topology"]["namespaces"] == ["cli", "ap"], res.meta["topology"]
    ss = (out / "ss.log").read_text()
    # srtt after the first second (slow start's overshoot aside): the base RTT (10 ms) plus
    # about 1 ms of TSQ's queue, not the full queue's 120 ms.
    rtt = _ss_values(ss, "rtt")
    assert len(rtt) > 40, len(rtt)
    late = sorted(rtt[len(rtt) // 3:])
    assert 10.0 <= late[len(late) // 2] < 20.0, late[::10]
    assert res.goodput_mbps > 85, res.goodput_mbps


def test_a_path_is_a_line_rate_link_with_packets_of_about_a_millisecond(tmp_path):
    """The shaping of a line-rate link (emu/gso.py, emu/shaper.py): at 100 Mbit/s the server
    builds packets of at most 8 segments (1 ms of the path) and the HTB bucket is 1 ms of frames.
    Without the bound veth carries whole 64 KiB packets (45 segments, 5.2 ms of the link at
    once); veth passes them whole, so the client's capture shows each as the server built it."""
    sc = _scenario([_wired("a", 100.0)], {"kind": "tcp", "path": "a", "cc": "cubic"}, duration=2.0)
    sc["backbone"] = {"enabled": True, "rate_mbps": 10000.0}
    out = tmp_path / "out"
    res = _emulate(sc, out=out, capture=True)
    shp = res.meta["shaper"]
    assert shp["gso_max_segs"] == {"srv bb0": 8}, shp
    assert 0 < shp["bucket_bytes"]["a"] <= 12_616, shp
    dump = subprocess.run(["tcpdump", "-nn", "-r", str(out / "a.pcap"), "tcp and src port 5201"],
                          capture_output=True, text=True).stdout
    sizes = [int(ln.rsplit("length ", 1)[1]) for ln in dump.splitlines() if "length " in ln]
    assert len(sizes) > 100 and max(sizes) <= 8 * 1448, (len(sizes), max(sizes, default=0))
    assert res.goodput_mbps > 85, res.goodput_mbps


def test_cubic_is_not_paced_and_resumes_at_once_after_a_hold(tmp_path):
    """Every socket is born with its namespace's default congestion control; on a kernel whose
    default is BBR, a CUBIC socket kept BBR's pacing and, after a hold whose RTT samples put its
    srtt near the hold's length, sent at 1.2 cwnd / srtt: 4-13 Mbit/s for half a second after a
    2 s hold (x-kernel cubic-hold-0.5ms). Born Reno (emu/tcpconf.py default_cc), it is unpaced, as
    the scenario says, and its restored window refills the path at once."""
    sc = _scenario([_wired("a", 100.0, delay_ms=0.25,
                           schedule=[{"t_s": 1.5, "rate_mbps": 0.0}, {"t_s": 2.5, "rate_mbps": 100.0}])],
                   {"kind": "tcp", "path": "a", "cc": "cubic"}, duration=3.5)
    sc["backbone"] = {"enabled": True, "rate_mbps": 10000.0}
    res = _emulate(sc)
    assert res.meta["tcp_settings"]["both net.ipv4.tcp_congestion_control"] == "reno"
    iv = res.intervals
    after = iv[(iv["t_s"] >= 2.6) & (iv["t_s"] < 3.1)]["mbps"]
    assert len(after) >= 4 and after.mean() > 70, list(after)


def test_random_loss_drops_single_frames(tmp_path):
    """A wired path's loss_pct on the kernel (emu/loss.py): each frame is dropped with that
    probability, so the sender retransmits about that share of its segments, and each loss is a
    congestion event of its own. Without the rules the flow would not lose a frame (~95 Mbit/s);
    with GSO packets dropped whole (no gso_max_segs 1) the same share of bytes is lost in a few
    times fewer events and Cubic got 33 Mbit/s, where the simulator's per-frame loss gives
    6.9-8.7 (seeds 1-3) and the kernel with one-frame packets 7.4."""
    sc = _scenario([_wired("a", 100.0, delay_ms=5.0, loss_pct=2.0)], {"kind": "tcp", "path": "a", "cc": "cubic"},
                   duration=4.0)
    sc["backbone"] = {"enabled": True, "rate_mbps": 10000.0}
    res = _emulate(sc, out=tmp_path / "out")
    assert res.meta["loss_pct"] == {"a": 2.0}
    doc = json.loads((tmp_path / "out" / "iperf3-f.json").read_text())
    sent = doc["end"]["sum_sent"]
    segments = sent["bytes"] / 1448
    share = sent["retransmits"] / segments
    assert 0.01 < share < 0.04, (sent["retransmits"], segments)
    # Mathis et al.: ~1.2 MSS / (RTT sqrt(p)) = ~10 Mbit/s at 10 ms and a 2 % loss per frame.
    assert res.goodput_mbps < 15, res.goodput_mbps


def test_socket_buffers_cap_throughput_at_a_long_rtt():
    """Seed 003's buffer finding on the real kernel: at 50 ms RTT a 1 MB receive buffer holds at
    most 1 MB in flight (<= 168 Mbit/s, whatever share of it the kernel advertises), while 32 MB
    buffers let Cubic fill the 600 Mbit/s path."""
    def run(buf: int) -> float:
        sc = _scenario([_wired("a", 600.0, delay_ms=25.0)],
                       {"kind": "tcp", "path": "a", "cc": "cubic",
                        "tcp": {"rmem_max_bytes": buf, "wmem_max_bytes": buf}}, duration=4.0)
        res = _emulate(sc)
        assert res.meta["tcp_settings"]["receiver net.ipv4.tcp_rmem"].endswith(f" {buf}")
        return res.goodput_mbps

    small, large = run(1 << 20), run(32 << 20)
    assert small < 1.0 * (1 << 20) * 8 / 0.050 / 1e6, small
    assert large > 400 and large > 2.5 * small, (large, small)


def test_x_kernel_compares_both_engines_on_the_same_runs():
    """`mmpath reproduce x-kernel` in fast mode: the battery's one `blockage` row in both engines,
    one run each (MAX_RUNS), with the metrics its criterion compares. Its verdict is not asserted: the
    emulation is real time on a shared machine and its stall after the blockage varies from run to
    run (docs/emulate.md); the full battery is the one to read."""
    from mmpath.reproduce import reproduce

    rep = reproduce(["x-kernel"], fast=True, plots=False)
    data = rep.data["x-kernel"]
    assert not data.failures, data.failures
    runs = data.runs
    assert sorted(runs["engine"]) == ["emulation", "simulation"]
    assert set(runs["row"]) == {"blockage"}
    for _, r in runs.iterrows():
        # Both engines carried the dual-band rate before the blockage and lost at most ~the
        # 11ad's share through it: 11ad ~1200 + 11ac ~500 Mbit/s of capacity.
        assert 1300 < r["pre_mbps"] < 2300, r.to_dict()
        assert 700 < r["goodput_mbps"] < r["pre_mbps"], r.to_dict()
        assert 0 <= r["outage_s"] <= 8 and 0 <= r["resat_s"] <= 5.5, r.to_dict()
    v = rep.results["x-kernel"].verdict
    assert v.status in ("PASS", "FAIL") and len(v.checks) == 2
    assert any(c.text.startswith("rows agreeing") for c in v.checks)


def test_x_pm_runs_the_daemon_against_the_simulator():
    """`mmpath reproduce x-pm` in fast mode: the dropping cut with the in-kernel path manager and
    fast-failback, each in both engines once, with the times its criterion compares. Not its
    verdict (real time on a shared machine), but what every run of it showed: fast-failback's
    primary back more than 0.5 s sooner than the in-kernel path manager's, which waits for its
    old subflow's backed-off RTO."""
    from mmpath.reproduce import reproduce
    from mmpath.reproduce import xpm

    rep = reproduce(["x-pm"], fast=True, plots=False)
    data = rep.data["x-pm"]
    assert not data.failures, data.failures
    runs = data.runs
    assert sorted(zip(runs["policy"], runs["engine"])) == sorted(
        (p, e) for _, p in xpm.FAST_ROWS for e in xpm.ENGINES)
    for _, r in runs.iterrows():
        assert 90 < r[xpm.RECEIVED] < 175, r.to_dict()
        assert all(0 <= r[k] <= xpm.DURATION_S for k in xpm.TIMES), r.to_dict()
        # no byte lost or duplicated at the application (issue 28), in either engine
        assert r[xpm.INTACT], (r[xpm.INTACT_WHY], r.to_dict())
    kern = runs[(runs["policy"] == "kernel") & (runs["engine"] == "emulation")].iloc[0]
    ff = runs[(runs["policy"] == "fast-failback") & (runs["engine"] == "emulation")].iloc[0]
    assert ff[xpm.BACK] + 0.5 < kern[xpm.BACK], (ff.to_dict(), kern.to_dict())
    v = rep.results["x-pm"].verdict
    assert v.status in ("PASS", "FAIL") and len(v.checks) == 5


def test_the_clock_probe_reads_tcpdumps_first_time_stamp():
    from mmpath.emu import traffic

    line = "1796567214.052311 veth0 In  IP 10.0.0.1.5201 > 10.199.1.2.40000: Flags [.], seq 1:1449, length 1448\n"
    assert traffic.first_stamp("tcpdump: listening\n" + line) == 1796567214.052311
    assert traffic.first_stamp("") is None and traffic.first_stamp("no stamp here\n") is None
