"""Fuzz the command line: `mmpath run --set K=V / --seed / SCENARIO.toml`, `mmpath analyze FILE` with
its flags, and `mmpath reproduce` flags. A user mistake must end with exit status 2 and one
`mmpath: error: ...` line (argparse's own errors: its usage line, then one error line), never a
traceback, and must leave no output folder behind.

Accepted `run` inputs are not simulated: `simulate` is replaced by building the core's Simulation
(which still checks what only the build can, e.g. trace files) and stopping there, to keep this fast.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mmpath import cli

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "python" / "mmpath" / "scenarios"
FX = ROOT / "tests" / "analyze" / "fixtures"
# Bundled scenarios without [[variant]] (a variant scenario runs through compare.py).
PLAIN = sorted(p.stem for p in SCENARIOS.glob("*.toml") if "variant" not in tomllib.loads(p.read_text()))

# MMPATH_FUZZ_SCALE=N multiplies the examples (a longer exploration); derandomized by default.
SCALE = int(os.environ.get("MMPATH_FUZZ_SCALE", "1"))
SETTINGS = settings(max_examples=60 * SCALE, deadline=None, derandomize=SCALE == 1,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

ARGPARSE_ERR = re.compile(r"^mmpath( [a-z]+)?: error: ")


class _Accepted(Exception):
    pass


@pytest.fixture
def no_sim(monkeypatch):
    """Stop `mmpath run` right after the core has built the simulation."""
    import mmpath.api as api
    # Imported before api.simulate is patched: compare.py binds `simulate` when first imported,
    # and a first import under the patch would keep the fake after the test.
    import mmpath.compare as compare

    def fake(scenario, *_, show_progress=False, scheduler=None, **_kw):
        from mmpath import _core
        from mmpath.errors import ScenarioError

        try:
            _core.Simulation(scenario.json, scenario.seed)
        except _core.ScenarioError as e:
            raise ScenarioError(f"{scenario.source}: {e}") from None
        raise _Accepted

    monkeypatch.setattr(api, "simulate", fake)
    monkeypatch.setattr(api, "simulate_to", fake)  # `mmpath run` streams into its folder
    monkeypatch.setattr(compare, "simulate", fake)  # variant scenarios run through compare.py


def fresh(tmp_path: Path) -> Path:
    """An output folder path not used yet (hypothesis runs many examples in one tmp_path)."""
    return Path(tempfile.mkdtemp(dir=tmp_path)) / "out"


def call(argv: list[str]) -> tuple[int | None, str]:
    """Run `mmpath ARGV` in-process; (exit status or None when accepted, stderr)."""
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            rc = cli.main([str(a) for a in argv])
        except SystemExit as e:
            rc = e.code
        except _Accepted:
            rc = None
    return rc, err.getvalue()


def check_rejected(rc, err: str, out_dir: Path, argv) -> None:
    """Exit 2, one error line (after argparse's usage lines), no traceback, no output folder."""
    assert "Traceback" not in err, f"{argv}: {err}"
    assert rc == 2, f"{argv}: exit {rc}: {err}"
    lines = err.strip().splitlines()
    assert lines, f"{argv}: no message"
    errors = [ln for ln in lines if ARGPARSE_ERR.match(ln)]
    assert len(errors) == 1 and errors[0] == lines[-1], f"{argv}: {err}"
    # Only argparse's usage lines may come before the error line.
    assert all(ln.startswith(("usage:", " ")) for ln in lines[:-1]), f"{argv}: {err}"
    assert not any(ch in errors[0] for ch in "\r\x1b\x00"), f"{argv}: control character in {errors[0]!r}"
    assert not out_dir.exists(), f"{argv}: rejected but {out_dir} was created"
    assert not list(out_dir.parent.glob(f".{out_dir.name}.tmp-*")), f"{argv}: staging folder left behind"


# ----------------------------------------------------------------------------------- run --set


def _field_keys() -> list[str]:
    """Every dotted key of the normalized bundled scenarios (what users type after --set)."""
    from mmpath.scenario import load_scenario

    keys: set[str] = set()

    def walk(v, here):
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, here + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, here + [str(i)])
        if here:
            keys.add(".".join(here))

    for name in PLAIN:
        walk(load_scenario(name).config, [])
    return sorted(keys)


KEYS = _field_keys()
JUNK_KEYS = ["", ".", "a..b", "flow.99.cc", "path.x.rate_mbps", "flow.0.cc.x", "duration_s.0", "path.-1.mcs",
             "flow.0.tcp.bogus", "bogus", " ", "path.0.schedule.5.t_s", "flow.0.name.first"]
