"""Shared fixtures: a small two-path scenario and one finished run of it.

Every test runs the real core (`mmpath._core`); durations are kept to fractions of a second so
the whole suite stays fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mmpath
from mmpath import cli

REPO = Path(__file__).resolve().parent.parent

# Two radio paths with one TCP bulk download each side of a UDP CBR stream; the 60 GHz path
# changes rate mid-run so the run has link events.
SMALL_TOML = """\
description = "test: TCP bulk on 11ad, UDP CBR on 11ac"
duration_s = 0.5
seed = 3

[[path]]
name = "ad"
rate_mbps = 1000
delay_ms = 0.5
schedule = [{ t_s = 0.25, rate_mbps = 500 }]

[[path]]
name = "ac"
rate_mbps = 200
delay_ms = 1

[[flow]]
name = "bulk"
kind = "tcp"
path = "ad"
cc = "cubic"

[[flow]]
name = "video"
kind = "udp"
app = "cbr"
path = "ac"
rate_mbps = 20
"""

WALL_TIME_KEYS = ("wall_s", "sim_s_per_wall_s", "events_per_s")


@pytest.fixture(scope="session")
def small_toml(tmp_path_factory) -> Path:
    """The scenario file; its stem `small` is the scenario's name (no `name` field)."""
    p = tmp_path_factory.mktemp("scen") / "small.toml"
    p.write_text(SMALL_TOML)
    return p


@pytest.fixture
def write_toml(tmp_path):
    """Write a scenario file from text and return its path."""

    def write(text: str, name: str = "scen.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write


@pytest.fixture(scope="session")
def small_run(small_toml, tmp_path_factory):
    """(Result, output folder) of one run of the small scenario, shared by read-only tests."""
    out = tmp_path_factory.mktemp("run") / "out"
    res = mmpath.run(small_toml, out=out)
    return res, out


@pytest.fixture
def run_cli(capsys):
    """Call `mmpath ARGS...` in-process; return (exit code, stdout, stderr)."""

    def run(*args: str):
        try:
            rc = cli.main([str(a) for a in args])
        except SystemExit as e:  # argparse's own usage errors and --version
            rc = e.code
        cap = capsys.readouterr()
        return rc, cap.out, cap.err

    return run


def assert_one_line_error(err: str, *fragments: str) -> None:
    """A user mistake: exactly one line `mmpath: error: ...`, naming what is wrong, no traceback."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got:\n{err}"
    assert lines[0].startswith("mmpath: error: "), lines[0]
    assert "Traceback" not in err
    for frag in fragments:
        assert frag in lines[0], f"{frag!r} not in {lines[0]!r}"


def load_without_wall_time(path: Path) -> dict:
    d = json.loads(path.read_text())
    for k in WALL_TIME_KEYS:
        d.pop(k)
    return d


def to_toml(doc: dict) -> str:
    """A small TOML writer for test scenarios: top-level values, tables, and arrays of tables
    ([[path]], [[flow]]); strings quoted as JSON (a subset of TOML's basic strings)."""

    def val(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return json.dumps(v)
        if isinstance(v, list):
            return "[" + ", ".join(val(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {val(x)}" for k, x in v.items()) + " }"
        return repr(v)

    lines = [f"{k} = {val(v)}" for k, v in doc.items() if not isinstance(v, (list, dict))]
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"[{k}]")
            lines += [f"{a} = {val(b)}" for a, b in v.items()]
    for k, v in doc.items():
        if isinstance(v, list):
            for item in v:
                lines.append(f"[[{k}]]")
                lines += [f"{a} = {val(b)}" for a, b in item.items()]
    return "\n".join(lines) + "\n"


def claim_checks_hold(claim_id: str, runs, mode, fragment: str) -> bool:
    """Whether every check of `claim_id` whose text contains `fragment` holds on `runs` (the
    dead-run guard tests: a guard must hold on the real table and fail on an altered one)."""
    from mmpath.reproduce import CLAIMS

    _, items = CLAIMS[claim_id].check(runs, mode)
    hits = [c for c in items if fragment in c.text]
    assert hits, (fragment, [c.text for c in items])
    return all(c.ok for c in hits)


def assert_plots_readable(data, folder: Path, monkeypatch) -> None:
    """Draw each experiment's figure from `data` (experiment id -> ExperimentData) into `folder`
    and check the Figure itself, not its pixels: one PNG, a title naming the experiment and its
    claims, and nothing `plotting.problems` objects to (labelled axes, readable ticks, no
    legend over data, nothing clipped)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mmpath.reproduce import plotting

    real_close = plt.close
    drawn: list = []
    monkeypatch.setattr(plt, "close", lambda fig=None: drawn.append(fig))
    try:
        for exp_id, d in data.items():
            assert d.experiment.plot is not None, f"{exp_id} has no plot"
            if not len(d.runs):
                continue
            drawn.clear()
            png = folder / f"{exp_id}.png"
            d.experiment.plot(d.runs, d.series, png)
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", exp_id
            assert len(drawn) == 1, exp_id
            fig = drawn[0]
            title = fig.get_suptitle()
            assert title.startswith(exp_id), (exp_id, title)
            for cid in plotting.claims_of(exp_id):
                assert cid in title, (exp_id, cid, title)
            assert plotting.problems(fig) == [], exp_id
            real_close(fig)
    finally:
        for fig in drawn:
            real_close(fig)


def emulation_marks(tools: tuple[str, ...], *, root_needed_for: str = "network namespaces, tc",
                    delay_line: bool = False, mptcp: bool = False, who: str = "emulation") -> list:
    """The skip marks of a test that runs the emulator (or the path-manager daemon) as root:
    root, the system tools it calls (installed by `make emu-tools`), and, when asked, the built
    delay line and a kernel with MPTCP. Each skip names what is missing."""
    import os
    import shutil

    from mmpath.emu import delay, netns

    missing = [t for t in tools if shutil.which(t) is None]
    marks = [
        pytest.mark.skipif(os.geteuid() != 0, reason=f"{who} needs root ({root_needed_for})"),
        pytest.mark.skipif(bool(missing), reason=f"{who} needs {', '.join(missing)} (make emu-tools)"),
    ]
    if delay_line:
        marks.append(pytest.mark.skipif(delay.binary() is None, reason="mmpath-delay is not built (make setup)"))
    if mptcp:
        marks.append(pytest.mark.skipif(netns.read_proc("/proc/sys/net/mptcp/enabled") is None,
                                        reason="this kernel has no MPTCP (net.mptcp.enabled is absent)"))
    return marks
