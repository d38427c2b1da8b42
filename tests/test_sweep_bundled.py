"""Bundled sweeps (`mmpath sweep NAME`, `--list`), `[set] variant = "name"`, and sweep.png."""

from __future__ import annotations

from pathlib import Path

import pytest

import mmpath.sweep
from mmpath.cli import main
from mmpath.sweep import SweepError, load_sweep
from mmpath.sweep.spec import bundled_sweeps


def test_bundled_sweeps_load_by_name_and_are_listed(capsys):
    names = list(bundled_sweeps())
    assert {"ratio-energy", "cc-rtt"} <= set(names)
    for name in names:
        spec = load_sweep(name)  # every bundled sweep validates, every grid point
        assert spec.runs and spec.source.endswith("(bundled)")
    assert main(["sweep", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(n in out for n in names)


def test_unknown_sweep_name_lists_the_bundled_ones(capsys):
    with pytest.raises(SweepError, match="bundled sweeps: .*ratio-energy"):
        load_sweep("no-such-sweep")
    assert main(["sweep"]) == 2
    assert "--list" in capsys.readouterr().err


def _ratio_sweep(**more):
    doc = {"scenario": "phone-energy", "seeds": [1],
           "set": {"variant": "ratio-73", "duration_s": 0.6},
           "grid": {"flow.0.ratio": [0, 100]}}
    doc.update(more)
    return doc


def test_set_variant_applies_that_variants_overrides_and_the_grid_wins(tmp_path):
    res = mmpath.sweep.run(_ratio_sweep(), workers=1, out=tmp_path / "o")
    t = res.table.set_index("flow.0.ratio")
    # The variant made it a FixedRatio MPTCP flow; the grid's ratio replaced its 73.
    assert set(t["scheduler"]) == {"fixedratio"} and set(t["kind"]) == {"mptcp"}
    assert t.loc[0, "subflow_11ad_mbps"] < 1.0 < t.loc[0, "subflow_11ac_mbps"]
    assert t.loc[100, "subflow_11ac_mbps"] < 1.0 < t.loc[100, "subflow_11ad_mbps"]
    png = tmp_path / "o" / "sweep.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_set_variant_errors():
    with pytest.raises(SweepError, match=r"set\.variant: unknown variant 'nope' \(allowed: 11ad-only"):
        load_sweep(_ratio_sweep(set={"variant": "nope"}))
    with pytest.raises(SweepError, match="either fixed or swept"):
        load_sweep(_ratio_sweep(grid={"variant": ["energy"]}))


def test_no_plot_for_three_keys(tmp_path):
    doc = {"scenario": "11ad-bulk", "seeds": [1], "set": {"duration_s": 0.3},
           "grid": {"flow.0.cc": ["reno"], "path.0.mtu_bytes": [1500], "path.0.delay_ms": [0.1]}}
    mmpath.sweep.run(doc, workers=1, out=tmp_path / "o")
    assert (tmp_path / "o" / "results.csv").is_file()
    assert not (tmp_path / "o" / "sweep.png").exists()


def test_bundled_sweep_files_are_in_the_package():
    here = Path(mmpath.sweep.__file__).resolve().parent.parent / "sweeps"
    assert sorted(p.stem for p in here.glob("*.toml")) == sorted(bundled_sweeps())
