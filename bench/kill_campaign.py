"""Kill campaign for `mco apply`: SIGKILL a real `mco apply` during an update, then run it normally
towards the new or the old target, and check after every trial that nothing was lost.

    .venv/bin/python bench/kill_campaign.py [--files 2000] [--kills 1000] [--aimed 5] [--seed 1] [--jobs 1]
                                            [--work DIR]

The node: a root holding pre-existing files (every fifth path) and two rendered configs of `--files` files
each (A: paths 0..N-1; B: N/4..N+N/4-1, half of the shared ones with other contents, a third with another
mode), under a no-reboot disruption policy. Each trial starts converged on A or B, starts a real
`mco apply --once` towards the other and kills it: at a uniformly random moment between start-up and the
time a whole run takes (`--kills` such kills that landed), or, for the aimed kills, right after the Nth step
of one phase of the journal (tests/applier/killpoint.py: backup, restore of an original, removal of a file or of a
marker, temp file before its rename, state write; `--aimed` values of N spread over each phase's steps, each
towards both targets). Then a normal run towards A or B (random for random kills, both in turn for aimed),
through the same `mco apply` entry point in the campaign's own process.
After the kill: every managed path holds A's, B's or its original content, or is absent only if it never
existed before; every original is in its backup or in place; every backup holds the original; the state
files parse. After the normal run: exit 0, Done, the state at the target with nothing pending, every path
exactly the target's (contents and mode) or its original or absent, backups and stamps only for the target's
paths, no temp file anywhere. The work directory is on /dev/shm when there is one: a SIGKILL leaves the page
cache intact, so the disk's fsync cost (what a power cut is about) changes no outcome, only the time.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.applier.kill_lab import campaigns, scratch  # noqa: E402


def main() -> int:
    """Run the campaign and print its figures; exit 1 on any failure."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--aimed", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1, help="campaigns side by side (each on its own node root)")
    parser.add_argument("--minutes", type=float, default=float("inf"), help="start no trial after this long")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    started = time.monotonic()
    with scratch(args.work) as work:
        tally = campaigns(work, files=args.files, kills=args.kills, aimed=args.aimed, seed=args.seed,
                          jobs=args.jobs, until=time.time() + args.minutes * 60)
    elapsed = time.monotonic() - started
    print(f"kill_campaign: {args.files} files, seed {args.seed}, {args.jobs} jobs: {tally.trials} trials, {tally.kills} SIGKILLs "
          f"({tally.finished_first} random runs finished before their kill), {tally.failures} failures, "
          f"{elapsed:.0f} s")
    print(f"  of which {tally.aimed} aimed kills, {tally.kills - tally.aimed} random kills")
    if tally.first_failure:
        print(f"first failure: {tally.first_failure}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
