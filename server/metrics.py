"""Prometheus metrics of one server process (`GET /metrics`, text exposition format).

Label sets stay bounded: an unknown pool is counted as `pool="-"`, so a scan of random names cannot
grow the series without limit. Config answers and HTTP requests are counted in plain dicts on the
request path (a few hundred nanoseconds) and turned into counter families when /metrics is scraped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from server.loop_monitor import LoopMonitor

CONTENT_TYPE = CONTENT_TYPE_LATEST


class ServerMetrics:
    """The server's counters, histogram and gauges in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.config_counts: dict[tuple[str, str, int], int] = {}  # (pool, version, status) -> answers
        self.config_bytes: dict[tuple[str, str], int] = {}  # (pool, version) -> body bytes sent
        self.http_counts: dict[tuple[str, int], int] = {}  # (route, status) -> requests
        self.drift_counts: dict[tuple[str, str, bool], int] = {}  # (pool, kind, repaired) -> drift events
        self.monitor: LoopMonitor | None = None  # the event-loop monitor, once started (run.py)
        # (woken for a slot, of them lost, woken to pull the new OS image) held claims (app.py)
        self.held_wakeups: Callable[[], tuple[int, int, int]] = lambda: (0, 0, 0)
        self.rollout_pauses: list[tuple[str, str]] = []  # (pool, node) paused by the rollout, as of this scrape (app.py)
        self.fleet: list[GaugeMetricFamily] = []  # the fleet's gauges as of this scrape (server/fleet_metrics.py)
        self.registry.register(_Counted(self))
        self.render_seconds = Histogram("mco_render_duration_seconds", "Wall time of one cluster render.",
                                        registry=self.registry,
                                        buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        self.renders = Counter("mco_renders", "Cluster renders by outcome (ok, degraded, failed).",
                               ["outcome"], registry=self.registry)
        self.generation = Gauge("mco_snapshot_generation", "Generation of the snapshot being served.",
                                registry=self.registry)
        self.ready = Gauge("mco_ready", "1 once a good render is being served.", registry=self.registry)
        self.held_claims = Gauge("mco_held_claims", "Desired-config claims held waiting for a slot (?wait=).",
                                 registry=self.registry)

    def config_request(self, pool: str, version: str, status: int, nbytes: int) -> None:
        """Count one `/config` answer and its body bytes."""
        key = (pool, version, status)
        counts = self.config_counts
        counts[key] = counts.get(key, 0) + 1
        if nbytes:
            sent = self.config_bytes
            sent[(pool, version)] = sent.get((pool, version), 0) + nbytes

    def http_request(self, route: str, status: int) -> None:
        """Count one request to any route."""
        key = (route, status)
        self.http_counts[key] = self.http_counts.get(key, 0) + 1

    def drift_event(self, pool: str, kind: str, repaired: bool) -> None:
        """Count one drift event a node reported (fleet/drift_events.py)."""
        key = (pool, kind, repaired)
        self.drift_counts[key] = self.drift_counts.get(key, 0) + 1

    def exposition(self) -> bytes:
        """The text exposition of every metric."""
        return generate_latest(self.registry)


class _Counted(Collector):
    """The dict-kept counters of ServerMetrics as Prometheus families, built at scrape time."""

    def __init__(self, metrics: ServerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        m = self.metrics
        requests = CounterMetricFamily("mco_config_requests", "Config requests by pool, spec version and status.",
                                       labels=["pool", "version", "status"])
        for (pool, version, status), n in sorted(m.config_counts.items()):
            requests.add_metric([pool, version, str(status)], n)
        sent = CounterMetricFamily("mco_config_bytes_served", "Config body bytes sent, by pool and version.",
                                   labels=["pool", "version"])
        for (pool, version), n in sorted(m.config_bytes.items()):
            sent.add_metric([pool, version], n)
        http = CounterMetricFamily("mco_http_requests", "All HTTP requests by route and status.",
                                   labels=["route", "status"])
        for (route, status), n in sorted(m.http_counts.items()):
            http.add_metric([route, str(status)], n)
        longest = GaugeMetricFamily("mco_event_loop_longest_block_seconds",
                                    "Longest CPU stretch of the event loop between two heartbeats.")
        longest.add_metric([], m.monitor.longest if m.monitor is not None else 0.0)
        blocks = CounterMetricFamily("mco_event_loop_blocks", "Event-loop stretches over 100 ms without a heartbeat.")
        blocks.add_metric([], m.monitor.over if m.monitor is not None else 0)
        woken, lost, to_pull = m.held_wakeups()
        wakeups = CounterMetricFamily("mco_held_claim_wakeups", "Held claims woken because a slot may have freed.")
        wakeups.add_metric([], woken)
        lost_wakeups = CounterMetricFamily("mco_held_claim_wakeups_lost",
                                           "Woken held claims that lost the slot to another claim and waited again.")
        lost_wakeups.add_metric([], lost)
        pull_wakeups = CounterMetricFamily("mco_held_claim_pull_wakeups",
                                           "Held claims woken to pull their pool's new OS image before their slot.")
        pull_wakeups.add_metric([], to_pull)
        paused = GaugeMetricFamily("mco_pool_rollout_paused",
                                   "1 for a pool whose rollout the first failing node paused (node: which).",
                                   labels=["pool", "node"])
        for pool, node in m.rollout_pauses:
            paused.add_metric([pool, node], 1)
        drift = CounterMetricFamily("mco_drift_events", "Drift events nodes reported, by pool, kind (file, unit, "
                                    "kargs, fips, service) and whether the node repaired it.",
                                    labels=["pool", "kind", "repaired"])
        for (pool, kind, repaired), n in sorted(m.drift_counts.items()):
            drift.add_metric([pool, kind, str(repaired).lower()], n)
        yield from (requests, sent, http, longest, blocks, wakeups, lost_wakeups, pull_wakeups, paused, drift)
        yield from m.fleet
