"""The path-manager daemon without root (docs/path-manager.md): the kernel's events, as pyroute2
encodes and decodes them, into the policy's events; the policy's actions into `mptcp_pm` commands,
encoded and decoded back; the daemon's loop logic with a stand-in policy and a fake kernel; the
command line's refusals. The daemon on the real kernel is tests/test_pm_root.py."""

from __future__ import annotations

import errno
import json
import os
import socket
from pathlib import Path as FsPath

import pytest
from pyroute2.netlink.exceptions import NetlinkError

from mmpath.pm import netlink, system, transport, wifi
from mmpath.pm.cli import main as pm_main
from mmpath.pm.daemon import Daemon
from mmpath.pm.events import Path, Translator
from pm_standin import StandIn

SERVER = "10.198.0.1"
PATHS = [Path(0, "p0c", 7, "10.199.1.2"), Path(1, "p1c", 8, "10.199.2.2")]
TOKEN = 0xC0FFEE


def kernel_says(name: str, **attrs) -> list[tuple[str, dict]]:
    """An event as the kernel multicasts it: encoded with pyroute2, then decoded by the daemon."""
    return netlink.decode_event(netlink.encode_event(name, attrs))


def conn_attrs(**more) -> dict:
    return {"token": TOKEN, "family": socket.AF_INET, "saddr4": "10.199.1.2", "daddr4": SERVER,
            "sport": 40000, "dport": 5201, **more}


def sub_attrs(path: int, sport: int, **more) -> dict:
    return {"token": TOKEN, "family": socket.AF_INET, "loc_id": path + 1, "rem_id": 0,
            "saddr4": PATHS[path].addr, "daddr4": SERVER, "sport": sport, "dport": 5201, "backup": 0,
            "if_idx": PATHS[path].ifindex, **more}


def feed(tr: Translator, name: str, **attrs) -> list[dict]:
    out = []
    for n, a in kernel_says(name, **attrs):
        out += [ev for _tok, ev in tr.on_mptcp(n, a)]
    return out


def wire(cmd) -> dict:
    """A command as the kernel reads it: encoded to bytes, decoded by pyroute2's class."""
    msg = cmd.msg
    msg["header"]["type"] = 0x1E
    msg.encode()
    back = netlink.pm_command(bytes(msg.data))
    back.decode()
    return netlink.describe(back)


def connected() -> Translator:
    tr = Translator(PATHS)
    assert feed(tr, "CREATED", **conn_attrs()) == [{"kind": "conn_created", "path": 0}]
    assert feed(tr, "ESTABLISHED", **conn_attrs()) == [{"kind": "subflow_established", "path": 0, "subflow": 0}]
    return tr


# --------------------------------------------------------------------------- kernel events


def test_an_event_decodes_with_the_kernels_attribute_numbers():
    data = netlink.encode_event("SUB_ESTABLISHED", sub_attrs(1, 41000, backup=1))
    # The genetlink header's cmd is the event (MPTCP_EVENT_SUB_ESTABLISHED = 10, mptcp_pm.yaml),
    # the port is big-endian (41000 = 0xa028) under MPTCP_ATTR_SPORT = 9.
    assert data[16] == 10
    assert bytes.fromhex("06000900a028") in data
    ((name, attrs),) = netlink.decode_event(data)
    assert name == "SUB_ESTABLISHED"
    assert attrs["saddr4"] == "10.199.2.2" and attrs["sport"] == 41000 and attrs["backup"] == 1
    assert attrs["if_idx"] == 8 and attrs["token"] == TOKEN


def test_two_events_in_one_datagram_are_both_read():
    data = netlink.encode_event("CREATED", conn_attrs()) + netlink.encode_event("CLOSED", {"token": 1})
    assert [n for n, _ in netlink.decode_event(data)] == ["CREATED", "CLOSED"]


def test_kernel_events_become_policy_events_with_the_daemons_subflow_ids():
    tr = connected()
    assert feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000)) == [
        {"kind": "subflow_established", "path": 1, "subflow": 1}]
    # The same subflow reported twice is one subflow.
    assert feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000)) == []
    assert feed(tr, "SUB_ESTABLISHED", **sub_attrs(0, 42000)) == [
        {"kind": "subflow_established", "path": 0, "subflow": 2}]
    # A subflow the kernel closed on an error (sk_err copied into MPTCP_ATTR_ERROR).
    assert feed(tr, "SUB_CLOSED", **sub_attrs(1, 41000, error=110)) == [
        {"kind": "subflow_closed", "path": 1, "subflow": 1, "error": True}]
    assert feed(tr, "SUB_CLOSED", **sub_attrs(0, 42000)) == [
        {"kind": "subflow_closed", "path": 0, "subflow": 2, "error": False}]
    assert feed(tr, "CLOSED", token=TOKEN) == [] and TOKEN not in tr.conns


def test_a_subflow_the_daemon_closed_is_not_an_error_for_the_policy():
    tr = connected()
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000))
    (cmd,) = tr.commands(TOKEN, {"kind": "close_subflow", "path": 1, "subflow": 1})
    assert feed(tr, "SUB_CLOSED", **sub_attrs(1, 41000, error=104)) == [
        {"kind": "subflow_closed", "path": 1, "subflow": 1, "error": False}]


def test_a_dual_stack_sockets_mapped_addresses_are_its_ipv4_paths():
    tr = Translator(PATHS)
    mapped = conn_attrs(family=socket.AF_INET6, saddr6="::ffff:10.199.1.2", daddr6="::ffff:" + SERVER)
    del mapped["saddr4"], mapped["daddr4"]
    assert feed(tr, "CREATED", **mapped) == [{"kind": "conn_created", "path": 0}]
    (cmd,) = tr.commands(TOKEN, {"kind": "create_subflow", "path": 1})
    assert wire(cmd)["addr_remote"]["addr4"] == SERVER


