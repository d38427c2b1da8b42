"""`mmpath-pm` / `mmpath pm`: runs the path-manager daemon (docs/path-manager.md; the flags are pm/args.py).

Exit status: 0 after SIGINT / SIGTERM with the kernel's path-manager setting restored; 2 for a
flag, machine or namespace it cannot run on (one line saying what is wrong and what is allowed;
nothing changed).
"""

from __future__ import annotations

import argparse
import sys
import time

from .. import _core
from ..cliargs import print_error
from ..errors import MmpathError
from .args import build_parser
from .daemon import Daemon, JsonLog, LinkEvents, PolicyFactory, Signals, core_policy, serve
from .events import Translator
from .netlink import Commands, Events
from .system import (Lock, PmError, PmSetting, enter_netns, link_states, require_mptcp, require_root,
                     reset_neighbours, resolve_paths, state_file)
from .transport import TcpInfo
from .feed import LinkFeed
from .wifi import Stations

def run(args: argparse.Namespace, factory: PolicyFactory = core_policy) -> int:
    where = f"namespace {args.netns}" if args.netns else "the host's namespace"
    bad = [k for k in args.backup_paths if k >= len(args.paths)]
    if bad:
        raise PmError(f"--backup-paths: path {bad[0]} does not exist (--paths names {len(args.paths)}: 0 to "
                      f"{len(args.paths) - 1})")
    require_root()
    if factory is core_policy and not hasattr(_core, "PathManagerPolicy"):
        raise PmError("this build of mmpath has no path-manager policies (_core.PathManagerPolicy); run `make setup`")
    enter_netns(args.netns)
    require_mptcp(where)
    paths = resolve_paths(args.paths, where)
    params = _policy_params(factory, args)
    lock = None if args.dry_run else Lock(where)
    try:
        log = JsonLog(args.log, echo=args.dry_run)  # a --log that cannot be written is refused here
    except PmError:
        if lock is not None:
            lock.close()
        raise
    setting = signals = commands = events = links = stations = tcp = feed = None
    try:
        setting = PmSetting(None if args.dry_run else state_file(args.netns))
        if setting.recovered is not None:
            print_error(f"pm: a daemon before this one on {where} ended without restoring "
                        f"net.mptcp.{setting.key}; set it back to {setting.recovered}")
        signals = Signals()
        tcp = TcpInfo()  # refused here, before anything is changed, without sock_diag
        events, links, stations = Events(), LinkEvents(), Stations(paths)
        if args.link_feed:
            feed = LinkFeed(args.link_feed, [p.ifname for p in paths])
        if not args.dry_run:
            commands = Commands()
            setting.set_userspace()
        start = time.monotonic()
        log({"t_s": 0.0, "type": "start", "policy": args.policy, "netns": args.netns, "dry_run": args.dry_run,
             "paths": [vars(p) for p in paths], "backup_paths": args.backup_paths, "params": params,
             "link_feed": args.link_feed,
             "path_manager": {"sysctl": f"net.mptcp.{setting.key}", "was": setting.old}})
        tr = Translator(paths, set(args.backup_paths))
        send = None if commands is None else (lambda cmd: commands.send(cmd.msg))
        daemon = Daemon(tr, args.policy, params, send, log, factory,
                        None if args.dry_run else reset_neighbours)
        print_error(f"pm: policy {args.policy} on {where}, paths "
                    f"{', '.join(f'{p.index}={p.ifname} ({p.addr})' for p in paths)}"
                    f"{' (dry run)' if args.dry_run else ''}; stop with Ctrl-C")
        serve(daemon, events, links, link_states(paths), start, signals, stations, tcp, feed)
        changed = setting.changed
        setting.restore()
        log({"t_s": time.monotonic() - start, "type": "stop", "restored": changed})
    finally:
        try:
            if setting is not None:
                setting.restore()
        finally:
            for s in (commands, events, links, stations, tcp, feed, signals, lock):
                if s is not None:
                    s.close()
            log.close()
    return 0


def _policy_params(factory: PolicyFactory, args: argparse.Namespace) -> dict | None:
    """The policy's parameters (--param, and --backup-paths as `backup_paths` for a policy that
    reads it: the daemon gives the backup flag at the join itself), checked by building the
    policy once: an unknown name or parameter fails here, before anything is changed."""
    params = dict(args.params)
    if args.backup_paths and "backup_paths" not in params:
        try:
            factory(args.policy, {**params, "backup_paths": list(args.backup_paths)})
            params["backup_paths"] = list(args.backup_paths)
        except ValueError:
            pass  # this policy does not read it; the error, if another, comes below
    try:
        factory(args.policy, params or None)
    except ValueError as e:
        raise PmError(f"--policy {args.policy}: {e}") from None
    return params or None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except MmpathError as e:
        print_error(f"error: {e}")
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
