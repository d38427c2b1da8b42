"""The x-kernel battery's rows one by one (python/mmpath/reproduce/xkernel_rows.py): each row in
both engines, once, must agree by the claim's own criterion. Each emulated row takes 15-25 s of
real time, so the whole set (~8 minutes) runs only when asked: MMPATH_XKERNEL_ROWS=1 (as root).
`make test` runs the battery's `blockage` row through `mmpath reproduce x-kernel --fast`
(tests/test_emu.py).

The rows that disagree on this kernel are strict xfails, each with its numbers; docs/models.md
("Against the kernel: the x-kernel battery") has the mechanism of each. A row that starts to agree
fails here (strict), so the list cannot go stale."""

from __future__ import annotations

import os
import shutil

import pytest

from mmpath.api import run as simulate
from mmpath.reproduce import xkernel
from mmpath.reproduce.registry import Mode, Point
from mmpath.reproduce.xkernel_rows import ROWS, host_tcp

pytestmark = [
    pytest.mark.skipif(os.environ.get("MMPATH_XKERNEL_ROWS") != "1",
                       reason="the battery's rows take ~8 minutes of real time: MMPATH_XKERNEL_ROWS=1"),
    pytest.mark.skipif(os.geteuid() != 0, reason="emulation needs root (network namespaces, tc)"),
    pytest.mark.skipif(any(shutil.which(t) is None for t in ("ip", "tc", "iperf3", "mptcpize")),
                       reason="emulation needs ip, tc, iperf3, mptcpize (make emu-tools)"),
]

# Measured 2026-12-06 on Linux 6.18 (docs/reproduce.md "x-kernel"): simulated / emulated.
DISAGREE: dict[str, str] = {
    "bbr-drop-50ms": "first byte after the outage 2.0 vs 0.0-0.1 s, goodput 50.1 vs 64.8-65.6 Mbit/s: the third "
                     "backed-off RTO lands before the link's return simulated (srtt 51 ms, RTO 0.25 s) and after "
                     "it on the kernel (srtt 99.8 ms, RTO 0.30 s): the kernel's BBR overestimates the bandwidth "
                     "(113-116 vs ~97 Mbit/s) through the shaper's 128 KiB HTB bucket and keeps the queue full",
    "reno-drop-50ms": "first byte 2.0 vs 0.0 s (3 of 4 emulated runs; the 4th also lost a backoff step), goodput "
                      "42.1 vs 33.8-52.2 Mbit/s: the same RTO knife edge as bbr-drop-50ms, which the kernel "
                      "itself lands on either side of",
    "mesh-rtt-1:10-small": "goodput 55.6 vs 42.8-49.1 Mbit/s, first path's share 78.4 vs 87.2-97.2 %: the kernel "
                           "gives the 50 ms subflow less of each window (the head chunk, 7-73 KB) than the model",
}


# Rows whose emulated side goes either way from run to run: not strict (an XPASS is expected half
# the time), with the runs seen.
FLAKY: dict[str, str] = {
    "cubic-hold-0.5ms": "1 of 5 emulated runs dipped after the hold (69.8 Mbit/s, 90 % of the rate after 0.3 s), "
                        "4 did not (75.0-75.5, 0 s); simulated 75.1, 0 s: as reno-hold-0.5ms",
    "reno-hold-0.5ms": "2 of 4 emulated runs dipped after the hold (goodput 67.7 / 69.2 Mbit/s, 90 % of the "
                       "rate after 0.6 / 0.5 s), 2 did not (74.6, 0 s); simulated 74.7, 0 s. The emulator "
                       "releases the held burst into a FIFO that drops what does not fit (docs/emulate.md, "
                       "step 4), the simulator's queue took it as it came",
    "mesh-rate-1:4-small": "simulated 138.8 Mbit/s (share 76.6 %) since the read ACKs a full segment that ends a "
                           "push (Linux >= 6.6); the kernel's goodput spans 136-167 over 13 runs (2026-12-06: "
                           "153.2, 136.5, 153.0, 152, 147.3, 155.4 and one above 154; share 69-70 %), and "
                           "agrees up to 154",
    "mesh-rate-1:20-default": "goodput 196 vs 21-191 Mbit/s (ten emulated runs, 2 agree; 2026-12-06 at load "
                              "~15: 191, 21, 127, 190): the kernel's own number varies tenfold; in the low runs its connection window "
                              "(mptcp_rcv_space_adjust) stays near 6 MB for seconds, under the ~12 MB the slow path's "
                              "0.5 s queue needs; the simulator's window is the 32 MB ceiling from the start",
    "mesh-rate-1:20-small": "simulated 40.8 Mbit/s (the scaling_ratio window); the kernel's goodput varies around "
                            "the tolerance's edge: 42.3, 37.7, 37.5 agree, 35.8, 35.6 and one more (2026-12-06, "
                            "load ~15 on 2 cores) and 46.9 (10:00) do not",
}


def _row(rid: str) -> list:
    if rid in FLAKY:
        return [pytest.param(rid, marks=[pytest.mark.xfail(strict=False, reason=FLAKY[rid])], id=rid)]
    mark = [pytest.mark.xfail(strict=True, reason=DISAGREE[rid])] if rid in DISAGREE else []
    return [pytest.param(rid, marks=mark, id=rid)]


@pytest.mark.parametrize("rid", [p for rid in ROWS for p in _row(rid)])
def test_row_agrees(rid):
    import pandas as pd

    cfg = ROWS[rid].scenario(host_tcp())
    rows = []
    for engine in xkernel.ENGINES:
        point = Point({"row": rid, "engine": engine}, cfg)
        res = xkernel._run(point, 1) if engine == "emulation" else simulate(dict(cfg), seed=1)
        measured, _ = xkernel._measure(res, point, Mode.make())
        rows.append({"row": rid, "engine": engine, "seed": 1, **measured})
    (result,) = xkernel.row_results(pd.DataFrame(rows))
    assert result["ok"], xkernel.table(pd.DataFrame(rows))