def test_connections_not_on_our_paths_and_server_sides_are_ignored():
    tr = Translator(PATHS)
    assert feed(tr, "CREATED", **conn_attrs(saddr4="127.0.0.1", if_idx=1)) == []
    assert feed(tr, "CREATED", **conn_attrs(server_side=1)) == []
    assert feed(tr, "ESTABLISHED", **conn_attrs()) == [] and tr.conns == {}


def test_link_changes_only_are_events():
    tr = Translator(PATHS)
    assert tr.on_link(7, True) == []  # the first report of an up link
    assert tr.on_link(8, False) == [{"kind": "link_down", "path": 1}]
    assert tr.on_link(8, False) == []
    assert tr.on_link(8, True) == [{"kind": "link_up", "path": 1}]
    assert tr.on_link(99, False) == []  # not a path


# --------------------------------------------------------------------------- actions


def test_create_subflow_is_subflow_create_from_the_paths_address_to_the_server():
    tr = connected()
    (cmd,) = tr.commands(TOKEN, {"kind": "create_subflow", "path": 1})
    got = wire(cmd)
    assert got["command"] == "SUBFLOW_CREATE" and got["token"] == TOKEN
    assert got["addr"] == {"family": socket.AF_INET, "addr4": "10.199.2.2", "id": 2, "if_idx": 8}
    assert got["addr_remote"] == {"family": socket.AF_INET, "addr4": SERVER, "port": 5201}
    # The command's port is host-order (pm_netlink.c: htons(nla_get_u16(...))), unlike the
    # events': MPTCP_PM_ADDR_ATTR_PORT = 5, 5201 = 0x1451 little-endian on this machine.
    assert (bytes.fromhex("060005005114") if socket.htons(1) != 1 else bytes.fromhex("060005001451")) in bytes(cmd.msg.data)


def test_a_backup_path_gets_its_subflows_with_the_backup_flag():
    tr = connected()
    tr.backup.add(1)
    (cmd,) = tr.commands(TOKEN, {"kind": "create_subflow", "path": 1})
    assert wire(cmd)["addr"]["flags"] == netlink.FLAG_BACKUP


def test_close_subflow_names_both_ports():
    tr = connected()
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000))
    (cmd,) = tr.commands(TOKEN, {"kind": "close_subflow", "path": 1, "subflow": 1})
    got = wire(cmd)
    assert got["command"] == "SUBFLOW_DESTROY"
    assert got["addr"] == {"family": socket.AF_INET, "addr4": "10.199.2.2", "port": 41000}
    assert got["addr_remote"] == {"family": socket.AF_INET, "addr4": SERVER, "port": 5201}
    assert tr.commands(TOKEN, {"kind": "close_subflow", "path": 1, "subflow": 9}) == []


def test_set_backup_is_one_set_flags_per_subflow_of_the_path_and_clear_undoes_it():
    tr = connected()
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000))
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41001))
    cmds = tr.commands(TOKEN, {"kind": "set_backup", "path": 1})
    got = [wire(c) for c in cmds]
    assert [g["command"] for g in got] == ["SET_FLAGS", "SET_FLAGS"]
    assert [g["addr"]["port"] for g in got] == [41000, 41001]
    assert all(g["addr"]["flags"] == netlink.FLAG_BACKUP for g in got)
    assert 1 in tr.backup
    (clear, _) = tr.commands(TOKEN, {"kind": "clear_backup", "path": 1})
    assert "flags" not in wire(clear)["addr"] and 1 not in tr.backup


def test_announce_and_remove_use_the_paths_address_id():
    tr = connected()
    (ann,) = tr.commands(TOKEN, {"kind": "announce", "path": 1})
    got = wire(ann)
    assert got["command"] == "ANNOUNCE" and got["addr"]["id"] == 2 and got["addr"]["flags"] == netlink.FLAG_SIGNAL
    (rm,) = tr.commands(TOKEN, {"kind": "remove", "path": 1})
    assert wire(rm) == {"command": "REMOVE", "token": TOKEN, "loc_id": 2}


def test_remove_withdraws_every_local_id_of_the_path_then_destroys_its_subflows():
    """The RM_ADDR goes first, while the path's subflows still exist (the kernel refuses to
    remove an id no subflow uses); the initial subflow's address is id 0."""
    tr = connected()
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000))
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(0, 40001))
    got = [wire(c) for c in tr.commands(TOKEN, {"kind": "remove", "path": 0})]
    assert [(g["command"], g.get("loc_id")) for g in got] == [
        ("REMOVE", 0), ("REMOVE", 1), ("SUBFLOW_DESTROY", None), ("SUBFLOW_DESTROY", None)]
    assert sorted(g["addr"]["port"] for g in got[2:]) == [40000, 40001]
    # Their closing is the daemon's doing, not an error for the policy.
    closed = feed(tr, "SUB_CLOSED", **sub_attrs(0, 40001, error=110))
    assert closed == [{"kind": "subflow_closed", "path": 0, "subflow": 2, "error": False}]


def test_actions_for_unknown_paths_or_connections_do_nothing():
    tr = connected()
    assert tr.commands(TOKEN, {"kind": "create_subflow", "path": 5}) == []
    assert tr.commands(1, {"kind": "create_subflow", "path": 1}) == []
    assert tr.commands(TOKEN, {"kind": "teleport", "path": 1}) == []


