"""Prometheus metrics of one server process (`GET /metrics`, text exposition format).

Label sets stay bounded: an unknown pool is counted as `pool="-"`, so a scan of random names cannot
grow the series without limit. Children are cached so the request path does a dict lookup, not a
label-lookup under prometheus-client's lock, per request.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST


class ServerMetrics:
    """The server's counters, histogram and gauges in their own registry."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("mco_config_requests", "Config requests by pool, spec version and status.",
                                ["pool", "version", "status"], registry=self.registry)
        self.config_bytes = Counter("mco_config_bytes_served", "Config body bytes sent, by pool and version.",
                                    ["pool", "version"], registry=self.registry)
        self.http = Counter("mco_http_requests", "All HTTP requests by route and status.",
                            ["route", "status"], registry=self.registry)
        self.render_seconds = Histogram("mco_render_duration_seconds", "Wall time of one cluster render.",
                                        registry=self.registry,
                                        buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        self.renders = Counter("mco_renders", "Cluster renders by outcome (ok, degraded, failed).",
                               ["outcome"], registry=self.registry)
        self.generation = Gauge("mco_snapshot_generation", "Generation of the snapshot being served.",
                                registry=self.registry)
        self.ready = Gauge("mco_ready", "1 once a good render is being served.", registry=self.registry)
        self._req: dict[tuple[str, str, str], tuple[Counter, Counter]] = {}
        self._http: dict[tuple[str, str], Counter] = {}

    def config_request(self, pool: str, version: str, status: int, nbytes: int) -> None:
        """Count one `/config` answer and its body bytes."""
        key = (pool, version, str(status))
        children = self._req.get(key)
        if children is None:
            children = (self.requests.labels(*key), self.config_bytes.labels(pool, version))
            self._req[key] = children
        children[0].inc()
        if nbytes:
            children[1].inc(nbytes)

    def http_request(self, route: str, status: int) -> None:
        """Count one request to any route."""
        key = (route, str(status))
        child = self._http.get(key)
        if child is None:
            child = self._http[key] = self.http.labels(*key)
        child.inc()

    def exposition(self) -> bytes:
        """The text exposition of every metric."""
        return generate_latest(self.registry)
