"""`mco apply`: run the on-node agent (applier/agent.py) once or in a loop.

    mco apply [--once] --node NAME (--server URL [--ca F] [--token-file F] [--node-token-file F] | --desired FILE)
              [--root DIR] [--state-dir DIR] [--backend ostree|rpm-ostree|bootc|none] [--reboot-command CMD]
              [--reboot-wait S] [--interval S] [--drift repair|report] [--repair]
Extra options: --pool, --node-labels K=V,... (with --server), --sysroot/--osname/--insecure-registry (ostree backend), --policy FILE (a MachineConfiguration),
--drain-command/--uncordon-command/--hook-timeout, --rollback, --retries.
A reboot is claimed only in a new boot (the boot ID, /proc/sys/kernel/random/boot_id, or ROOT/proc/... when
that file exists): in the same boot a sync reports Working "waiting for reboot into X", requests the reboot
again after --reboot-wait seconds, and turns Degraded after 3 requests.
Output: one JSON line per sync on stdout ({state, current, desired, message, rebooting}).
Exit codes: 0 Done (or rebooting), 1 Degraded / refused, 2 usage or I/O error (unreadable file, server away).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml

from cli.errors import InvalidInput, UsageError


def register(subparsers: Any) -> None:
    """Add `mco apply`."""
    p = subparsers.add_parser("apply", help="apply the desired rendered config to this node (the on-node agent)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--once", action="store_true", help="one sync, then exit")
    p.add_argument("--node", required=True, help="this node's name")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--server", metavar="URL", help="machine-config server base URL")
    src.add_argument("--desired", metavar="FILE", type=Path,
                     help="rendered MachineConfig (YAML or JSON, as `mco render --pool P --print` writes it)")
    p.add_argument("--ca", type=Path, help="CA bundle for the server's TLS certificate")
    p.add_argument("--token-file", type=Path,
                   help="file holding the bearer token for the server: the pool's token (`mco serve --token`), "
                        "sent on every request unless --node-token-file is given too")
    p.add_argument("--node-token-file", type=Path,
                   help="file holding this node's own token (`mco certs node-token`), sent on its reports and "
                        "update-slot claims (/nodes/NAME/...) and on the fetch of its machine's own config "
                        "when the server has --node-secret-file; --token-file's token then goes only to the "
                        "pool's config routes")
    p.add_argument("--pool", help="the node's pool (default: from the state or node-annotations.json)")
    p.add_argument("--node-labels", default="", metavar="K=V[,K=V...]",
                   help="the labels this node registers with, as the kubelet's --node-labels (default: the role label "
                        "of its pool, node-role.kubernetes.io/POOL=); only its first report sets them: after that "
                        "`mco nodes label` changes them")
    p.add_argument("--root", type=Path, default=Path("/"), help="the node's root filesystem (default /)")
    p.add_argument("--state-dir", type=Path, help="state directory (default ROOT/etc/machine-config-daemon)")
    p.add_argument("--backend", choices=("ostree", "rpm-ostree", "bootc", "none"),
                   help="OS backend (default: rpm-ostree/bootc on a booted ostree host at /, else none)")
    p.add_argument("--sysroot", type=Path, default=Path("/"), help="ostree sysroot (ostree backend)")
    p.add_argument("--osname", default="", help="ostree stateroot (default: the only one)")
    p.add_argument("--insecure-registry", action="append", default=[], metavar="HOST[:PORT]",
                   help="pull OS images from this registry over plain HTTP (ostree backend; repeatable)")
    p.add_argument("--reboot-command", metavar="CMD", help="shell command that reboots (default systemctl reboot on /)")
    p.add_argument("--reboot-wait", type=float, default=300.0, metavar="S",
                   help="seconds a requested reboot may take before it is requested again (default 300)")
    p.add_argument("--interval", type=float, default=60.0, metavar="S", help="seconds between syncs (default 60)")
    p.add_argument("--drift", choices=("repair", "report"), default="repair", help="what to do about drift")
    p.add_argument("--repair", action="store_true", help="with --once: restore drifted files and units now")
    p.add_argument("--policy", type=Path, metavar="FILE",
                   help="MachineConfiguration `cluster`: disruption policy and irreconcilable-validation overrides")
    p.add_argument("--drain-command", default="", metavar="CMD", help="hook run before a reboot ({node} substituted)")
    p.add_argument("--uncordon-command", default="", metavar="CMD", help="hook run after verification")
    p.add_argument("--hook-timeout", type=float, default=600.0, metavar="S", help="timeout of each hook")
    p.add_argument("--rollback", action="store_true", help="roll back the deployment when verification fails")
    p.add_argument("--retries", type=int, default=5, metavar="N",
                   help="attempts per server request, with exponential backoff (default 5)")
    p.set_defaults(func=run)


def _default_backend(root: Path) -> str:
    if str(root.resolve()) == "/" and Path("/run/ostree-booted").exists():
        if shutil.which("bootc"):
            return "bootc"
        if shutil.which("rpm-ostree"):
            return "rpm-ostree"
    return "none"


def _read_token(path: Path | None, flag: str) -> str:
    if path is None:
        return ""
    try:
        return path.read_text().strip()
    except OSError as exc:
        raise UsageError(f"{flag} {path}: {exc.strerror or exc}") from exc


def _policy(path: Path | None) -> tuple[Any, tuple[str, ...]]:
    """The MachineConfiguration's disruption policy and irreconcilable-validation overrides (storage)."""
    from fleet.disruption_policy import DisruptionPolicy, PolicyError

    if path is None:
        return None, ()
    try:
        data = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise UsageError(f"--policy {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise InvalidInput(f"--policy {path}: not YAML: {exc}") from exc
    try:
        policy = DisruptionPolicy.from_dict(data)
    except PolicyError as exc:
        raise InvalidInput(f"--policy {path}: {exc}") from exc
    spec = data.get("spec", data) if isinstance(data, dict) else {}
    block = spec.get("irreconcilableValidationOverrides") if isinstance(spec, dict) else None
    storage = block.get("storage") if isinstance(block, dict) else None
    return policy, tuple(str(s) for s in storage) if isinstance(storage, list) else ()


def _labels(text: str) -> dict[str, str]:
    from fleet.node_labels import LabelError, parse_label_list

    try:
        return parse_label_list(text)
    except LabelError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Build the agent (the composition root) and run it."""
    from applier.agent import Agent, AgentSettings
    from applier.backends import make_backend
    from applier.errors import PermanentError
    from applier.fetch import FileSource, ServerClient, ServerSource
    from applier.hooks import Hooks
    from applier.report import HttpReporter, StreamReporter
    from applier.runner import SubprocessRunner

    if args.repair and not args.once:
        raise UsageError("--repair needs --once")
    if args.reboot_wait < 0:
        raise UsageError("--reboot-wait must not be negative")
    if args.retries < 1:
        raise UsageError("--retries must be at least 1")
    if args.desired is not None and not args.desired.is_file():
        raise UsageError(f"--desired {args.desired}: no such file")
    if not args.root.is_dir():
        raise UsageError(f"--root {args.root}: not a directory")
    runner = SubprocessRunner()
    policy, overrides = _policy(args.policy)
    labels = _labels(args.node_labels)
    if labels and not args.server:
        raise UsageError("--node-labels needs --server (the server keeps a node's labels)")
    if args.server:
        def client() -> ServerClient:
            return ServerClient(args.server, ca=args.ca, token=_read_token(args.token_file, "--token-file"),
                                node_token=_read_token(args.node_token_file, "--node-token-file"))

        # In the loop, each claim may be held up to the interval: a freed update slot is taken at once. Reports
        # (drift repaired while a claim is held) go out on a connection of their own.
        source: Any = ServerSource(client(), attempts=args.retries, wait=0.0 if args.once else args.interval,
                                   labels=",".join(f"{k}={v}" for k, v in labels.items()))
        reporter: Any = HttpReporter(client(), attempts=args.retries, labels=labels)
    else:
        source = FileSource(args.desired)
        reporter = StreamReporter(sys.stderr)
    try:
        backend = make_backend(args.backend or _default_backend(args.root), runner=runner, sysroot=args.sysroot,
                               osname=args.osname, insecure_registries=tuple(args.insecure_registry))
    except PermanentError as exc:
        raise UsageError(str(exc)) from exc
    settings = AgentSettings(node=args.node, root=args.root, state_dir=args.state_dir, pool=args.pool,
                             reboot_command=args.reboot_command, reboot_wait=args.reboot_wait, drift=args.drift,
                             interval=args.interval,
                             policy=policy, overrides=overrides,
                             hooks=Hooks(args.drain_command, args.uncordon_command, args.hook_timeout),
                             rollback=args.rollback)
    agent = Agent(settings, source=source, reporter=reporter, backend=backend, runner=runner,
                  log=lambda m: print(f"mco apply: {m}", file=sys.stderr, flush=True))
    # A TemporaryError exits 2, a PermanentError 1 (cli/errors.py EXIT_CODES).
    result = agent.sync_once(repair=True if args.repair else None) if args.once else agent.run()
    if result is None:
        return 0
    print(json.dumps({"state": result.state, "current": result.current, "desired": result.desired,
                      "message": result.message, "rebooting": result.rebooting}, sort_keys=True), flush=True)
    return 1 if result.state == "Degraded" else 0
