"""A hard kill of `mmpath emu run` leaves nothing on the machine (reaper.py, docs/emulate.md):
`kill -9` of its process group, or of its main process alone (as the OOM killer does), and within
5 s no namespace (so no veth, qdisc or NFQUEUE rule, which live in them), no process and no
temporary folder of that run remains; what a run whose watchdog died too left is removed by the
next run and by `mmpath emu clean`, which say so. The kill tests need root; the rest runs anywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from mmpath.emu import reaper
from conftest import emulation_marks

needs_root = emulation_marks(("ip", "tc", "iperf3", "tcpdump", "iptables"))
# How long after the kill everything of the run must be gone.
BOUND_S = 5.0

# One path with a propagation delay (the delay line runs, at real-time priority) and captures
# (tcpdump), and a second one taken down by a `drop` outage through the kill (the link drops'
# driver and monitors run, and its link is down): every kind of process the emulator starts.
SCENARIO = """\
name = "hk"
duration_s = 20.0
[backbone]
enabled = false
[[path]]
name = "a"
rate_mbps = 50.0
mtu_bytes = 1500
delay_ms = 2.0
[[path]]
name = "b"
rate_mbps = 50.0
mtu_bytes = 1500
schedule = [{ t_s = 0.2, up = false, drop = true }, { t_s = 19.0, up = true }]
[[flow]]
name = "f"
kind = "tcp"
path = "a"
stop_s = 20.0
"""


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmpath", *args], capture_output=True, text=True, timeout=120)


def _procs() -> dict[int, tuple[int, str, int | None]]:
    """Every process: pid -> (parent pid, command name, start time)."""
    out = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        rest = stat.rsplit(")", 1)[1].split()
        out[int(d.name)] = (int(rest[1]), comm, reaper.start_ticks(int(d.name)))
    return out


def _descendants(pid: int) -> dict[int, tuple[str, int | None]]:
    """The process's descendants: pid -> (command name, start time)."""
    procs = _procs()
    found, todo = {}, [pid]
    while todo:
        parent = todo.pop()
        for p, (ppid, comm, start) in procs.items():
            if ppid == parent and p not in found:
                found[p] = (comm, start)
                todo.append(p)
    return found


def _namespaces(pid: int) -> list[str]:
    ls = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [w for w in ls.split() if w.startswith(f"mmpath{pid}-")]


def _netns_inode(name: str) -> str:
    r = subprocess.run(["ip", "netns", "exec", name, "readlink", "/proc/self/ns/net"], capture_output=True, text=True)
    return r.stdout.strip()


def _in_namespaces(inodes: set[str]) -> list[int]:
    """Processes still in any of these network namespaces."""
    found = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.readlink(d / "ns" / "net") in inodes:
                    found.append(int(d.name))
            except OSError:
                pass
    return found


def _tagged_folders(pid: int) -> list[Path]:
    return [p for p in Path(tempfile.gettempdir()).iterdir() if p.name.startswith(f"mmpath{pid}-")]


def _records(pid: int) -> list[Path]:
    return list(reaper.RUNS_DIR.glob(f"{pid}-*.json")) if reaper.RUNS_DIR.is_dir() else []


def _left(pid: int, children: dict[int, tuple[str, int | None]], inodes: set[str], tmp_path: Path) -> dict:
    """What of the run is still on the machine."""
    alive = {p: comm for p, (comm, start) in children.items() if reaper.start_ticks(p) == start}
    return {k: v for k, v in {
        "namespaces": _namespaces(pid),
        "processes": alive,
        "in its namespaces": _in_namespaces(inodes),
        "temporary folders": _tagged_folders(pid),
        "staging folders": [x for x in tmp_path.iterdir() if ".tmp-" in x.name],
        "records": _records(pid),
    }.items() if v}


def _poll_left(pid, children, inodes, tmp_path, bound_s: float) -> dict:
    deadline = time.monotonic() + bound_s
    while True:
        left = _left(pid, children, inodes, tmp_path)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