VALUES = ["nan", "inf", "-inf", "+inf", "-1", "0", "-0.0", "1e400", "1e300", "-1e300", "1e-300", "18446744073709551616",
          "99999999999999999999999", "0.5", "3", "[]", "{}", "[1, 2]", "{ a = 1 }", '""', '"x"', "true", "false",
          "[1,", '"unterminated', "reno", "bogus", "11ad", "wired", "1979-05-27", "12:00:00", "0x10", "1_000",
          "\x1b[2J", "a\rb", "\u00e9\u00e9", "[[1]]", "[{t_s = 1.0, up = false}]", "[{t_s = -1}]"]


@SETTINGS
@given(scenario=st.sampled_from(PLAIN + ["default", "mesh-ap"]),
       key=st.sampled_from(KEYS) | st.sampled_from(JUNK_KEYS),
       value=st.sampled_from(VALUES) | st.text(max_size=12),
       sep=st.sampled_from(["=", "=", "=", "", "=="]))
def test_fuzz_run_set(no_sim, tmp_path, scenario, key, value, sep):
    out = fresh(tmp_path)
    argv = ["run", scenario, "--set", "duration_s=0.01", "--set", f"{key}{sep}{value}", "--out", out, "--no-progress"]
    rc, err = call(argv)
    if rc is None:  # accepted: validated and built
        assert "Traceback" not in err
        return
    check_rejected(rc, err, out, argv)


@SETTINGS
@given(seed=st.sampled_from(["-1", "1e3", "0x10", "", "nan", "18446744073709551616", "99999999999999999999999"])
       | st.integers(-2**70, 2**70).map(str) | st.text(max_size=8))
def test_fuzz_run_seed(no_sim, tmp_path, seed):
    out = fresh(tmp_path)
    argv = ["run", "11ad-bulk", "--seed", seed, "--out", out, "--no-progress"]
    rc, err = call(argv)
    if rc is None:
        assert 0 <= int(seed) < 2**64, seed
        return
    check_rejected(rc, err, out, argv)


@SETTINGS
@given(st.data())
def test_fuzz_scenario_file(no_sim, tmp_path, data):
    """A bundled scenario file with its text damaged: TOML errors and validation errors alike."""
    name = data.draw(st.sampled_from(PLAIN))
    text = list((SCENARIOS / f"{name}.toml").read_text())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        ch = data.draw(st.sampled_from(list("=[]{}\"'.,#\n-0123456789e") + ["nan", "inf", "\x00", "\x1b"]))
        if op == "insert" or not text:
            text.insert(i, ch)
        elif op == "delete":
            del text[min(i, len(text) - 1)]
        else:
            text[min(i, len(text) - 1)] = ch
    f = tmp_path / f"{name}.toml"
    f.write_text("".join(text), encoding="utf-8")
    out = fresh(tmp_path)
    argv = ["run", f, "--out", out, "--no-progress"]
    rc, err = call(argv)
    if rc is None:
        assert "Traceback" not in err
        return
    check_rejected(rc, err, out, argv)


# ----------------------------------------------------------------------------------- analyze


ANALYZE_FILES = [FX / "tcp" / "client.json", FX / "tcp" / "ss.log", FX / "handmade" / "iw-wlan0.log",
                 FX / "handmade" / "wil6210.csv", FX / "tcp" / "capture.pcap"]


def _pcapng_sample() -> bytes:
    """The first packets of the TCP fixture written as pcapng (the fixtures are libpcap)."""
    import dpkt

    buf = io.BytesIO()
    with open(FX / "tcp" / "capture.pcap", "rb") as f:
        r = dpkt.pcap.Reader(f)
        w = dpkt.pcapng.Writer(buf, snaplen=r.snaplen, linktype=r.datalink())
        for i, (ts, pkt) in enumerate(r):
            if i == 40:
                break
            w.writepkt(pkt, ts=ts)
    return buf.getvalue()


PCAPNG = _pcapng_sample()


def _mutate_bytes(data, blob: bytes) -> bytes:
    b = bytearray(blob[: data.draw(st.integers(0, len(blob)))])
    for _ in range(data.draw(st.integers(0, 8))):
        if not b:
            break
        i = data.draw(st.integers(0, len(b) - 1))
        b[i] = data.draw(st.integers(0, 255))
    return bytes(b)


