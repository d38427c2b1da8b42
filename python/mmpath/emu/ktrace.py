"""Kernel trace of an emulation (`mmpath emu run --kernel-trace`): the kernel's own MPTCP and TCP
tracepoints and the MPTCP connection timer, recorded while the traffic runs, into
`kernel-trace.txt` (ftrace's text, one event per line).

Why: the engines can agree on throughput and still differ on *why* (which scheduling pass ran,
when the connection-level retransmission timer fired, when a subflow went stale). The kernel
tells this itself; docs/models.md (MPTCP, other set-ups against the kernel) shows one such trace
settling how msk->timer_ival is set.

What is recorded (low-rate events only, so the buffer does not overflow at Gbit/s):
- mptcp:mptcp_subflow_get_send: every scheduling pass, one line per subflow (active, free,
  snd_wnd, pace, backup, ratio);
- timer:timer_start / timer:timer_expire_entry for mptcp_retransmit_timer only (filtered on its
  address from /proc/kallsyms): when the connection timer is armed, with which timeout
  (jiffies), and when it fires;
- tcp:tcp_retransmit_skb and tcp:tcp_cong_state_set: subflow retransmissions and CA state
  changes (Open, Disorder, CWR, Recovery, Loss);
- tcp:tcp_rcvbuf_grow, where the kernel has it (newer kernels only): each receive-buffer growth
  with the socket's scaling_ratio, the payload / truesize the receive window is scaled by
  (docs/facts.md; how the simulator's 229/256 for wired paths was read).

The trace runs in its own ftrace instance (instances/mmpath-<pid>), so the host's own tracing is
left alone, and it is removed afterwards. ftrace is machine-wide: other MPTCP or TCP traffic on
this machine during the run is recorded too (the lines name the task).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .errors import EmuError
from . import reaper

TRACEFS = Path("/sys/kernel/tracing")
EVENTS = ("mptcp/mptcp_subflow_get_send", "tcp/tcp_retransmit_skb", "tcp/tcp_cong_state_set")
TIMER_EVENTS = ("timer/timer_start", "timer/timer_expire_entry")
OPTIONAL_EVENTS = ("tcp/tcp_rcvbuf_grow",)  # recorded when this kernel has them
TIMER_FUNCTION = "mptcp_retransmit_timer"
BUFFER_KB = 65536  # per CPU; a 12 s MPTCP run at ~2 Gbit/s writes ~10 MB of these events


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as e:
        raise EmuError(f"--kernel-trace: cannot write {path}: {e.strerror} "
                       "(allowed: root on a kernel with tracefs and the mptcp tracepoints)") from None


def _symbol(name: str) -> str:
    """The kernel address of `name` (for the timer filter), from /proc/kallsyms."""
    try:
        for line in Path("/proc/kallsyms").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[2] == name and int(parts[0], 16):
                return "0x" + parts[0]
    except (OSError, ValueError):
        pass
    raise EmuError(f"--kernel-trace: the address of {name} is not readable in /proc/kallsyms "
                   "(allowed: root, with kernel.kptr_restrict below 2)")


def check() -> None:
    """Everything the trace needs is there, or one line saying what is missing."""
    if not (TRACEFS / "instances").is_dir():
        subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True)
    if not (TRACEFS / "instances").is_dir():
        raise EmuError(f"--kernel-trace: no tracefs at {TRACEFS} (allowed: a kernel with CONFIG_FTRACE, "
                       "tracefs mounted or mountable)")
    missing = [e for e in EVENTS + TIMER_EVENTS if not (TRACEFS / "events" / e).is_dir()]
    if missing:
        raise EmuError(f"--kernel-trace: this kernel lacks the tracepoints {', '.join(missing)} "
                       "(allowed: Linux >= 6.1 with MPTCP)")
    _symbol(TIMER_FUNCTION)


class KernelTrace:
    """One ftrace instance recording EVENTS and the MPTCP timer while the emulation runs."""

    def __init__(self) -> None:
        self.dir = TRACEFS / "instances" / reaper.tag()  # named after its owner (reaper.py)
        self.optional: list[str] = []

    def start(self) -> None:
        check()
        if self.dir.exists():
            self.dir.rmdir()
        try:
            self.dir.mkdir()
        except OSError as e:
            raise EmuError(f"--kernel-trace: cannot create the ftrace instance {self.dir}: {e.strerror}") from None
        _write(self.dir / "buffer_size_kb", str(BUFFER_KB))
        addr = _symbol(TIMER_FUNCTION)
        for e in TIMER_EVENTS:
            _write(self.dir / "events" / e / "filter", f"function == {addr}")
        self.optional = [e for e in OPTIONAL_EVENTS if (TRACEFS / "events" / e).is_dir()]
        for e in EVENTS + TIMER_EVENTS + tuple(self.optional):
            _write(self.dir / "events" / e / "enable", "1")
        _write(self.dir / "tracing_on", "1")

    def stop(self, out: Path) -> dict:
        """Stops the trace, writes it to `out`, removes the instance; returns what emu.json keeps."""
        try:
            _write(self.dir / "tracing_on", "0")
            text = (self.dir / "trace").read_text(errors="replace")
            out.write_text(text)
            lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
            counts: dict[str, int] = {}
            for ln in lines:
                head = ln.split(": ", 2)
                if len(head) >= 2:
                    ev = head[1].split()[-1] if head[1] else ""
                    counts[ev] = counts.get(ev, 0) + 1
            overrun = 0
            for cpu in (self.dir / "per_cpu").glob("cpu*/stats"):
                for ln in cpu.read_text().splitlines():
                    if ln.startswith("overrun:"):
                        overrun += int(ln.split()[1])
            return {"file": out.name, "events": counts, "lost_events": overrun,
                    "recorded": [e.split("/")[1] for e in EVENTS + tuple(self.optional)]
                    + [f"{e.split('/')[1]} ({TIMER_FUNCTION})" for e in TIMER_EVENTS]}
        finally:
            self.close()

    def close(self) -> None:
        if self.dir.exists():
            try:
                (self.dir / "tracing_on").write_text("0")
                for e in EVENTS + TIMER_EVENTS:
                    (self.dir / "events" / e / "enable").write_text("0")
                self.dir.rmdir()
            except OSError:
                pass