# --------------------------------------------------------------------------- the daemon


class FakeKernel:
    def __init__(self, refuse: set[str] = frozenset()):
        self.sent: list[dict] = []
        self.refuse = refuse

    def __call__(self, cmd) -> None:
        d = cmd.describe()
        self.sent.append(d)
        if d["command"] in self.refuse:
            raise NetlinkError(errno.EINVAL, "Invalid argument")


def daemon(send=None, policies=None, **kw) -> tuple[Daemon, list[dict]]:
    log: list[dict] = []
    made = policies if policies is not None else []

    def factory(name, params):
        made.append(StandIn(name, params, **kw))
        return made[-1]
    return Daemon(Translator(PATHS), "fast-failback", None, send, log.append, factory), log


def run_events(d: Daemon, *events: tuple[str, dict], t: float = 1.0) -> None:
    for name, attrs in events:
        for n, a in kernel_says(name, **attrs):
            d.on_kernel_event(t, n, a)


def test_the_daemon_joins_the_other_paths_and_carries_out_the_policys_actions():
    kernel, policies = FakeKernel(), []
    d, log = daemon(kernel, policies)
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()))
    # The in-kernel PM's join on path 1, made by the daemon (the userspace PM makes none).
    assert [c["command"] for c in kernel.sent] == ["SUBFLOW_CREATE"]
    run_events(d, ("SUB_ESTABLISHED", sub_attrs(1, 41000)))
    # The stand-in answers the path-1 subflow with set_backup: SET_FLAGS with the backup flag.
    assert kernel.sent[-1]["command"] == "SET_FLAGS" and kernel.sent[-1]["addr"]["flags"] == netlink.FLAG_BACKUP
    heard = [ev["kind"] for _t, ev in policies[0].heard]
    assert heard == ["conn_created", "subflow_established", "subflow_established"]
    kinds = [r["type"] for r in log]
    assert kinds.count("command") == 2 and all(r["ok"] for r in log if r["type"] == "command")


def test_a_dry_run_sends_nothing_and_logs_the_commands():
    d, log = daemon(None)
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()))
    cmds = [r for r in log if r["type"] == "command"]
    assert len(cmds) == 1 and cmds[0]["dry_run"] and cmds[0]["command"]["command"] == "SUBFLOW_CREATE"


def test_a_refused_command_is_logged_and_the_daemon_goes_on():
    kernel = FakeKernel(refuse={"SUBFLOW_CREATE"})
    d, log = daemon(kernel)
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()),
               ("SUB_ESTABLISHED", sub_attrs(1, 41000)))
    results = [(r["command"]["command"], r["ok"]) for r in log if r["type"] == "command"]
    assert results == [("SUBFLOW_CREATE", False), ("SET_FLAGS", True)]
    assert [r.get("error") for r in log if r["type"] == "command"][0] == os.strerror(errno.EINVAL)


def test_links_reach_every_connections_policy_and_a_down_path_is_not_joined():
    kernel, policies = FakeKernel(), []
    d, _log = daemon(kernel, policies)
    d.on_link(0.5, 7, True)
    d.on_link(0.5, 8, False)
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()))
    # The connection's policy learns path 1 is down; the daemon does not join it.
    assert [ev for _t, ev in policies[0].heard][:2] == [{"kind": "conn_created", "path": 0},
                                                        {"kind": "link_down", "path": 1}]
    assert kernel.sent == []
    d.on_link(2.0, 8, True)
    assert policies[0].heard[-1] == (2.0, {"kind": "link_up", "path": 1})


def test_policy_timers_are_run_when_due():
    kernel, policies = FakeKernel(), []
    d, _log = daemon(kernel, policies)
    run_events(d, ("CREATED", conn_attrs()))
    policies[0].timer_at, policies[0].timer_actions = 3.0, [{"kind": "announce", "path": 1}]
    assert d.deadline() == 3.0
    d.on_timer(2.0)
    assert kernel.sent == []
    d.on_timer(3.0)
    assert [c["command"] for c in kernel.sent] == ["ANNOUNCE"] and d.deadline() is None
    run_events(d, ("CLOSED", {"token": TOKEN}))
    assert d.policies == {}


# --------------------------------------------------------------------------- refusals