@settings(SETTINGS, max_examples=40 * SCALE)
@given(st.data())
def test_fuzz_analyze_file(tmp_path, data):
    """A damaged input file through the whole `mmpath analyze` command."""
    src = data.draw(st.sampled_from(ANALYZE_FILES + [FX / "capture.pcapng"]))
    blob = PCAPNG if src.suffix == ".pcapng" else src.read_bytes()
    if src.suffix == ".pcap":
        blob = blob[:8000]
    f = Path(tempfile.mkdtemp(dir=tmp_path)) / src.name
    f.write_bytes(_mutate_bytes(data, blob))
    kind = data.draw(st.sampled_from(["", "", "iperf3:", "pcap:", "ss:", "iw:", "wil6210:", "run:", "bogus:"]))
    out = fresh(tmp_path)
    argv = ["analyze", f"{kind}{f}", "--out", out, "--no-report"]
    rc, err = call(argv)
    if rc == 0:
        assert "Traceback" not in err and (out / "summary.json").is_file()
        return
    check_rejected(rc, err, out, argv)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A small mmpath run folder (what `mmpath analyze RUN` reads)."""
    import mmpath

    d = tmp_path_factory.mktemp("run") / "run"
    mmpath.run("11ad-bulk", overrides={"duration_s": 0.2}).save(d, report=False)
    return d


@settings(SETTINGS, max_examples=30 * SCALE)
@given(st.data())
def test_fuzz_analyze_run_folder(tmp_path, run_folder, data):
    """An mmpath run folder with one of its files damaged, cut or removed."""
    import shutil

    d = Path(tempfile.mkdtemp(dir=tmp_path)) / "run"
    shutil.copytree(run_folder, d)
    name = data.draw(st.sampled_from(["summary.json", "intervals.csv", "timeline.parquet"]))
    f = d / name
    if data.draw(st.integers(0, 5)) == 0:
        f.unlink()
    elif name == "summary.json" and data.draw(st.booleans()):
        doc = json.loads(f.read_text())
        key = data.draw(st.sampled_from(sorted(doc)))
        doc[key] = data.draw(st.sampled_from([None, "x", -1, 1e308, [], {}, [{}], {"name": 1}]))
        f.write_text(json.dumps(doc))
    else:
        f.write_bytes(_mutate_bytes(data, f.read_bytes()))
    kind = data.draw(st.sampled_from(["", "run:"]))
    out = fresh(tmp_path)
    argv = ["analyze", f"{kind}{d}", "--out", out, "--no-report"]
    rc, err = call(argv)
    if rc == 0:
        assert "Traceback" not in err and (out / "summary.json").is_file()
        return
    check_rejected(rc, err, out, argv)


NUMS = ["nan", "inf", "-inf", "-1", "0", "1e300", "-1e300", "x", "", "1e-9", "5"]


@settings(SETTINGS, max_examples=40 * SCALE)
@given(flag=st.sampled_from(["--bin", "--expected", "--offset", "--baseline"]),
       value=st.sampled_from(NUMS) | st.text(max_size=6),
       name=st.sampled_from(["", "SRC", "11ad", "x="]))
def test_fuzz_analyze_flags(tmp_path, flag, value, name):
    src = FX / "tcp" / "client.json"
    if flag in ("--offset", "--baseline"):
        value = f"{str(src) if name == 'SRC' else name}={value}"
    out = fresh(tmp_path)
    argv = ["analyze", src, "--out", out, "--no-report", flag, value]
    rc, err = call(argv)
    if rc == 0:
        assert "Traceback" not in err
        summary = json.loads((out / "summary.json").read_text())
        assert "NaN" not in json.dumps(summary), f"{argv}: NaN in the summary"
        return
    check_rejected(rc, err, out, argv)


# ----------------------------------------------------------------------------------- reproduce


@settings(SETTINGS, max_examples=40 * SCALE)
@given(ids=st.lists(st.sampled_from(["", "bogus", "000-", "ALL", "000-mcs ", "-1", "../x", "\x1b"])
                    | st.text(max_size=8), min_size=1, max_size=2),
       runs=st.sampled_from([None, "0", "-1", "x", "1e3", "nan", ""]))
def test_fuzz_reproduce_flags(tmp_path, monkeypatch, ids, runs):
    """Unknown claim ids and bad --runs are refused before anything runs."""
    import mmpath.reproduce as rp

    def no_run(*a, **k):
        raise _Accepted

    monkeypatch.setattr(rp, "reproduce", no_run)
    out = fresh(tmp_path)
    argv = ["reproduce", *ids, "--out", out, "--no-progress"] + (["--runs", runs] if runs is not None else [])
    rc, err = call(argv)
    if rc is None:
        return  # every id known (or a valid --runs): would run
    check_rejected(rc, err, out, argv)


# ----------------------------------------------------------------------------------- regressions


def test_analyze_offset_nan_is_one_error(tmp_path):
    # Found by this fuzzer: `--offset SRC=nan` ended in "ValueError: cannot convert float NaN to integer".
    src = FX / "tcp" / "client.json"
    for v in ("nan", "inf", "1e300"):
        out = fresh(tmp_path)
        argv = ["analyze", src, "--out", out, "--no-report", "--offset", f"{src}={v}"]
        rc, err = call(argv)
        check_rejected(rc, err, out, argv)
        assert "--offset" in err and "allowed" in err


def test_analyze_expected_and_baseline_must_be_throughputs(tmp_path):
    # Found by this fuzzer: --expected nan / -5 and --baseline 11ad=inf were accepted and wrote NaN.
    src = FX / "tcp" / "client.json"
    for flag, v in (("--expected", "nan"), ("--expected", "-5"), ("--expected", "0"), ("--baseline", "11ad=inf"),
                    ("--baseline", "11ad=0")):
        out = fresh(tmp_path)
        argv = ["analyze", src, "--out", out, "--no-report", flag, v]
        rc, err = call(argv)
        check_rejected(rc, err, out, argv)
        assert flag in err and "finite number of Mbit/s > 0" in err


@pytest.mark.parametrize("value, fragment", [
    ("nan", "duration_s: must be a finite number"),
    ("inf", "duration_s: must be a finite number"),
    ("1e300", "duration_s: must be at most 86400 s, one day (got 1e300)"),
])
def test_run_set_non_finite_numbers(no_sim, tmp_path, value, fragment):
    # Found by tests/fuzz_scenarios.rs: TOML nan/inf reached the core as NaN and was reported as
    # "expected a name in quotes".
    out = fresh(tmp_path)
    argv = ["run", "11ad-bulk", "--set", f"duration_s={value}", "--out", out]
    rc, err = call(argv)
    check_rejected(rc, err, out, argv)
    assert fragment in err, err


@pytest.mark.parametrize("scenario, key, value, fragment", [
    ("11ad-radio", "path.0.gro", "nan", "path.0.gro: must be true or false (got nan) (from --set path.0.gro)"),
    ("11ad-radio", "path.0.gro", "inf", "path.0.gro: must be true or false (got inf)"),
    ("11ad-bulk", "flow.0.tcp.pacing", "-inf", "flow.0.tcp.pacing: must be true or false (got -inf)"),
    ("11ad-bulk", "flow.0.cc", "nan", "flow.0.cc: must be one of `reno`, `cubic`, `vegas`, `bbr` (got nan)"),
    ("11ad-radio", "path.0.mcs", "inf", "path.0.mcs: must be an integer from 0 to 255 (got inf)"),
    ("11ad-bulk", "path.0.rate_mbps", "-inf", "path.0.rate_mbps: must be a finite number (got -inf)"),
])
def test_run_set_non_finite_says_what_the_field_takes(no_sim, tmp_path, scenario, key, value, fragment):
    # `--set path.0.gro=nan` was "must be a finite number (got NaN or an infinity)" for a field
    # that takes true or false.
    out = fresh(tmp_path)
    argv = ["run", scenario, "--set", f"{key}={value}", "--out", out]
    rc, err = call(argv)
    check_rejected(rc, err, out, argv)
    assert fragment in err, err


@pytest.mark.parametrize("key, value, fragment", [
    ("flow.0.stop_s", "1e300", "flow.0.stop_s: must be at most 86400 s, one day (got 1e300)"),
    ("path.0.schedule", "[{t_s=86400.5, up=false}]", "path.0.schedule.0.t_s: must be at most 86400 s, one day"),
    ("flow.0.tcp.min_rto_ms", "120001", "flow.0.tcp.min_rto_ms: must be at most 120000 ms, Linux's TCP_RTO_MAX"),
])
def test_run_set_times_are_bounded(no_sim, tmp_path, key, value, fragment):
    # Found by tests/fuzz_scenarios.rs: times up to 1e300 s saturated the nanosecond clock. A
    # --set goes through the same validation as the file (time.rs MAX_USER_SECS, one day).
    out = fresh(tmp_path)
    argv = ["run", "11ad-bulk", "--set", f"{key}={value}", "--out", out]
    rc, err = call(argv)
    check_rejected(rc, err, out, argv)
    assert fragment in err, err


def test_run_set_control_characters_are_escaped(no_sim, tmp_path):
    # Found by tests/fuzz_scenarios.rs: an unknown name was echoed with its escape sequence.
    out = fresh(tmp_path)
    argv = ["run", "11ad-bulk", "--set", "flow.0.cc=\x1b[2J", "--out", out]
    rc, err = call(argv)
    check_rejected(rc, err, out, argv)
    assert "\\u{1b}[2J" in err or "\\x1b[2J" in err, err


def test_variant_error_blames_the_variant_not_set(tmp_path):
    # Found while fuzzing `run --set`: `--set flow.0.kind=tcp` on a scenario whose variant sets
    # flow.0.kernel said "(from --set flow.0.kernel)", a flag the user never typed.
    out = fresh(tmp_path)
    argv = ["run", "default", "--set", "flow.0.kind=tcp", "--set", "duration_s=0.01", "--out", out]
    rc, err = call(argv)
    check_rejected(rc, err, out, argv)
    assert "variant 'fullmesh'" in err and "(from the variant's set flow.0.kernel)" in err, err
    assert "--set flow.0.kernel" not in err, err
