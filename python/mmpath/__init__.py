"""mmpath: TCP and Multipath TCP over dual-band 802.11ad + Wi-Fi links.

    import mmpath
    res = mmpath.run("blockage", seed=3, overrides={"duration_s": 5})
    res.summary, res.intervals, res.timeline, res.events
"""

from __future__ import annotations

# `mmpath.analyze(...)`: the analyzer package is callable (analyze/__init__.py), see docs/analyze.md.
from . import analyze
from .api import Result, run
from .errors import ScenarioError
from .version import __version__

try:  # a custom (Python) MPTCP scheduler failed during a run; from the extension module
    from ._core import SchedulerError
except ImportError:  # pragma: no cover (source tree without the built extension)
    class SchedulerError(RuntimeError):  # type: ignore[no-redef]
        pass


__all__ = ["run", "Result", "ScenarioError", "SchedulerError", "analyze", "__version__"]
