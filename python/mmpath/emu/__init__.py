"""The emulation engine (`mmpath emu run`): the same scenario over the real Linux kernel's TCP and
MPTCP, in network namespaces, with real iperf3 and real captures.

    import mmpath.emu
    res = mmpath.emu.run("blockage", overrides={"flow.0.kernel": "linux-upstream",
                                                "flow.0.scheduler": "default"}, out="emu-out")
    res.goodput_mbps, res.path_mbps, res.intervals      # from iperf3 -J and the interfaces
    res.flows["download"].goodput_mbps                  # each flow, from its own iperf3
    res.analysis                                        # mmpath.analyze on iperf3-*.json + pcaps
    mmpath.emu.run("cc-blockage", variant="bbr", ...)   # one [[variant]] of a variant scenario

How: each path's capacity over time comes from the scenario's own link model (capacity.py: the
simulator saturates the path alone), a trace-driven HTB shaper replays it on the path's veth
(shaper.py), and iperf3 runs between a server and a client namespace (netns.py, traffic.py). What
the machine and the scenario must allow: checks.py. docs/emulate.md.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..analyze import analyze, iperf3
from ..capture import Sampler
from ..errors import ScenarioError
from ..lazy import pandas as pd  # on first use (start-up time): lazy.py
from ..outputs import staged_folder
from ..progress import Progress
from ..scenario import Overrides, ScenarioSpec, load_scenario, one_variant
from ..spelling import PYTHON, Spelling
from . import (capacity, checks, delay, drops, gso, holds, ktrace, linkfeed, loss, netns, pmdaemon, reaper, resets,
               shaper, tcpconf, traffic)
from .errors import EmuError

__all__ = ["EmuError", "EmuResult", "FlowResult", "run"]

# How often the sender's sockets are sampled with `ss -tinO` when capturing (each ss run costs a
# few ms of CPU on this machine; 50 ms resolves a 200 ms RTO backoff step).
SS_INTERVAL_S = 0.05
# With hold windows (a scan), the shaper's bin 0 is set this far ahead so that the delay line,
# which must know that origin when it starts, is running before it (it starts in ~50 ms).
HOLD_LEAD_S = 1.0



@dataclass
class FlowResult:
    """One flow as its iperf3 client saw it: `intervals` on the scenario's clock (the flow's
    start_s added to iperf3's own)."""
    name: str
    kind: str
    goodput_mbps: float
    intervals: pd.DataFrame


@dataclass
class EmuResult:
    scenario: Any
    goodput_mbps: float  # one flow: iperf3's; several: all bytes received / (last stop - first start)
    path_mbps: dict[str, float]
    intervals: pd.DataFrame  # all flows together, per 100 ms
    capacities: dict[str, capacity.Capacity]
    meta: dict[str, Any] = field(default_factory=dict)
    analysis: Any = None
    out: Path | None = None
    flows: dict[str, FlowResult] = field(default_factory=dict)


