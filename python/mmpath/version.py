"""mmpath's version (`mmpath --version`, summary.json's `mmpath_version`), found once at import."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version


def _find_version() -> str:
    # The installed distribution's metadata (maturin takes it from Cargo.toml); the core's own
    # version when running from a bare source tree; never fail an import over it.
    try:
        return version("mmpath")
    except PackageNotFoundError:
        pass
    try:
        from . import _core  # optional here: a bare source tree has no built extension
    except ImportError:
        return "0+unknown"
    return str(_core.version())


__version__ = _find_version()
