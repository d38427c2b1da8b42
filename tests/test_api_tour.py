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


class FirstPath:
    def select(self, now_s, subflows):
        return 0


def test_a_scheduler_class_instead_of_an_instance_is_named():
    # scheduler=FirstPath (no parentheses): its select is then a plain function whose `self`
    # took the time; the run went on with shifted arguments and failed, if at all, with a
    # message about select's answer from a scheduler called "type".
    with pytest.raises(mmpath.ScenarioError, match=r"scheduler for flow 'download': FirstPath is a class; "
                                                   r"pass an instance: scheduler=FirstPath\(\)"):
        mmpath.run("blockage", overrides=SHORT, scheduler=FirstPath)
    with pytest.raises(mmpath.ScenarioError, match=r"pass an instance: scheduler=FirstPath\(\)"):
        mmpath.run("blockage", overrides=SHORT, scheduler={"download": FirstPath})


def test_a_class_with_a_static_select_still_schedules():
    class Static:
        @staticmethod
        def select(now_s, subflows):
            return 0

    res = mmpath.run("blockage", overrides=SHORT, scheduler=Static)
    assert res.summary["flows"][0]["goodput_mbps"] > 0
