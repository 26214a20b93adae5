"""The machine-config server: an aiohttp app over a store that negotiates the spec version and serves.

Flow of one `mco serve` (composition root: run.py):

    watch.py     render the cluster dir (leader) or follow the store (other workers) -> snapshot.py
    snapshot.py  immutable pools -> payloads, swapped in whole (state.py holds the current one)
    payload.py   per rendered config: bytes per (spec version, encoding) with ETag, built once
                 (added_files.py adds the MCS's node-annotations and encapsulated-config files;
                 convert.py translates with ignition/)
    respond.py   the /config/{pool} decision (auth.py, negotiate.py), used by app.py
    app.py       aiohttp routes: /config, /healthz, /metrics, /pools, /rendered (node_routes.py: /nodes/*,
                 where only a node may speak for itself; handout_wait.py holds claims told "stay" until a
                 slot may have freed; request_body.py reads JSON bodies)
    gate.py      admission of each connection: caps per listener and client, CIDR before the TLS handshake
    connection.py  around aiohttp's public server (llhttp parses every request): a read deadline,
                 505 for odd HTTP versions, malformed heads answered 400 naming the head, one log line
    loop_monitor.py  how long the event loop ran without yielding (metrics, tests, bench soak)
    status.py    node reports -> MachineConfigPool-style status; rollout.py decides desired configs
    fleetpage/   the HTML fleet page at / and /ui/ over the same store (docs/fleet-page.md)
    tls.py       TLS 1.2+ context and certificate reload; certs.py makes them; pointer.py points at us
"""