def test_an_unknown_policy_lists_the_allowed(capsys):
    with pytest.raises(SystemExit) as e:
        pm_main(["--policy", "fullmesh", "--paths", "eth0"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'fullmesh'" in err and "fast-failback" in err and "link-aware-backup" in err


def test_not_root_is_one_line_and_changes_nothing(monkeypatch, capsys):
    monkeypatch.setattr(system.os, "geteuid", lambda: 1000)
    monkeypatch.setattr("mmpath.pm.cli.enter_netns", lambda name: pytest.fail("entered a namespace"))
    assert pm_main(["--policy", "kernel", "--paths", "eth0", "--netns", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mmpath: error: mmpath-pm needs root"), err


def test_a_namespace_that_does_not_exist_is_named(tmp_path, monkeypatch):
    monkeypatch.setattr(system, "NETNS_DIR", tmp_path)
    (tmp_path / "alpha").touch()
    with pytest.raises(system.PmError, match=r"network namespace 'nope' does not exist \(`ip netns list`: alpha\)"):
        system.enter_netns("nope")


def test_a_kernel_without_mptcp_or_with_it_off(tmp_path, monkeypatch):
    monkeypatch.setattr(system, "SYSCTL", tmp_path / "absent")
    with pytest.raises(system.PmError, match="no MPTCP"):
        system.require_mptcp("the host's namespace")
    (tmp_path / "mptcp").mkdir()
    (tmp_path / "mptcp" / "enabled").write_text("0\n")
    monkeypatch.setattr(system, "SYSCTL", tmp_path / "mptcp")
    with pytest.raises(system.PmError, match="disabled in namespace x .*net.mptcp.enabled = 0"):
        system.require_mptcp("namespace x")


def test_the_pm_setting_is_restored_as_found(tmp_path, monkeypatch):
    d = tmp_path / "mptcp"
    d.mkdir()
    (d / "pm_type").write_text("0\n")
    (d / "path_manager").write_text("kernel\n")
    monkeypatch.setattr(system, "SYSCTL", d)
    s = system.PmSetting()
    s.set_userspace()
    assert (d / "path_manager").read_text().strip() == "userspace"
    s.restore()
    assert (d / "path_manager").read_text().strip() == "kernel"
    # Already userspace: nothing written, nothing to restore.
    (d / "path_manager").write_text("userspace\n")
    s = system.PmSetting()
    s.set_userspace()
    assert not s.changed


def test_a_second_daemon_on_a_namespace_is_refused_with_the_firsts_pid(monkeypatch):
    monkeypatch.setattr(system.Lock, "NAME", f"\0mmpath-pm-test-{os.getpid()}".encode())
    first = system.Lock("namespace x")
    try:
        with pytest.raises(system.PmError, match=rf"another mmpath-pm runs on namespace x \(pid {os.getpid()}\)"):
            system.Lock("namespace x")
    finally:
        first.close()
    system.Lock("namespace x").close()  # free again once the first one is gone


# --------------------------------------------------------------------------- nl80211


def station(signal=None, signal_avg=None, rate=None) -> "object":
    """A NL80211_CMD_NEW_STATION message as the kernel sends it: encoded and decoded by pyroute2."""
    from pyroute2.netlink.nl80211 import nl80211cmd

    info = []
    if signal is not None:
        info.append(("NL80211_STA_INFO_SIGNAL", signal))
    if signal_avg is not None:
        info.append(("NL80211_STA_INFO_SIGNAL_AVG", signal_avg))
    if rate is not None:
        info.append(("NL80211_STA_INFO_TX_BITRATE", {"attrs": list(rate.items())}))
    msg = nl80211cmd()
    msg["cmd"] = 19  # NL80211_CMD_NEW_STATION
    msg["attrs"] = [("NL80211_ATTR_IFINDEX", 8), ("NL80211_ATTR_STA_INFO", {"attrs": info})]
    msg["header"]["type"] = 0x1C
    msg.encode()
    back = nl80211cmd(bytes(msg.data))
    back.decode()
    return back


def test_a_stations_signal_and_mcs():
    # The driver's average when it gives one, else the last frame's; the MCS of the PHY in use.
    assert wifi.station_quality(station(-61, -63, {"NL80211_RATE_INFO_MCS": 9})) == (-63.0, 9)
    assert wifi.station_quality(station(-70, None, {"NL80211_RATE_INFO_VHT_MCS": 7})) == (-70.0, 7)
    assert wifi.station_quality(station(-55)) == (-55.0, None)
    assert wifi.station_quality(station()) == (None, None)


def test_link_quality_events_only_on_a_change():
    tr = Translator(PATHS)
    assert tr.on_quality(8, -63.0, 9) == [{"kind": "link_quality", "path": 1, "signal_dbm": -63.0, "mcs": 9}]
    assert tr.on_quality(8, -63.0, 9) == []
    assert tr.on_quality(8, -67.0, None) == [{"kind": "link_quality", "path": 1, "signal_dbm": -67.0}]
    assert tr.on_quality(8, None, None) == [] and tr.on_quality(99, -50.0, 1) == []


def test_link_quality_reaches_the_policies():
    kernel, policies = FakeKernel(), []
    d, log = daemon(kernel, policies)
    run_events(d, ("CREATED", conn_attrs()))
    d.on_quality(1.5, 8, -70.0, 2)
    assert policies[0].heard[-1] == (1.5, {"kind": "link_quality", "path": 1, "signal_dbm": -70.0, "mcs": 2})
    assert log[-2]["type"] == "link_quality"


def test_policy_parameters_are_checked_before_anything_changes(monkeypatch, capsys):
    # The stand-in refuses what the core's binding would; the line names the policy.
    def strict(name, params):
        if params and set(params) - {"hold_s"}:
            raise ValueError(f"{name} params: {sorted(set(params) - {'hold_s'})[0]!r} is unknown (allowed: hold_s)")
        return StandIn(name, params)

    from mmpath.pm import cli

    monkeypatch.setattr(cli, "require_root", lambda: None)
    monkeypatch.setattr(cli, "enter_netns", lambda name: None)
    monkeypatch.setattr(cli, "require_mptcp", lambda where: None)
    monkeypatch.setattr(cli, "resolve_paths", lambda names, where: PATHS)
    monkeypatch.setattr(cli, "Lock", lambda where: pytest.fail("took the lock before checking the policy"))
    args = cli.build_parser().parse_args(["--policy", "recreate", "--paths", "p0c,p1c", "--param", "hold=1"])
    with pytest.raises(system.PmError, match=r"--policy recreate: recreate params: 'hold' is unknown \(allowed: hold_s\)"):
        cli.run(args, factory=strict)
    # --backup-paths goes to a policy only when it reads it.
    args = cli.build_parser().parse_args(["--policy", "recreate", "--paths", "p0c,p1c", "--backup-paths", "1",
                                          "--param", "hold_s=0.5"])
    assert cli._policy_params(strict, args) == {"hold_s": 0.5}
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["--policy", "recreate", "--paths", "a", "--param", "hold_s"])
    assert "must be KEY=VALUE" in capsys.readouterr().err


def test_a_returning_links_stale_neighbours_are_reset_before_its_first_new_subflow_only():
    order: list[str] = []
    kernel = FakeKernel()

    def send(cmd):
        order.append(cmd.describe()["command"])
        kernel(cmd)

    def returned(ifindex):
        order.append(f"reset {ifindex}")
        return ["10.199.1.1"]

    log: list[dict] = []
    d = Daemon(Translator(PATHS), "fast-failback", None, send, log.append,
               lambda n, p: StandIn(n, p, {("link_up", 0): [{"kind": "create_subflow", "path": 0}]}), returned)
    d.on_link(0.1, 7, True)  # the first report of an up link: not a return
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()))
    order.clear()
    d.on_link(2.0, 7, False)
    d.on_link(7.0, 7, True)
    assert order == ["reset 7", "SUBFLOW_CREATE"]
    assert [r for r in log if r["type"] == "neighbours_reset"] == [
        {"t_s": 7.0, "type": "neighbours_reset", "ifindex": 7, "addrs": ["10.199.1.1"]}]
    # A policy that opens nothing on the return (the old subflow's queued packets are kept), and
    # a path that did not go down, get no reset.
    order.clear()
    d.policies[TOKEN].script = {}
    d.on_link(8.0, 7, False)
    d.on_link(9.0, 7, True)
    d._carry_out(9.5, TOKEN, {"kind": "create_subflow", "path": 1}, "policy")
    assert order == ["SUBFLOW_CREATE"]


def test_a_killed_daemons_setting_is_restored_by_the_next_one(tmp_path, monkeypatch):
    d = tmp_path / "mptcp"
    d.mkdir()
    (d / "path_manager").write_text("kernel\n")
    monkeypatch.setattr(system, "SYSCTL", d)
    state = tmp_path / "run" / "ns.json"
    first = system.PmSetting(state)
    first.set_userspace()
    assert json.loads(state.read_text())["was"] == "kernel"
    # Killed here: no restore. The next daemon puts the value back before reading it.
    second = system.PmSetting(state)
    assert second.recovered == "kernel" and second.old == "kernel" and not state.exists()
    assert (d / "path_manager").read_text().strip() == "kernel"
    second.set_userspace()
    second.restore()
    assert (d / "path_manager").read_text().strip() == "kernel" and not state.exists()
    assert not state.parent.exists()  # nothing left behind


# --------------------------------------------------------------------------- transport (polled)
# The kernel has no event for a subflow's RTO or stale mark: the daemon polls each subflow's
# tcp_info (sock_diag) and the namespace's SubflowStale counter (pm/transport.py), and the
# translator makes `subflow_rto` / `subflow_stale` of them.

RECORDED = json.loads((FsPath(__file__).parent / "fixtures" / "pm" / "upload_cut.json").read_text())


def info(backoff=0, ca_state=0, unacked=0, last_ack=0, notsent=0) -> dict:
    return {"backoff": backoff, "ca_state": ca_state, "retransmits": backoff, "unacked": unacked,
            "notsent_bytes": notsent, "last_ack_recv_ms": last_ack}


def two_subflows() -> Translator:
    tr = connected()
    feed(tr, "SUB_ESTABLISHED", **sub_attrs(1, 41000))
    return tr


def kinds(out) -> list[tuple[str, int]]:
    return [(ev["kind"], ev["subflow"]) for _tok, ev, _facts in out]


def test_each_doubling_of_the_rto_in_loss_is_one_subflow_rto():
    tr = two_subflows()
    assert tr.on_transport(0.0, {(TOKEN, 0): info(), (TOKEN, 1): info()}, 0) == []
    # First RTO: backoff 1, TCP_CA_Loss; then two more between two polls: two events.
    assert kinds(tr.on_transport(0.2, {(TOKEN, 0): info(1, 4, 10, 200)}, 0)) == [("subflow_rto", 0)]
    assert kinds(tr.on_transport(0.22, {(TOKEN, 0): info(1, 4, 10, 220)}, 0)) == []
    assert kinds(tr.on_transport(1.5, {(TOKEN, 0): info(3, 4, 10, 1500)}, 0)) == [("subflow_rto", 0)] * 2
    # A valid RTT sample resets the backoff: the next RTO counts from 0 again.
    assert tr.on_transport(2.0, {(TOKEN, 0): info(0, 0, 0, 0)}, 0) == []
    assert kinds(tr.on_transport(2.3, {(TOKEN, 0): info(1, 4, 5, 300)}, 0)) == [("subflow_rto", 0)]
    # The backoff of a zero-window probe (not in Loss) is no RTO.
    assert tr.on_transport(3.0, {(TOKEN, 1): info(2, 0, 0, 50)}, 0) == []
    # A subflow the daemon does not know, or a socket gone meanwhile, is nothing.
    assert tr.on_transport(3.1, {(TOKEN, 7): info(5, 4, 1, 1), (99, 0): info(5, 4, 1, 1), (TOKEN, 0): None}, 0) == []


def test_a_rise_of_the_stale_counter_marks_the_subflow_whose_last_ack_is_oldest():
    tr = two_subflows()
    # The first reading is the baseline, whatever it is (other connections' marks before).
    assert tr.on_transport(0.0, {(TOKEN, 0): info(unacked=5), (TOKEN, 1): info(unacked=5)}, 3) == []
    out = tr.on_transport(1.0, {(TOKEN, 0): info(unacked=9, last_ack=48), (TOKEN, 1): info(unacked=4, last_ack=0)}, 4)
    assert kinds(out) == [("subflow_stale", 0)] and out[0][1]["path"] == 0 and out[0][2]["stale_counter"] == 4
    # Not marked again while it hears no ACK; the next rise is another subflow's.
    assert tr.on_transport(1.5, {(TOKEN, 0): info(unacked=9, last_ack=548), (TOKEN, 1): info(unacked=4)}, 4) == []
    assert kinds(tr.on_transport(1.6, {(TOKEN, 0): info(unacked=9, last_ack=648),
                                       (TOKEN, 1): info(unacked=4, last_ack=30)}, 5)) == [("subflow_stale", 1)]
    # An ACK on subflow 0 (its last ACK now later than when it was marked): it can be marked again.
    tr.on_transport(2.0, {(TOKEN, 0): info(unacked=2, last_ack=0), (TOKEN, 1): info(unacked=4, last_ack=430)}, 5)
    assert kinds(tr.on_transport(2.5, {(TOKEN, 0): info(unacked=2, last_ack=500),
                                       (TOKEN, 1): info(unacked=4, last_ack=930)}, 6)) == [("subflow_stale", 0)]


def test_a_stale_mark_needs_data_queued_and_another_subflow():
    tr = connected()  # one subflow: the kernel marks none stale without an alternative
    tr.on_transport(0.0, {(TOKEN, 0): info(unacked=5)}, 0)
    assert tr.on_transport(1.0, {(TOKEN, 0): info(unacked=5, last_ack=900)}, 1) == []
    tr = two_subflows()
    tr.on_transport(0.0, {(TOKEN, 0): info(), (TOKEN, 1): info()}, 0)
    # Nothing in flight anywhere: the rise is another connection's.
    assert tr.on_transport(1.0, {(TOKEN, 0): info(last_ack=900), (TOKEN, 1): info(last_ack=10)}, 1) == []
    assert tr.stale_unattributed == 1
    # Data written but not sent counts (the kernel's test is both queues: tcp_rtx_and_write_queues_empty).
    assert kinds(tr.on_transport(2.0, {(TOKEN, 0): info(notsent=1000, last_ack=1900),
                                       (TOKEN, 1): info(last_ack=10)}, 2)) == [("subflow_stale", 0)]


def test_the_baseline_is_read_again_after_the_last_connection_closed():
    tr = two_subflows()
    tr.on_transport(0.0, {(TOKEN, 0): info(unacked=1)}, 0)
    feed(tr, "CLOSED", token=TOKEN)
    assert tr.stale_seen is None
    tr = two_subflows()
    # Marks of whatever ran in the namespace meanwhile are not this connection's.
    assert tr.on_transport(5.0, {(TOKEN, 0): info(unacked=5, last_ack=500), (TOKEN, 1): info(unacked=1)}, 7) == []


def test_the_recorded_upload_cut_gives_one_stale_mark_and_the_rtos_of_path_0():
    """Replays what the poll read on this machine's kernel (tests/fixtures/pm/record_tcp_info.py):
    path 0's carrier away from 1.03 to 3.02 s during an MPTCP upload. The kernel marked path 0's
    subflow stale 48 ms after the cut (the counter's one rise), and its RTO doubled three times
    (backoff 1, 2, 3) before the link came back."""
    paths = [Path(k, f"p{k}c", 7 + k, a) for k, a in enumerate(RECORDED["paths"])]
    tr = Translator(paths)
    socks = {s["local"]: s for p in RECORDED["polls"] for s in p["socks"]}
    first = socks[RECORDED["paths"][0]]
    conn = conn_attrs(saddr4=first["local"], sport=first["sport"], daddr4=first["remote"], dport=first["dport"])
    assert [ev for _t, ev in tr.on_mptcp("CREATED", conn)] and tr.on_mptcp("ESTABLISHED", conn)
    other = socks[RECORDED["paths"][1]]
    tr.on_mptcp("SUB_ESTABLISHED", {**conn, "saddr4": other["local"], "sport": other["sport"], "if_idx": 8})
    ids = {sf.local.port: sf.id for sf in tr.conns[TOKEN].subflows.values()}
    events = []
    for p in RECORDED["polls"]:
        samples = {(TOKEN, ids[s["sport"]]): {k: s[k] for k in info()} for s in p["socks"]}
        events += [(p["t_s"], ev["kind"], ev["path"]) for _tok, ev, _f in tr.on_transport(p["t_s"], samples,
                                                                                        p["stale_counter"])]
    cut, back = RECORDED["cut_s"], RECORDED["back_s"]
    assert [(k, path) for _t, k, path in events] == [("subflow_stale", 0)] + [("subflow_rto", 0)] * 3, events
    assert all(cut < t < back for t, _k, _p in events), events
    rtos = [t for t, k, _p in events if k == "subflow_rto"]
    # RTO ~212 ms, doubling: the first ~0.23 s after the cut, then ~0.4 s and ~0.8 s apart.
    assert 0.15 < rtos[0] - cut < 0.3 and 0.3 < rtos[1] - rtos[0] < 0.5 and 0.6 < rtos[2] - rtos[1] < 1.0, rtos


def test_the_daemon_feeds_the_polled_events_and_logs_what_they_were_read_from():
    policies = []
    d, log = daemon(FakeKernel(), policies)
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()), ("SUB_ESTABLISHED", sub_attrs(1, 41000)))
    d.on_transport(1.0, {(TOKEN, 0): info(unacked=3), (TOKEN, 1): info(unacked=3)}, 0)
    d.on_transport(1.2, {(TOKEN, 0): info(1, 4, 3, 200), (TOKEN, 1): info(unacked=3)}, 1)
    assert policies[0].heard[-2:] == [(1.2, {"kind": "subflow_rto", "path": 0, "subflow": 0}),
                                      (1.2, {"kind": "subflow_stale", "path": 0, "subflow": 0})]
    recs = [r for r in log if r["type"] == "transport"]
    assert [(r["event"], r["path"], r["subflow"], r["backoff"]) for r in recs] == [
        ("subflow_rto", 0, 0, 1), ("subflow_stale", 0, 0, 1)]
    assert recs[1]["stale_counter"] == 1 and recs[1]["last_ack_recv_ms"] == 200
    # A rise no managed subflow can account for is logged as such, and told to no policy.
    heard = len(policies[0].heard)
    d.on_transport(1.4, {(TOKEN, 0): info(0, 0, 0, 0), (TOKEN, 1): info(0, 0, 0, 0)}, 2)
    assert len(policies[0].heard) == heard
    assert [r for r in log if r["type"] == "transport"][-1] == {
        "t_s": 1.4, "type": "transport", "event": "stale_unattributed", "count": 1, "stale_counter": 2}


