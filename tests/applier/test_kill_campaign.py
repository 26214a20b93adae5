"""The kill campaign in CI: 50 trials of the campaign (tests/applier/kill_lab.py) on a 100-file update, 26 SIGKILLs
at random moments and 24 aimed at each phase of the journal in both directions, each followed by a normal run
towards the old or the new target; every check of the campaign must hold after every trial."""

from __future__ import annotations

import time

import pytest

from tests.applier.kill_lab import campaign, narrowed, scratch


def test_fifty_trials() -> None:
    with scratch() as work:  # `until`: a bound for a machine gone pathological, never reached in a normal run
        tally = campaign(work, files=100, kills=26, aimed=1, seed=18, until=time.time() + 900)
    assert (tally.failures, tally.first_failure) == (0, "")
    assert tally.trials >= 50 and tally.kills == 26 + 24, tally  # 26 random kills landed, 24 aimed


@pytest.mark.parametrize(("window", "missed_at", "expected"), [
    ((0.3, 2.0), 1.0, (0.3, 1.0)),    # the run ended before 1.0 s: draw below it
    ((0.3, 2.0), 0.4, (0.2, 0.4)),    # below the start-up time measured while busy: lower the start too
    ((0.3, 0.31), 0.3, (0.15, 0.3)),
], ids=["upper-bound", "lower-bound-too", "narrow"])
def test_a_missed_kill_narrows_the_window(window: tuple[float, float], missed_at: float,
                                          expected: tuple[float, float]) -> None:
    assert narrowed(window, missed_at) == pytest.approx(expected)