def _start_run(tmp_path: Path) -> tuple[subprocess.Popen, dict[int, tuple[str, int | None]], set[str]]:
    """`mmpath emu run` in a process group of its own, once iperf3, tcpdump and the delay line
    run: the process, its descendants and its namespaces' inodes."""
    f = tmp_path / "hk.toml"
    f.write_text(SCENARIO)
    log = open(tmp_path / "stderr.txt", "w")
    p = subprocess.Popen([sys.executable, "-m", "mmpath", "emu", "run", str(f), "--out", str(tmp_path / "out")],
                         stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    log.close()
    deadline = time.monotonic() + 90
    want = {"iperf3", "tcpdump", "mmpath-delay", "ip"}
    children: dict[int, tuple[str, int | None]] = {}
    while time.monotonic() < deadline and p.poll() is None:
        children = _descendants(p.pid)
        if want <= {comm for comm, _ in children.values()} and \
                sum(comm == "iperf3" for comm, _ in children.values()) >= 2:
            break
        time.sleep(0.2)
    else:
        p.kill()
        p.wait()
        pytest.fail(f"the run did not get going: {(tmp_path / 'stderr.txt').read_text()}")
    time.sleep(0.5)
    children = _descendants(p.pid)
    inodes = {_netns_inode(ns) for ns in _namespaces(p.pid)}
    # The backbone disabled: the server runs in the AP's namespace (emu/netns.py), so two.
    assert len(inodes) == 2 and "" not in inodes, inodes
    return p, children, inodes


def _force_clean(pid: int, children: dict[int, tuple[str, int | None]]) -> None:
    """Whatever the test found, nothing of the run stays (the test may have failed)."""
    for p, (_, start) in children.items():
        if reaper.start_ticks(p) == start:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
    for owner, left in reaper.find().items():
        if owner.pid == pid:
            reaper.remove(left)


@pytest.mark.parametrize("what", ["group", "main process"])
def test_kill_9_leaves_nothing_within_5_s(tmp_path, what):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    p, children, inodes = _start_run(tmp_path)
    try:
        comms = sorted(comm for comm, _ in children.values())
        assert "mmpath-delay" in comms and "tcpdump" in comms, comms
        assert _records(p.pid) and [x for x in tmp_path.iterdir() if ".tmp-" in x.name]
        if what == "group":
            os.killpg(p.pid, signal.SIGKILL)
        else:
            os.kill(p.pid, signal.SIGKILL)
        p.wait()
        left = _poll_left(p.pid, children, inodes, tmp_path, BOUND_S)
        assert left == {}, left
        assert not (tmp_path / "out").exists()
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        _force_clean(p.pid, children)


def test_a_run_whose_watchdog_died_too_is_removed_by_emu_clean(tmp_path):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    p, children, inodes = _start_run(tmp_path)
    try:
        # Everything at once, the watchdog (its own session) included: nothing is cleaned up.
        for pid in [p.pid, *children]:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        p.wait()
        time.sleep(0.5)
        assert _namespaces(p.pid) and _records(p.pid)
        dry = _cli("emu", "clean", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        for ns in _namespaces(p.pid):
            assert f"would remove namespace {ns}" in dry.stdout, dry.stdout
        assert _namespaces(p.pid), "--dry-run removed something"
        r = _cli("emu", "clean")
        assert r.returncode == 0, r.stderr
        for ns in ("ap", "cli"):
            assert f"removed namespace mmpath{p.pid}-" in r.stdout and f"-{ns} " in r.stdout, r.stdout
        assert "removed folder" in r.stdout and f"(run {p.pid}, gone)" in r.stdout, r.stdout
        left = _poll_left(p.pid, children, inodes, tmp_path, BOUND_S)
        assert left == {}, left
        again = _cli("emu", "clean")
        assert f"run {p.pid}" not in again.stdout and "nothing to remove" in again.stdout, again.stdout
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        _force_clean(p.pid, children)


def _dead_owner() -> reaper.Owner:
    """The PID and start time of a process that has ended (and been reaped)."""
    q = subprocess.Popen(["sleep", "5"])
    owner = reaper.Owner(q.pid, reaper.start_ticks(q.pid))
    q.kill()
    q.wait()
    assert not owner.alive()
    return owner


def test_the_next_run_removes_a_dead_runs_leftovers_and_says_so(tmp_path, capsys):
    for m in needs_root:
        if m.args[0]:
            pytest.skip(m.kwargs["reason"])
    import mmpath.emu

    dead = _dead_owner()
    # The PID of this very process with another start time: a reused PID, the old run is dead.
    reused = reaper.Owner(os.getpid(), (reaper.start_ticks(os.getpid()) or 0) + 1)
    names = [f"{o.tag}-{r}" for o in (dead, reused) for r in ("srv", "cli")]
    folder = Path(tempfile.mkdtemp(prefix=f"{dead.tag}-run-"))
    try:
        for ns in names:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        sc = {"name": "hk-next", "duration_s": 1.5, "backbone": {"enabled": False},
              "path": [{"name": "a", "rate_mbps": 50.0, "mtu_bytes": 1500}],
              "flow": [{"name": "f", "kind": "tcp", "path": "a", "stop_s": 1.5}]}
        mmpath.emu.run(sc, capture=False)
        err = capsys.readouterr().err
        for ns in names:
            assert f"removed namespace {ns}" in err, err
        assert f"removed folder {folder}" in err, err
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert not [n for n in names if n in listed.split()] and not folder.exists()
    finally:
        for ns in names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


# --- anywhere (no root) ------------------------------------------------------------------------

def test_an_owner_is_alive_only_with_its_pid_and_start_time():
    me = reaper.Owner.of(reaper.tag())
    assert me.pid == os.getpid() and me.alive()
    assert not reaper.Owner(me.pid, me.start + 1).alive()  # the PID reused by another process
    assert reaper.Owner(me.pid, None).alive()  # an older name: only the PID to go by
    assert not _dead_owner().alive()
    # A zombie (killed, not yet reaped by its parent) is dead.
    z = subprocess.Popen(["sleep", "5"])
    zombie = reaper.Owner(z.pid, reaper.start_ticks(z.pid))
    z.kill()
    deadline = time.monotonic() + 5
    while zombie.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not zombie.alive()
    z.wait()


def test_dry_run_lists_a_dead_runs_folder_and_clean_removes_only_it(tmp_path, monkeypatch):
    dead = _dead_owner()
    me = reaper.Owner.of(reaper.tag())
    monkeypatch.setattr(reaper, "_ip_lines", lambda *a: [])  # no namespaces to look at here
    gone = Path(tempfile.mkdtemp(prefix=f"{dead.tag}-probe-"))
    (gone / "x.pcap").write_bytes(b"\0" * 10)
    mine = Path(tempfile.mkdtemp(prefix=f"{me.tag}-probe-"))
    link = Path(tempfile.gettempdir()) / f"{dead.tag}-link"
    link.symlink_to(tmp_path)
    try:
        removed, kept = reaper.clean(dry_run=True)
        assert f"would remove folder {gone} (run {dead.pid}, gone)" in removed, removed
        assert gone.exists() and any(f"of {me.tag}: process {me.pid} is running" in k for k in kept), kept
        assert not [ln for ln in removed if str(link) in ln or str(mine) in ln], removed
        removed, _ = reaper.clean()
        assert f"removed folder {gone} (run {dead.pid}, gone)" in removed
        assert not gone.exists() and mine.exists() and link.is_symlink() and tmp_path.exists()
    finally:
        shutil.rmtree(gone, ignore_errors=True)
        shutil.rmtree(mine, ignore_errors=True)
        link.unlink(missing_ok=True)


def test_a_record_in_a_folder_others_may_write_is_ignored(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir(mode=0o777)
    runs.chmod(0o777)
    victim = tmp_path / "victim"
    victim.mkdir()
    dead = _dead_owner()
    (runs / f"{dead.pid}-{dead.start}.json").write_text(
        json.dumps({"pid": dead.pid, "start": dead.start, "folders": [str(victim)]}))
    monkeypatch.setattr(reaper, "RUNS_DIR", runs)
    monkeypatch.setattr(reaper, "_ip_lines", lambda *a: [])
    assert dead not in reaper.find()
    runs.chmod(0o700)
    assert reaper.find()[dead].folders == [victim]


def test_children_die_with_the_thread_that_started_them():
    """die_with_parent: a child started through reaper.popen is killed when its parent ends."""
    code = ("import sys, time; from mmpath.emu import reaper; "
            "p = reaper.popen(['sleep', '30']); print(p.pid, flush=True); time.sleep(30)")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    child = int(parent.stdout.readline())
    start = reaper.start_ticks(child)
    assert start is not None
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + BOUND_S
    while reaper.start_ticks(child) == start and time.monotonic() < deadline:
        time.sleep(0.05)
    assert reaper.start_ticks(child) != start, "the child outlived its parent"


def test_emu_clean_needs_root_unless_dry_run():
    if os.geteuid() == 0:
        pytest.skip("as root `emu clean` runs; the refusal is for other users")
    r = _cli("emu", "clean")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "needs root" in r.stderr, r.stderr


def _watched_child(tmp_path: Path, then: str) -> tuple[subprocess.Popen, Path]:
    """A child that hands a watchdog the read end of a pipe, does `then` with the write end, and
    exits 0.3 s later; a folder named for it stands for what its run would leave."""
    r, w = os.pipe()
    child = subprocess.Popen([sys.executable, "-c", f"import os, time, sys; w = int(sys.argv[1]); {then}; "
                              "os.close(w); time.sleep(0.3)", str(w)], pass_fds=(w,))
    os.close(w)
    owner = reaper.Owner(child.pid, reaper.start_ticks(child.pid))
    left = Path(tempfile.mkdtemp(prefix=f"{owner.tag}-probe-"))
    subprocess.Popen([sys.executable, "-I", reaper.__file__, "watch", owner.tag, str(r)], pass_fds=(r,))
    os.close(r)
    return child, left


def test_the_watchdog_waits_for_a_run_that_closed_its_pipe_to_finish_dying(tmp_path):
    # The kernel closes a dying process's files before it turns into a zombie; a watchdog that
    # looked only once would find it alive and leave its namespaces behind (seen under load).
    child, left = _watched_child(tmp_path, "pass")
    try:
        child.wait()
        deadline = time.monotonic() + 5
        while left.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not left.exists()
    finally:
        shutil.rmtree(left, ignore_errors=True)


def test_a_run_that_ends_normally_keeps_its_things_from_the_watchdog(tmp_path):
    child, left = _watched_child(tmp_path, "os.write(w, b'ended')")
    try:
        child.wait()
        time.sleep(1.0)  # the watchdog has long read the pipe by now
        assert left.exists()
    finally:
        shutil.rmtree(left, ignore_errors=True)
