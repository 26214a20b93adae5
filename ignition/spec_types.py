"""Typed, immutable Ignition configs: one frozen dataclass per Go struct of the newest spec (3.0-3.6 + 3.7-exp).

A field is None when the document does not set it (absent, or `null` on a pointer field), so unset and empty
stay distinct: `Resource(source=None)` is "no source", `Resource(source="")` is "an empty file". Lists are
tuples, None when absent. Older versions simply leave the fields they lack unset. Generated from
ignition/schema.py; ignition/spec_json.py holds their JSON names (`FIELDS`) and builds them from a normalized
dict (`to_config`) and back (`to_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Dropin:
    """Ignition's `Dropin`."""

    contents: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Unit:
    """Ignition's `Unit`."""

    contents: str | None = None
    dropins: tuple[Dropin, ...] | None = None
    enabled: bool | None = None
    mask: bool | None = None
    name: str | None = None


@dataclass(frozen=True)
class Systemd:
    """Ignition's `Systemd`."""

    units: tuple[Unit, ...] | None = None


@dataclass(frozen=True)
class Raid:
    """Ignition's `Raid`."""

    devices: tuple[str, ...] | None = None
    level: str | None = None
    name: str | None = None
    options: tuple[str, ...] | None = None
    spares: int | None = None


@dataclass(frozen=True)
class Tang:
    """Ignition's `Tang`."""

    advertisement: str | None = None
    thumbprint: str | None = None
    url: str | None = None


@dataclass(frozen=True)
class ClevisCustom:
    """Ignition's `ClevisCustom`."""

    config: str | None = None
    needs_network: bool | None = None
    pin: str | None = None


@dataclass(frozen=True)
class Clevis:
    """Ignition's `Clevis`."""

    custom: ClevisCustom | None = None
    tang: tuple[Tang, ...] | None = None
    threshold: int | None = None
    tpm2: bool | None = None


@dataclass(frozen=True)
class Cex:
    """Ignition's `Cex`."""

    enabled: bool | None = None


@dataclass(frozen=True)
class Luks:
    """Ignition's `Luks`."""

    cex: Cex | None = None
    clevis: Clevis | None = None
    device: str | None = None
    discard: bool | None = None
    key_file: Resource | None = None
    label: str | None = None
    name: str | None = None
    open_options: tuple[str, ...] | None = None
    options: tuple[str, ...] | None = None
    uuid: str | None = None
    wipe_volume: bool | None = None


@dataclass(frozen=True)
class Link:
    """Ignition's `Link`."""

    group: NodeGroup | None = None
    hard: bool | None = None
    overwrite: bool | None = None
    path: str | None = None
    target: str | None = None
    user: NodeUser | None = None


@dataclass(frozen=True)
class Filesystem:
    """Ignition's `Filesystem`."""

    device: str | None = None
    format: str | None = None
    label: str | None = None
    mount_options: tuple[str, ...] | None = None
    options: tuple[str, ...] | None = None
    path: str | None = None
    uuid: str | None = None
    wipe_filesystem: bool | None = None


@dataclass(frozen=True)
class File:
    """Ignition's `File`."""

    append: tuple[Resource, ...] | None = None
    contents: Resource | None = None
    group: NodeGroup | None = None
    mode: int | None = None
    overwrite: bool | None = None
    path: str | None = None
    user: NodeUser | None = None


@dataclass(frozen=True)
class Partition:
    """Ignition's `Partition`."""

    guid: str | None = None
    label: str | None = None
    number: int | None = None
    resize: bool | None = None
    should_exist: bool | None = None
    size_mi_b: int | None = None
    start_mi_b: int | None = None
    type_guid: str | None = None
    wipe_partition_entry: bool | None = None


@dataclass(frozen=True)
class Disk:
    """Ignition's `Disk`."""

    device: str | None = None
    partitions: tuple[Partition, ...] | None = None
    wipe_table: bool | None = None