def _together(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """The flows' intervals summed per 100 ms bin of the scenario's clock."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=["t_s", "bytes", "mbps"])
    if len(frames) == 1:
        return frames[0]
    d = pd.concat(frames)
    d["t_s"] = (d["t_s"] / 0.1).round().astype(int) * 0.1
    return d.groupby("t_s", as_index=False)[["bytes", "mbps"]].sum()


def _span(f: dict[str, Any], duration_s: float) -> tuple[float, float]:
    start = float(f.get("start_s") or 0.0)
    stop = float(f.get("stop_s") or duration_s)
    return start, stop


def run(scenario: ScenarioSpec, overrides: Overrides = None, seed: int | None = None,
        out: str | os.PathLike | None = None, capture: bool = True, progress: bool = False,
        kernel_trace: bool = False, variant: str | None = None, spelling: Spelling = PYTHON) -> EmuResult:
    """Emulates `scenario`; `progress` shows the elapsed real time on stderr when it is a terminal;
    `kernel_trace` records the kernel's MPTCP/TCP tracepoints into kernel-trace.txt (ktrace.py);
    `variant` names the [[variant]] to emulate (required, and only allowed, when the scenario has
    variants: the kernel runs one configuration at a time); `spelling`: errors name the Python
    arguments (`mmpath emu run` passes spelling.CLI)."""
    sc = pick_variant(scenario, overrides, seed, variant, spelling)
    cfg = sc.config
    flows = checks.scenario(cfg)
    kinds = {f["kind"] for f in flows}
    # Each path's one-way delay: its propagation (the backbone's and its own `delay_ms`) and, on
    # a radio path, the time its MAC takes to put a frame on the air, which the shaper's rate
    # does not carry (capacity.access_latency_us: the simulator's, probed on an idle channel).
    data_dir = "download" if any(f.get("direction", "download") == "download" for f in flows) else "upload"
    access_us = [capacity.access_latency_us(cfg, i, data_dir, sc.seed) for i in range(len(cfg["path"]))]
    delays_us = [d + a for d, a in zip(delay.one_way_us(cfg), access_us)]
    # A scanned path's dwells off channel and a wired path's down steps, held by the delay line
    # (holds.py), both ways.
    holds_ns = holds.holds_ns(cfg, sc.duration_s)
    # A wired path's trace or schedule taking the link down or stalling it (rate 0): held too
    # (its windows from the simulator's record of the path, which has its schedule's in them).
    holds_ns.update(holds.wired_stall_windows_ns(cfg, sc.duration_s))
    # A wired path's `drop` outages (schedule steps up = false, drop = true): not held, the
    # path's link is taken down through them (drops.py).
    drops_ns = holds.drops_ns(cfg, sc.duration_s)
    # A wired path's `reset` steps: its TCP connections reset by an nft rule at the AP (resets.py).
    resets_s = resets.plan(cfg, sc.duration_s)
    checks.machine(need_mptcp="mptcp" in kinds, need_delay=any(d > 0 for d in delays_us) or bool(holds_ns),
                   need_cut=any(drops_ns.values()) or bool(resets_s))
    if kernel_trace:
        ktrace.check()
    _remove_dead_runs()
    directions = sorted({f.get("direction", "download") for f in flows})
    for i, f in enumerate(flows):
        start, stop = _span(f, sc.duration_s)
        if stop - start < 1.0:
            raise EmuError(f"flow.{i}: {stop - start:g} s of traffic is too short to emulate (allowed: at least 1 s)")

    paths = cfg["path"]
    names = [str(p["name"]) for p in paths]
    # The capacity without what is held (scans, wired down steps and stalls, and a wired trace's
    # downs and stalls): held, not shaped (holds.without_held). The run's record and watchdog
    # (reaper.py) from here on, its temporary folders named after it: a hard kill leaves nothing.
    with reaper.Guard() as guard:
        with tempfile.TemporaryDirectory(prefix=f"{guard.owner.tag}-probe-") as probe_dir:
            probe_cfg = holds.without_held(cfg, holds.traced_wired_probes(cfg, sc.duration_s, probe_dir))
            caps = _capacities(probe_cfg, names, directions, sc.duration_s, sc.seed,
                               tcp={n: _tcp_span(flows, n, names, sc.duration_s) for n in names})
        mtus = [int(p.get("mtu_bytes") or 1500) for p in paths]
        backup: set[str] = set()
        mp = next((f for f in flows if f["kind"] == "mptcp"), None)
        if mp is not None:
            # The normalized scenario lists them for either mode (backup: all but the first path by
            # default; fullmesh: the ones given, e.g. a full mesh with an 11ac backup subflow).
            backup = set(mp.get("backup_paths") or (names[1:] if mp.get("mode") == "backup" else []))

        out_path = Path(out) if out is not None else None
        # Written into a staging folder that replaces `out` only when everything worked (nothing
        # half-written); without `out`, a temporary folder that goes away.
        with (staged_folder(out_path) if out_path is not None
              else tempfile.TemporaryDirectory(prefix=f"{guard.owner.tag}-run-")) as tmp:
            tmp = Path(tmp)
            guard.add_folder(tmp)
            bar = Progress(max(stop for _, stop in (_span(f, sc.duration_s) for f in flows)), enabled=progress,
                           label="emulating")
            try:
                res = _emulate(sc, cfg, flows, names, mtus, backup, caps, directions, tmp, capture, delays_us, bar,
                               kernel_trace, holds_ns, drops_ns, resets_s, access_us)
            finally:
                bar.close()
            if variant is not None:
                res.meta = {"scenario": res.meta["scenario"], "variant": variant, **res.meta}
            if out_path is not None:
                def write_meta() -> None:
                    (tmp / "emu.json").write_text(json.dumps(res.meta, indent=2, default=str) + "\n",
                                                  encoding="utf-8")

                # The folder is analyzed as `mmpath analyze DIR` reads an emulator folder
                # (analyze/sources.py emu_folder): iperf3 clients, captures, ss.log, and the
                # capacity traces placed at the shaper's start (emu.json t0_unix), so the report
                # shades the outages under the traffic.
                write_meta()
                try:
                    res.analysis = analyze([str(tmp)], out=tmp / "analysis", names_relative_to=tmp)
                except Exception as e:  # noqa: BLE001 - the raw outputs stand without the analysis
                    res.meta["analysis_error"] = f"{type(e).__name__}: {' '.join(str(e).split())}"
                    write_meta()
                res.out = out_path
        return res


def pick_variant(scenario: ScenarioSpec, overrides: Overrides = None, seed: int | None = None,
                 variant: str | None = None, spelling: Spelling = PYTHON) -> Any:
    """The scenario to emulate: the file with the user's overrides or, for a scenario with
    [[variant]] entries, the variant named `variant` (its overrides, then the user's, as `mmpath
    run` compares them). EmuError when a variant scenario gets no `variant`, or an unknown one."""
    if variant is None:
        sc = load_scenario(scenario, overrides, seed=seed, spelling=spelling)
        names = [n for n, _ in sc.variants]
        if names:
            raise EmuError(f"{sc.source}: has [[variant]] entries ({', '.join(names)}); the emulator runs one at a "
                           f"time: pick one, e.g. {spelling.variant(names[0])}")
        return sc

    # Only the picked variant is loaded (with the user's --set on top, which may not suit the others).
    try:
        return one_variant(scenario, overrides, seed, variant, spelling)
    except ScenarioError as e:
        raise EmuError(str(e)) from None


def _remove_dead_runs() -> None:
    """Removes what earlier runs that died (a hard kill whose watchdog died too) left, saying so
    on stderr: their namespaces, temporary folders and kernel-trace instances (reaper.clean)."""
    removed, _ = reaper.clean()
    for line in removed:
        print(f"mmpath emu: {line}", file=sys.stderr)


def _tcp_span(flows: list[dict[str, Any]], path: str, names: list[str],
              duration_s: float) -> tuple[float, float] | None:
    """When TCP's ACKs load `path`: from the first start to the last stop of the TCP and MPTCP
    flows that use it (None: no TCP on it). A flow without `path` takes the first path."""
    spans = []
    for f in flows:
        if f["kind"] == "udp":
            continue
        if path in holds.flow_paths(f, names[0]):
            spans.append(_span(f, duration_s))
    if not spans:
        return None
    return min(a for a, _ in spans), max(b for _, b in spans)


def _capacities(cfg: dict[str, Any], names: list[str], directions: list[str], duration_s: float, seed: int,
                tcp: dict[str, tuple[float, float] | None]) -> dict[str, dict[str, capacity.Capacity]]:
    """Per path, its capacity in each direction the flows use: one direction alone, or both
    sharing the radio (capacity.probe_both); TCP's ACK load over `tcp`'s span for the path."""
    if len(directions) == 1:
        d = directions[0]
        return {n: {d: capacity.probe(cfg, i, d, duration_s, seed, tcp=tcp[n])} for i, n in enumerate(names)}
    out = {}
    for i, n in enumerate(names):
        down, up = capacity.probe_both(cfg, i, duration_s, seed, tcp=tcp[n])
        out[n] = {"download": down, "upload": up}
    return out


def _cap_key(name: str, direction: str, both: bool) -> str:
    """How a path's capacity and rate are named in the outputs: the path's name, with the
    direction after a slash when flows go both ways."""
    return f"{name}/{direction}" if both else name


def _holds(cfg: dict[str, Any], names: list[str], holds_ns: dict[int, list[tuple[int, int]]],
           delay_stats: dict[str, Any]) -> dict[str, Any]:
    """Per path with hold windows: why (`scan`: dwells off channel; `link down`, `stall` or
    `link down and stall`: a wired path's schedule steps up = false or rate 0; `trace`: a wired
    path's trace taking it down or to rate 0, with its schedule's steps), their count, the time
    held in all, the first and last, and the packets the delay line held past their due time for
    them (holds.hold_cause)."""
    # A path's queue in each line that delays it (two with the server in the AP's namespace:
    # delay.py): the same windows, the packets held added.
    by_queue: dict[Any, dict[str, Any]] = {}
    for q in delay_stats.get("queues", []):
        seen = by_queue.get(q.get("queue"))
        by_queue[q.get("queue")] = dict(q) if seen is None else \
            {**seen, "held_by_window": (seen.get("held_by_window") or 0) + (q.get("held_by_window") or 0)}
    out = {}
    for i, w in sorted(holds_ns.items()):
        q = by_queue.get(i, {})
        cause = holds.hold_cause(cfg["path"][i])
        out[names[i]] = {"cause": cause, "windows": len(w), "off_s": sum(b - a for a, b in w) / 1e9,
                         "first_s": [w[0][0] / 1e9, w[0][1] / 1e9], "last_s": [w[-1][0] / 1e9, w[-1][1] / 1e9],
                         "windows_in_line": q.get("hold_windows"), "packets_held": q.get("held_by_window")}
    return out


def _outages(cfg: dict[str, Any], names: list[str], until_s: float, drops_ns: dict[int, list[tuple[int, int]]],
             measured: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """Per wired path with outages of its schedule (up = false .. up = true) or a dropping
    trace: their kinds, and per window, in time order, its kind and planned times; a drop
    window with what the link monitors measured (drops.LinkDrops.record), a hold window applied
    by the delay line on its own clock (its lateness: `delay_line`)."""
    out = {}
    for i, p in enumerate(cfg["path"]):
        held = [(a, b) for a, b, k in holds.outages_ns(p, until_s) if k == "hold"]
        dropped = drops_ns.get(i, [])
        if not held and not dropped:
            continue
        got = (measured.get(i) or {}).get("windows") or []
        rows = [{"kind": "hold", "planned_s": [a / 1e9, b / 1e9], "applied_by": "delay line"} for a, b in held]
        rows += [{"kind": "drop", **(got[j] if j < len(got) else {"planned_s": [a / 1e9, b / 1e9]})}
                 for j, (a, b) in enumerate(dropped)]
        rows.sort(key=lambda r: r["planned_s"][0])
        entry: dict[str, Any] = {"kinds": sorted({r["kind"] for r in rows}), "windows": rows}
        if i in measured:
            entry.update({k: v for k, v in measured[i].items() if k not in ("kind", "windows")})
        out[names[i]] = entry
    return out


def _shape_backbone(topo: netns.Topology, cfg: dict[str, Any]) -> None:
    """A backbone slower than 10 GbE is shaped at its rate, both ways, with its queue. At 10 GbE it
    is left alone: it is not the bottleneck for any radio here, and this machine's veth
    forwarding tops out near 3 Gbit/s anyway."""
    bb = cfg.get("backbone") or {}
    rate = float(bb.get("rate_mbps") or 0.0)
    if not bb.get("enabled", True) or rate <= 0 or rate >= 10_000:
        return
    mtu = int(bb.get("mtu_bytes") or 1500)
    qbytes = max(int(bb.get("queue_bytes") or 1000 * mtu), 2 * shaper.GSO_MAX_BYTES)
    for ns, ifname in ((topo.srv, "bb0"), (topo.ap, "bb1")):
        shaper.install(ns, ifname, rate, mtu, qbytes, True)


def _stop_samplers(*samplers: Sampler | None) -> None:
    """Stops the `ss` samplers that were started (each writes its last sample and closes)."""
    for smp in samplers:
        if smp is not None:
            smp.stop.set()
            smp.join(timeout=5)


def _emulate(sc, cfg, flows, names, mtus, backup, caps, directions, tmp: Path, capture: bool,
             delays_us: list[int], bar: Progress, kernel_trace: bool = False,
             holds_ns: dict[int, list[tuple[int, int]]] | None = None,
             drops_ns: dict[int, list[tuple[int, int]]] | None = None,
             resets_s: dict[int, list[float]] | None = None,
             access_us: list[int] | None = None) -> EmuResult:
    mptcp = any(f["kind"] == "mptcp" for f in flows)
    (tmp / "scenario.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    both = len(directions) > 1
    for n, by_dir in caps.items():
        for d, c in by_dir.items():
            (tmp / f"capacity-{_cap_key(n, d, both).replace('/', '-')}.csv").write_text(c.csv(), encoding="utf-8")
    mp = next((f for f in flows if f["kind"] == "mptcp"), None)
    bb = cfg.get("backbone") or {}
    bb_on = bool(bb.get("enabled", True))
    bb_mtu = int(bb.get("mtu_bytes") or 9000) if bb_on else None
    # No backbone: the simulator's server is at the AP, so the emulator's runs in the AP's
    # namespace, where the path's queue is its own (netns.py).
    topo = netns.build(names, mtus, mptcp=mptcp, backup=backup, mptcp_paths=(mp or {}).get("paths") or None,
                       backbone_mtu=bb_mtu, colocated=not bb_on)
    shp = None
    trace = ktrace.KernelTrace() if kernel_trace else None
    trace_meta: dict[str, Any] | None = None
    holds_ns = holds_ns or {}
    line = delay.DelayLine(topo, delays_us, holds_ns, drops_ns)
    downs = drops.LinkDrops(topo, drops_ns or {})
    rst = resets.PathResets(topo, resets_s or {}, mptcp)
    reset_rec: dict[str, Any] = {}
    outages: dict[int, dict[str, Any]] = {}
    # The flow's path-manager policy other than the in-kernel one: the daemon in the client's
    # namespace (pmdaemon.py), its backup paths the ones netns.build flagged.
    # Its radio paths' association, signal and MCS come from the channel the capacities were
    # probed with (linkfeed.py): a veth has neither.
    pm = pmdaemon.PmDaemon(topo, pmdaemon.policy(mp), [lk.index for lk in topo.paths if lk.name in backup], tmp,
                           linkfeed.plan(cfg, topo, caps))
    servers: list[subprocess.Popen] = []
    udp_drops = 0
    clients: list[traffic.Client] = []
    caps_running: list = []
    probes: list = []
    ss = None
    rss = sss = None
    spans = [_span(f, sc.duration_s) for f in flows]
    try:
        # Before any socket exists: each is born with its namespace's default (tcpconf.py).
        tcp_set: dict[str, Any] = tcpconf.apply_default_cc(topo, flows)
        for f in flows:
            tcp_set.update(tcpconf.apply(topo, f))
        _shape_backbone(topo, cfg)
        lossy = loss.install(topo, cfg)
        if not line.timed():
            line.start()
        targets = []
        shaped_keys: list[str | None] = []  # per target: its path/direction name if its rate is shaped
        # Per scanned path: its interfaces, both ways, paused through its dwells (shaper.py).
        pauses: list[tuple[list[tuple[str, str, int, int]], list[tuple[float, float]]]] = []
        senders: list[tuple[str, str, int, float | None]] = []
        bursts: dict[str, int] = {}
        silent: set[tuple[str, str]] = set()
        for link, p in zip(topo.paths, cfg["path"]):
            windows = holds_ns.get(link.index)
            if windows:
                pauses.append(([], [(a / 1e9, b / 1e9) for a, b in windows]))
            qbytes = max(int(p.get("queue_bytes") or 1000 * link.mtu), 2 * shaper.GSO_MAX_BYTES)
            path_caps = caps[link.name]
            for d in ("download", "upload"):
                # Data leaves the AP toward the client (download) or the client toward the AP
                # (upload). A direction no flow uses is not shaped but has the same gate: a
                # blocked link carries nothing either way.
                ns, ifname = (topo.ap, link.ap_if) if d == "download" else (topo.cli, link.cli_if)
                cap = path_caps.get(d)
                shaped = cap is not None
                if cap is None:
                    cap = next(iter(path_caps.values()))
                up0 = bool(cap.mbps[0] > 0)
                # The server's own interface (the server in the AP's namespace): a link down
                # loses what it is given without telling the socket (shaper.py).
                if topo.colocated and d == "download":
                    silent.add((ns, ifname))
                shaper.install(ns, ifname, float(cap.mbps[0]) if shaped else shaper.GATE_MBPS, link.mtu, qbytes,
                               up0, pausable=bool(windows), silent=(ns, ifname) in silent)
                if windows:
                    pauses[-1][0].append((ns, ifname, link.mtu, qbytes))
                if shaped:
                    shaper.check_installed(ns, ifname)
                targets.append((ns, ifname, cap, link.mtu, qbytes, shaped))
                shaped_keys.append(_cap_key(link.name, d, both) if shaped else None)
                if shaped:
                    # The interface this direction's data leaves its sender by (gso.py): the
                    # server's backbone for a download (the path's own with the server at the
                    # AP), the client's own for an upload.
                    out_if = (link.ap_if if topo.colocated else "bb0") if d == "download" else link.cli_if
                    senders.append((topo.srv if d == "download" else topo.cli, out_if, link.mtu,
                                    gso.typical_rate_mbps(cap.mbps)))
                    bursts[_cap_key(link.name, d, both)] = shaper.burst_bytes(float(cap.mbps[0]), link.mtu)
        # Packets no larger than ~1 ms of their path (gso.py), before any socket connects.
        segs = gso.apply(gso.plan(senders))
        logs = [tmp / f"iperf3-{f['name']}.json" for f in flows]
        pm.start()
        for i, f in enumerate(flows):
            servers.append(traffic.start_server(topo, f["kind"] == "mptcp", tmp / f"iperf3-{f['name']}-server.json",
                                                traffic.PORT + i))
        # Where each flow's iperf3 clock starts (traffic.ClockProbe); started with the captures,
        # whose wait for tcpdump's socket they share.
        probes = [traffic.ClockProbe(topo, traffic.PORT + i) for i in range(len(flows))]
        caps_running = traffic.start_captures(topo, tmp) if capture else []
        if not capture:
            time.sleep(traffic.LISTEN_S)
        # The sender's TCP state (cwnd, RTT, RTO of every subflow), as `mmpath capture` samples it.
        if capture:
            senders = [topo.srv if d == "download" else topo.cli for d in directions]
            ss = Sampler("ss", [["ip", "netns", "exec", ns, "ss", "-tinO"] for ns in senders], tmp / "ss.log",
                         SS_INTERVAL_S)
            ss.start()
        before = {(t[0], t[1]): netns.tx_bytes(t[0], t[1]) for t in targets if t[5]}
        if trace is not None:
            # The receiving end's sockets with their memory (`ss -tinmO`: each subflow's buffer,
            # rb in skmem, and rcv_ssthresh; `ss -MinmO`: the MPTCP connection's): what bounds
            # the windows the receiver offers (docs/emulate.md, step 8).
            receivers = dict.fromkeys(topo.cli if d == "download" else topo.srv for d in directions)
            argvs = [["ip", "netns", "exec", ns, "ss", opt] for ns in receivers for opt in ("-tinmO", "-MinmO")]
            rss = Sampler("ss-receiver", argvs, tmp / "receiver-ss.log", SS_INTERVAL_S)
            rss.start()
            # The sending end's too: each subflow's send buffer (tb in skmem) and the MPTCP
            # connection's queued bytes (w), which decide when its writer wakes.
            senders_ns = dict.fromkeys(topo.srv if d == "download" else topo.cli for d in directions)
            argvs = [["ip", "netns", "exec", ns, "ss", opt] for ns in senders_ns for opt in ("-tinmO", "-MinmO")]
            sss = Sampler("ss-sender", argvs, tmp / "sender-ss.log", SS_INTERVAL_S)
            sss.start()
            trace.start()
        shp = shaper.Shaper(targets, pauses, silent)
        if holds_ns or downs.needed() or rst.needed():
            # The hold and drop windows are on the shaper's clock: its bin 0 is set a little
            # ahead and given to the delay line (as CLOCK_REALTIME, read together with the
            # monotonic clock), which must be running before it, as must the link monitors of
            # the drops (drops.py).
            t0 = time.monotonic() + HOLD_LEAD_S
            downs.prepare()
            rst.prepare()
            if line.timed():
                origin_unix_ns = time.time_ns() + round((t0 - time.monotonic()) * 1e9)
                line.start(origin_unix_ns)
            if time.monotonic() > t0:
                raise EmuError(f"the delay line or the link monitors took more than {HOLD_LEAD_S:g} s to start "
                               "(the machine is overloaded?): the hold and drop windows would start late")
            shp.start(t0)
            downs.start(t0)
            rst.start(t0)
        else:
            t0 = shp.start()
        pm.start_feed(t0)
        # The shaper's bin 0 on the wall clock: where the capacity traces sit among the captures.
        t0_unix = time.time() - (time.monotonic() - t0)
        clients = [traffic.Client(traffic.client_cmd(topo, f, stop - start, log, traffic.PORT + i), t0 + start,
                                  stop - start + 30)
                   for i, (f, (start, stop), log) in enumerate(zip(flows, spans, logs))]
        for c in clients:
            c.start()
        while any(c.is_alive() for c in clients):
            bar.update(time.monotonic() - t0)
            time.sleep(0.2)
        wall = time.monotonic() - t0
        if trace is not None:
            trace_meta = trace.stop(tmp / "kernel-trace.txt")
        shp.stop()
        outages = downs.stop()
        reset_rec = rst.stop()
        pm.stop()
        delay_stats = line.stop()
        after = {(t[0], t[1]): netns.tx_bytes(t[0], t[1]) for t in targets if t[5]}
        notes = traffic.stop_captures(caps_running)
        caps_running = []
        clock_unix = [pr.unix_s() for pr in probes]
        probes = []
        _stop_samplers(ss, rss, sss)
        ss = rss = sss = None
        counters = {"server": netns.mptcp_counters(topo.srv), "client": netns.mptcp_counters(topo.cli)} \
            if mptcp else {}
        udp_drops = sum(netns.udp_rcvbuf_errors(ns) for ns in {topo.cli if f.get("direction", "download") ==
                                                                "download" else topo.srv
                                                                for f in flows if f["kind"] == "udp"})
        for srv in servers:
            try:
                srv.wait(timeout=10)
            except subprocess.TimeoutExpired:
                srv.kill()
        docs = []
        for f, c, log in zip(flows, clients, logs):
            if c.timed_out or c.result is None:
                raise EmuError(f"iperf3 of flow {f['name']!r} did not finish within {c.timeout_s:g} s")
            doc = iperf3.report_or_empty(log)
            if c.result.returncode != 0 or "error" in doc:
                why = doc.get("error") or " ".join((c.result.stderr or c.result.stdout).split())
                raise EmuError(f"iperf3 failed for flow {f['name']!r}: {why}")
            docs.append(doc)
    finally:
        # Whatever stopped the run (an error, Ctrl-C), nothing it started outlives it.
        for c in clients:
            c.kill()
        if caps_running:
            traffic.stop_captures(caps_running, flush_s=0)
        for pr in probes:
            pr.unix_s()
        _stop_samplers(ss, rss, sss)
        if trace is not None:
            trace.close()
        if shp is not None:
            shp.stop()
        downs.stop()
        rst.stop()
        pm.stop()
        line.kill()
        for srv in servers:
            if srv.poll() is None:
                srv.kill()
        netns.teardown(topo)
    active_s = max(stop for _, stop in spans) - min(start for start, _ in spans)
    path_mbps = {key: (after[(t[0], t[1])] - before[(t[0], t[1])]) * 8 / 1e6 / active_s
                 for key, t in zip(shaped_keys, targets) if key is not None}
    # iperf3's t = 0 on the scenario's clock: its first data packet (traffic.ClockProbe), else
    # the flow's start (when the client was started: early by the control exchange).
    clock_s = [start if u is None else u - t0_unix for u, (start, _) in zip(clock_unix, spans)]
    results = {f["name"]: FlowResult(name=f["name"], kind=f["kind"], goodput_mbps=iperf3.goodput_mbps(doc, f["kind"] == "udp"),
                                     intervals=iperf3.interval_sums(doc, at))
               for f, doc, at in zip(flows, docs, clock_s)}
    # One flow: iperf3's own figure. Several: everything received over the span from the first
    # start to the last stop (the flows' own means cover different spans and do not add up).
    total = next(iter(results.values())).goodput_mbps if len(results) == 1 else \
        sum(iperf3.received_bytes(doc, f["kind"] == "udp") for f, doc in zip(flows, docs)) * 8 / 1e6 / active_s
    meta = {
        "scenario": sc.name,
        "seed": sc.seed,
        "engine": "emulation",
        "kernel": platform.release(),
        # The namespaces built (netns.py): the server behind the AP over a backbone veth, or in
        # the AP's namespace when the scenario disables the backbone.
        "topology": {"server": topo.layout, "namespaces": [ns.rsplit("-", 1)[-1] for ns in topo.namespaces]},
        "flows": [{**{k: f.get(k) for k in ("name", "kind", "cc", "direction", "mode", "start_s", "stop_s")},
                   "goodput_mbps": results[f["name"]].goodput_mbps,
                   # Where its iperf3 intervals start on the scenario's clock: the first data
                   # packet (null: none seen, the intervals start at start_s).
                   "iperf3_clock_s": None if u is None else round(u - t0_unix, 6),
                   **({"offered_mbps": float(f["rate_mbps"]), "sent_mbps": iperf3.sent_mbps(doc)}
                      if f["kind"] == "udp" and f.get("rate_mbps") else {})}
                  for f, doc, u in zip(flows, docs, clock_unix)],
        "base_rtt_ms": {"scenario": checks.base_rtt_ms(cfg),
                        "emulated": {n: 2 * us / 1000.0 for n, us in zip(names, delays_us)},
                        "note": "plus ~0.05 ms of veth forwarding; the delay line's lateness is in delay_line"},
        # Per radio path, the one-way time its MAC takes on an idle channel (simulated: capacity.
        # access_latency_us), held by the delay line both ways on top of the propagation delay.
        "access_latency_ms": {n: us / 1000.0 for n, us, p in zip(names, access_us or [], cfg["path"])
                              if not holds.is_wired(p)},
        "delay_line": delay_stats,
        "tcp_settings": tcp_set,
        # Paths with random frame loss (loss.py): loss_pct per path name.
        "loss_pct": lossy,
        "goodput_mbps": total,
        "path_mbps": path_mbps,
        "capacity_mean_mbps": {_cap_key(n, d, both): float(c.mbps.mean())
                               for n, by_dir in caps.items() for d, c in by_dir.items()},
        "capacity_bin_s": capacity.BIN_S,
        # A scanned path's dwells off channel and a wired path's down steps: the delay line held
        # its packets, both ways, through each (holds.py); its capacity is the path's without them.
        "holds": _holds(cfg, names, holds_ns, delay_stats),
        # Each wired path's schedule outages (up = false .. up = true) and how each was done:
        # `hold` by the delay line, `drop` by taking the link down (drops.py), with the times
        # the link monitors saw for a drop.
        "outages": _outages(cfg, names, sc.duration_s, drops_ns or {}, outages),
        # Each wired path's `reset` steps as made (resets.py), and the subflows' closes the
        # kernel reported; only in a run with one.
        **({"resets": reset_rec} if reset_rec else {}),
        # The HTB bucket per shaped path at bin 0 (it follows the rate: shaper.burst_bytes), and
        # the bound on the senders' packets per interface (gso.py).
        "shaper": {"bucket_bytes": bursts, "bucket_s": shaper.BURST_S, "gso_max_segs": segs,
                   "changes": shp.applied if shp else 0, "latest_change_s": shp.late_s if shp else None,
                   "up_after_trace": shp.restored if shp else [],
                   **({"scan_pauses": shp.paused, "latest_pause_s": shp.pause_late_s} if pauses else {})},
        "wall_s": wall,
        "t0_unix": t0_unix,
        "captures": notes,
        "kernel_mptcp_counters": counters,
        # UDP datagrams the receiving namespace's sockets dropped (buffer full: the receiving
        # iperf3 fell behind on this machine's CPU), counted as lost by iperf3 but not the link's.
        "udp_receive_buffer_drops": udp_drops,
        "kernel_trace": trace_meta,
        # The flow's path_manager: the in-kernel path manager, or the daemon's policy with its
        # actions and commands over time (pmdaemon.py).
        "path_manager": pm.record(t0_unix),
        "iperf3": docs[0].get("start", {}).get("version"),
    }
    flat = {_cap_key(n, d, both): c for n, by_dir in caps.items() for d, c in by_dir.items()}
    return EmuResult(scenario=sc, goodput_mbps=total, path_mbps=path_mbps,
                     intervals=_together([r.intervals for r in results.values()]), capacities=flat, meta=meta,
                     flows=results)
