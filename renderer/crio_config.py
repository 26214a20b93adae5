"""One ContainerRuntimeConfig: what the MCO refuses in it, and the CRI-O drop-ins it writes.

MCO `pkg/controller/container-runtime-config/helpers.go`:
- `validateUserContainerRuntimeConfig`, in its words: `pidsLimit` other than 0 below 20 (`invalid PidsLimit
  -1`); `logSizeMax` above 0 and at most 8 KiB (`invalid LogSizeMax "8k", cannot be less than 8kB`) --
  negative means unlimited and is kept; `overlaySize` below 0; `logLevel` outside error, fatal, panic,
  warn, info, debug, trace; `defaultRuntime` other than "", runc, crun. Sizes are Kubernetes quantities
  (renderer/quantity.py), quoted in the refusals and written into storage.conf in their canonical form
  (`Quantity.String()`: `1.5Gi` is `1536Mi`), and one that is not (`quantities must match the regular
  expression ...`) is refused as the API server refuses it.
- `createCRIODropinFiles`, in this order: `/etc/crio/crio.conf.d/01-ctrcfg-<field>` for `logLevel` (when set),
  `pidsLimit` (when given, 0 included), `logSizeMax` (when its value is not 0), `defaultRuntime` (when not
  empty); `overlaySize`, when not 0, goes into `/etc/containers/storage.conf` as `[storage.options] size`
  (`updateStorageConfig` sets `Storage.Options.Size`; the rest of that file is the MCO's template re-encoded,
  here its driver and paths only), the generated MachineConfig's first file (`syncContainerRuntimeConfig`
  lists storage.conf before the drop-ins). Each drop-in is the BurntSushi/toml
  encoding of a struct `Crio { Runtime { <field> } }` (`tomlConfigCRIOLogLevel` and its siblings,
  `addTOMLgeneratedConfigFile`): the nested tables each get a header, indented two spaces a level
  (`crio_runtime_dropin`).
The additional image, layer and artifact stores are refused, naming the field: the MCO writes them into
storage.conf and crio.conf behind feature gates this renderer does not implement. Any other key is not
a field of the API and is named in a warning.
"""

from __future__ import annotations

from renderer.model import ContainerRuntimeConfig, raw_spec
from renderer.problems import Problem
from renderer.quantity import parse_quantity, quantity_string

CRIO_DROPINS = "/etc/crio/crio.conf.d"
STORAGE_CONF = "/etc/containers/storage.conf"
LOG_LEVELS = ("error", "fatal", "panic", "warn", "info", "debug", "trace")
RUNTIMES = ("runc", "crun")
MIN_PIDS_LIMIT = 20
MIN_LOG_SIZE = 8192
UNSUPPORTED = ("additionalLayerStores", "additionalImageStores", "additionalArtifactStores")
KNOWN = ("pidsLimit", "logLevel", "logSizeMax", "overlaySize", "defaultRuntime", *UNSUPPORTED)
SPEC_KEYS = ("machineConfigPoolSelector", "containerRuntimeConfig")
NOT_A_QUANTITY = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def crio_runtime_dropin(line: str) -> bytes:
    """A drop-in setting one `[crio.runtime]` key (`line`: `key = value`), byte for byte as the MCO's encoder
    writes it: `toml.NewEncoder` writes `[crio]`, then the sub-table's header and its key indented (Indent
    "  " per level below the top), each line ending in a newline."""
    return f"[crio]\n  [crio.runtime]\n    {line}\n".encode()


def crio_config(crc: ContainerRuntimeConfig) -> tuple[list[tuple[str, bytes]], list[Problem]]:
    """(path, contents) of the files a ContainerRuntimeConfig writes, and its problems (no files on error)."""
    doc = crc.doc
    assert doc is not None
    s = crc.settings
    base = ("spec", "containerRuntimeConfig")
    files: list[tuple[str, bytes]] = []
    problems: list[Problem] = []

    def error(key: str, message: str, code: str) -> None:
        problems.append(doc.problem(code, (*base, key), message))

    def dropin(field: str, body: str) -> None:
        files.append((f"{CRIO_DROPINS}/01-ctrcfg-{field}", crio_runtime_dropin(body)))

    for key in raw_spec(crc):
        if key not in SPEC_KEYS:
            problems.append(doc.problem("unknown-field", ("spec", str(key)), f'unknown field "spec.{key}": the '
                                        "ContainerRuntimeConfig API has no such field, it is ignored",
                                        severity="warning"))
    for key in s:
        if key not in KNOWN:
            problems.append(doc.problem("unknown-field", (*base, str(key)), f'unknown field "{key}": the '
                                        "ContainerRuntimeConfig API has no such field, it is ignored",
                                        severity="warning"))
    for key in UNSUPPORTED:
        if key in s:
            error(key, f"{key} is not supported by this renderer (the MCO writes it into the containers storage "
                  "and CRI-O configuration behind a feature gate); remove it or configure the stores with a "
                  "MachineConfig", "crio-unsupported")
    if s.get("logLevel") not in (None, ""):
        v = s["logLevel"]
        if v not in LOG_LEVELS:
            error("logLevel", f'invalid LogLevel "{v}", must be one of error, fatal, panic, warn, info, debug, '
                  "or trace", "crio-log-level")
        else:
            dropin("logLevel", f'log_level = "{v}"')
    if "pidsLimit" in s:
        v = s["pidsLimit"]
        if isinstance(v, bool) or not isinstance(v, int):
            error("pidsLimit", f"invalid PidsLimit {v!r}: must be an integer", "crio-pids-limit")
        elif v != 0 and v < MIN_PIDS_LIMIT:
            error("pidsLimit", f"invalid PidsLimit {v}", "crio-pids-limit")
        else:
            dropin("pidsLimit", f"pids_limit = {v}")
    if s.get("logSizeMax") is not None:
        size = parse_quantity(s["logSizeMax"])
        if size is None:
            error("logSizeMax", NOT_A_QUANTITY, "crio-log-size")
        elif 0 < size <= MIN_LOG_SIZE:
            error("logSizeMax", f'invalid LogSizeMax "{quantity_string(s["logSizeMax"])}", cannot be less than 8kB',
                  "crio-log-size")
        elif size != 0:
            dropin("logSizeMax", f"log_size_max = {size}")
    if s.get("defaultRuntime") not in (None, ""):
        v = s["defaultRuntime"]
        if v not in RUNTIMES:
            error("defaultRuntime", f'invalid DefaultRuntime "{v}", must be one of crun, runc', "crio-runtime")
        else:
            dropin("defaultRuntime", f'default_runtime = "{v}"')
    if s.get("overlaySize") is not None:
        size = parse_quantity(s["overlaySize"])
        text = quantity_string(s["overlaySize"])  # Quantity.String(), as updateStorageConfig writes it
        if size is None:
            error("overlaySize", NOT_A_QUANTITY, "crio-overlay-size")
        elif size < 0:
            error("overlaySize", f'invalid overlaySize "{text}", cannot be less than 0', "crio-overlay-size")
        elif size != 0:
            files.append((STORAGE_CONF, (
                '[storage]\ndriver = "overlay"\nrunroot = "/run/containers/storage"\n'
                'graphroot = "/var/lib/containers/storage"\n\n[storage.options]\n'
                f'size = "{text}"\n').encode()))
    files.sort(key=lambda f: f[0] != STORAGE_CONF)  # storage.conf, then the drop-ins in the order written
    return ([] if any(p.severity == "error" for p in problems) else files), problems
