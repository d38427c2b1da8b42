"""How soon a restored primary path carries traffic again: the in-kernel path manager against the
`mmpath-pm` daemon (docs/path-manager.md, "Measured"). Needs root.

The emulator's topology (python/mmpath/emu/netns.py: client, AP and server namespaces, one veth
pair per path, the in-kernel PM with a `subflow` endpoint on path 1), both paths shaped to the
same rate on the client's egress (tbf); an MPTCP iperf3 upload (mptcpize) from the client. At
--cut-at the primary (path 0) loses its link: the AP's end of its veth is set down, so the client's
interface loses carrier, as a Wi-Fi / 60 GHz interface does when its association is lost; --cut-s
later it comes back. The AP's receive counter of path 0 is read every 10 ms (rtnetlink, pyroute2).

`--cut beacon-loss` instead models a blocked 60 GHz link as mac80211 sees it: the path's packets
are lost at once (the AP drops what it forwards to and from the path, iptables), the client's
interface loses carrier only when the driver declares the link lost, after
IEEE80211_BEACON_LOSS_COUNT (7) missed beacons of 102.4 ms (net/mac80211/mlme.c; the policies'
`hold` cites the same fact), and at the return carrier and packets come back together.
`--cut remote` drops the packets only: the client's carrier never changes (a loss beyond the
client's radio, or a blockage its driver does not report), so the daemon hears nothing.

Measured, per run: `first_data_s`, the time from the link's return until path 0 has carried one
full-size segment (1500 bytes) more than at its return; `recovered_s`, until the first 50 ms bin
in which path 0 carries at least half its mean rate of the 2 s before the cut.

    sudo .venv/bin/python bench/pm_failback.py --runs 3 [--policy fast-failback] [--out FILE.json]

`--pm kernel` runs only the in-kernel PM, `--pm daemon` only the daemon; default both, alternating.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pyroute2 import IPRoute

from mmpath.emu import netns

ROOT = Path(__file__).resolve().parent.parent
BIN_S = 0.05
SAMPLE_S = 0.01


class Sampler(threading.Thread):
    """(monotonic time, rx_bytes of each interface) every SAMPLE_S, in a namespace."""

    def __init__(self, ns: str, ifnames: list[str]) -> None:
        super().__init__(daemon=True)
        self.ipr = IPRoute(netns=ns)
        self.index = [self.ipr.link_lookup(ifname=n)[0] for n in ifnames]
        self.samples: list[tuple[float, list[int]]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            t = time.monotonic()
            row = [self.ipr.get_links(i)[0].get_attr("IFLA_STATS64")["rx_bytes"] for i in self.index]
            self.samples.append((t, row))
            self.stop.wait(SAMPLE_S)
        self.ipr.close()


def _measure(samples: list[tuple[float, list[int]]], t_down: float, t_up: float) -> dict:
    ts = [t for t, _ in samples]
    b0 = [row[0] for _, row in samples]

    def bytes_at(t: float) -> float:
        # The counter at time t (linear between samples).
        for k in range(1, len(ts)):
            if ts[k] >= t:
                f = (t - ts[k - 1]) / (ts[k] - ts[k - 1]) if ts[k] > ts[k - 1] else 1.0
                return b0[k - 1] + f * (b0[k] - b0[k - 1])
        return b0[-1]

    pre_rate = (bytes_at(t_down) - bytes_at(t_down - 2.0)) / 2.0
    at_up = bytes_at(t_up)
    first = next((t - t_up for t, b in zip(ts, b0) if t >= t_up and b - at_up >= 1500), None)
    recovered = None
    t = t_up
    while t + BIN_S <= ts[-1]:
        if (bytes_at(t + BIN_S) - bytes_at(t)) / BIN_S >= 0.5 * pre_rate > 0:
            recovered = t + BIN_S - t_up
            break
        t += BIN_S / 5  # bins every 10 ms
    return {"pre_cut_mbps": round(pre_rate * 8 / 1e6, 1), "first_data_s": None if first is None else round(first, 3),
            "recovered_s": None if recovered is None else round(recovered, 3)}


BEACON_LOSS_S = 7 * 0.1024


def one_run(pm: str, policy: str, rate_mbit: int, cut_at: float, cut_s: float, total_s: float,
            log: Path | None, cut: str = "carrier", script: Path | None = None) -> dict:
    topo = netns.build(["primary", "secondary"], [1500, 1500], mptcp=True, backup=set())
    procs: list[subprocess.Popen] = []
    daemon = None
    try:
        for link in topo.paths:
            netns.sh("tc", "qdisc", "add", "dev", link.cli_if, "root", "tbf", "rate", f"{rate_mbit}mbit",
                     "burst", "64kb", "latency", "100ms", ns=topo.cli)
        procs.append(subprocess.Popen(["ip", "netns", "exec", topo.srv, "mptcpize", "run", "iperf3", "-s", "-1"],
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        if pm == "daemon":
            cmd = [sys.executable, *(["-m", "mmpath.pm.cli"] if script is None else [str(script)]), "--policy", policy, "--paths", "p0c,p1c",
                   "--netns", topo.cli] + (["--log", str(log)] if log else [])
            daemon = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            end = time.monotonic() + 20
            while netns.sh("sysctl", "-n", "net.mptcp.path_manager", ns=topo.cli).strip() != "userspace":
                if daemon.poll() is not None or time.monotonic() > end:
                    raise SystemExit(f"the daemon did not start: {daemon.communicate()[1].strip()}")
                time.sleep(0.05)
        time.sleep(0.5)  # the server listening
        sampler = Sampler(topo.ap, [topo.paths[0].ap_if, topo.paths[1].ap_if])
        sampler.start()
        t0 = time.monotonic()
        client = subprocess.Popen(["ip", "netns", "exec", topo.cli, "mptcpize", "run", "iperf3", "-c",
                                   netns.SERVER_ADDR, "-t", str(total_s)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        procs.append(client)
        ap_if = topo.paths[0].ap_if
        drops = [["FORWARD", "-i", ap_if, "-j", "DROP"], ["FORWARD", "-o", ap_if, "-j", "DROP"]]
        time.sleep(max(0.0, t0 + cut_at - time.monotonic()))
        if cut in ("beacon-loss", "remote"):
            for rule in drops:
                netns.sh("iptables", "-I", *rule, ns=topo.ap)
            t_down = time.monotonic()
            if cut == "beacon-loss":
                time.sleep(max(0.0, t_down + BEACON_LOSS_S - time.monotonic()))
                netns.sh("ip", "link", "set", ap_if, "down", ns=topo.ap)
        else:
            netns.sh("ip", "link", "set", ap_if, "down", ns=topo.ap)
            t_down = time.monotonic()
        time.sleep(max(0.0, t_down + cut_s - time.monotonic()))
        if cut in ("beacon-loss", "remote"):  # the drops go first: the carrier's return is the link's
            for rule in drops:
                netns.sh("iptables", "-D", *rule, ns=topo.ap)
        if cut != "remote":
            netns.sh("ip", "link", "set", ap_if, "up", ns=topo.ap)
        t_up = time.monotonic()
        _, err = client.communicate(timeout=total_s + 30)
        sampler.stop.set()
        sampler.join()
        if client.returncode != 0:
            raise SystemExit(f"iperf3 failed: {err.strip()}")
        out = {"pm": pm if pm == "kernel" else f"daemon:{policy}", "cut": cut, **_measure(sampler.samples, t_down, t_up),
               "cut_at_s": round(t_down - t0, 3), "cut_s": round(t_up - t_down, 3)}
        return out
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=30)
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        netns.teardown(topo)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pm", choices=("both", "kernel", "daemon"), default="both")
    ap.add_argument("--policy", default="fast-failback")
    ap.add_argument("--rate-mbit", type=int, default=100, help="each path's rate (tbf on the client's egress)")
    ap.add_argument("--cut", choices=("carrier", "beacon-loss", "remote"), default="carrier")
    ap.add_argument("--cut-at", type=float, default=4.0)
    ap.add_argument("--cut-s", type=float, default=5.0)
    ap.add_argument("--total-s", type=float, default=14.0)
    ap.add_argument("--daemon-script", type=Path,
                    help="run this script (mmpath-pm's command line) instead of `python -m mmpath.pm.cli`")
    ap.add_argument("--log-dir", type=Path, help="keep each daemon run's --log here")
    ap.add_argument("--out", type=Path, help="write the rows as JSON")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("pm_failback: needs root (network namespaces)", file=sys.stderr)
        return 2
    kinds = ["kernel", "daemon"] if a.pm == "both" else [a.pm]
    rows = []
    for k in range(a.runs):
        for pm in kinds:
            log = a.log_dir / f"{pm}-{k}.jsonl" if a.log_dir and pm == "daemon" else None
            if log:
                a.log_dir.mkdir(parents=True, exist_ok=True)
            row = one_run(pm, a.policy, a.rate_mbit, a.cut_at, a.cut_s, a.total_s, log, a.cut, a.daemon_script)
            rows.append(row)
            print(json.dumps(row), flush=True)
    for pm in sorted({r["pm"] for r in rows}):
        rec = [r["recovered_s"] for r in rows if r["pm"] == pm]
        print(f"{pm}: recovered_s {rec}; first_data_s {[r['first_data_s'] for r in rows if r['pm'] == pm]}")
    if a.out:
        a.out.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
