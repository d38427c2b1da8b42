"""What a user's own Python schedulers met on a tour of the Python API (docs/schedulers.md): Ctrl-C
while Python decides, and a scheduler class passed where an instance belongs."""

from __future__ import annotations

import pytest

import mmpath
from mmpath import SchedulerError

SHORT = {"duration_s": 0.2}


def test_ctrl_c_inside_select_stops_the_run_as_ctrl_c():
    # Python raises KeyboardInterrupt in whatever Python code runs when Ctrl-C arrives: during a
    # custom-scheduler run that is nearly always select(). It must reach the caller as itself,
    # not as the scheduler's bug (SchedulerError "select(): KeyboardInterrupt"), which an
    # `except SchedulerError` (or `except Exception`) around mmpath.run would swallow.
    class Waits:
        def __init__(self) -> None:
            self.calls = 0

        def select(self, now_s, subflows):
            self.calls += 1
            if self.calls == 50:
                raise KeyboardInterrupt
            return 0

    with pytest.raises(KeyboardInterrupt):
        mmpath.run("blockage", overrides=SHORT, scheduler=Waits())


def test_sys_exit_inside_a_hook_is_not_a_scheduler_error():
    class Exits:
        def select(self, now_s, subflows):
            return 0

        def on_ack(self, now_s, subflow, acked_bytes):
            raise SystemExit(3)

    with pytest.raises(SystemExit):
        mmpath.run("blockage", overrides=SHORT, scheduler=Exits())


def test_an_ordinary_error_is_still_a_scheduler_error():
    class Broken:
        def select(self, now_s, subflows):
            raise ZeroDivisionError("x")

    with pytest.raises(SchedulerError, match=r'custom scheduler "Broken": select\(\): ZeroDivisionError: x'):
        mmpath.run("blockage", overrides=SHORT, scheduler=Broken())
