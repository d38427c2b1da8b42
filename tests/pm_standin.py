"""A stand-in with the interface of `_core.PathManagerPolicy` (docs/path-manager.md), for the
daemon's tests only: it hears events and answers with the actions it was scripted with, so the
tests check the daemon, not a policy. Run as a script it is `mmpath-pm` with this stand-in as the
policy (`python tests/pm_standin.py --policy NAME ...`, the root test's daemon)."""

from __future__ import annotations

import sys


class StandIn:
    """`script`: for an event kind (and, when given, its path) the actions to answer."""

    def __init__(self, name: str, params: dict | None, script: dict | None = None) -> None:
        if name not in ("kernel", "fast-failback", "link-aware-backup", "recreate"):
            raise ValueError(f"unknown policy {name!r}")
        self.name, self.params = name, params
        self.script = script if script is not None else DEFAULT_SCRIPT
        self.heard: list[tuple[float, dict]] = []
        self.timer_at: float | None = None
        self.timer_actions: list[dict] = []

    def on_event(self, now_s: float, event: dict) -> list[dict]:
        self.heard.append((now_s, event))
        key = (event["kind"], event.get("path"))
        return list(self.script.get(key, self.script.get((event["kind"], None), [])))

    def poll_at(self) -> float | None:
        return self.timer_at

    def on_timer(self, now_s: float) -> list[dict]:
        if self.timer_at is None or now_s < self.timer_at:
            return []
        self.timer_at = None
        return list(self.timer_actions)


# The root test's script: the subflow the daemon opens on path 1 is made backup (SET_FLAGS); path 0
# coming back gets a fresh subflow (bench/pm_failback.py --daemon-script checks its plumbing).
DEFAULT_SCRIPT = {("subflow_established", 1): [{"kind": "set_backup", "path": 1}],
                  ("link_up", 0): [{"kind": "create_subflow", "path": 0}]}


if __name__ == "__main__":
    from mmpath.pm.cli import build_parser, run
    from mmpath.errors import MmpathError

    args = build_parser().parse_args()
    try:
        sys.exit(run(args, factory=lambda name, params: StandIn(name, params)))
    except MmpathError as e:
        print(f"mmpath: error: {e}", file=sys.stderr)
        sys.exit(2)
