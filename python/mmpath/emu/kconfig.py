"""The running kernel's build-time settings the simulator models and no sysctl exposes.

CONFIG_HZ sets the tick Linux's TCP timers count in and the timer wheel's granularity
(the simulator's `tcp.kernel_hz`, crates/mmpath-sim/src/tcp/timer_wheel.rs). It is read from
the kernel's own config: /proc/config.gz (CONFIG_IKCONFIG_PROC) or /boot/config-<release>, as
distributions install it.
"""

from __future__ import annotations

import gzip
import os
import re
from pathlib import Path

_HZ = re.compile(rb"^CONFIG_HZ=(\d+)\s*$", re.M)


def _config_text() -> bytes | None:
    try:
        with gzip.open("/proc/config.gz", "rb") as f:
            return f.read()
    except (OSError, EOFError):
        pass
    try:
        return Path(f"/boot/config-{os.uname().release}").read_bytes()
    except OSError:
        return None


def host_hz() -> int | None:
    """This kernel's CONFIG_HZ, or None when its config cannot be read."""
    text = _config_text()
    m = _HZ.search(text) if text else None
    return int(m.group(1)) if m else None
