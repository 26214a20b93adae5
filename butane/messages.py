"""Butane's own error and warning texts (coreos/butane config/common/errors.go), in one place.

Tests assert the stable codes in report.CODES; the CLI prints these texts verbatim, as Butane does.
"""

from __future__ import annotations

ERR_NO_VARIANT = "error parsing variant; must be specified"
ERR_INVALID_VERSION = "error parsing version; must be a valid semver"
ERR_INVALID_SOURCE = "source config is invalid"
ERR_INVALID_GENERATED = "config generated was invalid"
ERR_RHCOS_VARIANT = "rhcos variant has been removed; use openshift variant instead: https://coreos.github.io/butane/upgrading-openshift/"

ERR_TOO_MANY_SOURCES = "only one of the following can be set: inline, local, source"
ERR_FILES_DIR_ESCAPE = "local file path traverses outside the files directory"
ERR_FILE_TYPE = "trees may only contain files, directories, and symlinks"
ERR_NODE_EXISTS = "matching filesystem node has existing contents or different type"
ERR_NO_FILES_DIR = (
    "local file paths are relative to a files directory that must be specified with -d/--files-dir"
)
ERR_TREE_NOT_DIRECTORY = "root of tree must be a directory"
ERR_TREE_NO_LOCAL = "local is required"
ERR_DECIMAL_MODE = (
    "unreasonable mode would be reasonable if specified in octal; remember to add a leading zero"
)
ERR_TOO_MANY_SYSTEMD_SOURCES = "only one of the following can be set: contents, contents_local"
# Quadlet checks (base v0_8_exp). The two texts below are not in the stored copies of Butane read for this
# port (only their Go names, ErrQuadletBadExtension and ErrTemplateInstanceCannotHaveContents): the conditions
# and paths are Butane's, the wording is ours.
ERR_QUADLET_BAD_EXTENSION = (
    "quadlet name must end in one of: .container, .volume, .network, .kube, .image, .build, .pod, .artifact"
)
ERR_TEMPLATE_INSTANCE_CONTENTS = "template instance quadlets cannot have contents; they link to their template"
ERR_MOUNT_UNIT_NO_PATH = "path is required if with_mount_unit is true and format is not swap"
ERR_MOUNT_UNIT_NO_FORMAT = "format is required if with_mount_unit is true"

ERR_FIELD_ELIDED = "field ignored in raw mode"
ERR_NAME_REQUIRED = "metadata.name is required"
ERR_ROLE_REQUIRED = "machineconfiguration.openshift.io/role label is required"
ERR_INVALID_KERNEL_TYPE = 'must be empty, "default", or "realtime"'
ERR_BTRFS = "btrfs is not supported in this spec version"
ERR_FORMAT_NONE = 'format "none" is not supported in this spec version'
ERR_FILE_SCHEME = "file contents source must be data URL in this spec version"
ERR_FILE_APPEND = "appending to files is not supported in this spec version"
ERR_FILE_COMPRESSION = "file compression is not supported in this spec version"
ERR_FILE_HEADERS = "file HTTP headers are not supported in this spec version"
ERR_SPECIAL_MODE = "special mode bits are not supported in this spec version"
ERR_GROUPS = "groups are not supported in this spec version"
ERR_USER_FIELD = 'fields other than "name", "ssh_authorized_keys", and "password_hash" (4.13.0+) are not supported in this spec version'
ERR_USER_NAME = 'users other than "core" are not supported in this spec version'
ERR_KERNEL_ARGUMENTS = "this section cannot be used for kernel arguments in this spec version; use openshift.kernel_arguments instead"
ERR_DIRECTORIES = "directories are not supported in this spec version"
ERR_LINKS = "links are not supported in this spec version"

ROLE_LABEL = "machineconfiguration.openshift.io/role"


def unmarshal_error(detail: str) -> str:
    """Butane's ErrUnmarshal text."""
    return f"Error unmarshaling yaml: {detail}"


def unknown_version(variant: str, version: str) -> str:
    """Butane's ErrUnknownVersion text."""
    return f"No translator exists for variant {variant} with version {version}"


ERR_UNKNOWN_LAYOUT = "layout must be one of: aarch64, ppc64le, s390x-eckd, s390x-virt, s390x-zfcp, x86_64"
# fcos 1.3-1.5 (and the openshift specs built on them) keep the text from before the s390x layouts.
ERR_UNKNOWN_LAYOUT_LEGACY = "layout must be one of: aarch64, ppc64le, x86_64"
ERR_MIRROR_REQUIRES_LAYOUT = "boot_device.layout should be specified when boot_device.mirror is specified"
ERR_TOO_FEW_MIRRORS = "mirroring requires at least two devices"
ERR_NO_LUKS_DEVICE = "device is required for layouts: s390x-eckd, s390x-zfcp"
ERR_MIRROR_NOT_SUPPORTED = "mirroring not supported on layouts: s390x-eckd, s390x-zfcp, s390x-virt"
ERR_LUKS_DEVICE_NAME = (
    "device name must start with /dev/dasd on s390x-eckd layout or /dev/sd on s390x-zfcp layout"
)
ERR_REUSE_BY_LABEL = (
    "partitions cannot be reused by label; number must be specified except on boot disk "
    "(/dev/disk/by-id/coreos-boot-disk) or when wipe_table is true"
)
ERR_WRONG_PARTITION_NUMBER = (
    "incorrect partition number; a new partition will be created using reserved label"
)
ERR_ROOT_TOO_SMALL = "root should have 8GiB of space assigned"
ERR_ROOT_CONSTRAINED = (
    "root partition cannot expand; it is set to fill available space but is followed by an auto-positioned "
    "partition"
)
ERR_MOUNT_POINT_FORBIDDEN = "path must be under /etc or /var if with_mount_unit is true"
ERR_GRUB_USER_NAME = 'field "name" is required'
ERR_GRUB_PASSWORD = 'field "password_hash" is required'
ERR_CLEVIS = "clevis is not supported in this spec version"
ERR_KERNEL_ARGUMENTS_GENERAL = "kernel argument customization is not supported in this spec version"
ERR_DISKS = "disk customization is not supported in this spec version"
ERR_FILESYSTEMS = "filesystem customization is not supported in this spec version"
ERR_LUKS = "luks is not supported in this spec version"
ERR_RAID = "raid is not supported in this spec version"
ERR_UNKNOWN_IGNITION_VERSION = (
    "skipping validation for the merge/replace ignition config due to an unkown version"
)
ERR_CEX_WITH_CLEVIS = "cannot use cex with clevis"
ERR_MISSING_CEX_KARG = (
    "'rd.luks.key=/etc/luks/cex.key' must be set as kernel argument when CEX is enabled for the boot device"
)
ERR_CEX_ARCHITECTURE = "when using cex the targeted architecture must match s390x"
ERR_NO_LUKS_METHOD = "no method specified for luks"
