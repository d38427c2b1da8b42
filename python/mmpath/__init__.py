"""mmpath: TCP and Multipath TCP over dual-band 802.11ad + Wi-Fi links.

    import mmpath
    res = mmpath.run("blockage", seed=3, overrides={"duration_s": 5})
    res.summary, res.intervals, res.timeline, res.events
"""

from __future__ import annotations


def _find_version() -> str:
    # The installed distribution's metadata (maturin takes it from Cargo.toml); the core's own
    # version when running from a bare source tree; never fail an import over it.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mmpath")
    except PackageNotFoundError:
        pass
    try:
        from . import _core

        return str(_core.version())
    except ImportError:
        return "0+unknown"


__version__ = _find_version()

from .api import Result, run  # noqa: E402  (after __version__, which api reads)
from .errors import ScenarioError  # noqa: E402

try:  # a custom (Python) MPTCP scheduler failed during a run; from the extension module
    from ._core import SchedulerError  # noqa: E402
except ImportError:  # pragma: no cover (source tree without the built extension)
    class SchedulerError(RuntimeError):  # type: ignore[no-redef]
        pass


def analyze(paths, out=None, **kwargs):
    """mmNetAnalyzer: read, align and analyze logs or run folders (see mmpath.analyze / docs/analyze.md)."""
    from .analyze import analyze as _analyze

    return _analyze(paths, out, **kwargs)


__all__ = ["run", "Result", "ScenarioError", "SchedulerError", "analyze", "__version__"]
