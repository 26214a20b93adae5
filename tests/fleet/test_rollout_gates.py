"""fleet/rollout_gates.py and its use by fleet/rollout.py: the automatic pause, maintenance windows, the canary
wave, the rollout order (MCO `sortNodeList`) and the revert target."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from fleet.machine_entry import MachineEntry
from fleet.maintenance_windows import is_open, next_opening, parse_window
from fleet.node_status import NodeStatus, Transition
from fleet.rendered import HistoryEntry, PoolRecord
from fleet.rollout import NodeStatuses, desired_for, order_key
from fleet.rollout_gates import canaries, hold_reason, revert_target, rollout_pause
from fleet.rollout_settings import RolloutSettings

OLD, NEW, OLDER = "rendered-worker-old", "rendered-worker-new", "rendered-worker-older"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)  # a Wednesday


def _n(name: str, current: str = OLD, desired: str = OLD, state: str = "Done", *, at: str = "2026-12-02T11:00:00Z",
       registered: str = "", history: tuple[Transition, ...] = ()) -> NodeStatus:
    return NodeStatus(name, "worker", current, desired, state, "" if state == "Done" else f"{name} broke",
                      at, history, registered)


def _pool(**settings: object) -> PoolRecord:
    return PoolRecord("worker", current=NEW, max_unavailable=10, rollout=RolloutSettings(**settings))  # type: ignore[arg-type]


PAUSE = [
    ("none", _pool(), [_n("a"), _n("b")], None),
    ("failed-on-target", _pool(), [_n("a", OLD, NEW, "Degraded"), _n("b")], "a"),
    ("first-failure-wins", _pool(), [_n("a", OLD, NEW, "Degraded", at="2026-12-02T11:30:00Z"),
                                     _n("b", OLD, NEW, "Degraded", at="2026-12-02T11:10:00Z")], "b"),
    ("failing-again-keeps-first", _pool(),  # a's new message adds an entry; a still failed first
     [_n("a", OLD, NEW, "Degraded", at="2026-12-02T11:40:00Z", history=(
         Transition("Degraded", OLD, NEW, "a broke again", "2026-12-02T11:40:00Z"),
         Transition("Degraded", OLD, NEW, "a broke", "2026-12-02T11:10:00Z"),
         Transition("Working", OLD, NEW, "", "2026-12-02T11:00:00Z"))),
      _n("b", OLD, NEW, "Degraded", at="2026-12-02T11:30:00Z")], "a"),
    ("unreconcilable", _pool(), [_n("a", OLD, NEW, "Unreconcilable")], "a"),
    ("off", _pool(auto_pause=False), [_n("a", OLD, NEW, "Degraded")], None),
    ("failed-elsewhere", _pool(), [_n("a", OLD, OLD, "Degraded")], None),
    ("drift-at-target", _pool(), [_n("a", NEW, NEW, "Degraded")], None),
    ("resumed-after", replace(_pool(), resumed_at="2026-12-02T11:05:00Z"), [_n("a", OLD, NEW, "Degraded")], None),
    ("failed-after-resume", replace(_pool(), resumed_at="2026-12-02T10:00:00Z"), [_n("a", OLD, NEW, "Degraded")], "a"),
]


@pytest.mark.parametrize("record,nodes,paused_by", [c[1:] for c in PAUSE], ids=[c[0] for c in PAUSE])
def test_automatic_pause(record: PoolRecord, nodes: list[NodeStatus], paused_by: str | None) -> None:
    statuses = NodeStatuses(nodes)
    pause = rollout_pause(record, (statuses.get(n) for n in statuses.failing("worker")))
    assert (pause.node if pause else None) == paused_by
    waiting = NodeStatuses([*nodes, _n("z")])
    assert desired_for("z", record, waiting, now=NOW) == (OLD if paused_by else NEW)
    if pause is not None:
        assert pause.reason.startswith("Degraded") or pause.reason.startswith("Unreconcilable")


def test_node_mid_update_finishes_while_paused() -> None:
    nodes = NodeStatuses([_n("a", OLD, NEW, "Degraded"), _n("b", OLD, NEW, "Working")])
    assert desired_for("b", _pool(), nodes, now=NOW) == NEW


SAT_NIGHT = '{"days": ["Sat"], "start": "22:00", "duration": "4h", "timeZone": "Europe/Berlin"}'
WINDOWS = [
    ("inside", "Sat", "22:30", True),
    ("past-midnight", "Sun", "01:30", True),
    ("after", "Sun", "02:30", False),
    ("before", "Sat", "21:59", False),
    ("other-day", "Wed", "23:00", False),
]
DATES = {"Sat": 5, "Sun": 6, "Wed": 2}  # December 2026: the 5th is a Saturday


@pytest.mark.parametrize("day,clock,open_", [c[1:] for c in WINDOWS], ids=[c[0] for c in WINDOWS])
def test_maintenance_window(day: str, clock: str, open_: bool) -> None:
    import json
    from zoneinfo import ZoneInfo

    window = parse_window(json.loads(SAT_NIGHT))
    hour, minute = map(int, clock.split(":"))
    local = datetime(2026, 12, DATES[day], hour, minute, tzinfo=ZoneInfo("Europe/Berlin"))
    now = local.astimezone(UTC)
    assert is_open([window], now) is open_
    record = _pool(windows=(window,))
    assert desired_for("a", record, NodeStatuses([_n("a")]), now=now) == (NEW if open_ else OLD)
    if not open_:
        opens = next_opening([window], now)
        assert opens is not None and opens > now and opens.astimezone(ZoneInfo("Europe/Berlin")).hour == 22
        assert "next opens" in (hold_reason("a", record, NodeStatuses([_n("a")]), now) or "")


# Daylight saving changes, in UTC (fleet/maintenance_windows.py): a start the clocks skip opens at the same moment
# an hour later on the wall clock (02:30 on a spring-forward day is 03:30 summer time, as Go's time.Date and
# Python's zoneinfo normalise it), a start the clocks repeat opens at its first occurrence and only once; the
# duration is elapsed time.
DST = [
    ("berlin-spring-gap", "Europe/Berlin", "Sun", "02:30", "2026-03-29T01:00:00", "2026-03-29T01:30:00", "2026-03-29T02:30:00"),
    ("new-york-spring-gap", "America/New_York", "Sun", "02:30", "2026-03-08T06:00:00", "2026-03-08T07:30:00", "2026-03-08T08:30:00"),
    ("berlin-fall-repeat", "Europe/Berlin", "Sun", "02:30", "2026-10-25T00:00:00", "2026-10-25T00:30:00", "2026-10-25T01:30:00"),
    ("across-midnight", "Europe/Berlin", "Sat", "23:30", "2026-03-28T22:00:00", "2026-03-28T22:30:00", "2026-03-28T23:30:00"),
]


@pytest.mark.parametrize(("zone", "day", "start", "before", "opens", "closes"), [c[1:] for c in DST],
                         ids=[c[0] for c in DST])
def test_window_across_daylight_saving(zone: str, day: str, start: str, before: str, opens: str, closes: str) -> None:
    window = parse_window({"days": [day], "start": start, "duration": "1h", "timeZone": zone})
    at = {k: datetime.fromisoformat(v).replace(tzinfo=UTC) for k, v in (("before", before), ("opens", opens),
                                                                         ("closes", closes))}
    assert next_opening([window], at["before"]) == at["opens"]
    assert not is_open([window], at["opens"] - timedelta(seconds=1))
    assert is_open([window], at["opens"]) and is_open([window], at["closes"] - timedelta(seconds=1))
    assert not is_open([window], at["closes"]) and not is_open([window], at["closes"] + timedelta(hours=1))


@pytest.mark.parametrize("bad", [{"days": [], "start": "01:00", "duration": "1h"},
                                 {"days": ["Mon"], "start": "25:00", "duration": "1h"},
                                 {"days": ["Mon"], "start": "01:00", "duration": "8d"},
                                 {"days": ["Mon"], "start": "01:00", "duration": "1h", "timeZone": "Mars/Olympus"},
                                 {"days": ["Mon"], "start": "01:00", "duration": "1h", "every": "week"}],
                         ids=["no-days", "bad-start", "bad-duration", "bad-zone", "unknown-field"])
def test_window_refused(bad: dict[str, object]) -> None:
    from fleet.maintenance_windows import WindowError

    with pytest.raises(WindowError):
        parse_window(bad)


def test_order_zone_then_oldest() -> None:
    nodes = [_n("c", registered="2026-01-03T00:00:00Z"), _n("a", registered="2026-01-02T00:00:00Z"),
             _n("b", registered="2026-01-01T00:00:00Z")]
    assert [s.name for s in sorted(nodes, key=lambda s: order_key(s, False))] == ["b", "a", "c"]
    assert [s.name for s in sorted(nodes, key=lambda s: order_key(s, True))] == ["c", "a", "b"]


def _zoned(name: str, zone: str | None, registered: str) -> NodeStatus:
    labels = {"node-role.kubernetes.io/worker": ""} | ({"topology.kubernetes.io/zone": zone} if zone is not None else {})
    return replace(_n(name, registered=registered), labels=labels)


# MCO `pkg/controller/node/node_controller.go` sortNodeList: nodes carrying the zone label by zone, then by creation
# time oldest first; nodes without the label last, oldest first. The label's presence counts, not its value: a
# node labelled with the empty zone has a zone (""), which sorts before every other.
ZONE_ORDER = [
    ("zone-then-oldest", [("x", "b", "01"), ("y", "a", "03"), ("z", "a", "02")], False, ["z", "y", "x"]),
    ("no-zone-last-oldest-first", [("x", None, "02"), ("y", "b", "05"), ("z", None, "01")], False, ["y", "z", "x"]),
    ("empty-zone-is-a-zone", [("x", None, "01"), ("y", "", "04"), ("z", "a", "02")], False, ["y", "z", "x"]),
    ("newest-first-within-zone", [("x", "a", "01"), ("y", "a", "02"), ("z", None, "03"), ("w", None, "04")], True,
     ["y", "x", "w", "z"]),
]


@pytest.mark.parametrize(("nodes", "newest", "order"), [c[1:] for c in ZONE_ORDER], ids=[c[0] for c in ZONE_ORDER])
def test_order_by_zone(nodes: list[tuple[str, str | None, str]], newest: bool, order: list[str]) -> None:
    statuses = [_zoned(name, zone, f"2026-01-{day}T00:00:00Z") for name, zone, day in nodes]
    assert [s.name for s in sorted(statuses, key=lambda s: order_key(s, newest))] == order


def _registered(i: int) -> str:
    return f"2026-01-{i + 1:02d}T00:00:00Z"


def test_canary_wave() -> None:
    """Two canaries (the oldest two); the rest waits until both are Done at the target. Under the health gate a
    canary reports Done only after its soak (applier/health.py), so its Done ends the wave: no second soak."""
    record = _pool(canaries="2", soak_seconds=600)
    fresh = [_n(f"n{i}", registered=_registered(9 - i)) for i in range(10)]  # n9 oldest
    statuses = NodeStatuses(fresh)
    assert set(canaries(record, statuses)) == {"n9", "n8"}
    assert desired_for("n0", record, statuses, now=NOW) == OLD
    assert desired_for("n9", record, statuses, now=NOW) == NEW
    done = "2026-12-02T11:59:00Z"
    statuses.put(_n("n9", NEW, NEW, at=done, registered=_registered(0)))
    statuses.put(_n("n8", OLD, NEW, "Working", at=done, registered=_registered(1)))  # still soaking
    assert hold_reason("n0", record, statuses, NOW) == f"waiting for canary n8 to be Done at {NEW}"
    assert desired_for("n0", record, statuses, now=NOW) == OLD
    statuses.put(_n("n8", NEW, NEW, at=done, registered=_registered(1)))
    assert hold_reason("n0", record, statuses, NOW) is None
    assert desired_for("n0", record, statuses, now=NOW) == NEW


def test_canary_wave_ends_at_a_canary_done_at_its_own_machine_config() -> None:
    """A canary with a machine document runs its machine's config, built on the pool's target: Done at that, it
    ends the wave (comparing it with the pool's target kept the rest of the pool waiting for ever)."""
    mine = NEW + "-m1"
    record = replace(_pool(canaries="1"), machines=(MachineEntry("m0", {"hostname": "n9"}, mine, {}, "h"),))
    statuses = NodeStatuses([_n(f"n{i}", registered=_registered(9 - i)) for i in range(10)])  # n9 oldest
    assert desired_for("n9", record, statuses, now=NOW) == mine
    statuses.put(_n("n9", mine, mine, registered=_registered(0)))
    assert hold_reason("n0", record, statuses, NOW) is None
    assert desired_for("n0", record, statuses, now=NOW) == NEW


def test_a_node_labelled_a_canary_after_the_order_was_sorted_is_one() -> None:
    """The rollout order keeps the statuses it was sorted with (a label other than the zone moves no node): the
    selector reads each node's current labels, so `mco nodes label` makes a canary at once."""
    record = _pool(canary_selector={"canary": "yes"})
    statuses = NodeStatuses([_n(f"n{i}", registered=_registered(9 - i)) for i in range(4)])
    assert set(canaries(record, statuses)) == set()
    statuses.put(replace(_n("n3", registered=_registered(6)), labels={"canary": "yes"}))
    assert set(canaries(record, statuses)) == {"n3"}


def test_an_offline_canary_holds_the_wave_and_the_hold_names_it() -> None:
    """Canaries are chosen by place, not by who is online: the wave waits for n3 (the oldest, silent) and says so;
    no other node stands in for it (a stand-in chosen by presence would change as machines come and go)."""
    record = _pool(canaries="1")
    statuses = NodeStatuses([_n(f"n{i}", registered=_registered(9 - i)) for i in range(4)])
    absent = lambda status: status.name != "n3"  # noqa: E731
    assert set(canaries(record, statuses)) == {"n3"}
    assert hold_reason("n2", record, statuses, NOW) == f"waiting for canary n3 to be Done at {NEW}"
    assert desired_for("n2", record, statuses, now=NOW, present=absent) == OLD


def test_canary_percentage_rounds_up_and_selector() -> None:
    assert RolloutSettings(canaries="1%").canary_count(10) == 1
    assert RolloutSettings(canaries="50%").canary_count(5) == 3
    assert RolloutSettings(canaries="20").canary_count(5) == 5


def test_revert_target_every_node_reached() -> None:
    record = PoolRecord("worker", current=NEW, history=(HistoryEntry(OLDER, "t1"), HistoryEntry(OLD, "t2"),
                                                       HistoryEntry(NEW, "t3")))
    reached_old = [_n("a", OLD, NEW, "Degraded"), _n("b", OLD, OLD)]
    assert revert_target(record, reached_old) == OLD
    # c was provisioned at NEW after OLD's time: it never ran OLD, nor OLDER
    assert revert_target(record, [*reached_old, _n("c", NEW, NEW)]) is None
    moved_on = _n("d", NEW, NEW, history=(Transition("Done", NEW, NEW, "", "t4"), Transition("Done", OLD, OLD, "", "t2")))
    assert revert_target(record, [*reached_old, moved_on]) == OLD


def test_a_revert_never_goes_back_to_the_config_a_revert_left() -> None:
    """Pinned to OLD after reverting from NEW, which every node ran: a second revert goes further back (OLDER, which
    every node reached) or is refused; it never targets NEW again (that left the pool "pinned" to the bad config)."""
    record = PoolRecord("worker", current=OLD, reverted_from=NEW, history=(
        HistoryEntry(OLDER, "t1"), HistoryEntry(OLD, "t2"), HistoryEntry(NEW, "t3"), HistoryEntry(OLD, "t4")))
    ran = (Transition("Done", NEW, NEW, "", "t3"), Transition("Done", OLD, OLD, "", "t2"))
    everywhere = [_n(n, NEW, OLD, "Working", history=(*ran, Transition("Done", OLDER, OLDER, "", "t1"))) for n in "ab"]
    assert revert_target(record, everywhere) == OLDER
    assert revert_target(record, [_n(n, NEW, OLD, "Working", history=ran) for n in "ab"]) is None
