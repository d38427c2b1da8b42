"""The x-kernel battery's rows (docs/reproduce.md "x-kernel"): each a scenario both engines run,
the outage it contains and the metrics it compares. Plain data; xkernel.py runs and checks them.

Every row's TCP timers and buffers are the emulating kernel's own (`host_tcp`): read from
/proc/sys where the scenario has the knob, so the battery compares like with like on another
kernel too. What has no scenario knob (net.mptcp.stale_loss_cnt: the simulator's constant 4,
net/mptcp/ctrl.c; net.ipv4.tcp_pacing_ss_ratio / tcp_pacing_ca_ratio: the simulator's 200 / 120,
tcp/sender/pacing.rs) is read and reported beside the table (`host_knobs`).

Wired paths throughout (both engines model them alike: the emulator shapes them with tc), but the
bundled `blockage` row, the one radio scenario the x-kernel claim always had.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ..emu.kconfig import host_hz
from ..scenario import load_scenario

# Metrics a row can compare (the criterion's tolerance for each is in xkernel.py).
GOODPUT = "goodput_mbps"
FIRST_BYTE = "first_byte_s"  # from the outage's end to the first delivered byte (100 ms bins)
RESAT = "resat_s"  # from the outage's end until the 1 s mean is back to 90 % of the pre-outage mean
OUTAGE = "outage_s"  # from the outage's start, time below 10 % of the pre-outage mean
TAKEOVER = "takeover_s"  # backup mode: from the primary's cut until the backup carries (= OUTAGE)
BACK = "back_s"  # backup mode: from the primary's return until the connection is back to 90 %
SHARE = "share_pct"  # MPTCP: the first path's share of the bytes sent on both, percent

RATE_MBPS = 100.0
# One BDP at the battery's long RTT (50 ms x 100 Mbit/s): the queue both engines give each path.
QUEUE_BYTES = 625_000
OUT_T, OUT_S = 3.0, 2.0  # the single-path outage: 2 s (the brief), from t = 3 s
SINGLE_S = 9.0
MESH_S = 6.0
SMALL_RMEM = 262_144  # "small" connection-level receive buffer: tcp_rmem[2] = 256 KiB


@dataclass(frozen=True)
class Row:
    id: str
    group: str  # single | backup | fullmesh | loss | blockage
    what: str  # one line for the table
    build: Callable[[dict[str, Any]], dict[str, Any]]  # host tcp settings -> scenario
    metrics: tuple[str, ...]
    outage: tuple[float, float] | None = None  # (start, end) of the outage the times count from
    shade: tuple[tuple[float, float, str], ...] = field(default_factory=tuple)  # (from, to, label)

    def scenario(self, tcp: dict[str, Any]) -> dict[str, Any]:
        """The row's scenario, not yet checked (the runner checks each point's once and fails that
        point alone, in one line, if the core refuses it)."""
        return self.build(tcp)


def _read(path: str) -> list[str] | None:
    try:
        return Path(path).read_text().split()
    except OSError:
        return None


# The simulator's constants for the knobs `host_knobs` reports beside the table: the kernel
# defaults (net/mptcp/ctrl.c stale_loss_cnt; tcp_input.c / tcp_ipv4.c tcp_pacing_ss_ratio and
# tcp_pacing_ca_ratio), in crates/mmpath-sim (mptcp, tcp/sender/pacing.rs).
SIMULATOR_KNOBS = "stale_loss_cnt 4, tcp_pacing_ss_ratio 200, tcp_pacing_ca_ratio 120"


def host_knobs() -> dict[str, Any]:
    """The emulating kernel's TCP / MPTCP settings the battery depends on (None: not readable)."""
    out: dict[str, Any] = {}
    for name in ("ipv4/tcp_rmem", "ipv4/tcp_wmem", "ipv4/tcp_early_retrans", "ipv4/tcp_frto",
                 "ipv4/tcp_slow_start_after_idle", "ipv4/tcp_pacing_ss_ratio", "ipv4/tcp_pacing_ca_ratio",
                 "mptcp/stale_loss_cnt"):
        v = _read(f"/proc/sys/net/{name}")
        out[name.split("/")[1]] = [int(x) for x in v] if v and all(x.isdigit() for x in v) else None
    out["CONFIG_HZ"] = host_hz()
    return out


