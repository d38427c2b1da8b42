"""The emulator's planning, without root or traffic: which delay each path's queue gets, which TCP
settings go where or are refused, what several flows must share, and the TCP ACK load the
capacity probe adds. (tests/test_emu.py runs the real thing as root.)"""

from __future__ import annotations

import numpy as np
import pytest

from mmpath import api
from mmpath.emu import capacity, checks, delay, tcpconf
from mmpath.scenario import load_scenario
from mmpath.emu.errors import EmuError


def _cfg(paths: list[dict], flows: list[dict], backbone: dict | None = None) -> dict:
    return {"backbone": backbone if backbone is not None else {"delay_ms": 0.5}, "path": paths, "flow": flows}


def test_each_path_queue_holds_the_backbone_delay_plus_its_own():
    cfg = _cfg([{"name": "a", "delay_ms": 2.0}, {"name": "b"}], [], backbone={"delay_ms": 25.0})
    assert delay.one_way_us(cfg) == [27_000, 25_000]
    assert checks.base_rtt_ms(cfg) == 54.0
    # A disabled backbone adds nothing (the AP is the server).
    assert delay.one_way_us(_cfg([{"name": "a", "delay_ms": 1.5}], [], {"enabled": False, "delay_ms": 9})) == [1500]


def test_tcp_settings_become_iperf3_options_only_where_linux_takes_them_per_socket():
    assert tcpconf.iperf_args({"kind": "tcp", "tcp": {"pacing": True}}) == ["--fq-rate", tcpconf.PACING_CAP]
    assert tcpconf.iperf_args({"kind": "tcp", "tcp": {"rcvbuf_bytes": 65536, "sndbuf_bytes": 65536}}) == \
        ["-w", "65536"]
    assert tcpconf.iperf_args({"kind": "tcp", "tcp": {"rcvbuf_bytes": "auto", "sndbuf_bytes": "auto"}}) == []
    assert tcpconf.iperf_args({"kind": "udp", "tcp": {"pacing": True}}) == []


