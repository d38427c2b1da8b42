"""`mmpath emu run SCENARIO [--variant NAME] [--set KEY=VALUE ...] [--seed N] [--out DIR] [--no-capture]
[--kernel-trace] [--compare]`; `mmpath emu clean [--dry-run]` (what dead runs left, reaper.py).

Exit status: 0 when the emulation ran, 2 for a scenario, flag or machine it cannot run (one line
saying what is missing and what is allowed; nothing is written), 1 if iperf3 itself failed.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from ..cliargs import print_error
from ..spelling import CLI
from . import EmuError, pick_variant, run as emulate
from .compare import compare, format_rows, write

DEFAULT_OUT_ROOT = Path("mmpath-out") / "emu"


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "emu", help="run a scenario over the real Linux TCP/MPTCP in network namespaces (root)",
        description="The emulation engine: the scenario's paths as veth links shaped by their simulated "
                    "capacity over time, real iperf3 (made MPTCP by mptcpize) and tcpdump captures. docs/emulate.md.")
    sub = p.add_subparsers(dest="emu_command", metavar="COMMAND")
    r = sub.add_parser("run", help="emulate a scenario", description="Emulate a scenario (needs root).")
    r.add_argument("scenario", metavar="SCENARIO", help="scenario .toml file or bundled scenario name")
    r.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a scenario field by its dotted path (as `mmpath run --set`)")
    r.add_argument("--variant", metavar="NAME",
                   help="for a scenario with [[variant]] entries, the one to emulate (its overrides, then --set's)")
    r.add_argument("--seed", type=int, metavar="N", help="random seed of the channel (default: the scenario's)")
    r.add_argument("--out", metavar="DIR", help=f"output folder (default: {DEFAULT_OUT_ROOT}/<scenario name>)")
    r.add_argument("--no-capture", action="store_true", help="no tcpdump captures")
    r.add_argument("--compare", action="store_true",
                   help="also simulate the same scenario and seed, and print / write (compare.json, compare.png) "
                        "simulated vs emulated goodput, outage and recovery per flow")
    r.add_argument("--kernel-trace", action="store_true",
                   help="record the kernel's MPTCP scheduling passes, MPTCP timer and TCP retransmissions "
                        "(ftrace tracepoints) into kernel-trace.txt, and the receiving end's sockets with "
                        "their buffers (ss -tinm, ss -Minm) into receiver-ss.log, the sending end's into "
                        "sender-ss.log")
    r.set_defaults(func=run)
    c = sub.add_parser(
        "clean", help="remove what emulator runs that died left (namespaces, temporary folders)",
        description="Remove what emulator runs killed hard (kill -9, the OOM killer) left behind: their network "
                    "namespaces (with their veths, HTB qdiscs and NFQUEUE rules), the processes still in them, "
                    "their temporary and staging folders and kernel-trace instances. A run is dead when no process "
                    "has its PID with its start time; a running emulation's are kept. Lists each thing (needs root "
                    "but with --dry-run). `mmpath emu run` does the same before it starts.")
    c.add_argument("--dry-run", action="store_true", help="only list what would be removed")
    c.set_defaults(func=clean)
    p.set_defaults(func=_usage(p))
    return p


def _usage(p: argparse.ArgumentParser):
    def f(args: argparse.Namespace) -> int:
        p.print_usage(sys.stderr)
        print_error("error: emu needs a command (run, clean)")
        return 2
    return f


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def clean(args: argparse.Namespace) -> int:
    import os

    from . import reaper

    if os.geteuid() != 0 and not args.dry_run:
        print_error("error: emu clean needs root (network namespaces): run as root, or list with --dry-run")
        return 2
    removed, kept = reaper.clean(dry_run=args.dry_run)
    for line in removed + kept:
        print(line)
    if not removed:
        print("nothing to remove: no namespace, temporary folder or kernel-trace instance of a dead emulator run")
    return 0


def path_manager_line(pm: dict) -> str | None:
    """The run's path-manager daemon in one line (emu.json `path_manager`); None for the
    in-kernel path manager."""
    if pm.get("actions") is None:
        return None
    refused = sum(1 for c in pm.get("commands", []) if not c.get("ok"))
    line = (f"  path manager {pm['policy']} (mmpath-pm, pm-daemon.jsonl): {len(pm['actions'])} action(s), "
            f"{len(pm.get('commands', []))} command(s)" + (f", {refused} refused by the kernel" if refused else "")
            + f", {len(pm.get('links', []))} link change(s) heard")
    feed = pm.get("link_feed")
    if feed:
        late = feed["late_ms"]["max"]
        scans = sum((feed.get("scans_heard") or {}).values())
        line += (f"; {feed['sent']} of {feed['planned']} radio report(s) fed"
                 + (f" (at most {late:g} ms late)" if late is not None else "")
                 + (f", {scans} scan(s) heard" if scans else ""))
    return line


def run(args: argparse.Namespace) -> int:

    # A bad scenario or variant: one line, status 2, before anything is set up.
    sc = pick_variant(args.scenario, args.overrides, seed=args.seed, variant=args.variant, spelling=CLI)
    out = Path(args.out) if args.out else DEFAULT_OUT_ROOT / sc.name
    if args.variant is not None and not args.out:
        out = out / args.variant
    # `kill PID` (SIGTERM) or a closed terminal (SIGHUP) stops the run as Ctrl-C does: namespaces,
    # qdiscs and processes torn down, nothing written. Python's default would exit at once and
    # leave the namespaces and iperf3 behind.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        res = emulate(args.scenario, args.overrides, seed=args.seed, out=out, capture=not args.no_capture,
                      progress=True, kernel_trace=args.kernel_trace, variant=args.variant, spelling=CLI)
    except EmuError as e:
        if str(e).startswith("iperf3 failed") or str(e).startswith("iperf3 of flow"):
            print_error(f"error: {e}")
            return 1
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    m = res.meta
    dirs = " + ".join(sorted({f["direction"] for f in m["flows"]}))
    label = sc.name if args.variant is None else f"{sc.name} ({args.variant})"
    print(f"{label}: emulated {len(m['flows'])} flow(s), {dirs}, over "
          f"{', '.join(res.path_mbps)} on Linux {m['kernel']}")
    for f in m["flows"]:
        what = " ".join(str(x) for x in (f["kind"], f.get("cc")) if x)
        print(f"  {f['name']} ({what}): {f['goodput_mbps']:.1f} Mbit/s (iperf3)")
    if len(m["flows"]) > 1:
        print(f"  all flows: {res.goodput_mbps:.1f} Mbit/s")
    for name, mbps in res.path_mbps.items():
        print(f"  {name}: {mbps:.1f} Mbit/s sent (capacity mean {m['capacity_mean_mbps'][name]:.1f})")
    rtts = ", ".join(f"{n} {v:g} ms" for n, v in m["base_rtt_ms"]["emulated"].items())
    late = [q["late_max_us"] for q in m["delay_line"].get("queues", [])]
    access = ", ".join(f"{n} {v:g} ms" for n, v in (m.get("access_latency_ms") or {}).items())
    print(f"  base RTT: scenario {m['base_rtt_ms']['scenario']:g} ms; emulated {rtts}"
          + (f", with each radio's access latency both ways ({access})" if access else "")
          + (f" (delay line at most {max(late) / 1000:.2f} ms late)" if late else ""))
    for f in m["flows"]:
        if f.get("offered_mbps") and f["sent_mbps"] < 0.9 * f["offered_mbps"]:
            print_error(f"note: {f['name']}: iperf3 sent {f['sent_mbps']:.0f} of the {f['offered_mbps']:g} Mbit/s "
                        "asked: this machine's CPU, not the emulated link, limited it")
    if m.get("udp_receive_buffer_drops"):
        print_error(f"note: {m['udp_receive_buffer_drops']} UDP datagrams were dropped by the receiving socket "
                    "(buffer full: the receiving iperf3 fell behind on this machine's CPU), not by the emulated link")
    for name, h in m.get("holds", {}).items():
        what = {"scan": "dwell(s) off channel", "link down": "window(s) with the link down",
                "stall": "window(s) at rate 0"}.get(h["cause"], "window(s) with the link down or at rate 0")
        print(f"  {h['cause']} on {name}: {h['windows']} {what}, {h['off_s']:g} s in all, held by the delay "
              f"line ({h['packets_held'] or 0} packets released at a window's end)")
    for name, o in m.get("outages", {}).items():
        dropped = [w for w in o["windows"] if w["kind"] == "drop"]
        if dropped:
            err = o.get("max_error_ms")
            print(f"  drop on {name}: {len(dropped)} window(s) with the link down for real ({o['how']}), "
                  f"{sum(w['planned_s'][1] - w['planned_s'][0] for w in dropped):g} s in all"
                  + (f", at most {err:g} ms off the plan (ip monitor)" if err is not None else
                     ", not seen by the link monitor"))
    line = path_manager_line(m.get("path_manager") or {})
    if line:
        print(line)
    if m.get("kernel_trace"):
        kt = m["kernel_trace"]
        print(f"  kernel trace: {sum(kt['events'].values())} events in {kt['file']}"
              + (f" ({kt['lost_events']} lost: buffer full)" if kt["lost_events"] else ""))
    if "analysis_error" in m:
        print_error(f"analysis of the captures failed: {m['analysis_error']}")
    if args.compare:
        cmp = compare(sc, res)
        for line in format_rows(cmp):
            print(line)
        write(cmp, res, out)
    extra = ", kernel-trace.txt, receiver-ss.log, sender-ss.log" if m.get("kernel_trace") else ""
    extra += ", compare.json, compare.png" if args.compare else ""
    pcaps = "pcaps, ss.log, " if not args.no_capture else ""
    print(f"outputs: {out}/ (iperf3-<flow>.json, {pcaps}capacity-*.csv, emu.json{extra}, analysis/)")
    return 0