def host_tcp(knobs: dict[str, Any] | None = None) -> dict[str, Any]:
    """`[flow.tcp]` from the kernel's sysctls (docs/emulate.md's table, read the other way):
    tcp_rmem[2] / tcp_wmem[2] the buffer ceilings, tcp_early_retrans >= 3 the tail loss probe,
    tcp_frto > 0 F-RTO, tcp_slow_start_after_idle, and the kernel's CONFIG_HZ its timers tick at.
    What cannot be read keeps the scenario's default."""
    k = host_knobs() if knobs is None else knobs
    tcp: dict[str, Any] = {}
    if k.get("tcp_rmem") and len(k["tcp_rmem"]) == 3:
        tcp["rmem_max_bytes"] = k["tcp_rmem"][2]
    if k.get("tcp_wmem") and len(k["tcp_wmem"]) == 3:
        tcp["wmem_max_bytes"] = k["tcp_wmem"][2]
    if k.get("tcp_early_retrans"):
        tcp["tail_loss_probes"] = k["tcp_early_retrans"][0] >= 3
    if k.get("tcp_frto"):
        tcp["frto"] = k["tcp_frto"][0] > 0
    if k.get("tcp_slow_start_after_idle"):
        tcp["slow_start_after_idle"] = k["tcp_slow_start_after_idle"][0] > 0
    if k.get("CONFIG_HZ"):
        tcp["kernel_hz"] = k["CONFIG_HZ"]
    return tcp


def _wired(name: str, rate: float, rtt_ms: float, **more: Any) -> dict[str, Any]:
    return {"name": name, "rate_mbps": rate, "mtu_bytes": 1500, "delay_ms": rtt_ms / 2.0,
            "queue_bytes": QUEUE_BYTES, **more}


def _base(name: str, duration: float, paths: list[dict[str, Any]], flow: dict[str, Any]) -> dict[str, Any]:
    # A backbone (10 GbE, no delay) between the server and the AP, as the emulator always builds
    # one (docs/emulate.md, Topology): the server's first hop is then not the bottleneck, so TCP
    # Small Queues (released at the first hop's TX completion) does not hold the sender to ~1 ms
    # of the bottleneck's queue in the simulator while the kernel fills the AP's.
    return {"name": f"x-kernel-{name}", "duration_s": duration,
            "backbone": {"enabled": True, "rate_mbps": 10000.0, "delay_ms": 0.0},
            "path": paths, "flow": [{"name": "f", "stop_s": duration, **flow}]}


def _down(t: float, dur: float, drop: bool, rate: float = RATE_MBPS) -> list[dict[str, Any]]:
    # A drop: `up = false, drop = true` loses the queue and what is sent, as the emulator's veth
    # taken down does (emu/drops.py). A hold: the emulator holds every packet of the path in its
    # delay line and loses none (docs/emulate.md step 4), where the simulator's `up = false`
    # also loses the frame on the air (docs/scenario.md); the simulated hold that loses nothing
    # is the stall, rate 0 ("nothing is sent, nothing is lost"), which the emulator holds the
    # same way (emu/holds.py `wired_stall_windows_ns`). One frame lost or not is a fast
    # recovery or none: Reno at 50 ms RTT then regrows one MSS per RTT (docs/models.md).
    if drop:
        return [{"t_s": t, "up": False, "drop": True}, {"t_s": t + dur, "up": True}]
    return [{"t_s": t, "rate_mbps": 0.0}, {"t_s": t + dur, "rate_mbps": rate}]


def _single(cc: str, drop: bool, rtt_ms: float) -> Row:
    kind = "drop" if drop else "hold"
    rid = f"{cc}-{kind}-{rtt_ms:g}ms"

    def build(tcp: dict[str, Any]) -> dict[str, Any]:
        return _base(rid, SINGLE_S, [_wired("a", RATE_MBPS, rtt_ms, schedule=_down(OUT_T, OUT_S, drop))],
                     {"kind": "tcp", "path": "a", "cc": cc, "tcp": dict(tcp)})

    what = (f"TCP {cc.upper() if cc == 'bbr' else cc.capitalize()}, {RATE_MBPS:g} Mbit/s, RTT {rtt_ms:g} ms, "
            f"{OUT_S:g} s {kind} outage")
    return Row(rid, "single", what, build, (GOODPUT, FIRST_BYTE, RESAT), (OUT_T, OUT_T + OUT_S),
               ((OUT_T, OUT_T + OUT_S, f"link down ({kind})"),))


BACKUP_CUT, BACKUP_BACK, BACKUP_S = 3.0, 6.0, 10.0


