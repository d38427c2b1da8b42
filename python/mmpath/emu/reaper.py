"""Nothing of an emulation outlives it, even a hard kill (`kill -9`, the OOM killer).

Three mechanisms, each for what the others cannot reach:

- Every process the emulator starts (iperf3, tcpdump, mmpath-delay, tc, ss, ...) is started with a
  parent-death signal (`popen`, `die_with_parent`: prctl(PR_SET_PDEATHSIG, SIGKILL) between fork
  and exec; it survives `ip netns exec`, `chrt` and `mptcpize`, which exec in place). The kernel
  sends it when the thread that started the child ends, so the emulator starts them from threads
  that outlive them (the main thread, or a thread waiting on its child).
- A watchdog (`Guard`): a small process of its own session (a `kill -9` of the run's process
  group does not reach it) that holds the read end of a pipe whose write end only the run holds.
  When the run dies, however, the pipe reads end-of-file and the watchdog removes what the run
  left: its three namespaces (with them their veths, HTB qdiscs and NFQUEUE rules, which live in
  them), the processes still in them, its temporary folders and its kernel-trace instance.
- Everything a run leaves is named after its owner, `mmpath<PID>-<START>`: the PID and the
  process's start time in clock ticks after boot (/proc/PID/stat field 22), so a PID reused by
  another process does not make a dead run's leftovers look alive. The next run, and `mmpath emu
  clean`, remove those of owners that are not running (`clean`): for when the watchdog was killed
  too. The run's folders outside the temporary folder (the staging folder beside --out) are listed
  in a record, RUNS_DIR/<PID>-<START>-*.json, which only this user can write.

This file uses the standard library only: the watchdog runs it as a script (`python -I reaper.py
watch ...`), without importing mmpath (pandas, numpy) first.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Where a run lists the folders it made outside the temporary folder (a staging folder beside
# --out); a folder of its own, 0700, trusted only when this user owns it and no one else may write.
RUNS_DIR = Path(tempfile.gettempdir()) / "mmpath-emu-runs"
TRACE_INSTANCES = Path("/sys/kernel/tracing/instances")
# Where the path-manager daemon (a flow's path_manager, pmdaemon.py) records the setting it changed
# in a namespace, <namespace>.json, until it restores it (python/mmpath/pm/system.py STATE_DIR):
# a daemon killed with its run leaves the record of a namespace that is gone with the run.
PM_STATE_DIR = Path("/run/mmpath-pm")
# The three namespaces of a run: mmpath<PID>-<START>-{srv,ap,cli}; earlier versions named them
# mmpath<PID>-{srv,ap,cli} (no start time: dead only when no process has that PID).
_NAMESPACE = re.compile(r"^mmpath(\d+)(?:-(\d+))?-(?:srv|ap|cli)$")
# A temporary folder or a kernel-trace instance of a run: mmpath<PID>-<START>[-...]; earlier
# kernel-trace instances: mmpath-<PID>.
_TAGGED = re.compile(r"^mmpath(\d+)-(\d+)(?:-.*)?$")
_OLD_TRACE = re.compile(r"^mmpath-(\d+)$")

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def start_ticks(pid: int) -> int | None:
    """The process's start time (clock ticks after boot), None when no live process has that PID
    (a zombie is dead: it only waits for its parent to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    rest = stat.rsplit(")", 1)[-1].split()
    if len(rest) < 20 or rest[0] in ("Z", "X"):
        return None
    return int(rest[19])


def tag(pid: int | None = None) -> str:
    """The owner name of this process's runs: mmpath<PID>-<START>."""
    pid = os.getpid() if pid is None else pid
    return f"mmpath{pid}-{start_ticks(pid)}"


@dataclass(frozen=True)
class Owner:
    pid: int
    start: int | None  # None: a name from before the start time was in it

    @property
    def tag(self) -> str:
        return f"mmpath{self.pid}" + (f"-{self.start}" if self.start is not None else "")

    def alive(self) -> bool:
        now = start_ticks(self.pid)
        return now is not None and (self.start is None or now == self.start)

    @classmethod
    def of(cls, tag_: str) -> "Owner":
        m = _TAGGED.match(tag_)
        if m is None:
            raise ValueError(f"not an emulator owner name: {tag_!r}")
        return cls(int(m[1]), int(m[2]))


# --- children that die with the run -------------------------------------------------------------

def die_with_parent(parent: int | None = None):
    """A preexec_fn: the child gets SIGKILL when the thread that started it ends, and exits at
    once if `parent` (default: the caller's process) is already gone before that is set."""
    parent = os.getpid() if parent is None else parent

    def preexec() -> None:
        _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)
    return preexec


def popen(args: list[str], **kw: Any) -> subprocess.Popen:
    """subprocess.Popen for a process that must die with the run (see die_with_parent)."""
    return subprocess.Popen(args, preexec_fn=die_with_parent(), **kw)


