"""Find the inputs: expand folders, detect each file's kind from its content, call its reader."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from . import iperf3, iw, mmpath_run, pcap, ss, trace, wil6210
from .errors import AnalyzeInputError
from .kinds import KINDS, KINDS_HELP
from .model import Source

# Each kind's reader module (its read(path) and ALLOWED), for every kind of kinds.py.
READERS = {"iperf3": iperf3, "pcap": pcap, "ss": ss, "iw": iw, "wil6210": wil6210, "trace": trace,
           "run": mmpath_run}
# Files in a capture folder that are not inputs (written by mmpath capture or the fixture script).
_SKIP = {"capture.json", "stderr.txt", "summary.json"}


def _split_kind(spec: str) -> tuple[str | None, str]:
    k, sep, rest = spec.partition(":")
    if sep and k in KINDS and rest:
        return k, rest
    return None, spec


def detect(path: Path) -> str:
    """The reader for a file, from its first bytes (extensions are not trusted)."""
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
    except OSError as e:
        raise AnalyzeInputError(path, f"cannot read: {e.strerror}") from None
    if not head.strip():
        raise AnalyzeInputError(path, "empty file", KINDS_HELP)
    if pcap.is_pcap(head):
        return "pcap"
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as e:
        # a multi-byte character cut at the 8 KiB boundary is fine; real binary is not
        if e.start < len(head) - 4:
            raise AnalyzeInputError(path, "unknown log layout: binary data that is not a pcap/pcapng capture "
                                          f"(starts with bytes {head[:4].hex()})", KINDS_HELP) from None
        text = head[:e.start].decode("utf-8")
    s = text.lstrip()
    if s.startswith("{") or s.startswith("["):
        return "iperf3"
    if ss.looks_like(text):
        return "ss"
    if iw.looks_like(text):
        return "iw"
    if trace.looks_like(text):
        return "trace"
    if wil6210.looks_like(text):
        return "wil6210"
    first = next((ln for ln in text.splitlines() if ln.strip()), "")[:80]
    raise AnalyzeInputError(path, f"unknown log layout (first line: {first!r})", KINDS_HELP)


def read_one(path: Path, kind: str | None = None) -> Source:
    if kind is None:
        kind = detect(path)
    return _guarded(path, kind, _read_one, path, kind)


def _guarded(path: Path, kind: str, fn, *args):
    """fn(*args), with any error a damaged file of `kind` raises turned into one line naming it."""
    try:
        return fn(*args)
    except AnalyzeInputError:
        raise
    except (KeyError, TypeError, AttributeError, ValueError, IndexError, OverflowError, struct.error) as e:
        # The readers check the layouts they know; a file damaged in a way they do not foresee (a
        # field of the wrong type deep inside a JSON report, a mangled header) still gets one line
        # naming the file and the kind, never a traceback (tests/analyze/test_fuzz.py).
        what = " ".join(str(e).split())[:120] or type(e).__name__
        raise AnalyzeInputError(path, f"malformed {kind} input ({type(e).__name__}: {what})",
                                READERS[kind].ALLOWED if kind in READERS else None) from None


def _read_one(path: Path, kind: str) -> Source:
    if kind in READERS:
        return READERS[kind].read(path)
    raise AnalyzeInputError(path, f"unknown kind {kind!r}", ", ".join(KINDS))


PCAP_HEADER_BYTES = 24  # a classic pcap file's global header (pcap-savefile(5))


def _header_only_pcap(f: Path) -> bool:
    """A classic pcap file that holds its global header and no packet."""
    try:
        return f.stat().st_size == PCAP_HEADER_BYTES
    except OSError:
        return False


def emu_folder(d: Path) -> tuple[list[tuple[Path, str]], dict[str, float]] | None:
    """An `mmpath emu run` output folder (it has emu.json): the inputs the emulator's own
    analysis reads (the iperf3 clients' reports, the per-path captures, ss.log, the capacity
    traces) and the offsets that place the capacity traces at the shaper's start (`t0_unix`).
    The servers' reports repeat the clients', emu.json and kernel-trace.txt are not logs the
    analyzer reads."""
    meta = d / "emu.json"
    if not meta.is_file():
        return None
    try:
        t0 = json.loads(meta.read_text(encoding="utf-8")).get("t0_unix")
    except (OSError, ValueError, AttributeError):
        t0 = None
    files: list[tuple[Path, str]] = []
    files += [(f, "iperf3") for f in sorted(d.glob("iperf3-*.json")) if not f.name.endswith("-server.json")]
    # A path no flow used has a capture of the global header alone (tcpdump writes it at start):
    # nothing to analyze there, and the reader refuses an empty capture.
    files += [(f, "pcap") for f in sorted(d.glob("*.pcap")) if not _header_only_pcap(f)]
    if (d / "ss.log").is_file():
        files.append((d / "ss.log", "ss"))
    offsets: dict[str, float] = {}
    if isinstance(t0, (int, float)):
        for f in sorted(d.glob("capacity-*.csv")):
            files.append((f, "trace"))
            offsets[f.name] = float(t0)
    return files, offsets


def expand(specs, implied_offsets: dict[str, float] | None = None) -> list[tuple[Path, str | None]]:
    """Paths (files or folders, optionally KIND:PATH) -> list of (file, forced kind or None)."""
    out: list[tuple[Path, str | None]] = []
    if isinstance(specs, (str, Path)):
        specs = [specs]
    specs = list(specs)
    if not specs:
        raise AnalyzeInputError("analyze", "no input given", KINDS_HELP)
    for spec in specs:
        kind, p = _split_kind(str(spec))
        path = Path(p)
        if not path.exists():
            raise AnalyzeInputError(path, "no such file or folder", KINDS_HELP)
        if path.is_dir():
            if kind == "run" or (kind is None and mmpath_run.looks_like(path)):
                out.append((path, "run"))
                continue
            emu = emu_folder(path) if kind is None else None
            if emu is not None:
                out.extend(emu[0])
                if implied_offsets is not None:
                    implied_offsets.update(emu[1])
                continue
            files = [f for f in sorted(path.iterdir()) if f.is_file() and f.name not in _SKIP
                     and not f.name.startswith(".")]
            found = []
            for f in files:
                try:
                    k = kind or detect(f)
                except AnalyzeInputError:
                    continue  # a folder may hold notes and other files; only readable inputs count
                found.append((f, k))
            # A variant comparison (`mmpath run` of a scenario with variants, e.g. the bundled
            # default: mmpath-out/default/) holds one run folder per variant: each is a source.
            if kind is None:
                found += [(d, "run") for d in sorted(path.iterdir())
                          if d.is_dir() and not d.name.startswith(".") and mmpath_run.looks_like(d)]
            if not found:
                raise AnalyzeInputError(path, "folder holds no file the analyzer reads", KINDS_HELP)
            out.extend(found)
        else:
            out.append((path, kind))
    return out


def load(specs, keep_apart=frozenset(), implied_offsets: dict[str, float] | None = None) -> list[Source]:
    """Every input's Source, in input order. Captures are read together (pcap/capture_set.py):
    per-interface captures of one MPTCP connection become one Source, placed where the first of
    them was; `keep_apart` names captures never merged (the ones given a clock offset).
    `implied_offsets` receives the offsets an input folder implies (an emulator folder's)."""
    items = [(p, k or detect(p)) for p, k in expand(specs, implied_offsets)]
    caps = [p for p, k in items if k == "pcap"]
    merged = pcap.read_all(caps, keep_apart,
                           packets=lambda p: _guarded(p, "pcap", pcap.read_packets, p)) if caps else []
    first_of = {}
    for src in merged:
        first_of[Path(src.meta.get("captures", [src.path])[0])] = src
    out = []
    for p, k in items:
        if k != "pcap":
            out.append(read_one(p, k))
        elif p in first_of:
            out.append(first_of[p])
    return out