def _backup() -> Row:
    def build(tcp: dict[str, Any]) -> dict[str, Any]:
        return _base("backup", BACKUP_S,
                     [_wired("a", RATE_MBPS, 10.0, schedule=_down(BACKUP_CUT, BACKUP_BACK - BACKUP_CUT, True)),
                      _wired("b", RATE_MBPS / 4, 10.0)],
                     {"kind": "mptcp", "paths": ["a", "b"], "mode": "backup", "backup_paths": ["b"],
                      "kernel": "linux-upstream", "scheduler": "default", "tcp": dict(tcp)})

    return Row("mptcp-backup-drop", "backup",
               f"MPTCP backup: primary {RATE_MBPS:g} Mbit/s cut (drop) {BACKUP_CUT:g}-{BACKUP_BACK:g} s, "
               f"backup {RATE_MBPS / 4:g} Mbit/s, RTT 10 ms", build, (GOODPUT, TAKEOVER, BACK),
               (BACKUP_CUT, BACKUP_BACK), ((BACKUP_CUT, BACKUP_BACK, "primary cut (drop)"),))


def _mesh(rid: str, what: str, a: tuple[float, float], b: tuple[float, float], small: bool,
          loss_pct: float = 0.0) -> Row:
    def build(tcp: dict[str, Any]) -> dict[str, Any]:
        t = dict(tcp)
        if small:
            t["rmem_max_bytes"] = SMALL_RMEM
        pb = _wired("b", b[0], b[1], **({"loss_pct": loss_pct} if loss_pct else {}))
        return _base(rid, MESH_S, [_wired("a", a[0], a[1]), pb],
                     {"kind": "mptcp", "paths": ["a", "b"], "kernel": "linux-upstream", "scheduler": "default",
                      "tcp": t})

    buf = f", receive buffer {SMALL_RMEM >> 10} KiB" if small else ", the kernel's receive buffer"
    return Row(rid, "loss" if loss_pct else "fullmesh", what + buf, build, (GOODPUT, SHARE))


def _blockage() -> Row:
    def build(tcp: dict[str, Any]) -> dict[str, Any]:
        # The bundled scenario as x-kernel always ran it: the kernel's own MPTCP, the blockage's
        # re-training given explicitly (the Panasonic preset's own 500 ms) so the time the link
        # is back can be read from the scenario; the host's buffer ceilings.
        cfg = load_scenario("blockage", {"duration_s": 12.0, "flow.0.stop_s": 12.0,
                                         "flow.0.kernel": "linux-upstream", "flow.0.scheduler": "default",
                                         "path.0.event.0.retrain_ms": 500.0}).config
        keep = {k: v for k, v in tcp.items() if k in ("rmem_max_bytes", "wmem_max_bytes")}
        for f in cfg["flow"]:
            f["tcp"] = {**(f.get("tcp") or {}), **keep}
        return cfg

    return Row("blockage", "blockage", "the bundled `blockage`: MPTCP over 11ad MCS 8 + 11ac, 11ad blocked "
               "2 s at 4 s (+ 0.5 s re-training)", build, (GOODPUT, OUTAGE, RESAT), (4.0, 6.5),
               ((4.0, 6.0, "11ad blocked"), (6.0, 6.5, "re-training")))


def rows() -> list[Row]:
    out = [_blockage()]
    for drop in (False, True):
        for rtt in (0.5, 50.0):
            for cc in ("cubic", "bbr", "reno"):
                out.append(_single(cc, drop, rtt))
    out.append(_backup())
    for small in (False, True):
        tag = "small" if small else "default"
        out += [
            _mesh(f"mesh-rate-1:4-{tag}", "MPTCP full mesh, 200 + 50 Mbit/s (1:4), RTT 5 ms", (200.0, 5.0),
                  (50.0, 5.0), small),
            _mesh(f"mesh-rate-1:20-{tag}", "MPTCP full mesh, 200 + 10 Mbit/s (1:20), RTT 5 ms", (200.0, 5.0),
                  (10.0, 5.0), small),
            _mesh(f"mesh-rtt-1:10-{tag}", "MPTCP full mesh, 2 x 100 Mbit/s, RTT 5 + 50 ms (1:10)", (100.0, 5.0),
                  (100.0, 50.0), small),
        ]
    out.append(_mesh("mesh-loss-1pct", "MPTCP full mesh, 2 x 100 Mbit/s, RTT 10 ms, 1 % random loss on the "
                     "second path", (100.0, 10.0), (100.0, 10.0), False, loss_pct=1.0))
    return out


ROWS = {r.id: r for r in rows()}
FAST_ROW = "blockage"  # `make test`'s one row (tests/test_emu.py)
