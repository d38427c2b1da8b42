"""Bounded inputs (docs/traces.md "Bounds", docs/analyze.md): a trace's rates share the scenario's
rate bound (1e7 Mbit/s); a binary trace or analyzer input is refused on its first bytes, not read
whole; a file above the size bound is refused by its size. Each refusal is one line naming the
file (and the line where one is to blame) and what is allowed.

"Not read whole" is shown with a named pipe that sends a few KiB of binary and then stays open
without an end of file: a reader that wanted all of it would wait; these return at once."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import assert_one_line_error

# 16 KiB of control bytes and NULs, more than the first bytes read (valid UTF-8: refused for its NULs).
BINARY = bytes(range(128)) * 128


def _scenario(tmp_path: Path, trace: str, fmt: str = "csv") -> Path:
    f = tmp_path / "traced.toml"
    f.write_text(f'duration_s = 1.0\n[[path]]\nname = "air"\nrate_mbps = 100.0\n'
                 f'trace = {{ file = "{trace}", format = "{fmt}" }}\n[[flow]]\ncc = "cubic"\n')
    return f


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmpath", *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def _one_line(p: subprocess.CompletedProcess, *fragments: str) -> str:
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert_one_line_error(p.stderr, *fragments)
    return p.stderr.strip()


def _held_pipe(path: Path, data: bytes) -> threading.Thread:
    """A named pipe at `path` that sends `data` and is then held open for 60 s (no end of file)."""
    os.mkfifo(path)

    def feed() -> None:
        with open(path, "wb") as f:
            try:
                f.write(data)
                f.flush()
            except BrokenPipeError:  # the reader stopped after the first bytes, as it should
                return
            time.sleep(60)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    return t


def test_a_csv_trace_above_the_rate_bound_is_refused_at_its_row(tmp_path):
    (tmp_path / "fast.csv").write_text("t_s,rate_mbps\n0,100\n0.5,1e9\n")
    err = _one_line(_run("run", _scenario(tmp_path, "fast.csv"), "--out", tmp_path / "o"),
                    "fast.csv:3: column rate_mbps: `1e9` is above 1e7 Mbit/s",
                    "(allowed: 0 to 1e7 Mbit/s, as a path's rate_mbps; 0 = stalled)")
    assert "Traceback" not in err and not (tmp_path / "o").exists()
    # The same bound as the scenario's own rate_mbps.
    (tmp_path / "ok.csv").write_text("t_s,rate_mbps\n0,1e7\n")
    sc = _scenario(tmp_path, "ok.csv")
    _one_line(_run("run", sc, "--set", "path.0.rate_mbps=1.1e7", "--out", tmp_path / "o"),
              "path.0.rate_mbps: must be at most 1e7 Mbit/s")


def test_a_mahimahi_trace_above_the_rate_bound_is_refused_at_its_bin(tmp_path):
    # 900,000 packets of 1504 bytes in one 10 ms bin: 1.08e6 Mbit/s is fine; in 1 ms (bin_ms = 1) not.
    (tmp_path / "dense.trace").write_text("1\n" + "2\n" * 900_000 + "20\n")
    f = _scenario(tmp_path, "dense.trace", "mahimahi")
    assert _run("run", f, "--out", tmp_path / "o").returncode == 0
    f.write_text(f.read_text().replace('format = "mahimahi"', 'format = "mahimahi", bin_ms = 1.0'))
    _one_line(_run("run", f, "--out", tmp_path / "o2"),
              "dense.trace:2: 900000 opportunities of 1504 bytes from 2 ms to 3 ms are 1.0829e7 Mbit/s",
              "(allowed: at most 1e7 Mbit/s, as a path's rate_mbps)")


def test_a_binary_trace_is_refused_on_its_first_bytes(tmp_path):
    (tmp_path / "cap.csv").write_bytes(b"t_s,rate_mbps\n" + BINARY)
    _one_line(_run("run", _scenario(tmp_path, "cap.csv"), "--out", tmp_path / "o"),
              "cap.csv: binary data, not text (a NUL byte at offset 14)",
              "(allowed: a text file in the csv trace format)")
    # A pipe that never ends: refused on what came first, not waited on.
    _held_pipe(tmp_path / "pipe.csv", b"t_s,rate_mbps\n" + BINARY)
    t = time.monotonic()
    _one_line(_run("run", _scenario(tmp_path, "pipe.csv"), "--out", tmp_path / "o"), "pipe.csv: binary data")
    assert time.monotonic() - t < 30


def test_a_trace_above_the_size_bound_is_refused_unread(tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "wb") as f:
        f.write(b"t_s,rate_mbps\n0,1\n")
        f.truncate((4 << 30) + 1)  # sparse: no disk space
    _one_line(_run("run", _scenario(tmp_path, "big.csv"), "--out", tmp_path / "o"),
              "big.csv: 4294967297 bytes: too large for a trace",
              "(allowed: at most 4294967296 bytes, 4 GiB")


@pytest.mark.parametrize("kind", ["iperf3", "ss", "iw", "wil6210", "trace"])
def test_a_binary_analyzer_input_is_refused_on_its_first_bytes(tmp_path, run_cli, kind):
    f = tmp_path / f"in-{kind}.log"
    f.write_bytes(b"x" * 100 + BINARY)
    rc, _, err = run_cli("analyze", f"{kind}:{f}", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, f"in-{kind}.log: binary data, not text", "(a NUL byte at offset 100)", "(allowed: ")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kind", ["iperf3", "ss"])
def test_an_analyzer_input_that_never_ends_is_refused_on_its_first_bytes(tmp_path, kind):
    _held_pipe(tmp_path / "pipe.log", b"{" * 100 + BINARY)
    t = time.monotonic()
    _one_line(_run("analyze", f"{kind}:{tmp_path / 'pipe.log'}", "--out", tmp_path / "o"), "pipe.log: binary data")
    assert time.monotonic() - t < 30


def test_an_analyzer_log_from_a_pipe_is_still_read_whole(tmp_path):
    """A text log from a pipe (no seeking back): its first bytes are read again with the rest."""
    from mmpath.analyze.errors import open_text

    lines = [f"line {i}\n" for i in range(5000)]
    _held_pipe(tmp_path / "text.log", "".join(lines).encode())
    # The writer holds the pipe open for 60 s: read exactly what it sent.
    f = open_text(tmp_path / "text.log", "text")
    got = [f.readline() for _ in lines]
    f.close()
    assert got == lines


def test_an_analyzer_input_not_utf8_in_its_first_bytes_names_the_line(tmp_path, run_cli):
    f = tmp_path / "r.json"
    f.write_bytes(b'{"start": {},\n"x": "\xff\xfe"}\n')
    rc, _, err = run_cli("analyze", f"iperf3:{f}", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, "r.json:2: not UTF-8 text, so not an iperf3 -J report")


def test_an_analyzer_input_read_whole_above_the_size_bound_is_refused_unread(tmp_path, run_cli):
    big = tmp_path / "huge.json"
    with open(big, "wb") as f:
        f.write(b'{"start": {}}\n')
        f.truncate((4 << 30) + 1)  # sparse: no disk space
    rc, _, err = run_cli("analyze", f"iperf3:{big}", "--out", tmp_path / "o")
    assert rc == 2
    assert_one_line_error(err, "huge.json: 4294967297 bytes: too large, so not an iperf3 -J report",
                          "(allowed: at most 4294967296 bytes, 4 GiB; ")
