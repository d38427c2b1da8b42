"""The path-manager daemon on this machine's kernel (root): the emulator's namespaces (emu/netns.py,
two paths between the client and the AP), an MPTCP iperf3 through them, the daemon on the client
namespace with the stand-in policy (tests/pm_standin.py: the subflow on path 1 is made backup).
The daemon, not the kernel, opens the path-1 subflow (the userspace path manager opens none), the
server's kernel hears the MP_PRIO, and SIGTERM restores the namespace's path-manager setting. Then
the core's fast-failback policy (`python -m mmpath.pm.cli`) on a path that loses carrier and
comes back, and the core's recreate hearing the kernel's stale mark and RTOs, which the daemon
polls for, on such a path."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mmpath.emu import netns
from mmpath.pm import system
from conftest import emulation_marks

pytestmark = emulation_marks(("ip", "iperf3", "mptcpize"), root_needed_for="network namespaces, netlink", mptcp=True, who="the path-manager daemon")

STANDIN = str(Path(__file__).with_name("pm_standin.py"))


@pytest.fixture
def topo():
    t = netns.build(["a", "b"], [1500, 1500], mptcp=True, backup=set())
    yield t
    netns.teardown(t)


def _pm(ns: str) -> str:
    return netns.sh("sysctl", "-n", "net.mptcp.path_manager", ns=ns).strip()


def _daemon(*args: str, log: Path | None = None) -> subprocess.Popen:
    cmd = [sys.executable, STANDIN, "--policy", "fast-failback", *args] + (["--log", str(log)] if log else [])
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(pred, timeout: float = 10.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def test_the_daemon_opens_a_subflow_and_sets_its_backup_flag_then_restores_the_pm(topo, tmp_path):
    log = tmp_path / "pm.jsonl"
    assert _pm(topo.cli) == "kernel"
    srv = subprocess.Popen(["ip", "netns", "exec", topo.srv, "mptcpize", "run", "iperf3", "-s", "-1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mon = subprocess.Popen(["ip", "netns", "exec", topo.srv, "ip", "mptcp", "monitor"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    d = _daemon("--paths", "p0c,p1c", "--netns", topo.cli, log=log)
    try:
        assert _wait_for(lambda: log.exists() and _pm(topo.cli) == "userspace"), "the daemon did not start"
        # A second daemon on the same namespace is refused, naming the first one.
        second = _daemon("--paths", "p0c,p1c", "--netns", topo.cli)
        _out, err = second.communicate(timeout=30)
        assert second.returncode == 2 and err.strip().splitlines() == [
            f"mmpath: error: another mmpath-pm runs on namespace {topo.cli} (pid {d.pid}); stop it first"], err
        cli = subprocess.run(["ip", "netns", "exec", topo.cli, "mptcpize", "run", "iperf3", "-c",
                              netns.SERVER_ADDR, "-t", "2", "-J"], capture_output=True, text=True, timeout=60)
        assert cli.returncode == 0, cli.stderr
    finally:
        d.send_signal(signal.SIGTERM)
        out, err = d.communicate(timeout=30)
        srv.kill()
        srv.wait()
        mon.terminate()
        monitor = mon.communicate(timeout=10)[0]
    assert d.returncode == 0 and "Traceback" not in err, err
    # SIGTERM put the setting back as the daemon found it.
    assert _pm(topo.cli) == "kernel"
    recs = [json.loads(line) for line in log.read_text().splitlines()]
    creates = [r for r in recs if r["type"] == "command" and r["command"]["command"] == "SUBFLOW_CREATE"]
    assert creates and all(r["ok"] for r in creates), creates
    # The kernel reports the subflow the daemon asked for: from path 1's address, established.
    joined = [r for r in recs if r["type"] == "kernel_event" and r["event"] == "SUB_ESTABLISHED"
              and r["attrs"]["saddr4"] == topo.paths[1].cli_addr]
    assert joined, [r for r in recs if r["type"] == "kernel_event"]
    flags = [r for r in recs if r["type"] == "command" and r["command"]["command"] == "SET_FLAGS"]
    assert any(r["ok"] for r in flags), flags
    # A refused SET_FLAGS is for a subflow the kernel was closing: the daemon joins at the
    # connection's ESTABLISHED event, and a join SYN that reaches the server over path 1 before
    # the MP_CAPABLE handshake's last ACK over path 0 is reset by the server (MPTCP_RST_EMPTCP,
    # the connection not yet fully established there): seen in ~1 run in 5, SUB_CLOSED ~3 ms later.
    closed = {r["attrs"]["sport"] for r in recs if r["type"] == "kernel_event" and r["event"] == "SUB_CLOSED"}
    assert all(r["command"]["addr"]["port"] in closed for r in flags if not r["ok"]), flags
    # The MP_PRIO reached the server: its kernel reports the subflow from path 1 as backup.
    prio = [ln for ln in monitor.splitlines() if "SF_PRIO" in ln and topo.paths[1].cli_addr in ln]
    assert prio and all("backup=1" in ln for ln in prio), monitor
    assert recs[-1]["type"] == "stop"


def test_refusals_change_nothing(topo):
    # A namespace that does not exist; an interface the namespace does not have.
    d = _daemon("--paths", "p0c,p1c", "--netns", topo.cli + "-nope")
    _out, err = d.communicate(timeout=30)
    assert d.returncode == 2 and len(err.strip().splitlines()) == 1 and "does not exist" in err, err
    d = _daemon("--paths", "p0c,wlan9", "--netns", topo.cli)
    _out, err = d.communicate(timeout=30)
    assert d.returncode == 2 and "no interface 'wlan9'" in err and "p1c" in err, err
    # MPTCP switched off in the namespace.
    netns.set_sysctl(topo.cli, "net.mptcp.enabled", "0")
    d = _daemon("--paths", "p0c,p1c", "--netns", topo.cli)
    _out, err = d.communicate(timeout=30)
    assert d.returncode == 2 and "net.mptcp.enabled = 0" in err, err
    netns.set_sysctl(topo.cli, "net.mptcp.enabled", "1")
    assert _pm(topo.cli) == "kernel"


def test_a_dry_run_prints_the_actions_and_keeps_the_kernels_pm(topo, tmp_path):
    srv = subprocess.Popen(["ip", "netns", "exec", topo.srv, "mptcpize", "run", "iperf3", "-s", "-1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    log = tmp_path / "pm.jsonl"
    d = _daemon("--paths", "p0c,p1c", "--netns", topo.cli, "--dry-run", log=log)
    try:
        assert _wait_for(lambda: log.exists())
        assert _pm(topo.cli) == "kernel"
        subprocess.run(["ip", "netns", "exec", topo.cli, "mptcpize", "run", "iperf3", "-c", netns.SERVER_ADDR,
                        "-t", "1"], capture_output=True, timeout=60)
    finally:
        d.send_signal(signal.SIGINT)
        out, err = d.communicate(timeout=30)
        srv.kill()
        srv.wait()
    assert d.returncode == 0, err
    printed = [json.loads(line) for line in out.splitlines()]
    assert any(r["type"] == "command" and r.get("dry_run") for r in printed), out
    assert _pm(topo.cli) == "kernel"


def _upload_with_the_daemon(topo, tmp_path, policy: str, run_s: int, during, *more: str) -> list[dict]:
    """`mmpath-pm --policy POLICY [MORE...]` on the client while an MPTCP upload of `run_s`
    seconds runs; `during()` is called once the upload has started (it acts on the paths and
    returns when done). The daemon's log records, once it has exited cleanly."""
    log = tmp_path / "pm.jsonl"
    srv = subprocess.Popen(["ip", "netns", "exec", topo.srv, "mptcpize", "run", "iperf3", "-s", "-1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    d = subprocess.Popen([sys.executable, "-m", "mmpath.pm.cli", "--policy", policy, "--paths", "p0c,p1c",
                          "--netns", topo.cli, "--log", str(log), *more], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert _wait_for(lambda: log.exists() and _pm(topo.cli) == "userspace"), "the daemon did not start"
        cli = subprocess.Popen(["ip", "netns", "exec", topo.cli, "mptcpize", "run", "iperf3", "-c",
                                netns.SERVER_ADDR, "-t", str(run_s)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
        during()
        assert cli.wait(timeout=60) == 0
    finally:
        d.send_signal(signal.SIGTERM)
        _out, err = d.communicate(timeout=30)
        srv.kill()
        srv.wait()
    assert d.returncode == 0 and "Traceback" not in err, err
    return [json.loads(line) for line in log.read_text().splitlines()]


def _upload_through_a_carrier_cut(topo, tmp_path, policy: str, run_s: int, cut_s: float):
    """The daemon with POLICY while path 0 loses carrier (the AP's end of its veth goes down) 1 s
    into an upload of `run_s` seconds, for `cut_s`: the log records, and when it heard the link
    go down and come back."""
    def cut() -> None:
        time.sleep(1.0)
        netns.sh("ip", "link", "set", topo.paths[0].ap_if, "down", ns=topo.ap)
        time.sleep(cut_s)
        netns.sh("ip", "link", "set", topo.paths[0].ap_if, "up", ns=topo.ap)

    recs = _upload_with_the_daemon(topo, tmp_path, policy, run_s, cut)
    down = next(r["t_s"] for r in recs if r["type"] == "link" and not r["up"])
    up = next(r["t_s"] for r in recs if r["type"] == "link" and r["up"] and r["t_s"] > down)
    return recs, down, up


def test_the_cores_fast_failback_withdraws_a_cut_path_and_rejoins_it_on_its_return(topo, tmp_path):
    # The policy of the core (`mmpath-pm`, not the stand-in): path 0 loses carrier and comes back
    # during an upload; at the cut the daemon withdraws path 0's address (REMOVE, the RM_ADDR
    # going over path 1) and destroys the subflow there; at the return it opens a fresh subflow
    # on path 0.
    recs, down, up = _upload_through_a_carrier_cut(topo, tmp_path, "fast-failback", 4, 1.0)
    during = [r["command"]["command"] for r in recs if down <= r["t_s"] < up and r["type"] == "command" and r["ok"]]
    assert "REMOVE" in during and "SUBFLOW_DESTROY" in during, during
    after = [r for r in recs if r["t_s"] >= up]
    acts = [(r["source"], r["action"]) for r in after if r["type"] == "action"]
    assert ("policy", {"kind": "create_subflow", "path": 0}) in acts, acts
    fresh = [r for r in after if r["type"] == "kernel_event" and r["event"] == "SUB_ESTABLISHED"
             and r["attrs"]["saddr4"] == topo.paths[0].cli_addr]
    assert fresh, after
    assert _pm(topo.cli) == "kernel"


def test_the_cores_recreate_hears_the_kernels_stale_mark_and_probes_the_returned_path(topo, tmp_path):
    # The kernel has no event for an RTO or a stale mark: the daemon reads them by polling
    # (pm/transport.py). During an upload path 0 loses carrier for 3 s; the client's kernel times
    # its subflow out and marks it stale (0.05-1.25 s after the cut in the runs here, on its
    # connection timer), the daemon reports both to `recreate`, which probes path 0 with a fresh
    # subflow as soon as its link is back and the mark is known, and retires the stale one.
    # The premise is the kernel's: in about one run in ten here it did not mark the subflow stale
    # within the 3 s cut (the mark follows the connection timer's firings, whose spacing the
    # run's phase decides: docs/models.md, MPTCP), and once, in CI, the policy acted 40 ms
    # after the cut on something else the kernel reported. The daemon's part is checked on
    # the first of up to three runs in which the kernel gave it a stale mark and nothing else
    # to act on early; a daemon that missed the mark or acted early would fail all three.
    for _attempt in range(3):
        run_dir = tmp_path / f"run{_attempt}"
        run_dir.mkdir()
        recs, down, up = _upload_through_a_carrier_cut(topo, run_dir, "recreate", 6, 3.0)
        heard = [(r["t_s"], r["event"], r["path"]) for r in recs if r["type"] == "transport" and r["t_s"] >= down]
        stale = next((t for t, e, _p in heard if e == "subflow_stale"), None)
        early = [r for r in recs if r["type"] == "action" and r["source"] == "policy"
                 and r["t_s"] < max(up, stale if stale is not None else up)]
        if stale is not None and not early:
            break
    assert all(path == 0 for _t, _e, path in heard), heard
    assert any(e == "subflow_rto" and t < up for t, e, _p in heard), heard
    assert stale is not None, heard
    assert not early, (early, [x for x in recs if down - 0.1 < x["t_s"] < up])
    # The probe: once the link is back and the stale mark known, not before.
    after = [r for r in recs if r["t_s"] >= max(up, stale)]
    acts = [(r["source"], r["action"]["kind"], r["action"]["path"]) for r in after if r["type"] == "action"]
    assert acts[:1] == [("policy", "create_subflow", 0)], acts
    assert ("policy", "close_subflow", 0) in acts, acts
    assert _pm(topo.cli) == "kernel"


def test_after_a_kill_9_the_next_daemon_restores_the_setting(topo, tmp_path):
    log = tmp_path / "pm.jsonl"
    d = _daemon("--paths", "p0c,p1c", "--netns", topo.cli, log=log)
    assert _wait_for(lambda: log.exists() and _pm(topo.cli) == "userspace"), "the daemon did not start"
    d.kill()  # SIGKILL: no chance to restore
    d.communicate(timeout=30)
    assert _pm(topo.cli) == "userspace"
    log.unlink()
    d = _daemon("--paths", "p0c,p1c", "--netns", topo.cli, log=log)
    assert _wait_for(lambda: log.exists() and _pm(topo.cli) == "userspace"), "the second daemon did not start"
    d.send_signal(signal.SIGTERM)
    _out, err = d.communicate(timeout=30)
    assert d.returncode == 0, err
    assert "ended without restoring net.mptcp.path_manager; set it back to kernel" in err, err
    # What the first one found, not the userspace it left.
    assert _pm(topo.cli) == "kernel"
    assert not system.state_file(topo.cli).exists()


def test_link_aware_backup_acts_on_a_fed_signal_and_the_feed_goes_with_the_daemon(topo, tmp_path):
    # A veth has no nl80211 station: --link-feed stands in (pm/feed.py). During an upload path 0's
    # signal is fed below link-aware-backup's leaving threshold (-66 dBm): the daemon sets the
    # backup flag on path 0's subflow (SET_FLAGS, accepted by the kernel) and the configured
    # backup path 1 is made regular; a fed carrier loss is heard though the veth stays up.
    sock = tmp_path / "feed.sock"

    def feed(rep: dict) -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(json.dumps(rep).encode(), str(sock))

    def signals() -> None:
        assert sock.exists(), "the daemon made no feed socket"
        time.sleep(1.5)
        feed({"interface": "p0c", "signal_dbm": -72.0, "mcs": 1})
        feed({"interface": "p0c", "up": "no"})  # refused, logged, the daemon goes on
        time.sleep(0.5)
        feed({"interface": "p0c", "up": False})

    recs = _upload_with_the_daemon(topo, tmp_path, "link-aware-backup", 4, signals, "--backup-paths", "1",
                                   "--link-feed", str(sock))
    assert not sock.exists(), "the feed's socket outlived the daemon"
    weak = next(r["t_s"] for r in recs if r["type"] == "link_quality" and r["signal_dbm"] == -72.0)
    acts = [r["action"] for r in recs if r["type"] == "action" and r["source"] == "policy" and r["t_s"] >= weak]
    assert {"kind": "set_backup", "path": 0} in acts and {"kind": "clear_backup", "path": 1} in acts, acts
    flags = [r for r in recs if r["type"] == "command" and r["command"]["command"] == "SET_FLAGS" and r["t_s"] >= weak]
    assert flags and all(r["ok"] for r in flags), flags
    assert [r["error"] for r in recs if r["type"] == "feed_error"] == ["up must be true or false (got 'no')"]
    assert any(r["type"] == "link" and not r["up"] for r in recs), "the fed carrier loss was not heard"
    assert _pm(topo.cli) == "kernel"
