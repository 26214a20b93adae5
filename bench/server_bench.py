"""Benchmark: `mco serve` against Debian's nginx serving the same bytes, loaded with wrk on 127.0.0.1.

One run: render a generated cluster (a ~250 KB worker config and a ~4 KB master config), start
`mco serve --workers N` with its JSON access log on (to a file) and without the MCS's copy of the
MachineConfig (`--no-machine-config-content`: it would make the bodies ~2.7 times the goals' sizes), fetch both configs as Ignition 2.14
would (spec 3.3.0), write those exact bytes into an nginx root (world-readable, checked byte for byte
before timing) and start nginx with `worker_processes N` (access log off, sendfile). Then, for each size,
each server gets a 2 s unmeasured warm-up and a measured wrk run (`-t2 -c64 --latency`, the Ignition
Accept header), interleaved over `--rounds` rounds. With `--tls` both serve HTTPS with the same
certificate (`mco certs init`, ECDHE ciphers, TLS 1.2-1.3) and every request comes on a new connection
(`Connection: close`); wrk does not resume sessions, so every request is a full handshake whether the
servers issue session tickets or not (both do: OpenSSL's default). A third server, the aiohttp floor
(bench/aiohttp_floor.py: aiohttp's low-level `web.Server` returning the same bytes, nothing of mco's, the
same number of processes and mco's TLS context), is loaded the same way: what aiohttp's public API reaches
on this machine in this run. Prints requests/s (best and median),
p99 latency, requests per server CPU-second (independent of how much CPU wrk or other load took), and
mco/nginx ratios of the best runs against the goals: one worker >= 0.6x (large) and >= 0.35x (small);
two workers >= 0.75x; TLS with a new connection per request >= 0.6x.

    .venv/bin/python bench/server_bench.py [--duration 10] [--rounds 2] [--workers 1] [--tls]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import ssl
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from wrk_setup import ROOT, WrkBench, run_bench  # noqa: E402  (before tests/: it puts ROOT on the path)

from tests.serving import free_port  # noqa: E402

ACCEPT = "application/vnd.coreos.ignition+json;version=3.3.0, */*;q=0.1"


def goals(workers: int, tls: bool) -> dict[str, float]:
    """The mco/nginx req/s ratio each size must reach in this mode."""
    if tls:
        return {"large": 0.6, "small": 0.6}
    if workers > 1:
        return {"large": 0.75, "small": 0.75}
    return {"large": 0.6, "small": 0.35}


def _file(path: str, size: int, seed: int) -> str:
    line = f"# generated setting {seed} for the benchmark; value={'x' * 40}\n"
    body = (line * (size // len(line) + 1))[:size]
    escaped = "".join(c if c.isalnum() else f"%{ord(c):02X}" for c in body)
    return (f"        - path: {path}\n          mode: 0644\n          overwrite: true\n"
            f"          contents:\n            source: \"data:,{escaped}\"\n")


def write_cluster(directory: Path, *, large_files: int, small_bytes: int) -> None:
    """A cluster whose worker config is large (many files) and whose master config is small."""
    (directory / "manifests").mkdir(parents=True)
    (directory / "cluster.yaml").write_text("name: bench\nbaseDomain: bench.test\n")
    for role, files in (("worker", [_file(f"/etc/bench/large-{i}.conf", 1000, i) for i in range(large_files)]),
                        ("master", [_file("/etc/bench/small.conf", small_bytes, 0)])):
        (directory / "manifests" / f"10-{role}-bench.yaml").write_text(
            "apiVersion: machineconfiguration.openshift.io/v1\nkind: MachineConfig\n"
            f"metadata:\n  name: 10-{role}-bench\n  labels:\n    machineconfiguration.openshift.io/role: {role}\n"
            "spec:\n  config:\n    ignition:\n      version: 3.4.0\n    storage:\n      files:\n" + "".join(files))


_TLS: ssl.SSLContext | None = None  # trusts the run's CA (--tls)


def fetch(url: str) -> bytes:
    request = urllib.request.Request(url, headers={"Accept": ACCEPT})
    with urllib.request.urlopen(request, timeout=10, context=_TLS) as response:
        return response.read()


def wait_healthy(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2, context=_TLS) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"{url} never became healthy")


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def run_wrk(url: str, duration: float, extra: Sequence[str] = (), *, close: bool = False) -> dict[str, float]:
    """Requests/s, p99 (ms) and non-2xx count of one wrk run (`extra`: more wrk arguments, e.g. a script;
    `close`: a new connection per request)."""
    extra = [*extra, *(["-H", "Connection: close"] if close else [])]
    out = subprocess.run(["wrk", "-t2", "-c64", f"-d{duration:g}s", "--latency", "--timeout", "5s",
                          "-H", f"Accept: {ACCEPT}", *extra, url], capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)", out)
    p99 = float(m.group(1)) * _UNITS[m.group(2)] if m else float("nan")
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {"rps": rps, "p99": p99, "non2xx": float(bad.group(1)) if bad else 0.0,
            "socket_errors": float(sum(int(g) for g in errors.groups())) if errors else 0.0}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process and its direct children (nginx workers, mco followers)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(entry) == pid or int(fields[1]) == pid:
            total += int(fields[11]) + int(fields[12])
    return total / tick


NGINX_CONF = """worker_processes {workers};
daemon off;
pid {tmp}/nginx.pid;
error_log {tmp}/nginx-error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_requests 1000000;
    keepalive_timeout 75s;
    open_file_cache max=100 inactive=60s;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    default_type application/json;
    server {{
        listen 127.0.0.1:{port}{tls};
        root {root};
        ssl_certificate {cert};
        ssl_certificate_key {key};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_ciphers ECDHE+AESGCM:ECDHE+CHACHA20:DHE+AESGCM:!aNULL:!MD5:!DSS;
        ssl_prefer_server_ciphers on;
    }}
}}
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measured wrk run")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of each server (default 1)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved measured runs per case (best is kept)")
    parser.add_argument("--large-files", type=int, default=200, help="files in the large config (~1.2 KB each)")
    parser.add_argument("--tls", action="store_true", help="HTTPS, a new connection (full handshake) per request")
    args = parser.parse_args()
    return run_bench("mco-bench-", ("nginx", "wrk"), measure, args)