@dataclass(frozen=True)
class NodeUser:
    """Ignition's `NodeUser`."""

    id: int | None = None
    name: str | None = None


@dataclass(frozen=True)
class NodeGroup:
    """Ignition's `NodeGroup`."""

    id: int | None = None
    name: str | None = None


@dataclass(frozen=True)
class Directory:
    """Ignition's `Directory`."""

    group: NodeGroup | None = None
    mode: int | None = None
    overwrite: bool | None = None
    path: str | None = None
    user: NodeUser | None = None


@dataclass(frozen=True)
class Storage:
    """Ignition's `Storage`."""

    directories: tuple[Directory, ...] | None = None
    disks: tuple[Disk, ...] | None = None
    files: tuple[File, ...] | None = None
    filesystems: tuple[Filesystem, ...] | None = None
    links: tuple[Link, ...] | None = None
    luks: tuple[Luks, ...] | None = None
    raid: tuple[Raid, ...] | None = None


@dataclass(frozen=True)
class PasswdUser:
    """Ignition's `PasswdUser`."""

    gecos: str | None = None
    groups: tuple[str, ...] | None = None
    home_dir: str | None = None
    name: str | None = None
    no_create_home: bool | None = None
    no_log_init: bool | None = None
    no_user_group: bool | None = None
    password_hash: str | None = None
    primary_group: str | None = None
    shell: str | None = None
    should_exist: bool | None = None
    ssh_authorized_keys: tuple[str, ...] | None = None
    system: bool | None = None
    uid: int | None = None


@dataclass(frozen=True)
class PasswdGroup:
    """Ignition's `PasswdGroup`."""

    gid: int | None = None
    name: str | None = None
    password_hash: str | None = None
    should_exist: bool | None = None
    system: bool | None = None


@dataclass(frozen=True)
class Passwd:
    """Ignition's `Passwd`."""

    groups: tuple[PasswdGroup, ...] | None = None
    users: tuple[PasswdUser, ...] | None = None


@dataclass(frozen=True)
class KernelArguments:
    """Ignition's `KernelArguments`."""

    should_exist: tuple[str, ...] | None = None
    should_not_exist: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Timeouts:
    """Ignition's `Timeouts`."""

    http_response_headers: int | None = None
    http_total: int | None = None


@dataclass(frozen=True)
class TLS:
    """Ignition's `TLS`."""

    certificate_authorities: tuple[Resource, ...] | None = None


@dataclass(frozen=True)
class Security:
    """Ignition's `Security`."""

    tls: TLS | None = None


@dataclass(frozen=True)
class Proxy:
    """Ignition's `Proxy`."""

    http_proxy: str | None = None
    https_proxy: str | None = None
    no_proxy: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Verification:
    """Ignition's `Verification`."""

    hash: str | None = None


@dataclass(frozen=True)
class HTTPHeader:
    """Ignition's `HTTPHeader`."""

    name: str | None = None
    value: str | None = None


@dataclass(frozen=True)
class Resource:
    """Ignition's `Resource`."""

    compression: str | None = None
    http_headers: tuple[HTTPHeader, ...] | None = None
    source: str | None = None
    verification: Verification | None = None


@dataclass(frozen=True)
class IgnitionConfig:
    """Ignition's `IgnitionConfig`."""

    merge: tuple[Resource, ...] | None = None
    replace: Resource | None = None


@dataclass(frozen=True)
class Ignition:
    """Ignition's `Ignition`."""

    config: IgnitionConfig | None = None
    proxy: Proxy | None = None
    security: Security | None = None
    timeouts: Timeouts | None = None
    version: str | None = None


@dataclass(frozen=True)
class Config:
    """Ignition's `Config`."""

    ignition: Ignition | None = None
    kernel_arguments: KernelArguments | None = None
    passwd: Passwd | None = None
    storage: Storage | None = None
    systemd: Systemd | None = None
