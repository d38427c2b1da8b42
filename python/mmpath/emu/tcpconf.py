"""The scenario's `[flow.tcp]` settings on the emulating kernel: each is a per-namespace sysctl, a
per-route attribute or an iperf3 option, applied to the end it belongs to (the sender's window
and timers, the receiver's buffer and ACKs). What Linux cannot set per namespace is refused, in
one line, rather than left silently at the machine's value.

| scenario (docs/scenario.md)   | Linux                                                        | end      |
|-------------------------------|--------------------------------------------------------------|----------|
| rmem_max_bytes                | net.ipv4.tcp_rmem[2]                                         | receiver |
| wmem_max_bytes                | net.ipv4.tcp_wmem[2]                                         | sender   |
| rcvbuf_bytes / sndbuf_bytes   | SO_RCVBUF / SO_SNDBUF via iperf3 -w (one value for both; at most the host's net.core.rmem_max / wmem_max, which a namespace cannot raise) | both |
| initial_cwnd                  | route initcwnd                                               | sender   |
| min_rto_ms                    | route rto_min                                                | sender   |
| delayed_ack = false           | route quickack 1                                             | receiver |
| limit_output_bytes            | net.ipv4.tcp_limit_output_bytes (0, TSQ off, has no Linux equivalent) | sender |
| tail_loss_probes              | net.ipv4.tcp_early_retrans 3 / 0                             | sender   |
| frto                          | net.ipv4.tcp_frto 2 / 0                                      | sender   |
| slow_start_after_idle         | net.ipv4.tcp_slow_start_after_idle 1 / 0                     | sender   |
| pacing = true                 | iperf3 --fq-rate (SO_MAX_PACING_RATE turns on the stack's internal pacing; the cap is above any path) | sender |
| hystart = false               | refused: /sys/module/tcp_cubic/parameters/hystart is machine-wide | -   |
| cc (no `pacing`)              | net.ipv4.tcp_congestion_control, both ends (below)            | both     |

Every socket is born with its namespace's default congestion control, and iperf3 -C switches it
afterwards. A kernel built with BBR as its default (CONFIG_DEFAULT_TCP_CONG="bbr", as this
project's is) runs bbr_init on each connection first, which turns the stack's internal pacing
on (sk_pacing_status = SK_PACING_NEEDED, net/ipv4/tcp_bbr.c), and a switch to CUBIC or Reno
does not turn it off (tcp_reinit_congestion_control leaves sk_pacing_status alone): the
scenario's unpaced CUBIC ran paced at 1.2 cwnd / srtt (tcp_update_pacing_rate; after a 2 s
hold, whose RTT samples put srtt near 2 s, at ~4 Mbit/s for half a second). So the namespaces'
default is one that does not pace (`default_cc`). A namespace other than the first may only
choose one of net.ipv4.tcp_allowed_congestion_control (tcp_set_default_congestion_control:
-EPERM otherwise; here "reno bbr"), a machine-wide list the emulator leaves alone: Reno, the
built-in one, unless every flow is BBR.
"""

from __future__ import annotations

from typing import Any

from .errors import EmuError
from .netns import Topology, read_proc, routes, set_sysctl, sh

# SO_MAX_PACING_RATE as a cap no path here reaches (iperf3 passes it as 32-bit bytes/s).
PACING_CAP = "30G"


def check(flow: dict[str, Any], i: int = 0) -> None:
    """EmuError for a setting the emulator cannot give the kernel (`i`: the flow's index)."""
    t = flow.get("tcp") or {}
    if flow.get("kind") == "udp":
        return
    if t.get("hystart") is False and (flow.get("cc") or "cubic") == "cubic":
        raise EmuError(f"flow.{i}.tcp.hystart: false cannot be emulated: CUBIC's HyStart is a machine-wide module "
                       "parameter (/sys/module/tcp_cubic/parameters/hystart), not a namespace's (allowed: true)")
    if t.get("limit_output_bytes") == 0:
        raise EmuError(f"flow.{i}.tcp.limit_output_bytes: 0 (TCP Small Queues off) has no Linux equivalent "
                       "(allowed: 2048 or more, net.ipv4.tcp_limit_output_bytes)")
    rcv, snd = t.get("rcvbuf_bytes", "auto"), t.get("sndbuf_bytes", "auto")
    if rcv != snd and "auto" not in (rcv, snd):
        raise EmuError(f"flow.{i}.tcp: rcvbuf_bytes {rcv} and sndbuf_bytes {snd} differ; iperf3 -w sets both "
                       "socket buffers to one value (allowed: the same number for both, or \"auto\")")
    if (rcv == "auto") != (snd == "auto"):
        raise EmuError(f"flow.{i}.tcp: one of rcvbuf_bytes / sndbuf_bytes is a number and the other \"auto\"; "
                       "iperf3 -w sets both (allowed: the same number for both, or both \"auto\")")
    if rcv != "auto":
        # SO_RCVBUF / SO_SNDBUF are capped by net.core.rmem_max / wmem_max, which a namespace
        # copies from the host and may not change (the kernel refuses the write).
        for key in ("rmem_max", "wmem_max"):
            cap = _host_core(key)
            if cap is not None and int(rcv) > cap:
                raise EmuError(f"flow.{i}.tcp.rcvbuf_bytes: {int(rcv)} is above this machine's net.core.{key} ({cap}), "
                               f"which only the host can raise (sysctl -w net.core.rmem_max={int(rcv)} "
                               f"net.core.wmem_max={int(rcv)}) (allowed: at most {cap}, or \"auto\" with "
                               "rmem_max_bytes / wmem_max_bytes)")