def run(args: list[str], **kw: Any) -> subprocess.CompletedProcess:
    """subprocess.run, the child dying with the run."""
    return subprocess.run(args, preexec_fn=die_with_parent(), **kw)


# --- the run's record and its watchdog ---------------------------------------------------------

def _runs_dir(create: bool) -> Path | None:
    """RUNS_DIR when it can be trusted (a directory of this user's that no one else may write)."""
    if create:
        try:
            RUNS_DIR.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            return None
    try:
        st = RUNS_DIR.lstat()
    except OSError:
        return None
    import stat as st_mod

    if not st_mod.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
        return None
    return RUNS_DIR


def _tidy_runs_dir() -> None:
    """RUNS_DIR goes once no run has a record in it (a run starting meanwhile makes it again)."""
    try:
        RUNS_DIR.rmdir()
    except OSError:
        pass


class Guard:
    """For the length of a run: its record (the folders it made) and its watchdog. Leaving it
    (the run is over and tore everything down) removes the record and lets the watchdog go."""

    def __init__(self) -> None:
        self.owner = Owner.of(tag())
        self.folders: list[str] = []
        self._record: Path | None = None
        self._pipe: int | None = None
        self._watchdog: subprocess.Popen | None = None

    def __enter__(self) -> "Guard":
        runs = _runs_dir(create=True)
        if runs is not None:
            # One record per run (runs one after the other in a process share its owner name).
            try:
                fd, name = tempfile.mkstemp(prefix=f"{self.owner.pid}-{self.owner.start}-", suffix=".json", dir=runs)
                os.close(fd)
                self._record = Path(name)
                self._write()
            except OSError:
                self._record = None
        r, w = os.pipe()
        try:
            self._watchdog = subprocess.Popen(
                [sys.executable, "-I", str(Path(__file__).resolve()), "watch", self.owner.tag, str(r)],
                pass_fds=(r,), start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL)
        except OSError:
            os.close(w)
            w = None  # no watchdog: the next run or `mmpath emu clean` removes what a hard kill leaves
        finally:
            os.close(r)
        self._pipe = w
        return self

    def add_folder(self, path: str | os.PathLike) -> None:
        self.folders.append(str(Path(path).resolve()))
        self._write()

    def _write(self) -> None:
        if self._record is None:
            return
        tmp = self._record.with_suffix(".part")
        try:
            tmp.write_text(json.dumps({"pid": self.owner.pid, "start": self.owner.start,
                                       "folders": self.folders}) + "\n", encoding="utf-8")
            os.replace(tmp, self._record)
        except OSError:
            pass

    def __exit__(self, *exc: object) -> None:
        if self._record is not None:
            self._record.unlink(missing_ok=True)
            _tidy_runs_dir()
        if self._pipe is not None:
            try:
                os.write(self._pipe, _ENDED)  # a normal end: the watchdog leaves everything alone
            except OSError:
                pass
            os.close(self._pipe)
            self._pipe = None
        if self._watchdog is not None:
            try:
                self._watchdog.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._watchdog.kill()
                self._watchdog.wait()


_ENDED = b"ended"  # what a run writes to its watchdog's pipe as it ends normally


def _watch(owner_tag: str, fd: int) -> None:
    """The watchdog: waits for end-of-file on `fd` (the run ended or died), then, if the run's
    process is gone, removes what it left."""
    owner = Owner.of(owner_tag)
    said = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        said += chunk[: len(_ENDED)]
    if said.startswith(_ENDED):
        return
    # The pipe reads end-of-file as the kernel closes a dying process's files (exit_files in
    # do_exit), a moment before the process turns into a zombie (exit_notify): on a loaded machine
    # the watchdog can run in between and still see it alive. So a run whose pipe closed gets a
    # short grace to finish dying (a normal end says so first, above, and waits for no grace).
    deadline = time.monotonic() + 2.0
    while owner.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not owner.alive():
        clean_owner(owner)


# --- what dead runs left, and removing it ---------------------------------------------------------

@dataclass
class Leftovers:
    """What one owner's runs left on this machine."""
    owner: Owner
    namespaces: list[str] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    traces: list[Path] = field(default_factory=list)
    pm_states: list[Path] = field(default_factory=list)
    record: Path | None = None


def _ip_lines(*args: str) -> list[str]:
    try:
        p = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return p.stdout.splitlines() if p.returncode == 0 else []


def _mine(path: Path) -> bool:
    """A real folder (not a symbolic link) of this user's: one we may remove."""
    try:
        st = path.lstat()
    except OSError:
        return False
    import stat as st_mod

    return st_mod.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid()


