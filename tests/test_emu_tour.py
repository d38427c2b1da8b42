"""What a tour of `mmpath emu run` over the bundled scenarios found, each kept fixed by a test.

The first part needs neither root nor the tools (what is refused, how a variant is picked, which
iperf3 command a flow becomes, how goodput is read, the shaper's end of trace, the capacity's
stalled bins, the client's kill). The last part emulates for real and skips, saying why, when
not root or a tool is missing, as tests/test_emu.py does."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from mmpath.emu import EmuError, capacity, checks, netns, pick_variant, shaper, traffic
from mmpath.analyze.iperf3 import end_sum, goodput_mbps, received_bytes
from mmpath.scenario import load_scenario
from conftest import emulation_marks

needs_root = emulation_marks(("ip", "tc", "iperf3", "tcpdump", "mptcpize"))

VARIANTS_TOML = """\
name = "vt"
duration_s = 3.0
[backbone]
enabled = false
[[path]]
name = "a"
rate_mbps = 200.0
mtu_bytes = 1500
[[path]]
name = "b"
rate_mbps = 100.0
mtu_bytes = 1500
[[flow]]
name = "f"
kind = "tcp"
path = "a"
[[variant]]
name = "on-a"
set = { "flow.0.cc" = "reno" }
[[variant]]
name = "on-b"
set = { "flow.0.path" = "b" }
[[variant]]
name = "ratio"
set = { "flow.0.kind" = "mptcp", "flow.0.kernel" = "linux-v0.9x", "flow.0.scheduler" = "fixedratio", "flow.0.ratio" = 60 }
"""


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmpath", *args], capture_output=True, text=True, timeout=600)


# --- variants -----------------------------------------------------------------------------------

def test_a_variant_scenario_without_variant_names_the_variants_and_the_flag(tmp_path):
    f = tmp_path / "vt.toml"
    f.write_text(VARIANTS_TOML)
    with pytest.raises(EmuError) as e:
        pick_variant(str(f))
    msg = str(e.value)
    # From Python it names the argument (variant="on-a"), not the CLI's flag.
    assert "on-a, on-b, ratio" in msg and 'variant="on-a"' in msg and "--variant" not in msg and "\n" not in msg, msg
    # The CLI says the same in one line with its flag, exit 2, before anything needs root.
    r = _cli("emu", "run", str(f))
    assert r.returncode == 2 and "--variant on-a" in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_bundled_variant_scenarios_say_how_to_pick_one():
    for name in ("cc-blockage", "scan", "walk-away", "interference", "phone-energy", "default", "mesh-ap"):
        with pytest.raises(EmuError, match='pick one, e.g. variant="'):
            pick_variant(name)


def test_picked_variant_applies_its_overrides_then_the_users(tmp_path):
    f = tmp_path / "vt.toml"
    f.write_text(VARIANTS_TOML)
    sc = pick_variant(str(f), variant="on-a")
    assert sc.config["flow"][0]["cc"] == "reno"
    sc = pick_variant(str(f), ["flow.0.cc=bbr"], variant="on-a")
    assert sc.config["flow"][0]["cc"] == "bbr"  # the user's --set wins
    assert pick_variant(str(f), variant="on-b").config["flow"][0]["path"] == "b"


def test_a_users_set_that_only_suits_the_picked_variant_is_fine():
    # Found on `scan`: --set flow.0.scheduler=default made the *other* variants (whose ratio needs
    # a ratio scheduler) fail validation, so no variant could be emulated.
    sc = pick_variant("scan", ["flow.0.kernel=linux-upstream", "flow.0.scheduler=default"], variant="default")
    f = sc.config["flow"][0]
    assert f["kernel"] == "linux-upstream" and f["kind"] == "mptcp"
    checks.scenario(sc.config)  # and the emulator accepts it


def test_unknown_variant_and_variant_on_a_plain_scenario(tmp_path):
    f = tmp_path / "vt.toml"
    f.write_text(VARIANTS_TOML)
    with pytest.raises(EmuError, match=r'variant="nope": no such variant .*\(allowed: on-a, on-b, ratio\)'):
        pick_variant(str(f), variant="nope")
    with pytest.raises(EmuError, match="has no \\[\\[variant\\]\\] entries"):
        pick_variant("11ad-bulk", variant="x")
    r = _cli("emu", "run", str(f), "--variant", "nope")
    assert r.returncode == 2 and "--variant nope: no such variant" in r.stderr, r.stderr
    assert "allowed: on-a, on-b, ratio" in r.stderr, r.stderr


def test_a_variant_the_kernel_cannot_run_names_both_fixes(tmp_path):
    f = tmp_path / "vt.toml"
    f.write_text(VARIANTS_TOML)
    sc = pick_variant(str(f), variant="ratio")
    with pytest.raises(EmuError) as e:
        checks.scenario(sc.config)
    assert "--set flow.0.kernel=linux-upstream --set flow.0.scheduler=default" in str(e.value), e.value


# --- what the scenario asks for, refused or emulated --------------------------------------------

def _cfg(overrides: list[str]) -> dict:
    return load_scenario("11ad-bulk", overrides).config


@pytest.mark.parametrize("override, field", [
    ("flow.0.bytes=1000000", "flow.0.bytes"),
])
def test_fields_the_emulator_would_have_ignored_are_refused(override, field):
    with pytest.raises(EmuError) as e:
        checks.scenario(_cfg([override]))
    assert str(e.value).startswith(f"{field}:") and "allowed:" in str(e.value), e.value


def test_mptcp_prio_is_refused():
    cfg = load_scenario("blockage", ["flow.0.kernel=linux-upstream",
                                     'flow.0.prio=[{t_s=1.0, path="11ac", backup=true}]']).config
    with pytest.raises(EmuError, match=r"^flow\.0\.prio: .*allowed"):
        checks.scenario(cfg)


def test_address_mesh_refusal_gives_the_fix():
    cfg = load_scenario("mesh-ap", ["flow.0.kernel=linux-upstream", "flow.0.subflows=address-mesh"]).config
    with pytest.raises(EmuError, match=r"--set flow\.0\.subflows=per-path"):
        checks.scenario(cfg)


def _topo(backbone_mtu=None) -> netns.Topology:
    t = netns.Topology(tag="mmpathX", backbone_mtu=backbone_mtu)
    t.paths.append(netns.PathLink(index=0, name="a", mtu=7912, cli_if="p0c", ap_if="p0a",
                                  cli_addr="10.199.1.2", ap_addr="10.199.1.1"))
    return t


def test_tcp_rate_app_becomes_iperf3_b(tmp_path):
    cfg = _cfg(["flow.0.app=rate", "flow.0.rate_mbps=500"])
    checks.scenario(cfg)  # allowed now
    cmd = traffic.client_cmd(_topo(), {**cfg["flow"][0], "path": "a"}, 3.0, tmp_path / "x.json")
    assert cmd[cmd.index("-b") + 1] == "500M" and "-u" not in cmd, cmd
    bulk = traffic.client_cmd(_topo(), {**_cfg([])["flow"][0], "path": "a"}, 3.0, tmp_path / "x.json")
    assert "-b" not in bulk


def test_udp_datagram_size_follows_packet_bytes_and_the_backbone_mtu(tmp_path):
    flow = {"name": "u", "kind": "udp", "path": "a", "rate_mbps": 100.0}
    size = lambda t, f: int((c := traffic.client_cmd(t, f, 3.0, tmp_path / "x.json"))[c.index("-l") + 1])  # noqa: E731
    assert size(_topo(), flow) == 7912 - 28
    # A 1500-byte backbone: the path MTU is the smaller one (as the simulator's), no fragments.
    assert size(_topo(backbone_mtu=1500), flow) == 1500 - 28
    assert size(_topo(), {**flow, "packet_bytes": 1000}) == 1000
    # The receiving socket's buffer at the host's ceiling: with the 208 KiB default the receiving
    # iperf3 dropped 13-40 % of udp-sweep's datagrams that the shaped link had delivered.
    cmd = traffic.client_cmd(_topo(), flow, 3.0, tmp_path / "x.json")
    buf = traffic.udp_buffer_bytes()
    assert buf > 0 and cmd[cmd.index("-w") + 1] == str(buf), cmd


def test_udp_goodput_is_what_arrived_not_what_was_sent():
    # iperf3 3.12, -R -u: end.sum holds the sent bytes, end.sum_received what arrived.
    doc = {"end": {"sum": {"bytes": 503369748, "bits_per_second": 1341467496.0, "lost_percent": 10.7},
                   "sum_sent": {"bytes": 503369748, "bits_per_second": 1341467496.0},
                   "sum_received": {"bytes": 440234676, "bits_per_second": 1173866400.0}}}
    assert goodput_mbps(doc, udp=True) == pytest.approx(1173.8664)
    assert received_bytes(doc, udp=True) == 440234676
    # An iperf3 without sum_received: the sum less its lost share.
    old = {"end": {"sum": {"bytes": 1000, "bits_per_second": 8000.0, "lost_percent": 25.0}}}
    assert end_sum(old, udp=True)["bytes"] == 750
    tcp = {"end": {"sum_sent": {"bits_per_second": 2e9}, "sum_received": {"bits_per_second": 1e9}}}
    assert goodput_mbps(tcp, udp=False) == 1000.0


# --- the shaper's end of trace, the capacity's stalls, the client's kill -----------------------

def test_a_link_the_trace_leaves_down_comes_back_after_the_trace(monkeypatch):
    # Found on 11ad-blockage with duration_s=5 (blocked 4-5 s): the link stayed down after the
    # trace, and iperf3 failed with "unable to send control message: Broken pipe" after 24 s.
    cap = capacity.Capacity(path="a", bin_s=0.01, mbps=np.array([100.0, 100.0, 0.0, 0.0]))
    fine = capacity.Capacity(path="b", bin_s=0.01, mbps=np.array([50.0, 50.0, 50.0, 50.0]))
    shp = shaper.Shaper([("ns", "p0a", cap, 1500, 200_000, True), ("ns", "p1a", fine, 1500, 200_000, True)])
    sent: list[str] = []
    monkeypatch.setattr(shp, "_send", lambda ns, lines: sent.extend(lines) or True)
    shp._run(time.monotonic())
    assert any("p0a" in ln and "limit 0" in ln for ln in sent), sent  # down in the trace
    assert sent[-1].endswith("bfifo limit 200000") and "p0a" in sent[-1], sent  # and back after it
    assert shp.restored == ["p0a"]


def _radio(event: dict) -> dict:
    return load_scenario({"name": "r", "duration_s": 2.0,
                          "path": [{"name": "ad", "technology": "11ad", "device": "panasonic-wigig", "mcs": 9,
                                    "mtu_bytes": 7912, "signal": "strong", "event": [event]}],
                          "flow": [{"name": "u", "kind": "udp", "rate_mbps": 1000.0}]}).config


def test_capacity_marks_a_scan_off_channel_as_stalled_and_a_blockage_not():
    cfg = _radio({"kind": "scan", "t_s": 0.5, "duration_s": 0.6, "every_s": 1.0, "scan_ms": 500.0, "rest_ms": 0.0})
    cap = capacity.probe(cfg, 0, "download", 2.0, 1, tcp=False)
    assert cap.stalled is not None
    stalled = np.flatnonzero(cap.stalled)
    # Off channel 0.5-1.0 s: the bins wholly inside it carried nothing with the link up.
    assert len(stalled) >= 3 and all(5 <= i <= 9 for i in stalled), stalled
    rows = cap.csv().splitlines()[1:]
    assert all(rows[i].endswith(",1") for i in stalled)  # link up, rate 0: a stall when replayed
    cfg = _radio({"kind": "blockage", "t_s": 0.5, "duration_s": 0.5})
    cap = capacity.probe(cfg, 0, "download", 2.0, 1, tcp=False)
    assert cap.mbps[6] == 0 and (cap.stalled is None or not cap.stalled.any())


def test_client_kill_stops_a_running_client_and_a_pending_one():
    c = traffic.Client(["sleep", "30"], time.monotonic(), 60)
    c.start()
    time.sleep(0.3)
    t = time.monotonic()
    c.kill()
    assert not c.is_alive() and time.monotonic() - t < 5
    later = traffic.Client(["sleep", "30"], time.monotonic() + 30, 60)
    later.kill()  # never started: no error
    later.start()
    later.join(timeout=2)
    assert not later.is_alive() and later.result is None


# --- for real (root) -----------------------------------------------------------------------------

def _my_namespaces(pid: int) -> list[str]:
    ls = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [w for w in ls.split() if w.startswith(f"mmpath{pid}-")]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupted_emulation_leaves_nothing_behind(tmp_path, sig):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    f = tmp_path / "vt.toml"
    f.write_text(VARIANTS_TOML.replace("duration_s = 3.0", "duration_s = 8.0"))
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "mmpath", "emu", "run", str(f), "--variant", "on-a", "--out",
                          str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not subprocess.run(
            ["pgrep", "-f", f"iperf3 -c .*{tmp_path}"], capture_output=True).stdout:
        time.sleep(0.2)
    time.sleep(1.0)
    p.send_signal(sig)  # to the process only, as `kill PID` does (not its iperf3 children)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130 and "interrupted" in err, (p.returncode, err)
    assert _my_namespaces(p.pid) == []
    left = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True).stdout
    assert left == "", left  # no iperf3 / tcpdump outlives the run
    assert not out.exists() and not [x for x in tmp_path.iterdir() if ".tmp-" in x.name]


def test_variant_emulated_end_to_end_and_a_trace_ending_down(tmp_path):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    f = tmp_path / "vt.toml"
    f.write_text(VARIANTS_TOML)
    out = tmp_path / "out"
    # Path b blocked from 2 s to the end: the run must still finish (iperf3 exchanges its results
    # after the trace), with b's goodput ~2/3 of its rate.
    r = _cli("emu", "run", str(f), "--variant", "on-b", "--no-capture", "--out", str(out),
             "--set", "path.1.schedule=[{t_s=2.0, up=false}]")
    assert r.returncode == 0, r.stderr
    assert "vt (on-b)" in r.stdout
    meta = json.loads((out / "emu.json").read_text())
    # A wired path's down step is held by the delay line to the run's end (the simulator keeps a
    # down wired link's queue), so the shaper has no outage to lift after its trace.
    assert meta["variant"] == "on-b" and meta["holds"]["b"]["cause"] == "link down"
    assert meta["shaper"]["up_after_trace"] == []
    assert 40 < meta["goodput_mbps"] < 75, meta["goodput_mbps"]


def test_mptcp_subflows_follow_the_flows_paths_order(tmp_path):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    import mmpath.emu

    sc = {"name": "rev", "duration_s": 3.0, "backbone": {"enabled": False},
          "path": [{"name": "a", "rate_mbps": 200.0, "mtu_bytes": 1500},
                   {"name": "b", "rate_mbps": 100.0, "mtu_bytes": 1500},
                   {"name": "c", "rate_mbps": 100.0, "mtu_bytes": 1500}],
          "flow": [{"name": "f", "kind": "mptcp", "paths": ["b", "a"], "path": "b", "kernel": "linux-upstream",
                    "scheduler": "default"}]}
    res = mmpath.emu.run(sc, capture=False)
    # Before, the endpoints were every path but the topology's first: b twice, c added, a never.
    assert res.path_mbps["a"] > 100 and res.path_mbps["b"] > 60, res.path_mbps
    assert res.path_mbps["c"] < 1, res.path_mbps


def test_udp_goodput_never_exceeds_the_shaped_capacity(tmp_path):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    import mmpath.emu

    sc = {"name": "u", "duration_s": 3.0, "backbone": {"enabled": False},
          "path": [{"name": "a", "rate_mbps": 100.0, "mtu_bytes": 1500}],
          "flow": [{"name": "u", "kind": "udp", "path": "a", "rate_mbps": 200.0}]}
    res = mmpath.emu.run(sc, capture=False)
    cap = float(res.capacities["a"].mbps.mean())
    # Offered twice the link: what arrived is the link's, not the 200 Mbit/s iperf3 sent.
    assert res.goodput_mbps <= 1.03 * cap, (res.goodput_mbps, cap)
    assert res.goodput_mbps > 0.8 * cap, (res.goodput_mbps, cap)


def test_a_radio_link_down_at_the_end_is_lifted_after_the_trace(tmp_path):
    """A radio path blocked past the run's end drops its queue (not held, unlike a wired down
    step), so its shaper outage lasts to the end of the trace; the shaper then brings the link
    back so iperf3 can exchange its results."""
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    f = tmp_path / "rad.toml"
    f.write_text('name = "rad"\nduration_s = 3.0\n[[path]]\nname = "ad"\ntechnology = "11ad"\nmcs = 8\n'
                 'mtu_bytes = 7912\nevent = [{ kind = "blockage", t_s = 2.0, duration_s = 10.0 }]\n'
                 '[[flow]]\nname = "f"\nkind = "tcp"\n')
    out = tmp_path / "out"
    r = _cli("emu", "run", str(f), "--no-capture", "--out", str(out))
    assert r.returncode == 0, r.stderr
    meta = json.loads((out / "emu.json").read_text())
    assert meta["holds"] == {} and meta["shaper"]["up_after_trace"], meta["shaper"]
