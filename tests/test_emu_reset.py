"""A wired path's `reset` step in the emulator (docs/emulate.md, resets.py): an nft `reject with
tcp reset` at the AP for TCP from or to the path's client address, then `ss -K` of what is left,
so both ends of every TCP connection crossing the path are reset and the path stays up.

The first part needs neither root nor the tools: which steps are planned and which scenarios are
refused, and how `ip mptcp monitor`'s lines become emu.json `resets`. The last test emulates an
MPTCP download through a reset of its primary as root, and skips otherwise (as tests/test_emu.py
does)."""

from __future__ import annotations

import json
import pytest

from mmpath.emu import netns, resets
from mmpath.emu.errors import EmuError
from conftest import emulation_marks


def _cfg(*flows: dict, reset_on: tuple[int, ...] = (0,)) -> dict:
    paths = [{"name": n, "technology": "wired", "rate_mbps": 50.0,
              "schedule": [{"t_s": 2.0, "reset": True}, {"t_s": 9.0, "reset": True}] if k in reset_on else []}
             for k, n in enumerate(("a", "b"))]
    return {"path": paths, "flow": list(flows)}


MPTCP = {"name": "m", "kind": "mptcp", "paths": ["a", "b"]}


def test_each_paths_reset_steps_are_planned_before_the_runs_end():
    assert resets.plan(_cfg(MPTCP), 8.0) == {0: [2.0]}
    assert resets.plan(_cfg(MPTCP), 10.0) == {0: [2.0, 9.0]}
    assert resets.plan(_cfg(MPTCP, reset_on=()), 10.0) == {}
    # Without resets nothing is checked: a TCP flow on any path runs as before.
    assert resets.plan(_cfg({"name": "t", "kind": "tcp", "path": "a"}, reset_on=()), 10.0) == {}


def test_a_reset_iperf3_would_not_survive_is_refused_in_one_line():
    for flow in ({"name": "t", "kind": "tcp", "path": "a"}, {"name": "u", "kind": "udp"}):
        with pytest.raises(EmuError) as e:
            resets.plan(_cfg(MPTCP, flow), 10.0)
        msg = str(e.value)
        assert "\n" not in msg
        what = "TCP connection" if flow["kind"] == "tcp" else "iperf3 control connection (TCP)"
        assert msg.startswith(f"path.0.schedule: a `reset` step on path 'a' would end flow.1's {what} and "), msg
        assert "allowed: an MPTCP flow there" in msg
    # A TCP flow on the other path is left alone.
    assert resets.plan(_cfg(MPTCP, {"name": "t", "kind": "tcp", "path": "b"}), 8.0) == {0: [2.0]}
    with pytest.raises(EmuError, match=r"^flow\.0: every path of this MPTCP flow \(a, b\) has a `reset` step"):
        resets.plan(_cfg(MPTCP, reset_on=(0, 1)), 10.0)
    with pytest.raises(EmuError, match=r"^flow\.0: every path of this MPTCP flow \(a\)"):
        resets.plan(_cfg({**MPTCP, "paths": ["a"]}), 10.0)


def test_emu_run_refuses_it_before_touching_the_machine():
    import mmpath.emu

    sc = {"name": "r", "duration_s": 5.0, "backbone": {"enabled": False},
          "path": [{"name": "w", "technology": "wired", "rate_mbps": 20.0, "schedule": [{"t_s": 2.0, "reset": True}]}],
          "flow": [{"name": "t", "path": "w"}]}
    with pytest.raises(EmuError, match=r"^path\.0\.schedule: a `reset` step on path 'w' would end flow\.0's TCP connection"):
        mmpath.emu.run(sc, capture=False)


