"""Reader for mmpath's own CSV channel trace (docs/traces.md, "mmpath CSV"): what a scenario
replays on a path, what `mmpath run` records as a run's channel, and what `mmpath emu run`
shapes each path by (`capacity-<path>.csv`). Parsed by the simulator core's own parser
(`mmpath._core.parse_csv_trace`), so the analyzer accepts exactly what a scenario accepts and
says the same thing about a malformed file.

Times are relative to the trace's start (clock "relative"); give `--offset NAME=UNIX_SECONDS`
to place it among captures (the emulator does, with its shaper's start). The path is the file's
name without `capacity-` / `channel-` and the extension. The timeline gets the trace's rate
(`trace_rate_mbps`), MCS, link state, RSSI, SNR and sector; link changes become down / up
events.
"""

from __future__ import annotations

import re
from pathlib import Path

from .. import _core
from ..lazy import numpy as np, pandas as pd  # on first use (start-up time): lazy.py
from .errors import from_core, read_text
from .model import Source

COLUMNS = ("t_s", "rate_mbps", "mcs", "link_up", "rssi_dbm", "snr_db", "sector")
ALLOWED = f"an mmpath CSV trace: a header row naming some of {', '.join(COLUMNS)} (t_s among them), one row per step (docs/traces.md)"


def looks_like(head: str) -> bool:
    first = next((ln for ln in head.splitlines() if ln.strip() and not ln.lstrip().startswith("#")), "")
    names = [c.strip() for c in first.split(",")]
    return len(names) >= 2 and "t_s" in names and all(n in COLUMNS for n in names)


def path_name(path: Path) -> str:
    return re.sub(r"^(capacity|channel)-", "", path.stem)


def read(path) -> Source:
    path = Path(path)
    text = read_text(path, ALLOWED)
    try:
        cols = _core.parse_csv_trace(text, str(path))
    except ValueError as e:
        raise from_core(path, e) from None
    name = path_name(path)
    t = np.asarray(cols["t_s"], dtype=float)
    up = np.asarray(cols["link_up"], dtype=float)
    samples = pd.DataFrame({"t": t, "flow": "", "subflow": -1, "path": name,
                            "trace_rate_mbps": cols["rate_mbps"], "mcs": cols["mcs"],
                            "link_up": np.where(np.isnan(up), True, up > 0.5),
                            "rssi_dbm": cols["rssi_dbm"], "snr_db": cols["snr_db"], "sector": cols["sector"]})
    src = Source(path=str(path), kind="trace", clock="relative")
    src.samples = samples
    state = samples["link_up"].to_numpy()
    ev = [(t[i], name, "up" if state[i] else "down", np.nan, "") for i in range(1, len(state))
          if state[i] != state[i - 1]]
    if len(state) and not state[0]:
        ev.insert(0, (t[0], name, "down", np.nan, ""))
    src.events = pd.DataFrame(ev, columns=["t", "path", "kind", "value", "detail"])
    src.meta = {"steps": int(t.size)}
    return src
