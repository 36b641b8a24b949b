"""The run's deadline, on a clock the test moves."""

from __future__ import annotations

from memory_action.run.deadline import Deadline


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_deadline_counts_down_and_a_share_leaves_the_rest_for_later_phases() -> None:
    clock = Clock()
    deadline = Deadline.after(600.0, clock)
    clock.now += 200.0
    assert deadline.remaining() == 400.0 and not deadline.expired()
    checks = deadline.share(0.5)  # half of the 400 s left
    clock.now += 199.0
    assert not checks.expired()
    clock.now += 1.0
    assert checks.expired() and not deadline.expired()
    assert deadline.remaining() == 200.0
    clock.now += 300.0
    assert deadline.expired() and deadline.remaining() == 0.0
    assert deadline.share(0.5).expired()  # nothing left to share


def test_no_deadline_never_expires() -> None:
    assert not Deadline.none().expired()
