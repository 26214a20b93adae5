"""The JSON side of the typed configs (ignition/spec_types.py): each attribute's JSON name, and the conversions
between a normalized document (ignition/decode.py output) and a typed `Config`."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from ignition.spec_types import (
    TLS,
    Cex,
    Clevis,
    ClevisCustom,
    Config,
    Directory,
    Disk,
    Dropin,
    File,
    Filesystem,
    HTTPHeader,
    Ignition,
    IgnitionConfig,
    KernelArguments,
    Link,
    Luks,
    NodeGroup,
    NodeUser,
    Partition,
    Passwd,
    PasswdGroup,
    PasswdUser,
    Proxy,
    Raid,
    Resource,
    Security,
    Storage,
    Systemd,
    Tang,
    Timeouts,
    Unit,
    Verification,
)

# JSON name of every attribute, per class: (attribute, json name, item class or None).
FIELDS: dict[type, tuple[tuple[str, str, type | None], ...]] = {
    Config: (
        ("ignition", "ignition", Ignition),
        ("kernel_arguments", "kernelArguments", KernelArguments),
        ("passwd", "passwd", Passwd),
        ("storage", "storage", Storage),
        ("systemd", "systemd", Systemd),
    ),
    Ignition: (
        ("config", "config", IgnitionConfig),
        ("proxy", "proxy", Proxy),
        ("security", "security", Security),
        ("timeouts", "timeouts", Timeouts),
        ("version", "version", None),
    ),
    IgnitionConfig: (
        ("merge", "merge", Resource),
        ("replace", "replace", Resource),
    ),
    Resource: (
        ("compression", "compression", None),
        ("http_headers", "httpHeaders", HTTPHeader),
        ("source", "source", None),
        ("verification", "verification", Verification),
    ),
    HTTPHeader: (
        ("name", "name", None),
        ("value", "value", None),
    ),
    Verification: (("hash", "hash", None),),
    Proxy: (
        ("http_proxy", "httpProxy", None),
        ("https_proxy", "httpsProxy", None),
        ("no_proxy", "noProxy", None),
    ),
    Security: (("tls", "tls", TLS),),
    TLS: (("certificate_authorities", "certificateAuthorities", Resource),),
    Timeouts: (
        ("http_response_headers", "httpResponseHeaders", None),
        ("http_total", "httpTotal", None),
    ),
    KernelArguments: (
        ("should_exist", "shouldExist", None),
        ("should_not_exist", "shouldNotExist", None),
    ),
    Passwd: (
        ("groups", "groups", PasswdGroup),
        ("users", "users", PasswdUser),
    ),
    PasswdGroup: (
        ("gid", "gid", None),
        ("name", "name", None),
        ("password_hash", "passwordHash", None),
        ("should_exist", "shouldExist", None),
        ("system", "system", None),
    ),
    PasswdUser: (
        ("gecos", "gecos", None),
        ("groups", "groups", None),
        ("home_dir", "homeDir", None),
        ("name", "name", None),
        ("no_create_home", "noCreateHome", None),
        ("no_log_init", "noLogInit", None),
        ("no_user_group", "noUserGroup", None),
        ("password_hash", "passwordHash", None),
        ("primary_group", "primaryGroup", None),
        ("shell", "shell", None),
        ("should_exist", "shouldExist", None),
        ("ssh_authorized_keys", "sshAuthorizedKeys", None),
        ("system", "system", None),
        ("uid", "uid", None),
    ),
    Storage: (
        ("directories", "directories", Directory),
        ("disks", "disks", Disk),
        ("files", "files", File),
        ("filesystems", "filesystems", Filesystem),
        ("links", "links", Link),
        ("luks", "luks", Luks),
        ("raid", "raid", Raid),
    ),
    Directory: (
        ("group", "group", NodeGroup),
        ("mode", "mode", None),
        ("overwrite", "overwrite", None),
        ("path", "path", None),
        ("user", "user", NodeUser),
    ),
    NodeGroup: (
        ("id", "id", None),
        ("name", "name", None),
    ),
    NodeUser: (
        ("id", "id", None),
        ("name", "name", None),
    ),
    Disk: (
        ("device", "device", None),
        ("partitions", "partitions", Partition),
        ("wipe_table", "wipeTable", None),
    ),
    Partition: (
        ("guid", "guid", None),
        ("label", "label", None),
        ("number", "number", None),
        ("resize", "resize", None),
        ("should_exist", "shouldExist", None),
        ("size_mi_b", "sizeMiB", None),
        ("start_mi_b", "startMiB", None),
        ("type_guid", "typeGuid", None),
        ("wipe_partition_entry", "wipePartitionEntry", None),
    ),
    File: (
        ("append", "append", Resource),
        ("contents", "contents", Resource),
        ("group", "group", NodeGroup),
        ("mode", "mode", None),
        ("overwrite", "overwrite", None),
        ("path", "path", None),
        ("user", "user", NodeUser),
    ),
    Filesystem: (
        ("device", "device", None),
        ("format", "format", None),
        ("label", "label", None),
        ("mount_options", "mountOptions", None),
        ("options", "options", None),
        ("path", "path", None),
        ("uuid", "uuid", None),
        ("wipe_filesystem", "wipeFilesystem", None),
    ),
    Link: (
        ("group", "group", NodeGroup),
        ("hard", "hard", None),
        ("overwrite", "overwrite", None),
        ("path", "path", None),
        ("target", "target", None),
        ("user", "user", NodeUser),
    ),
    Luks: (
        ("cex", "cex", Cex),
        ("clevis", "clevis", Clevis),
        ("device", "device", None),
        ("discard", "discard", None),
        ("key_file", "keyFile", Resource),
        ("label", "label", None),
        ("name", "name", None),
        ("open_options", "openOptions", None),
        ("options", "options", None),
        ("uuid", "uuid", None),
        ("wipe_volume", "wipeVolume", None),
    ),
    Cex: (("enabled", "enabled", None),),
    Clevis: (
        ("custom", "custom", ClevisCustom),
        ("tang", "tang", Tang),
        ("threshold", "threshold", None),
        ("tpm2", "tpm2", None),
    ),
    ClevisCustom: (
        ("config", "config", None),
        ("needs_network", "needsNetwork", None),
        ("pin", "pin", None),
    ),
    Tang: (
        ("advertisement", "advertisement", None),
        ("thumbprint", "thumbprint", None),
        ("url", "url", None),
    ),
    Raid: (
        ("devices", "devices", None),
        ("level", "level", None),
        ("name", "name", None),
        ("options", "options", None),
        ("spares", "spares", None),
    ),
    Systemd: (("units", "units", Unit),),
    Unit: (
        ("contents", "contents", None),
        ("dropins", "dropins", Dropin),
        ("enabled", "enabled", None),
        ("mask", "mask", None),
        ("name", "name", None),
    ),
    Dropin: (
        ("contents", "contents", None),
        ("name", "name", None),
    ),
}


def _build(cls: type, data: dict[str, Any]) -> Any:
    kwargs: dict[str, Any] = {}
    for attr, key, sub in FIELDS[cls]:
        if key not in data:
            continue
        value = data[key]
        if isinstance(value, list):
            value = tuple(_build(sub, v) if sub is not None else v for v in value)
        elif sub is not None:
            value = _build(sub, value)
        kwargs[attr] = value
    return cls(**kwargs)


def to_config(doc: dict[str, Any]) -> Config:
    """The typed Config of a normalized document (ignition/decode.py output)."""
    result: Config = _build(Config, doc)
    return result


def to_dict(obj: Any) -> Any:
    """Back to the JSON dict form, leaving unset fields out."""
    if isinstance(obj, tuple):
        return [to_dict(v) for v in obj]
    if not hasattr(obj, "__dataclass_fields__"):
        return obj
    names = {attr: key for attr, key, _ in FIELDS[type(obj)]}
    out: dict[str, Any] = {}
    for f in fields(obj):
        value = getattr(obj, f.name)
        if value is not None:
            out[names[f.name]] = to_dict(value)
    return out