def test_a_dry_run_prints_the_polled_events(capsys):
    from mmpath.pm.daemon import JsonLog

    log = JsonLog(None, echo=True)
    log({"t_s": 1.0, "type": "transport", "event": "subflow_rto", "path": 0, "subflow": 0})
    log({"t_s": 1.0, "type": "policy_event", "event": {}})
    (line,) = capsys.readouterr().out.splitlines()
    assert json.loads(line)["event"] == "subflow_rto"


def test_the_stale_counter_is_read_from_the_mptcp_lines_of_netstat():
    text = ("TcpExt: SyncookiesSent SubflowStale\nTcpExt: 0 9\n"
            "MPTcpExt: MPCapableSYNRX SubflowStale SubflowRecover\nMPTcpExt: 4 2 1\n")
    assert transport.stale_counter(text) == 2
    assert transport.stale_counter("MPTcpExt: MPCapableSYNRX\nMPTcpExt: 4\n") is None
    assert transport.stale_counter("") is None


def test_a_subflows_tcp_info_is_looked_up_by_its_addresses_and_ports():
    """sock_diag needs no root: a TCP connection of this test's own, found by its four
    (address, port) and read through pyroute2's inet_diag classes."""
    try:
        tcp = transport.TcpInfo()
    except system.PmError as e:
        pytest.skip(str(e))
    srv = socket.create_server(("127.0.0.1", 0))
    c = socket.create_connection(srv.getsockname())
    a, _ = srv.accept()
    try:
        (laddr, lport), (raddr, rport) = c.getsockname(), c.getpeername()
        got = tcp.lookup(netlink.Endpoint(laddr, lport), netlink.Endpoint(raddr, rport))
        assert got is not None and got["backoff"] == 0 and got["ca_state"] == 0 and got["unacked"] == 0
        assert set(got) == set(info())
        assert tcp.lookup(netlink.Endpoint(laddr, lport), netlink.Endpoint(raddr, rport + 1)) is None
    finally:
        for s in (a, c, srv):
            s.close()
        tcp.close()


