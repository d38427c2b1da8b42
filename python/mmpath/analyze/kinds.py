"""The analyzer's input kinds, in one place: `KIND:PATH` (sources.py), the kind detection and the
readers (sources.py, one reader module per kind), the command line's help (cli.py), the error
messages' "allowed" (KINDS_HELP) and docs/analyze.md (tests/analyze/test_analyze.py checks that it
lists them all) read this list."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Input:
    """One kind of input: `kind` names it in KIND:PATH (None: a folder of other inputs, not a
    kind of its own); `what` says what it is, in the help and the error messages."""

    kind: str | None
    what: str


INPUTS = (
    Input("iperf3", "iperf3 -J JSON"),
    Input("pcap", "pcap/pcapng"),
    Input("ss", "`ss -tinO` log"),
    Input("iw", "`iw dev IF station dump`/`link` log"),
    Input("wil6210", "wil6210 CSV"),
    Input("trace", "mmpath CSV trace"),
    Input(None, "an `mmpath capture` folder"),
    Input("run", "an mmpath run folder"),
)

# The names a user may force with KIND:PATH, in this order.
KINDS = tuple(i.kind for i in INPUTS if i.kind is not None)

# What the analyzer reads, for an error's "(allowed: ...)".
KINDS_HELP = ", ".join(i.what for i in INPUTS[:-1]) + " or " + INPUTS[-1].what
