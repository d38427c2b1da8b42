"""What a researcher's own sweep files met on a tour of `mmpath sweep`: grid values of mixed kinds."""

from __future__ import annotations

import mmpath.sweep


def _sweep(grid: dict, seeds=(1,)) -> dict:
    return {"scenario": "11ad-bulk", "seeds": list(seeds), "set": {"duration_s": 0.2}, "grid": grid}


def test_integer_and_decimal_values_of_one_key_are_plotted(tmp_path):
    # [1, 2.5] is a float64 column (1.0): the plot placed its x values by their text ("1" vs
    # "1.0") and failed with KeyError after every run, losing the table.
    out = tmp_path / "out"
    res = mmpath.sweep.run(_sweep({"path.0.delay_ms": [1, 2.5]}), workers=1, out=out)
    assert res.ok and res.table["path.0.delay_ms"].tolist() == [1.0, 2.5]
    assert (out / "sweep.png").is_file() and (out / "results.parquet").is_file()
