"""Stable codes for Ignition's messages: what tests and tools match on, while the text stays Ignition's own."""

from __future__ import annotations

import re

CODES: dict[str, str] = {
    "path not specified": "path-empty",
    "path not absolute": "path-relative",
    "path is not fully simplified": "path-dirty",
    "duplicate entry defined": "duplicate",
    "illegal file mode": "mode-illegal",
    "setuid/setgid/sticky bits are not supported or functional in spec versions older than 3.6.0": "mode-special-bits",
    "overwrite must be false if source is unspecified": "overwrite-without-source",
    "cannot set both id and name": "owner-id-and-name",
    "file path includes link in config": "path-through-link",
    "directory path includes link in config": "path-through-link",
    "link path includes link in config": "path-through-link",
    "link target is required": "link-target-required",
    "hard link target is a directory": "hard-link-to-directory",
    "user/group ignored for hard link": "hard-link-owner",
    "path conflicts with systemd unit or dropin": "path-conflicts-systemd",
    "invalid compression method": "compression-invalid",
    "source must be specified if verification is specified": "verification-without-source",
    "source is required": "source-required",
    "invalid url scheme": "url-scheme",
    "unable to parse url": "url-invalid",
    "cannot use HTTP headers with this source scheme": "http-headers-scheme",
    "HTTP header name can't be empty": "http-header-name-empty",
    "unable to parse HTTP header": "http-header-invalid",
    "malformed hash specifier": "hash-malformed",
    "unrecognized hash function": "hash-function",
    "incorrect size for hash sum": "hash-size",
    "invalid S3 ARN format": "s3-arn-invalid",
    "invalid S3 object VersionId": "s3-version-id",
    "invalid key-file source": "luks-key-file",
    "disk device is required": "device-required",
    "device not specified": "device-required",
    "partition numbers collide": "partition-numbers-collide",
    "partitions overlap": "partitions-overlap",
    "cannot use the same partition label twice": "partition-label-twice",
    "shouldExist specified false with other options also specified": "partition-should-not-exist",
    "shouldExist is false for a partition and other partition(s) has start or size 0": "partition-zero-with-should-not-exist",
    "a partition number >= 1 or a label must be specified": "partition-number-or-label",
    "partition labels may not exceed 36 characters": "partition-label-long",
    "partition label will be truncated to text before the colon": "partition-label-colon",
    'doesn\'t match the form "01234567-89AB-CDEF-EDCB-A98765432101"': "guid-invalid",
    "raid level is required": "raid-level-required",
    "unrecognized raid level": "raid-level",
    "spares unsupported for linear and raid0 arrays": "raid-spares",
    "raid devices required": "raid-devices-required",
    "invalid filesystem format": "filesystem-format",
    "format cannot be empty when path, label, uuid, wipeFilesystem, options, or mountOptions is specified": "filesystem-format-required",
    "filesystem must specify format if label is specified": "filesystem-format-required",
    "filesystem labels cannot be set when using virtiofs": "filesystem-virtiofs",
    "virtiofs device tag cannot be longer than 36 bytes": "filesystem-virtiofs",
    "filesystem uuid cannot be set for non-block-device filesystems": "filesystem-virtiofs",
    "wipeFilesystem cannot be set for non-block-device filesystems": "filesystem-virtiofs",
    "filesystem options (mkfs) cannot be set for non-block-device filesystems": "filesystem-virtiofs",
    "filesystem overwrites partitioned device": "filesystem-overwrites-partitions",
    "device matches disk with wipeTable enabled; filesystem will be wiped": "filesystem-wiped",
    "luks device labels cannot be longer than 47 characters": "luks-label-long",
    "device names cannot contain slashes": "luks-name-slash",
    "missing required custom clevis pin": "clevis-pin-required",
    "unsupported clevis pin": "clevis-pin",
    "missing required custom clevis config": "clevis-config-required",
    "cannot use custom clevis config with tpm2, tang, or threshold": "clevis-custom-exclusive",
    "thumbprint is required": "tang-thumbprint-required",
    "advertisement is not valid JSON": "tang-advertisement",
    "cannot use cex with clevis": "cex-with-clevis",
    "cannot use key file with cex": "cex-with-key-file",
    "proxies must be http(s)": "proxy-scheme",
    "insecure plaintext HTTP proxy specified for HTTPS resources": "proxy-insecure",
    "invalid systemd unit extension": "unit-extension",
    "invalid systemd drop-in extension": "dropin-extension",
}

_PREFIXES = (
    ("invalid unit content: ", "unit-content"),
    ("filesystem labels cannot be longer than", "filesystem-label-long"),
    ("unit ", "unit-no-install"),
    ("template unit ", "template-no-install"),
    ("unused key ", "unused-key"),
    ("context tree does not match content tree at ", "context-mismatch"),
    ("json: ", "json-type"),
)


def code_for(message: str) -> str:
    """The stable code of an Ignition message (data URL decoder texts become `data-url`)."""
    code = CODES.get(message)
    if code:
        return code
    for prefix, c in _PREFIXES:
        if message.startswith(prefix):
            return c
    if message.startswith(("rfc2396:", "illegal base64", "invalid data character", "missing ", "invalid ", "expected ", "unterminated", "unclosed", "incomplete", "unexpected eof")):
        return "data-url"
    return re.sub(r"[^a-z0-9]+", "-", message.lower()).strip("-")[:40]
