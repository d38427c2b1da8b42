"""bench/emu_bench.py's reading of an emulator run's ss.log (never runs the bench itself)."""

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench" / "emu_bench.py"


def _bench():
    spec = importlib.util.spec_from_file_location("emu_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sender_rtt_is_the_data_senders_not_the_control_connections(tmp_path):
    # iperf3's control connection (few bytes, its own small RTT) and the data socket, sampled
    # twice: the data socket's smallest minrtt and median srtt are the flow's.
    ctl = ("ESTAB 0 0 10.198.0.1:5201 10.199.1.2:40000 cubic wscale:7,7 rto:204 rtt:0.05/0.02 minrtt:0.03 "
           "mss:1448 cwnd:10 bytes_acked:200 bytes_received:40")
    data = ("ESTAB 0 90000 10.198.0.1:5201 10.199.1.2:40002 cubic wscale:7,7 rto:221 rtt:{}/0.4 minrtt:{} "
            "mss:1448 cwnd:40 bytes_acked:{} bytes_received:37")
    log = tmp_path / "ss.log"
    log.write_text("\n".join([
        "# mmpath-capture ss t=1795330143.190402",
        "State Recv-Q Send-Q Local Address:Port Peer Address:Port Process",
        ctl, data.format(20.6, 20.1, 1_000_000),
        "# mmpath-capture ss t=1795330143.240402",
        "State Recv-Q Send-Q Local Address:Port Peer Address:Port Process",
        ctl, data.format(20.9, 20.05, 2_000_000),
        "# mmpath-capture ss t=1795330143.290402",
        "State Recv-Q Send-Q Local Address:Port Peer Address:Port Process",
        ctl, data.format(21.4, 20.05, 3_000_000),
    ]) + "\n")
    got = _bench().sender_rtt_ms(log)
    assert got == {"min_rtt_ms": 20.05, "srtt_median_ms": 20.9, "samples": 3}


def test_sender_rtt_of_an_empty_log(tmp_path):
    log = tmp_path / "ss.log"
    log.write_text("# mmpath-capture ss t=1795330143.190402\nState Recv-Q Send-Q Local Address:Port Peer\n")
    assert _bench().sender_rtt_ms(log) == {"min_rtt_ms": None, "srtt_median_ms": None, "samples": 0}
