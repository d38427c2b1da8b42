"""The command line of `mmpath-pm` / `mmpath pm` (docs/path-manager.md): its flags, without the
daemon. `mmpath`'s parser imports this module only; the daemon (pm/cli.py and below, with
pyroute2, about half a second to import) is imported when the command runs, so `mmpath --help`
does not pay for it (bench/startup_bench.py).
"""

from __future__ import annotations

import argparse
import importlib
import json

from ..cliargs import SuggestingParser

# The policies of the Rust core (crates/mmpath-sim/src/mptcp/pm/mod.rs, PmName); the "## Policies"
# section of docs/path-manager.md says what each does.
POLICIES = ("kernel", "fast-failback", "link-aware-backup", "recreate")

DESCRIPTION = (
    "Run an MPTCP path-manager policy against this machine's kernel: set the namespace's path manager "
    "to userspace (net.mptcp.pm_type = 1), listen to MPTCP and link events, poll the subflows' "
    "tcp_info for RTOs and stale marks, carry out the policy's actions over the mptcp_pm netlink family, restore the setting on SIGINT / SIGTERM. Needs root. "
    "docs/path-manager.md.")


def _paths(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not names or any(not n for n in names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"must be interface names separated by commas, each once (got {text!r})")
    return names


def _indexes(text: str) -> list[int]:
    try:
        out = [int(n) for n in text.split(",") if n.strip()]
    except ValueError:
        out = [-1]
    if any(n < 0 for n in out):
        raise argparse.ArgumentTypeError(f"must be path indexes (0, 1, ...) separated by commas (got {text!r})")
    return out


def _param(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"must be KEY=VALUE, e.g. hold_s=0.5 (got {text!r})")
    try:
        return key.strip(), json.loads(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{key.strip()}: VALUE must be a number or a list like [1, 2] "
                                         f"(got {value!r})") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--policy", required=True, choices=POLICIES, metavar="NAME",
                   help=f"the policy: {', '.join(POLICIES)}")
    p.add_argument("--paths", required=True, type=_paths, metavar="IF0,IF1,...",
                   help="the interfaces of the policy's paths 0, 1, ... in order (e.g. eth0,wlan0)")
    p.add_argument("--backup-paths", type=_indexes, default=[], metavar="K,...",
                   help="paths whose subflows carry the backup flag from the start (indexes)")
    p.add_argument("--param", dest="params", type=_param, action="append", default=[], metavar="KEY=VALUE",
                   help="a policy parameter, e.g. hold_s=0.5 or leave_dbm=-66 (repeatable; docs/path-manager.md)")
    p.add_argument("--netns", metavar="NAME", help="the network namespace to manage (default: the host's)")
    p.add_argument("--dry-run", action="store_true",
                   help="change nothing: keep the kernel's path manager, print the actions and commands")
    p.add_argument("--link-feed", metavar="SOCKET",
                   help="create a Unix datagram socket at SOCKET and take link reports from it (JSON: "
                        "interface, up, signal_dbm, mcs) for links the kernel cannot report, e.g. an "
                        "emulated radio (docs/path-manager.md \"Link feed\")")
    p.add_argument("--log", metavar="FILE", help="append every event, action and command to FILE (JSON lines)")


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("pm", help="run an MPTCP path-manager policy on this machine's kernel (root)",
                              description=DESCRIPTION)
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """`mmpath pm`: the daemon, imported now (see the module's docstring)."""
    return importlib.import_module("mmpath.pm.cli").run(args)


def build_parser() -> argparse.ArgumentParser:
    p = SuggestingParser(prog="mmpath-pm", description=DESCRIPTION)
    add_arguments(p)
    return p