def test_the_kernels_subflow_closes_go_into_emu_json_on_the_scenarios_clock():
    lines = ["1000.25\t[         CREATED] token=1a2b3c4d remid=0 locid=0 saddr4=10.199.1.2 daddr4=10.198.0.1 sport=4000 dport=5201",
             "1002.004\t[       SF_CLOSED] token=1a2b3c4d remid=0 locid=0 saddr4=10.199.1.2 daddr4=10.198.0.1 sport=4000 "
             "dport=5201 backup=0 error=104",
             "not an event"]
    evs = resets.parse_monitor("\n".join(lines))
    assert [e["event"] for e in evs] == ["CREATED", "SF_CLOSED"]
    assert evs[1]["error"] == 104 and evs[1]["saddr4"] == "10.199.1.2" and evs[1]["t"] == 1002.004
    topo = netns.Topology(tag="t", paths=[netns.PathLink(0, "a", 1500, "p0c", "p0a", "10.199.1.2", "10.199.1.1")])
    r = resets.PathResets(topo, {0: [2.0]}, mptcp=True)
    r.t0_unix = 1000.0
    r._lines = {"client": lines[1:2], "server": []}
    r.done = [{"path": "a", "planned_s": 2.0, "applied_s": 2.003, "lifted_s": 2.504,
               "destroyed_after": {"client": 0, "server": 0}}]
    rec = r.record()
    assert rec["window_s"] == resets.WINDOW_S and rec["steps"] == r.done
    assert rec["subflows_closed"] == [{"end": "client", "t_s": 2.004, "saddr4": "10.199.1.2",
                                       "daddr4": "10.198.0.1", "sport": 4000, "dport": 5201, "error": 104}]
    assert not resets.PathResets(topo, {}, mptcp=True).needed()


needs_root = emulation_marks(("ip", "tc", "iperf3", "tcpdump", "mptcpize", "nft", "ss"),
                             root_needed_for="network namespaces, tc, nft", delay_line=True, mptcp=True)


@pytest.mark.parametrize("_", [pytest.param(None, marks=needs_root)])
def test_a_reset_primary_closes_both_ends_with_econnreset_and_the_backup_carries_on(tmp_path, _):
    """The in-kernel path manager: the primary's subflow is reset at both ends (SF_CLOSED with
    ECONNRESET, 104) within a moment of the step, the connection goes on over the backup, and no
    subflow comes back on the primary (pm_kernel.c does not reuse a used endpoint)."""
    import mmpath.emu
    from mmpath.reproduce import xpm

    at = 3.0
    sc = {"name": "reset-emu", "duration_s": 6.0, "seed": 1, "backbone": {"enabled": False},
          "path": [{"name": "primary", "technology": "wired", "rate_mbps": xpm.RATES[0], "delay_ms": 5.0,
                    "schedule": [{"t_s": at, "reset": True}]},
                   {"name": "backup", "technology": "wired", "rate_mbps": xpm.RATES[1], "delay_ms": 10.0}],
          "flow": [{"name": "dl", "kind": "mptcp", "mode": "backup", "kernel": "linux-upstream",
                    "scheduler": "default"}]}
    out = tmp_path / "out"
    mmpath.emu.run(sc, out=out, capture=True)
    meta = json.loads((out / "emu.json").read_text())
    rec = meta["resets"]
    step = rec["steps"][0]
    assert step["path"] == "primary" and abs(step["applied_s"] - at) < 0.1, step
    data_port = [c["dport"] for c in rec["subflows_closed"] if c["end"] == "server"]
    resets_104 = {(c["end"], c["sport"] if c["end"] == "client" else c["dport"]) for c in rec["subflows_closed"]
                  if c.get("error") == 104 and at <= c["t_s"] < at + 0.3}
    # One subflow (the busy data connection's) reset at both ends by the router's RSTs.
    assert any(("client", p) in resets_104 and ("server", p) in resets_104 for p in data_port), rec
    m, _ = xpm.emu_measures(out, at, at, reset=True)
    assert m[xpm.TAKEOVER] is not None and m[xpm.TAKEOVER] < 0.5, m
    assert m[xpm.BACK] is None and m[xpm.FIRST_PRIMARY] is None, m