def measure(bench: WrkBench, args: argparse.Namespace) -> int:
    """Both servers on the same bytes, interleaved wrk runs, the table and the verdict (0: every goal met)."""
    global _TLS
    tmp = bench.tmp
    os.chmod(tmp, 0o755)
    cluster = tmp / "cluster"
    write_cluster(cluster, large_files=args.large_files, small_bytes=1600)
    nginx_port = free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    certs = tmp / "certs"
    listen = ["--listen", "127.0.0.1:0"]
    scheme = "http"
    ca = None
    if args.tls:
        subprocess.run([sys.executable, "-m", "cli", "certs", "init", str(certs), "--ip", "127.0.0.1"], env=env,
                       check=True, capture_output=True)
        ca = certs / "ca.crt"
        _TLS = ssl.create_default_context(cafile=str(ca))
        listen = ["--listen", "127.0.0.1:0", "--tls-listen", "127.0.0.1:0",
                  "--cert", str(certs / "tls.crt"), "--key", str(certs / "tls.key")]
        scheme = "https"
    served = bench.serve(cluster, *listen, "--workers", str(args.workers), "--access-log", str(tmp / "access.log"),
                         "--no-machine-config-content", ca=ca)  # (the bodies' sizes: the goals' 245 KB and 4 KB)
    time.sleep(3)  # let the follower workers bind too
    root = tmp / "www"
    (root / "config").mkdir(parents=True)
    sizes = {}
    for name, pool in (("large", "worker"), ("small", "master")):
        body = fetch(f"{served.urls[scheme]}/config/{pool}")
        assert json.loads(body)["ignition"]["version"] == "3.3.0"
        (root / "config" / pool).write_bytes(body)
        sizes[name] = len(body)
    for p in (tmp, root, root / "config", *(root / "config").iterdir()):
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
    if not args.tls:  # nginx wants the files to exist even where the listener does not use them
        subprocess.run([sys.executable, "-m", "cli", "certs", "init", str(certs), "--ip", "127.0.0.1"], env=env,
                       check=True, capture_output=True)
    (tmp / "nginx.conf").write_text(NGINX_CONF.format(
        workers=args.workers, tmp=tmp, port=nginx_port, root=root, tls=" ssl" if args.tls else "",
        cert=certs / "tls.crt", key=certs / "tls.key"))
    nginx = bench.start(["nginx", "-c", str(tmp / "nginx.conf")])
    floor_port = free_port()
    floor = bench.start([sys.executable, str(ROOT / "bench" / "aiohttp_floor.py"), str(floor_port), str(root),
                         str(args.workers), *([str(certs / "tls.crt"), str(certs / "tls.key")] if args.tls else [])])
    bases = {"nginx": f"{scheme}://127.0.0.1:{nginx_port}", "mco": served.urls[scheme],
             "aiohttp": f"{scheme}://127.0.0.1:{floor_port}"}
    for server in ("nginx", "aiohttp"):
        wait_healthy(f"{bases[server]}/config/master")
    for pool in ("worker", "master"):
        if not fetch(f"{bases['nginx']}/config/{pool}") == fetch(f"{bases['mco']}/config/{pool}") \
                == fetch(f"{bases['aiohttp']}/config/{pool}"):
            raise RuntimeError(f"nginx, mco and the aiohttp floor serve different bytes for {pool}")
    pids = {"nginx": nginx.pid, "mco": served.proc.pid, "aiohttp": floor.pid}
    runs: dict[tuple[str, str], list[dict[str, float]]] = {}
    for _round in range(args.rounds):  # interleaved, so foreign load hits both servers alike
        for name, pool in (("large", "worker"), ("small", "master")):
            for server, base in bases.items():
                url = f"{base}/config/{pool}"
                run_wrk(url, 2, close=args.tls)  # warm-up, not measured
                before = cpu_seconds(pids[server])
                result = run_wrk(url, args.duration, close=args.tls)
                result["cpu"] = cpu_seconds(pids[server]) - before
                runs.setdefault((name, server), []).append(result)
    print(f"mco serve vs {subprocess.run(['nginx', '-v'], capture_output=True, text=True).stderr.strip()}, "
          f"{args.workers} worker(s) each, wrk -t2 -c64 -d{args.duration:g}s, {args.rounds} interleaved rounds, "
          f"Accept spec 3.3.0, 127.0.0.1, {'HTTPS, a new connection per request' if args.tls else 'HTTP keep-alive'}, "
          f"mco access log on, load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'size':<16}{'server':<8}{'best req/s':>11}{'median':>9}{'p99 ms':>9}{'req/CPU-s':>11}{'errors':>8}")
    best: dict[tuple[str, str], dict[str, float]] = {}
    for key, results in runs.items():
        top = max(results, key=lambda r: r["rps"])
        best[key] = top
        median = statistics.median(r["rps"] for r in results)
        errors = sum(r["non2xx"] + r["socket_errors"] for r in results)
        efficiency = top["rps"] * args.duration / top["cpu"] if top["cpu"] else float("nan")
        print(f"{key[0] + ' ' + str(sizes[key[0]]) + ' B':<16}{key[1]:<8}{top['rps']:>11.0f}{median:>9.0f}"
              f"{top['p99']:>9.2f}{efficiency:>11.0f}{errors:>8.0f}")
    ok = True
    goal = goals(args.workers, args.tls)
    for name in ("large", "small"):
        mco, ngx = best[(name, "mco")], best[(name, "nginx")]
        ratio, p99_ratio = mco["rps"] / ngx["rps"], mco["p99"] / ngx["p99"]
        verdict = ratio >= goal[name]
        ok &= verdict
        print(f"ratio {name}: req/s {ratio:.2f}x (goal >= {goal[name]}x) -> {'met' if verdict else 'NOT met'}; "
              f"p99 {p99_ratio:.2f}x; the aiohttp floor {best[(name, 'aiohttp')]['rps'] / ngx['rps']:.2f}x")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