def test_without_sock_diag_the_daemon_says_what_it_needs(monkeypatch):
    monkeypatch.setattr(transport.TcpInfo, "_probe", lambda self: errno.ENOENT)
    with pytest.raises(system.PmError) as e:
        transport.TcpInfo()
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith("inet_diag for TCP is unavailable (No such file or directory)")
    assert "subflow_rto and subflow_stale" in msg and "modprobe tcp_diag" in msg
    monkeypatch.setattr(transport.TcpInfo, "_probe", lambda self: 0)
    monkeypatch.setattr(transport, "read_stale_counter", lambda: None)
    with pytest.raises(system.PmError, match="have no SubflowStale"):
        transport.TcpInfo()


def test_a_poll_reads_every_managed_subflow_and_the_counter(monkeypatch):
    from mmpath.pm import daemon as daemon_mod

    class FakeTcp:
        def __init__(self):
            self.asked = []

        def lookup(self, local, remote):
            self.asked.append((local.addr, local.port, remote.addr, remote.port))
            return info(1, 4, 3, 220) if local.addr == PATHS[0].addr else info(unacked=3)

    policies = []
    d, _log = daemon(FakeKernel(), policies)
    run_events(d, ("CREATED", conn_attrs()), ("ESTABLISHED", conn_attrs()), ("SUB_ESTABLISHED", sub_attrs(1, 41000)))
    counter = iter([0, 1])
    monkeypatch.setattr(daemon_mod, "read_stale_counter", lambda: next(counter))
    tcp = FakeTcp()
    daemon_mod.poll_transport(d, tcp, 1.0)
    assert sorted(tcp.asked) == [("10.199.1.2", 40000, SERVER, 5201), ("10.199.2.2", 41000, SERVER, 5201)]
    daemon_mod.poll_transport(d, tcp, 1.02)
    # The RTO came with the first reading (backoff 0 -> 1 in Loss), the stale mark with the rise.
    assert [ev["kind"] for _t, ev in policies[0].heard[-2:]] == ["subflow_rto", "subflow_stale"]


