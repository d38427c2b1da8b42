"""One coverage-guided fuzz target of the Python readers, with atheris (libFuzzer for Python).

    .venv/bin/python bench/fuzz_py.py TARGET [libFuzzer flags] [CORPUS_DIR ...]

TARGET: scenario_toml (a scenario file given to mmpath.load_scenario: TOML, then the core's
normalize), pcap, iperf3, ss, iw (a file given to the analyzer's reader of that kind). Each input is
written to a file and read as a user's file would be. Accepted: a result, or an MmpathError (the
one-line user error: ScenarioError, AnalyzeInputError); anything else propagates and atheris
records the input as a crash. Run every target with bench/fuzz.py (bench/README.md, "Fuzzing").
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["mmpath"]):
    from mmpath.analyze.sources import read_one
    from mmpath.errors import MmpathError
    from mmpath.scenario import load_scenario

TARGETS = ("scenario_toml", "pcap", "iperf3", "ss", "iw")


def check_one(target: str, path: Path, data: bytes) -> None:
    """Reads `data` as `target` from `path`; raises anything but the user's one-line error."""
    path.write_bytes(data)
    try:
        if target == "scenario_toml":
            load_scenario(path)
        else:
            read_one(path, target)
    except MmpathError as e:
        msg = str(e)
        if "\n" in msg:
            raise AssertionError(f"error message of several lines: {msg!r}") from None


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: fuzz_py.py {{{','.join(TARGETS)}}} [libFuzzer flags] [corpus dirs]")
    target = sys.argv.pop(1)
    # bench/fuzz.py gives a folder it removes afterwards (libFuzzer exits without Python's clean-up).
    tmp = Path(os.environ.get("MMPATH_FUZZ_TMP") or tempfile.mkdtemp(prefix=f"mmpath-fuzz-{target}-"))
    path = tmp / ("input.toml" if target == "scenario_toml" else f"input.{target}")
    atheris.Setup(sys.argv, lambda data: check_one(target, path, data))
    atheris.Fuzz()


if __name__ == "__main__":
    main()