@pytest.mark.parametrize("tcp, message", [
    ({"hystart": False}, "flow.2.tcp.hystart: false cannot be emulated"),
    ({"limit_output_bytes": 0}, "flow.2.tcp.limit_output_bytes: 0 (TCP Small Queues off) has no Linux equivalent"),
    ({"rcvbuf_bytes": 4096, "sndbuf_bytes": 8192}, "flow.2.tcp: rcvbuf_bytes 4096 and sndbuf_bytes 8192 differ"),
    ({"rcvbuf_bytes": 4096, "sndbuf_bytes": "auto"}, "flow.2.tcp: one of rcvbuf_bytes / sndbuf_bytes is a number"),
])
def test_settings_without_a_per_namespace_form_are_refused_naming_the_flow(tcp, message):
    with pytest.raises(EmuError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tcpconf.check({"kind": "tcp", "cc": "cubic", "tcp": tcp}, 2)


def test_hystart_off_is_fine_for_a_controller_without_it():
    tcpconf.check({"kind": "tcp", "cc": "bbr", "tcp": {"hystart": False}}, 0)


def test_several_flows_share_what_the_kernel_sets_per_namespace():
    paths = [{"name": "a"}, {"name": "b"}]
    tcp = {"kind": "tcp", "cc": "reno", "path": "a"}
    # Both directions and different controllers are fine (per socket).
    assert len(checks.scenario(_cfg(paths, [{**tcp, "name": "x"}, {**tcp, "name": "y", "cc": "cubic",
                                                                    "direction": "upload"}]))) == 2
    with pytest.raises(EmuError, match=r"flow.1.tcp differs from flow.0.tcp"):
        checks.scenario(_cfg(paths, [{**tcp, "name": "x"}, {**tcp, "name": "y", "tcp": {"min_rto_ms": 300}}]))
    mp = {"kind": "mptcp", "cc": "cubic", "kernel": "linux-upstream", "scheduler": "default", "paths": ["a", "b"]}
    with pytest.raises(EmuError, match=r"flow.1.mode: 'backup' differs from flow.0's 'fullmesh'"):
        checks.scenario(_cfg(paths, [{**mp, "name": "x", "mode": "fullmesh"}, {**mp, "name": "y", "mode": "backup"}]))
    with pytest.raises(EmuError, match=r"flow: the emulator runs 1 to 8 flows \(got 9\)"):
        checks.scenario(_cfg(paths, [{**tcp, "name": f"f{i}"} for i in range(9)]))


def test_the_probe_adds_one_ack_per_two_full_segments():
    # A capacity of 1000 Mbit/s of 1500-byte IP packets: 1000e6 / 8 / 1500 full segments a
    # second, half as many 52-byte ACKs; a bin with the link down does not count toward the mean.
    cap = capacity.Capacity(path="a", bin_s=0.1, mbps=np.array([1000.0, 0.0, 1000.0]))
    expected = 1000e6 / 8 / 1500 / 2 * 52 * 8 / 1e6
    assert capacity._ack_mbps(cap, 1500) == pytest.approx(expected)
    assert capacity._ack_mbps(capacity.Capacity(path="a", bin_s=0.1, mbps=np.zeros(3)), 1500) == 0.0


def test_a_capacity_is_a_rate_of_ip_packets_and_htb_is_given_frames():
    """The probe's UDP payload rate was handed to HTB, which charges each packet its Ethernet
    frame: TCP got (MTU - 28) / (MTU + 14) of the link (the emulator bench: 937 Mbit/s of TCP on a
    1000 Mbit/s wired link at MTU 1500, 988 at 7912; the simulator 965 and 993)."""
    from mmpath.emu import shaper
    from mmpath.scenario import load_scenario

    for mtu in (1500, 7912):
        cfg = load_scenario("11ad-bulk", {"path.0.rate_mbps": 1000, "path.0.mtu_bytes": mtu}).config
        cap = capacity.probe(cfg, 0, "download", 1.0, 1, tcp=False)
        # The wired link carries 1000 Mbit/s of IP packets, whatever their size.
        assert cap.mbps[2:].mean() == pytest.approx(1000.0, rel=2e-3), mtu
        assert shaper.htb_mbps(1000.0, mtu) == pytest.approx(1000.0 * (mtu + 14) / mtu)
        args = shaper._rate_args(1000.0, mtu)
        assert args[1] == f"{1000.0 * (mtu + 14) / mtu:.3f}mbit"
    # A wired path faster than the probe's usual 5000 Mbit/s is offered more than it carries.
    cfg = load_scenario("11ad-bulk", {"path.0.rate_mbps": 8000, "path.0.mtu_bytes": 7912}).config
    assert capacity.offered_mbps(cfg["path"][0]) == 16000.0
    assert capacity.probe(cfg, 0, "download", 0.5, 1, tcp=False).mbps[2:].mean() == pytest.approx(8000.0, rel=2e-3)


def test_a_path_is_a_line_rate_link_one_packet_of_about_a_millisecond():
    """The senders' packets are bounded to ~1 ms of their path's link (gso.py) and the HTB bucket
    is about one such packet (shaper.py): at 100 Mbit/s, 8 frames and 1 ms of frames, where the
    bucket was two 64 KiB packets (131 584 bytes, 10.5 ms), which let BBR's 1.25 x probing pass
    at veth speed (docs/models.md, x-kernel)."""
    from mmpath.emu import gso, shaper

    frame = 1514
    assert gso.frames_per_packet(100.0, 1500) == 8  # 12 500 bytes in 1 ms: 8 whole frames
    assert gso.frames_per_packet(10.0, 1500) == 1  # one frame is more than 1 ms: one frame
    assert gso.frames_per_packet(0.01, 1500) == 1
    assert gso.frames_per_packet(200.0, 9000) == 2
    # Above ~545 Mbit/s the kernel's own 64 KiB cap (45 segments at MTU 1500) binds first.
    assert gso.frames_per_packet(1400.0, 1500) == 115
    assert gso.frames_per_packet(1e9, 1500) == gso.GSO_MAX_SEGS
    # The bucket: 1 ms of the class's frames, at least one frame; no longer two 64 KiB packets.
    assert shaper.burst_bytes(100.0, 1500) == int(shaper.htb_mbps(100.0, 1500) * 1e6 / 8 * 0.001) == 12_616
    assert shaper.burst_bytes(100.0, 1500) < 2 * gso.frames_per_packet(100.0, 1500) * frame
    assert shaper.burst_bytes(1.0, 1500) == frame
    assert shaper.burst_bytes(1400.0, 1500) == 176_633  # 1 ms: Gbit/s keeps its timer slack
    args = shaper._rate_args(100.0, 1500)
    assert args[args.index("burst") + 1] == args[args.index("cburst") + 1] == "12616"


def test_each_sender_interface_gets_the_bound_of_the_slowest_path_it_feeds():
    from mmpath.emu import gso

    # A download over paths of 200 and 10 Mbit/s leaves the server by its one backbone interface:
    # the 10 Mbit/s path's one frame binds it. An upload leaves by the path's own interface.
    # A path never up (no rate) sets nothing.
    bounds = gso.plan([("s-srv", "bb0", 1500, 200.0), ("s-srv", "bb0", 1500, 10.0),
                       ("s-cli", "p0c", 1500, 100.0), ("s-cli", "p1c", 1500, None)])
    assert bounds == {("s-srv", "bb0"): 1, ("s-cli", "p0c"): 8}
    # A radio's capacity: the median of its bins with the link up, not the dips nor the outage.
    assert gso.typical_rate_mbps([1400.0, 1380.0, 0.0, 0.0, 30.0, 1410.0, 1420.0]) == 1400.0
    assert gso.typical_rate_mbps([0.0, 0.0]) is None


def test_every_socket_is_born_with_a_congestion_control_that_does_not_pace():
    """Born BBR (this kernel's CONFIG_DEFAULT_TCP_CONG), a socket keeps BBR's internal pacing
    after iperf3 -C switches it to CUBIC (tcpconf.py); Reno is allowed in any namespace."""
    tcp = {"kind": "tcp", "path": "a"}
    assert tcpconf.default_cc([{**tcp, "cc": "cubic"}]) == "reno"
    assert tcpconf.default_cc([{**tcp}]) == "reno"  # cubic by default
    assert tcpconf.default_cc([{**tcp, "cc": "bbr"}, {"kind": "mptcp", "cc": "bbr"}]) == "bbr"
    assert tcpconf.default_cc([{**tcp, "cc": "bbr"}, {**tcp, "cc": "cubic"}]) == "reno"
    assert tcpconf.default_cc([{"kind": "udp"}]) is None


def test_without_a_backbone_each_direction_is_delayed_and_lost_where_it_arrives():
    """The server in the AP's namespace (emu/netns.py `colocated`): nothing is forwarded, so the
    delay line's and the random loss's rules are on the INPUT chain of the namespace each
    direction arrives in (after the link's queue, the packet without its socket), and the
    server's routes to the client leave from its own address. With a backbone: the AP's FORWARD
    chain, either way, as before."""
    from mmpath.emu import netns

    link = netns.PathLink(index=0, name="a", mtu=1500, cli_if="p0c", ap_if="p0a", cli_addr="10.199.1.2",
                          ap_addr="10.199.1.1")
    both = netns.Topology(tag="t", paths=[link], colocated=True)
    assert both.srv == both.ap == "t-ap" and both.namespaces == ["t-cli", "t-ap"]
    assert netns.packet_hooks(both, 0) == [("t-cli", "cli", [["INPUT", "-i", "p0c"]]),
                                           ("t-ap", "ap", [["INPUT", "-i", "p0a"]])]
    assert netns.routes(both)["t-ap"] == [["10.199.1.0/24", "dev", "p0a", "proto", "kernel", "scope", "link",
                                          "src", netns.SERVER_ADDR]]
    routed = netns.Topology(tag="t", paths=[link])
    assert routed.srv == "t-srv" and routed.namespaces == ["t-cli", "t-ap", "t-srv"]
    assert netns.packet_hooks(routed, 0) == [("t-ap", "ap", [["FORWARD", "-i", "bb1", "-o", "p0a"],
                                                             ["FORWARD", "-i", "p0a", "-o", "bb1"]])]


def test_the_servers_own_interface_loses_a_down_link_s_packets_in_a_blackhole():
    """A FIFO of limit 0 refuses a packet to its sender (NET_XMIT_DROP: local congestion to the
    server's TCP); a blackhole takes and loses it (emu/shaper.py). Only the colocated server's
    interface is `silent`; every other gate is the FIFO, as before."""
    from mmpath.emu import shaper

    assert shaper.leaf(150_000, True, True) == shaper.leaf(150_000, True, False) == "bfifo limit 150000"
    assert shaper.leaf(150_000, False, True) == "blackhole"
    assert shaper.leaf(150_000, False, False) == "bfifo limit 0"


def _one_udp(path: dict, rate_mbps: float = 2.0, **flow) -> dict:
    return {"duration_s": 1.0, "backbone": {"enabled": False}, "path": [path],
            "flow": [{"kind": "udp", "rate_mbps": rate_mbps, **flow}]}


def test_a_udp_flow_reports_its_one_way_delay_send_to_arrival():
    # A wired path's one-way delay on an idle link: its propagation plus one frame's
    # serialisation (1500 bytes at 100 Mbit/s: 0.12 ms), every datagram alike.
    res = api.simulate(load_scenario(_one_udp({"rate_mbps": 100, "delay_ms": 5.0}), seed=1))
    d = res.summary["flows"][0]["delay_ms"]
    assert d["min"] == pytest.approx(5.12, abs=0.01) and d["max"] == pytest.approx(5.12, abs=0.01)
    assert d["mean"] == pytest.approx(5.12, abs=0.01)
    # A saturated path queues: the mean grows far above the least.
    res = api.simulate(load_scenario(_one_udp({"rate_mbps": 100, "delay_ms": 5.0}, rate_mbps=200), seed=1))
    d = res.summary["flows"][0]["delay_ms"]
    assert d["mean"] > d["min"] + 10


def test_a_radio_paths_access_latency_is_its_macs_on_an_idle_channel_and_a_wired_paths_is_none():
    wired = _one_udp({"rate_mbps": 100, "delay_ms": 5.0})
    assert capacity.access_latency_us(load_scenario(wired, seed=1).config, 0, "download", 1) == 0
    ac = {"technology": "11ac", "rssi_dbm": -50.0, "bandwidth_mhz": 40,
          "event": [{"kind": "blockage", "t_s": 0.2, "duration_s": 0.5}]}
    cfg = load_scenario(_one_udp(ac), seed=1).config
    us = capacity.access_latency_us(cfg, 0, "download", 1)
    # AIFS, the PPDU (preamble and airtime of one MPDU) and the Block Ack: between a tenth and a
    # half millisecond each way, far above a veth's few microseconds; the path's events (here a
    # blockage that would hold the probe's frames for half a second) are not in it.
    assert 100 <= us <= 500, us
    assert capacity.access_latency_us(cfg, 0, "download", 1) == us  # the seed's, every time
    ad = {"technology": "11ad", "distance_m": 3.0, "mtu_bytes": 7912}
    assert 20 <= capacity.access_latency_us(load_scenario(_one_udp(ad), seed=1).config, 0, "download", 1) < us


def test_the_access_latency_is_the_macs_alone_without_the_backbone_or_the_propagation_delay():
    ac = {"technology": "11ac", "rssi_dbm": -50.0, "bandwidth_mhz": 40}
    alone = capacity.access_latency_us(load_scenario(_one_udp(ac), seed=1).config, 0, "download", 1)
    far = {"duration_s": 1.0, "backbone": {"enabled": True, "delay_ms": 5.0},
           "path": [{**ac, "delay_ms": 3.0}], "flow": [{"kind": "udp", "rate_mbps": 2.0}]}
    assert capacity.access_latency_us(load_scenario(far, seed=1).config, 0, "download", 1) == alone


def test_tcps_ack_load_is_probed_only_while_tcp_uses_the_path():
    # The bundled 11ad-radio: TCP for 3 s, then UDP. The UDP phase carries no ACKs, so its
    # capacity is the radio's without their airtime (the emulator shaped it at TCP's before).
    from mmpath.emu import _tcp_span

    cfg = load_scenario("11ad-radio", {"duration_s": 4.0, "flow.0.stop_s": 2.0, "flow.1.start_s": 2.0}).config
    names = [p["name"] for p in cfg["path"]]
    assert _tcp_span(cfg["flow"], "11ad", names, 4.0) == (0.0, 2.0)
    assert _tcp_span([{"kind": "udp", "path": "11ad"}], "11ad", names, 4.0) is None
    mptcp = [{"kind": "mptcp", "paths": ["a", "b"], "start_s": 1.0}, {"kind": "tcp", "path": "b", "stop_s": 3.0}]
    assert _tcp_span(mptcp, "b", ["a", "b"], 5.0) == (0.0, 5.0)
    assert _tcp_span(mptcp, "a", ["a", "b"], 5.0) == (1.0, 5.0)
    whole = capacity.probe(cfg, 0, "download", 4.0, 1, tcp=True).mbps
    phased = capacity.probe(cfg, 0, "download", 4.0, 1, tcp=(0.0, 2.0)).mbps
    assert phased[:20].mean() == pytest.approx(whole[:20].mean(), rel=0.02)
    assert phased[20:].mean() > 1.1 * whole[20:].mean(), (phased[20:].mean(), whole[20:].mean())
    assert capacity.probe(cfg, 0, "download", 4.0, 1, tcp=None).mbps[20:].mean() == pytest.approx(
        phased[20:].mean(), rel=0.01)