# --------------------------------------------------------------------------- --link-feed


def test_a_feed_datagram_is_checked_and_read(tmp_path):
    from mmpath.pm.feed import LinkFeed
    sock = tmp_path / "feed.sock"
    f = LinkFeed(str(sock), ["p0c", "p1c"])
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            for rep in ({"interface": "p0c", "up": False}, {"interface": "p1c", "signal_dbm": -61.5, "mcs": 8},
                        {"interface": "wlan9", "up": True}, {"interface": "p0c"},
                        {"interface": "p0c", "up": "yes"}, {"interface": "p0c", "mcs": 40},
                        {"interface": "p0c", "signal_dbm": float("nan")}, {"interface": "p0c", "rssi": -50},
                        {"interface": "p1c", "scan": True}, {"interface": "p1c", "scan": 1}):
                s.sendto(json.dumps(rep).encode(), str(sock))
            s.sendto(b"\xff not json", str(sock))
        got = f.read()
        assert got[:2] == [{"interface": "p0c", "up": False}, {"interface": "p1c", "signal_dbm": -61.5, "mcs": 8}]
        assert got[8] == {"interface": "p1c", "scan": True}
        errors = [g["error"] for g in got[2:8] + got[9:]]
        assert errors == ["interface 'wlan9' is not one of --paths (p0c, p1c)",
                          "gives none of up, signal_dbm, mcs, scan",
                          "up must be true or false (got 'yes')", "mcs must be an integer 0..31 (got 40)",
                          "signal_dbm must be a number of dBm in -150..30 (got nan)",
                          "unknown field 'rssi' (allowed: interface, up, signal_dbm, mcs, scan)",
                          "scan must be true or false (got 1)", "not JSON"]
        assert f.read() == []
    finally:
        f.close()
    assert not sock.exists()  # the socket goes with the daemon


