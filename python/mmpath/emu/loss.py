"""A wired path's random frame loss (`loss_pct`), on the kernel: each frame forwarded over the path,
either way, is dropped with that probability (iptables' `statistic --mode random` in the AP's
namespace), as the simulator draws it for every frame of the path both ways (docs/scenario.md).

The veth links carry TSO/GSO packets of up to 64 KiB (netns.py): a drop of one would be dozens
of frames at once. So the ends that send into a lossy path build one-frame packets:
`gso_max_segs 1` on the server's backbone interface (data of a download, for every path: the
backbone is shared) and on the client's interface of the path (an upload's data); the kernel's
TCP then sizes each skb to one MSS (tcp_tso_autosize caps it at the device's gso_max_segs). The
rules and settings live in the run's namespaces and go with them.

With the server in the AP's namespace (netns.py, the backbone disabled) nothing is forwarded:
each direction's frames are dropped where they arrive (INPUT of the client for the AP's, of the
AP for the client's), not as the server sends them (OUTPUT), where the drop would be local to the
server's TCP (an error from its send, not a loss on the link); the server's own path interface
gets the one-frame packets.
"""

from __future__ import annotations

from typing import Any

from .netns import Topology, packet_hooks, sh


def lossy(cfg: dict[str, Any]) -> dict[int, float]:
    """Path index -> loss probability (0..1), for the paths with `loss_pct` > 0."""
    return {k: float(p["loss_pct"]) / 100.0 for k, p in enumerate(cfg.get("path", []))
            if float(p.get("loss_pct") or 0.0) > 0}


def install(topo: Topology, cfg: dict[str, Any]) -> dict[str, float]:
    """The drop rules and one-frame packets for every lossy path; what was set, for emu.json."""
    done: dict[str, float] = {}
    for k, prob in lossy(cfg).items():
        link = topo.paths[k]
        for ns, _, rules in packet_hooks(topo, k):
            for match in rules:
                # First in its chain: before the delay line's NFQUEUE rules (delay.py appends them).
                sh("iptables", "-I", match[0], "1", *match[1:], "-m", "statistic", "--mode", "random",
                   "--probability", f"{prob:.6f}", "-j", "DROP", ns=ns)
        srv_if = link.ap_if if topo.colocated else "bb0"
        sh("ip", "-n", topo.srv, "link", "set", srv_if, "gso_max_segs", "1")
        sh("ip", "-n", topo.cli, "link", "set", link.cli_if, "gso_max_segs", "1")
        done[link.name] = prob * 100.0
    return done
