"""fleet/rollout_settings.py: the rollout.machine-config.io/ annotations of a MachineConfigPool."""

from __future__ import annotations

import pytest

from fleet.rendered import PoolRecord
from fleet.rollout_settings import PREFIX, HealthCheck, RolloutSettings, parse_settings

GOOD = [
    ("none", {}, RolloutSettings()),
    ("other-annotations-ignored", {"example.com/x": "y"}, RolloutSettings()),
    ("order", {"order": "newest-first"}, RolloutSettings(order="newest-first")),
    ("canary-count", {"canaries": "2"}, RolloutSettings(canaries="2")),
    ("canary-percent", {"canaries": " 10% "}, RolloutSettings(canaries="10%")),
    ("selector", {"canary-selector": '{"matchLabels": {"canary": "true"}}'},
     RolloutSettings(canary_selector={"canary": "true"})),
    ("soak", {"soak": "1h30m"}, RolloutSettings(soak_seconds=5400)),
    ("soak-seconds", {"soak": "90"}, RolloutSettings(soak_seconds=90)),
    ("auto", {"auto-pause": "false", "auto-revert": "true"}, RolloutSettings(auto_pause=False, auto_revert=True)),
    ("checks", {"health-checks": '[{"name": "api", "url": "http://127.0.0.1:8080/healthz", "status": 204},'
                                 ' {"name": "ok", "command": ["/bin/true"]}]'},
     RolloutSettings(health_checks=(HealthCheck("api", url="http://127.0.0.1:8080/healthz", status=204),
                                    HealthCheck("ok", command=("/bin/true",))))),
    ("pulls", {"max-concurrent-pulls": "3"}, RolloutSettings(max_concurrent_pulls=3)),
]


@pytest.mark.parametrize("given,settings", [c[1:] for c in GOOD], ids=[c[0] for c in GOOD])
def test_parsed_and_stored(given: dict[str, str], settings: RolloutSettings) -> None:
    annotations = {k if "/" in k else PREFIX + k: v for k, v in given.items()}
    parsed, problems = parse_settings(annotations)
    assert problems == []
    assert parsed == settings
    record = PoolRecord("worker", rollout=parsed)
    assert PoolRecord.from_dict(record.to_dict()) == record
    assert ("rollout" in record.to_dict()) is (settings != RolloutSettings())


BAD = [
    ("unknown-key", "cannaries", "2"),
    ("order", "order", "random"),
    ("canaries-word", "canaries", "some"),
    ("canaries-over-100", "canaries", "150%"),
    ("selector-not-json", "canary-selector", "canary=true"),
    ("selector-empty", "canary-selector", '{"matchLabels": {}}'),
    ("soak", "soak", "ten minutes"),
    ("bool", "auto-pause", "yes"),
    ("windows-empty", "maintenance-windows", "[]"),
    ("window-bad", "maintenance-windows", '[{"days": ["Funday"], "start": "01:00", "duration": "1h"}]'),
    ("check-relative", "health-checks", '[{"name": "x", "command": ["true"]}]'),
    ("check-both", "health-checks", '[{"name": "x", "command": ["/bin/true"], "url": "http://a/"}]'),
    ("check-dup", "health-checks", '[{"name": "x", "command": ["/bin/true"]}, {"name": "x", "url": "http://a/"}]'),
    ("check-status", "health-checks", '[{"name": "x", "url": "http://a/", "status": 99}]'),
    ("pulls", "max-concurrent-pulls", "-1"),
    ("canaries-fullwidth-digits", "canaries", "\uff15"),  # not ASCII: the count's digits are 0-9 only
    ("soak-fullwidth-digits", "soak", "\uff11\uff10m"),
    ("window-fullwidth-start", "maintenance-windows",
     '[{"days": ["Sat"], "start": "\uff11\uff12:\uff10\uff10", "duration": "1h"}]'),
]


@pytest.mark.parametrize("key,value", [c[1:] for c in BAD], ids=[c[0] for c in BAD])
def test_refused_naming_the_annotation(key: str, value: str) -> None:
    parsed, problems = parse_settings({PREFIX + key: value})
    assert [k for k, _ in problems] == [PREFIX + key]
    assert parsed == RolloutSettings()


def test_canaries_and_selector_exclusive() -> None:
    _, problems = parse_settings({PREFIX + "canaries": "1", PREFIX + "canary-selector": '{"matchLabels": {"a": "b"}}'})
    assert [k for k, _ in problems] == [PREFIX + "canaries"]


def test_allowed_failed_units() -> None:
    parsed, problems = parse_settings({PREFIX + "allowed-failed-units": "kdump.service, nfs-idmapd.service",
                                       PREFIX + "soak": "5m"})
    assert problems == [] and parsed.allowed_failed_units == ("kdump.service", "nfs-idmapd.service")
    assert parsed.health_gate()["allowedFailedUnits"] == ["kdump.service", "nfs-idmapd.service"]
    _, problems = parse_settings({PREFIX + "allowed-failed-units": "kdump.service,../x"})
    assert [k for k, _ in problems] == [PREFIX + "allowed-failed-units"]
