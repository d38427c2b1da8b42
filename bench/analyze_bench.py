"""Speed of `mmpath analyze` on a 1 GB pcap of a multi-Gbps TCP run (issue 7). Needs root.

    sudo .venv/bin/python bench/analyze_bench.py [--size-mb 1024] [--snaplen 0] [--keep]

Makes the capture on this machine: two network namespaces joined by a veth pair (no rate limit),
TSO/GSO/GRO switched off with ethtool so the capture holds MTU-sized packets as a NIC capture would
(with offloads on, tcpdump on veth sees 64 KB super-packets and 1 GB would be only ~16k packets),
`iperf3 -c` at full speed, `tcpdump -s SNAPLEN` on the receiver's veth until the file reaches the size.
Then times, in this process:

1. the pcap reader alone (mmpath.analyze.pcap.read: one streaming pass + per-flow analysis), and
2. the whole `mmpath analyze FILE --out DIR` (alignment, metrics, Parquet, report.html).

Prints one JSON line with the numbers (file size, packets, iperf3 rate, seconds, packets/s). The
pcap is written under /tmp and deleted afterwards unless --keep; it is never committed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

A, B = "mmbench-a", "mmbench-b"


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, **kw)


def setup() -> None:
    teardown()
    sh("ip", "netns", "add", A)
    sh("ip", "netns", "add", B)
    sh("ip", "link", "add", "va", "netns", A, "type", "veth", "peer", "name", "vb", "netns", B)
    sh("ip", "-n", A, "addr", "add", "10.9.0.1/24", "dev", "va")
    sh("ip", "-n", B, "addr", "add", "10.9.0.2/24", "dev", "vb")
    for ns, dev in ((A, "va"), (B, "vb")):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "-n", ns, "link", "set", dev, "up")
        sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off", "gro", "off",
           check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def teardown() -> None:
    for ns in (A, B):
        subprocess.run(["ip", "netns", "del", ns], stderr=subprocess.DEVNULL)


def make_pcap(path: Path, size: int, snaplen: int, seconds: int) -> dict:
    srv = subprocess.Popen(["ip", "netns", "exec", B, "iperf3", "-s", "-1"], stdout=subprocess.DEVNULL)
    time.sleep(0.5)
    dump = subprocess.Popen(["ip", "netns", "exec", B, "tcpdump", "-i", "vb", "-s", str(snaplen), "-B", "262144",
                             "-w", str(path), "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    time.sleep(1.0)
    cli = subprocess.Popen(["ip", "netns", "exec", A, "iperf3", "-c", "10.9.0.2", "-t", str(seconds), "-J"],
                           stdout=subprocess.PIPE)
    t0 = time.time()
    while cli.poll() is None and (not path.exists() or path.stat().st_size < size):
        time.sleep(0.05)
    dump.send_signal(2)
    dump_err = dump.communicate(timeout=30)[1].decode(errors="replace")
    cli.terminate()
    out = cli.communicate(timeout=30)[0]
    srv.terminate()
    srv.wait(timeout=10)
    rate = None
    try:
        j = json.loads(out)
        ivs = [iv["sum"]["bits_per_second"] for iv in j.get("intervals", [])]
        rate = sum(ivs) / len(ivs) / 1e9 if ivs else None
    except Exception:
        pass
    return {"capture_s": round(time.time() - t0, 2), "iperf3_gbps": round(rate, 2) if rate else None,
            "tcpdump": " ".join(dump_err.split())[-200:]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="pcap size to reach, MiB (default 1024)")
    ap.add_argument("--snaplen", type=int, default=0, help="tcpdump -s (default 0 = whole packets)")
    ap.add_argument("--seconds", type=int, default=60, help="longest iperf3 run (default 60)")
    ap.add_argument("--pcap", help="analyze this existing file instead of making one (no root needed)")
    ap.add_argument("--keep", action="store_true", help="keep the pcap")
    args = ap.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))
    from mmpath.analyze import analyze, pcap

    info: dict = {}
    if args.pcap:
        path = Path(args.pcap)
    else:
        if os.geteuid() != 0:
            print("analyze_bench: needs root to make the capture (or pass --pcap FILE)", file=sys.stderr)
            return 2
        for tool in ("iperf3", "tcpdump", "ethtool"):
            if not shutil.which(tool):
                print(f"analyze_bench: {tool} not found (apt-get install {tool})", file=sys.stderr)
                return 2
        path = Path("/tmp/mmpath-bench-1g.pcap")
        setup()
        try:
            info.update(make_pcap(path, args.size_mb << 20, args.snaplen, args.seconds))
        finally:
            teardown()
    size = path.stat().st_size
    t = time.perf_counter()
    src = pcap.read(path)
    t_read = time.perf_counter() - t
    out = Path("/tmp/mmpath-bench-analyze")
    t = time.perf_counter()
    res = analyze([path], out=out)
    t_all = time.perf_counter() - t
    big = max(res.summary["flows"], key=lambda f: f.get("bytes") or 0)
    info.update({
        "pcap_bytes": size, "pcap_mib": round(size / 2**20, 1), "snaplen": args.snaplen,
        "packets": src.meta["packets"], "pcap_read_s": round(t_read, 2),
        "read_packets_per_s": round(src.meta["packets"] / t_read),
        "read_mib_per_s": round(size / 2**20 / t_read, 1),
        "analyze_total_s": round(t_all, 2), "flow_mbps_in_capture": big.get("mbps"),
        "python": sys.version.split()[0],
    })
    print(json.dumps(info))
    if not args.keep and not args.pcap:
        path.unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