def find() -> dict[Owner, Leftovers]:
    """Everything on this machine named after an emulator run, by owner (alive or not)."""
    found: dict[Owner, Leftovers] = {}

    def of(owner: Owner) -> Leftovers:
        return found.setdefault(owner, Leftovers(owner))

    for ln in _ip_lines("netns", "list"):
        name = ln.split()[0] if ln.split() else ""
        m = _NAMESPACE.match(name)
        if m:
            of(Owner(int(m[1]), int(m[2]) if m[2] else None)).namespaces.append(name)
    try:
        entries = list(Path(tempfile.gettempdir()).iterdir())
    except OSError:
        entries = []
    for p in entries:
        m = _TAGGED.match(p.name)
        if m and _mine(p):
            of(Owner(int(m[1]), int(m[2]))).folders.append(p)
    try:
        instances = list(TRACE_INSTANCES.iterdir()) if TRACE_INSTANCES.is_dir() else []
    except OSError:
        instances = []
    for p in instances:
        m, old = _TAGGED.match(p.name), _OLD_TRACE.match(p.name)
        if m:
            of(Owner(int(m[1]), int(m[2]))).traces.append(p)
        elif old:
            of(Owner(int(old[1]), None)).traces.append(p)
    try:
        states = list(PM_STATE_DIR.glob("*.json")) if PM_STATE_DIR.is_dir() else []
    except OSError:
        states = []
    for p in states:
        m = _NAMESPACE.match(p.stem)
        if m and m[2]:
            of(Owner(int(m[1]), int(m[2]))).pm_states.append(p)
    runs = _runs_dir(create=False)
    for rec in sorted(runs.glob("*.json")) if runs is not None else []:
        try:
            doc = json.loads(rec.read_text(encoding="utf-8"))
            left = of(Owner(int(doc["pid"]), int(doc["start"])))
            folders = [Path(f) for f in doc.get("folders", [])]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        left.record = rec
        left.folders += [f for f in folders if f not in left.folders and _mine(f)]
    return found


def _kill_in(ns: str) -> int:
    """Kills the processes still in a namespace (a run's children from before they died with it);
    how many."""
    n = 0
    for ln in _ip_lines("netns", "pids", ns):
        try:
            pid = int(ln.strip())
        except ValueError:
            continue
        if pid != os.getpid():
            try:
                os.kill(pid, signal.SIGKILL)
                n += 1
            except OSError:
                pass
    return n


def _close_trace(inst: Path) -> None:
    try:
        (inst / "tracing_on").write_text("0")
    except OSError:
        pass
    try:
        inst.rmdir()
    except OSError:
        pass


def remove(left: Leftovers, dry_run: bool = False) -> list[str]:
    """Removes (or, dry_run, only lists) what `left` holds; one line per thing."""
    lines = []
    verb = "would remove" if dry_run else "removed"
    # The daemons' records first: each is one unlink, while deleting a namespace waits for the
    # kernel to tear down its veths and sockets (a second or more on a loaded machine), and a
    # record that outlives its daemon makes the next `mmpath pm` on that namespace refuse.
    for st in left.pm_states:
        if not dry_run:
            st.unlink(missing_ok=True)
        lines.append(f"{verb} path-manager record {st}")
    for ns in sorted(left.namespaces):
        killed = 0 if dry_run else _kill_in(ns)
        if not dry_run:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        lines.append(f"{verb} namespace {ns} (its veths, HTB qdiscs and NFQUEUE rules with it"
                     + (f"; killed {killed} process(es) still in it" if killed else "") + ")")
    for f in left.folders:
        if not dry_run:
            shutil.rmtree(f, ignore_errors=True)
        lines.append(f"{verb} folder {f}")
    for inst in left.traces:
        if not dry_run:
            _close_trace(inst)
        lines.append(f"{verb} kernel-trace instance {inst.name}")
    if left.record is not None and not dry_run:
        left.record.unlink(missing_ok=True)
        _tidy_runs_dir()
    return lines


def clean_owner(owner: Owner) -> list[str]:
    """Removes what `owner` left (the watchdog, once its run died)."""
    left = find().get(owner)
    return remove(left) if left is not None else []


def clean(dry_run: bool = False) -> tuple[list[str], list[str]]:
    """Removes what dead runs left: (one line per thing removed, one line per live run's things
    kept). A run is dead when no process has its PID with its start time."""
    removed, kept = [], []
    for owner, left in sorted(find().items(), key=lambda kv: (kv[0].pid, kv[0].start or 0)):
        if owner.alive():
            what = len(left.namespaces) + len(left.folders) + len(left.traces) + len(left.pm_states)
            kept.append(f"kept {what} thing(s) of {owner.tag}: process {owner.pid} is running"
                        + ("" if owner.start is not None else " (an older name without its start time)"))
            continue
        removed += [f"{ln} (run {owner.pid}, gone)" for ln in remove(left, dry_run)]
    return removed, kept


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "watch":
        _watch(sys.argv[2], int(sys.argv[3]))
