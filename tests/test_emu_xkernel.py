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
DISAGREE: dict[str, str] = {}


def _row(rid: str) -> list:
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
