"""Frozen copies of the validator as it was before the whole-list fast paths (commit 59ecb00): decode,
validate, rules/dups, rules/systemd. The differential tests (test_validate_fast.py) check that the current
modules give the same entries, in the same order, with the same plain ids. Do not speed these up."""
