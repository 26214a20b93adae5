"""The kill campaign in CI (issue 18): 50 trials of bench/kill_campaign.py on a 100-file update, 26 SIGKILLs
at random moments and 24 aimed at each phase of the journal in both directions, each followed by a normal run
towards the old or the new target; every check of the campaign must hold after every trial."""

from __future__ import annotations

from bench.kill_campaign import campaign, scratch


def test_fifty_trials() -> None:
    with scratch() as work:
        tally = campaign(work, files=100, kills=26, aimed=1, seed=18)
    assert (tally.failures, tally.first_failure) == (0, "")
    assert tally.trials >= 50 and tally.kills == 26 + 24, tally  # 26 random kills landed, 24 aimed
