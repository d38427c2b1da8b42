"""`mmpath emu run` with a flow's `path_manager` (python/mmpath/emu/pmdaemon.py): the daemon's
command line and record without root, then one emulated run as root (skips otherwise, saying why):
a backup-mode MPTCP download whose primary is cut by a 3 s dropping outage, with
`path_manager = "fast-failback"`: after the primary's link returns the daemon opens a subflow on
it, and emu.json says so."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mmpath.emu import netns, pmdaemon
from conftest import emulation_marks


def _topo() -> netns.Topology:
    t = netns.Topology(tag="mmpath1-2")
    for k in range(2):
        t.paths.append(netns.PathLink(k, f"n{k}", 1500, f"p{k}c", f"p{k}a", f"10.0.{k}.2", f"10.0.{k}.1"))
    return t


def test_the_policy_is_the_flows_and_kernel_without_one():
    assert pmdaemon.policy(None) == "kernel"
    assert pmdaemon.policy({"kind": "mptcp"}) == "kernel"
    assert pmdaemon.policy({"kind": "mptcp", "path_manager": "recreate"}) == "recreate"


def test_the_daemon_runs_in_the_client_namespace_on_the_client_interfaces_in_order(tmp_path):
    d = pmdaemon.PmDaemon(_topo(), "fast-failback", [1], tmp_path)
    cmd = d.command()
    assert cmd[1:3] == ["-m", "mmpath.pm.cli"]
    args = dict(zip(cmd[3::2], cmd[4::2]))
    assert args == {"--policy": "fast-failback", "--paths": "p0c,p1c", "--netns": "mmpath1-2-cli",
                    "--log": str(tmp_path / pmdaemon.LOG_NAME), "--backup-paths": "1"}
    assert not pmdaemon.PmDaemon(_topo(), "kernel", [], tmp_path).needed()


def test_the_record_puts_the_daemons_actions_on_the_scenarios_clock(tmp_path):
    d = pmdaemon.PmDaemon(_topo(), "fast-failback", [1], tmp_path)
    t0 = 1000.0
    recs = [
        {"t": 999.5, "type": "start", "paths": [{"index": 0, "ifname": "p0c", "ifindex": 7, "addr": "a"},
                                                 {"index": 1, "ifname": "p1c", "ifindex": 9, "addr": "b"}]},
        {"t": 1005.0, "type": "link", "ifindex": 7, "up": False},
        {"t": 1005.25, "type": "transport", "token": 1, "event": "subflow_rto", "path": 0, "subflow": 0,
         "backoff": 1, "ca_state": 4},
        {"t": 1010.0, "type": "link", "ifindex": 7, "up": True},
        {"t": 1010.001, "type": "action", "token": 1, "source": "policy",
         "action": {"kind": "create_subflow", "path": 0}},
        {"t": 1010.002, "type": "command", "token": 1, "command": "subflow_create p0c", "ok": True},
        {"t": 1014.0, "type": "stop", "restored": True},
    ]
    (tmp_path / pmdaemon.LOG_NAME).write_text("".join(json.dumps(r) + "\n" for r in recs) + '{"t": 1')
    rec = d.record(t0)
    assert rec["policy"] == "fast-failback" and rec["restored"] is True
    assert rec["links"] == [{"t_s": 5.0, "path": 0, "up": False}, {"t_s": 10.0, "path": 0, "up": True}]
    assert rec["actions"] == [{"t_s": 0.001 + 10.0, "source": "policy", "kind": "create_subflow", "path": 0}]
    assert rec["commands"][0]["ok"] is True
    assert rec["transport"] == [{"t_s": 5.25, "event": "subflow_rto", "path": 0, "subflow": 0, "backoff": 1}]
    assert pmdaemon.PmDaemon(_topo(), "kernel", [], tmp_path).record(t0) == {
        "policy": "kernel", "by": "the kernel's in-kernel path manager"}


def test_radio_paths_are_fed_to_the_daemon_and_the_summary_says_so(tmp_path):
    # A radio path's reports (linkfeed.plan) make the daemon take --link-feed; none: no socket.
    planned = [(0.0, {"interface": "p0c", "up": True}), (3.0, {"interface": "p0c", "up": False})]
    d = pmdaemon.PmDaemon(_topo(), "link-aware-backup", [1], tmp_path, planned)
    args = dict(zip(d.command()[3::2], d.command()[4::2]))
    assert args["--link-feed"] == str(tmp_path / "pm-feed.sock")
    assert "--link-feed" not in pmdaemon.PmDaemon(_topo(), "link-aware-backup", [1], tmp_path, []).command()
    assert pmdaemon.PmDaemon(_topo(), "kernel", [], tmp_path, planned).feeder is None
    recs = [{"t": 1.0, "type": "start", "paths": [{"index": 0, "ifname": "p0c", "ifindex": 7, "addr": "a"}]},
            {"t": 2.0, "type": "link_quality", "ifindex": 7, "signal_dbm": -60.0, "mcs": 8},
            {"t": 2.1, "type": "link_quality", "ifindex": 7, "signal_dbm": -70.0, "mcs": 2},
            {"t": 2.2, "type": "feed_error", "error": "not JSON", "datagram": "x"},
            {"t": 2.3, "type": "scan", "ifindex": 7, "scanning": True},
            {"t": 2.4, "type": "scan", "ifindex": 7, "scanning": False}]
    (tmp_path / pmdaemon.LOG_NAME).write_text("".join(json.dumps(r) + "\n" for r in recs))
    feed = d.record(0.0)["link_feed"]
    assert (feed["planned"], feed["sent"], feed["quality_changes_heard"], feed["refused"]) == (2, 0, {"0": 2}, 1)
    assert feed["scans_heard"] == {"0": 1}
    from mmpath.emu.cli import path_manager_line
    pm = {"policy": "link-aware-backup", "actions": [{}] * 4, "links": [{}] * 2,
          "commands": [{"ok": True}, {"ok": False}],
          "link_feed": {"planned": 5, "sent": 5, "late_ms": {"median": 0.5, "max": 2.5}}}
    assert path_manager_line(pm) == ("  path manager link-aware-backup (mmpath-pm, pm-daemon.jsonl): 4 action(s), "
                                     "2 command(s), 1 refused by the kernel, 2 link change(s) heard; 5 of 5 radio "
                                     "report(s) fed (at most 2.5 ms late)")
    pm["link_feed"]["scans_heard"] = {"0": 3}
    assert path_manager_line(pm).endswith("(at most 2.5 ms late), 3 scan(s) heard")
    assert path_manager_line({"policy": "kernel", "by": "the kernel's in-kernel path manager"}) is None


def test_a_radio_paths_scans_are_fed_as_a_whole_as_the_simulator_hears_them():
    from mmpath.emu.linkfeed import scan_reports
    # Every 1 s from 2 s for 2.5 s, scans of 300 ms in 40 ms dwells and 100 ms rests: three
    # scans (2, 3, 4 s), each heard from its first dwell to its end, the last cut at the run's end.
    path = {"technology": "11ac", "event": [{"kind": "scan", "t_s": 2.0, "duration_s": 2.5, "every_s": 1.0,
                                              "scan_ms": 300.0}]}
    got = scan_reports(path, "p1c", 4.2)
    assert [(round(t, 6), r["scan"]) for t, r in got] == [(2.0, True), (2.3, False), (3.0, True), (3.3, False),
                                                           (4.0, True), (4.2, False)]
    assert {r["interface"] for _, r in got} == {"p1c"}
    assert scan_reports({"technology": "11ac"}, "p1c", 10.0) == []


needs_root = emulation_marks(("ip", "tc", "iperf3", "tcpdump", "mptcpize"), root_needed_for="network namespaces, tc, netlink", mptcp=True)


def _link_aware_backup_emulated(tmp_path, duration_s: float, primary: dict) -> dict:
    """emu.json's `path_manager` of a backup-mode download under link-aware-backup, over
    `primary` and a 5 GHz backup (no backbone, seed 1, no captures)."""
    import mmpath.emu

    sc = {"name": "pm-feed", "duration_s": duration_s, "seed": 1, "backbone": {"enabled": False},
          "path": [primary,
                   {"name": "backup", "technology": "11ac", "bandwidth_mhz": 40, "streams": 1, "rssi_dbm": -50.0}],
          "flow": [{"name": "dl", "kind": "mptcp", "mode": "backup", "kernel": "linux-upstream",
                    "scheduler": "default", "path_manager": "link-aware-backup"}]}
    out = tmp_path / "out"
    mmpath.emu.run(sc, out=out, capture=False)
    return json.loads((out / "emu.json").read_text())["path_manager"]


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_link_aware_backup_hears_the_emulated_radio_through_the_feed(tmp_path, _):
    # A 60 GHz primary partly blocked (its signal heard below link-aware-backup's -66 dBm, the
    # link up) at 2 s, then blocked (lost) 3.5-4.5 s: the emulator feeds the daemon what the
    # channel does (linkfeed.py), and the policy moves traffic to the backup at the fade, before
    # the link goes, as in the simulator (x-pm's 11ad-fade).
    fade_s = 2.0
    pm = _link_aware_backup_emulated(tmp_path, 6.0, {
        "name": "primary", "technology": "11ad", "device": "panasonic-wigig", "distance_m": 3.0, "mtu_bytes": 7912,
        "event": [{"kind": "blockage", "t_s": fade_s, "duration_s": 1.5, "loss_db": 38.0},
                  {"kind": "blockage", "t_s": 3.5, "duration_s": 1.0}]})
    feed = pm["link_feed"]
    assert feed["sent"] == feed["planned"] >= 4 and feed["refused"] == 0, feed
    assert feed["quality_changes_heard"].get("0", 0) >= 2, feed
    demoted = [a["t_s"] for a in pm["actions"] if a["source"] == "policy" and a.get("kind") == "set_backup"
               and a.get("path") == 0]
    assert demoted and fade_s <= demoted[0] < fade_s + 0.2, pm["actions"]
    assert [(ln["path"], ln["up"]) for ln in pm["links"] if ln["path"] == 0] == [(0, False), (0, True)], pm["links"]
    assert all(c["ok"] for c in pm["commands"] if c["t_s"] >= fade_s), pm["commands"]
    assert pm["exit_code"] == 0 and pm["restored"] is True


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_fast_failback_opens_a_subflow_on_the_primary_after_its_return(tmp_path, _):
    import mmpath.emu

    cut, back = 3.0, 6.0
    sc = {"name": "pm-emu", "duration_s": 9.0, "seed": 1, "backbone": {"enabled": False},
          "path": [{"name": "primary", "technology": "wired", "rate_mbps": 50.0, "delay_ms": 5.0,
                    "schedule": [{"t_s": cut, "up": False, "drop": True}, {"t_s": back, "up": True}]},
                   {"name": "backup", "technology": "wired", "rate_mbps": 20.0, "delay_ms": 10.0}],
          "flow": [{"name": "dl", "kind": "mptcp", "mode": "backup", "kernel": "linux-upstream",
                    "scheduler": "default", "path_manager": "fast-failback"}]}
    out = tmp_path / "out"
    mmpath.emu.run(sc, out=out, capture=False)
    meta = json.loads((out / "emu.json").read_text())
    pm = meta["path_manager"]
    assert pm["policy"] == "fast-failback" and pm["exit_code"] == 0 and pm["restored"] is True
    assert (out / pmdaemon.LOG_NAME).is_file()
    # The daemon heard the primary's link go and return (drops.py takes p0c down and up) ...
    assert [(ln["path"], ln["up"]) for ln in pm["links"] if ln["path"] == 0][-2:] == [(0, False), (0, True)]
    up_s = [ln["t_s"] for ln in pm["links"] if ln["path"] == 0 and ln["up"]][-1]
    assert back - 0.5 < up_s < back + 0.5
    # ... and opened a subflow on it after the return, which the kernel took.
    made = [a for a in pm["actions"] if a["source"] == "policy" and a.get("kind") == "create_subflow"
            and a.get("path") == 0 and a["t_s"] >= up_s]
    assert made, pm["actions"]
    assert any(c["ok"] and c["t_s"] >= made[0]["t_s"] and "create" in str(c["command"]).lower()
               for c in pm["commands"]), pm["commands"]
    # Nothing of the daemon is left: the record of the setting it changed is gone (it restored
    # it), as are the run's namespaces.
    from mmpath.emu import reaper

    assert not list(reaper.PM_STATE_DIR.glob(f"{reaper.tag()}-*"))
    assert not list(Path("/run/netns").glob(f"{reaper.tag()}-*"))


def test_a_dead_runs_path_manager_record_is_removed_with_its_leftovers(tmp_path, monkeypatch):
    from mmpath.emu import reaper

    monkeypatch.setattr(reaper, "PM_STATE_DIR", tmp_path)
    monkeypatch.setattr(reaper, "_ip_lines", lambda *a: [])
    dead = tmp_path / "mmpath999999-12345-cli.json"
    dead.write_text('{"key": "path_manager", "was": "kernel"}')
    other = tmp_path / "lab.json"  # a daemon of the user's own namespace: not the emulator's
    other.write_text("{}")
    left = reaper.find()[reaper.Owner(999999, 12345)]
    assert left.pm_states == [dead]
    assert any("path-manager record" in ln for ln in reaper.remove(left))
    assert not dead.exists() and other.exists()


HARDKILL_SCENARIO = """\
name = "pmhk"
duration_s = 20.0
seed = 1
[backbone]
enabled = false
[[path]]
name = "primary"
rate_mbps = 20.0
[[path]]
name = "backup"
rate_mbps = 20.0
[[flow]]
name = "dl"
kind = "mptcp"
mode = "backup"
kernel = "linux-upstream"
scheduler = "default"
path_manager = "fast-failback"
"""


def _daemons_of(pid: int) -> list[int]:
    """The path-manager daemons of run `pid` (their command line names its client namespace)."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mmpath.pm.cli" in cmd and any(c.startswith(f"mmpath{pid}-".encode()) for c in cmd):
                out.append(int(d.name))
    return out


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_a_hard_kill_of_the_run_takes_the_daemon_and_its_record(tmp_path, _):
    import signal
    import subprocess
    import sys
    import time

    from mmpath.emu import reaper

    f = tmp_path / "pmhk.toml"
    f.write_text(HARDKILL_SCENARIO)
    p = subprocess.Popen([sys.executable, "-m", "mmpath", "emu", "run", str(f), "--out", str(tmp_path / "out")],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while not _daemons_of(p.pid) or not list(reaper.PM_STATE_DIR.glob(f"mmpath{p.pid}-*")):
            assert time.monotonic() < deadline and p.poll() is None, "the run did not start its daemon"
            time.sleep(0.2)
        os.kill(p.pid, signal.SIGKILL)  # the main process alone, as the OOM killer does
        p.wait()
        deadline = time.monotonic() + 5.0
        while (_daemons_of(p.pid) or list(reaper.PM_STATE_DIR.glob(f"mmpath{p.pid}-*"))) \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _daemons_of(p.pid) == []
        assert list(reaper.PM_STATE_DIR.glob(f"mmpath{p.pid}-*")) == []
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for owner, left in reaper.find().items():
            if owner.pid == p.pid:
                reaper.remove(left)
        for d in _daemons_of(p.pid):
            os.kill(d, signal.SIGKILL)


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_link_aware_backup_rides_out_an_emulated_scan_heard_through_the_feed(tmp_path, _):
    # The primary 5 GHz radio scans 300 ms at 2 s (its dwells held by the delay line): the
    # daemon hears the scan's start and end through the feed and link-aware-backup demotes the
    # primary for its length (MP_PRIO), as the simulator's policy does.
    pm = _link_aware_backup_emulated(tmp_path, 4.0, {
        "name": "primary", "technology": "11ac", "bandwidth_mhz": 40, "streams": 1, "rssi_dbm": -50.0,
        "event": [{"kind": "scan", "t_s": 2.0, "duration_s": 0.5, "every_s": 1.0, "scan_ms": 300.0}]})
    feed = pm["link_feed"]
    assert feed["sent"] == feed["planned"] and feed["refused"] == 0, feed
    assert feed["scans_heard"] == {"0": 1}, feed
    # Per connection (iperf3's control connection is MPTCP too): the primary demoted at the
    # scan's start, made regular again at its end, and nothing else.
    acts = [(a["t_s"], a["kind"]) for a in pm["actions"] if a["source"] == "policy" and a.get("path") == 0]
    demoted = [t for t, k in acts if k == "set_backup"]
    restored = [t for t, k in acts if k == "clear_backup"]
    assert demoted and restored and len(acts) == len(demoted) + len(restored), pm["actions"]
    assert all(2.0 <= t < 2.1 for t in demoted) and all(2.3 <= t < 2.4 for t in restored), acts
    assert all(c["ok"] for c in pm["commands"]), pm["commands"]
    assert pm["exit_code"] == 0 and pm["restored"] is True