def test_a_feed_socket_where_something_is_is_refused(tmp_path):
    from mmpath.pm.feed import LinkFeed
    taken = tmp_path / "taken"
    taken.write_text("x")
    with pytest.raises(system.PmError, match="exists and is a file"):
        LinkFeed(str(taken), ["p0c"])
    assert taken.read_text() == "x"
    with pytest.raises(system.PmError, match="cannot create the socket"):
        LinkFeed(str(tmp_path / "no" / "dir" / "s"), ["p0c"])


def test_a_fed_carrier_and_quality_reach_the_policies_and_rtnetlink_no_longer_speaks_for_it():
    kernel, policies = FakeKernel(), []
    d, log = daemon(kernel, policies)
    run_events(d, ("CREATED", conn_attrs()))
    d.on_link(0.5, 7, True)  # rtnetlink: the veth is up
    d.on_feed(1.0, {"interface": "p0c", "up": False})
    assert policies[0].heard[-1] == (1.0, {"kind": "link_down", "path": 0})
    d.on_link(1.2, 7, True)  # the veth's carrier, still up, is not the radio's
    assert policies[0].heard[-1] == (1.0, {"kind": "link_down", "path": 0})
    d.on_feed(1.5, {"interface": "p0c", "signal_dbm": -67.0, "mcs": 1})
    assert policies[0].heard[-1] == (1.5, {"kind": "link_quality", "path": 0, "signal_dbm": -67.0, "mcs": 1})
    d.on_feed(2.0, {"interface": "p0c", "up": True})
    assert policies[0].heard[-1] == (2.0, {"kind": "link_up", "path": 0})
    d.on_feed(2.5, {"error": "not JSON", "datagram": "x"})
    assert log[-1]["type"] == "feed_error" and policies[0].heard[-1][0] == 2.0


def test_a_fed_scan_reaches_the_policies_once_per_change_and_link_aware_backup_rides_it_out():
    kernel, policies = FakeKernel(), []
    d, log = daemon(kernel, policies)
    run_events(d, ("CREATED", conn_attrs()))
    d.on_feed(1.0, {"interface": "p1c", "scan": True})
    assert policies[0].heard[-1] == (1.0, {"kind": "scan_start", "path": 1})
    n = len(policies[0].heard)
    d.on_feed(1.05, {"interface": "p1c", "scan": True})  # no change: nothing new
    assert len(policies[0].heard) == n
    d.on_feed(1.1, {"interface": "p1c", "scan": False})
    assert policies[0].heard[-1] == (1.1, {"kind": "scan_end", "path": 1})
    assert [e["scanning"] for e in log if e["type"] == "scan"] == [True, False]
    # The bundled policy (the simulator's own, through _core): a scanning path is demoted for
    # the scan's length and restored at its end.
    from mmpath import _core
    pol = _core.PathManagerPolicy("link-aware-backup", {})
    pol.on_event(0.0, {"kind": "conn_created", "path": 0})
    acts = pol.on_event(0.0, {"kind": "subflow_established", "path": 0, "subflow": 0})
    acts += pol.on_event(0.0, {"kind": "subflow_established", "path": 1, "subflow": 1})
    start = pol.on_event(1.0, {"kind": "scan_start", "path": 0})
    assert {"kind": "set_backup", "path": 0} in start, start
    end = pol.on_event(1.1, {"kind": "scan_end", "path": 0})
    assert {"kind": "clear_backup", "path": 0} in end, end


def test_the_emulators_feed_reports_each_change_of_a_radio_channel_record():
    from mmpath.emu.linkfeed import reports
    csv = ("t_s,rate_mbps,mcs,link_up,rssi_dbm,snr_db,sector\n0,,8,1,-41.5,,\n4,,,0,,,\n6.5,,,1,,,\n"
           "7,,3,,-70.25,,\n7.1,,3,,-70.25,,\n12,,,,,,\n")
    got = reports(csv, "p0c", 9.0)
    assert got == [(0.0, {"interface": "p0c", "up": True, "mcs": 8, "signal_dbm": -32.5}),
                   (4.0, {"interface": "p0c", "up": False}), (6.5, {"interface": "p0c", "up": True}),
                   (7.0, {"interface": "p0c", "mcs": 3, "signal_dbm": -61.25})]