def _host_core(key: str) -> int | None:
    v = read_proc(f"/proc/sys/net/core/{key}")
    return int(v) if v and v.isdigit() else None


def _with_max(ns: str, key: str, top: int) -> str:
    """The namespace's `min default max` triple with max replaced (min / default unchanged)."""
    cur = sh("sysctl", "-n", key, ns=ns).split()
    lo, mid = (int(cur[0]), int(cur[1])) if len(cur) == 3 else (4096, 16384)
    return f"{lo} {min(mid, top)} {top}"


def default_cc(flows: list[dict[str, Any]]) -> str | None:
    """The congestion control every socket of the run is born with, before iperf3 -C gives it
    the flow's own: BBR when every TCP and MPTCP flow is BBR (it paces anyway), else Reno
    (built into every kernel and allowed in any namespace; it leaves pacing off, so a switch to
    CUBIC runs unpaced, as the scenario says). None: no TCP flow."""
    ccs = {str(f.get("cc") or "cubic") for f in flows if f.get("kind") != "udp"}
    if not ccs:
        return None
    return "bbr" if ccs == {"bbr"} else "reno"


def apply_default_cc(topo: Topology, flows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sets `default_cc` in the server's and the client's namespaces (either may send); what was
    set, for emu.json."""
    cc = default_cc(flows)
    if cc is None:
        return {}
    for ns in (topo.srv, topo.cli):
        set_sysctl(ns, "net.ipv4.tcp_congestion_control", cc)
    return {"both net.ipv4.tcp_congestion_control": cc}


def apply(topo: Topology, flow: dict[str, Any]) -> dict[str, Any]:
    """Sets the flow's TCP settings on both ends; returns what was set, for emu.json."""
    if flow.get("kind") == "udp":
        return {}
    t = flow.get("tcp") or {}
    download = flow.get("direction", "download") == "download"
    sender, receiver = (topo.srv, topo.cli) if download else (topo.cli, topo.srv)
    done: dict[str, Any] = {}
    if "rmem_max_bytes" in t:
        done["receiver net.ipv4.tcp_rmem"] = v = _with_max(receiver, "net.ipv4.tcp_rmem", int(t["rmem_max_bytes"]))
        set_sysctl(receiver, "net.ipv4.tcp_rmem", v)
    if "wmem_max_bytes" in t:
        done["sender net.ipv4.tcp_wmem"] = v = _with_max(sender, "net.ipv4.tcp_wmem", int(t["wmem_max_bytes"]))
        set_sysctl(sender, "net.ipv4.tcp_wmem", v)
    buf = t.get("rcvbuf_bytes", "auto")
    if buf != "auto":
        done["socket buffers (iperf3 -w)"] = int(buf)
    for key, value in (("net.ipv4.tcp_limit_output_bytes", t.get("limit_output_bytes")),
                       ("net.ipv4.tcp_early_retrans", None if "tail_loss_probes" not in t
                        else 3 if t["tail_loss_probes"] else 0),
                       ("net.ipv4.tcp_frto", None if "frto" not in t else 2 if t["frto"] else 0),
                       ("net.ipv4.tcp_slow_start_after_idle", None if "slow_start_after_idle" not in t
                        else 1 if t["slow_start_after_idle"] else 0)):
        if value is not None:
            set_sysctl(sender, key, str(int(value)))
            done[f"sender {key}"] = int(value)
    per_route = {sender: [], receiver: []}
    if "initial_cwnd" in t:
        per_route[sender] += ["initcwnd", str(int(t["initial_cwnd"]))]
    if "min_rto_ms" in t:
        per_route[sender] += ["rto_min", f"{float(t['min_rto_ms']):g}ms"]
    if t.get("delayed_ack") is False:
        per_route[receiver] += ["quickack", "1"]
    table = routes(topo)
    for ns, attrs in per_route.items():
        if attrs:
            for r in table[ns]:
                sh("ip", "route", "change", *r, *attrs, ns=ns)
            topo.route_attrs[ns] = list(attrs)
            done[f"{'sender' if ns == sender else 'receiver'} routes"] = " ".join(attrs)
    if iperf_args(flow):
        done["iperf3 options"] = " ".join(iperf_args(flow))
    return done


def iperf_args(flow: dict[str, Any]) -> list[str]:
    t = flow.get("tcp") or {}
    if flow.get("kind") == "udp":
        return []
    args = []
    if t.get("rcvbuf_bytes", "auto") != "auto":
        args += ["-w", str(int(t["rcvbuf_bytes"]))]
    if t.get("pacing"):
        args += ["--fq-rate", PACING_CAP]
    return args
