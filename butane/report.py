"""Butane's problems: YAML-space paths with line:col, printed the way Butane's CLI prints them.

Butane prints each entry as vcontext does: `warning at $.storage.files.0.mode, line 6 col 13: <message>`
(`error at ...` for errors; no position part when the path has no node in the source). Entries also convert
to the shared `ignition.report.Report` with stable codes, for callers that assert codes rather than text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from ignition.report import ERROR, WARNING, Entry, Report, path_str


@dataclass(frozen=True)
class KeyStep:
    """A path step naming a mapping *key* (its position is the key's, not the value's)."""

    key: str

    def __str__(self) -> str:
        return self.key


YPath = tuple["str | int | KeyStep", ...]

# Stable codes for Butane's own messages (the text is Butane's; the code is what tests assert).
CODES: dict[str, str] = {
    "only one of the following can be set: inline, local, source": "too-many-sources",
    "local file path traverses outside the files directory": "files-dir-escape",
    "trees may only contain files, directories, and symlinks": "tree-file-type",
    "matching filesystem node has existing contents or different type": "node-exists",
    "local file paths are relative to a files directory that must be specified with -d/--files-dir": "no-files-dir",
    "root of tree must be a directory": "tree-not-directory",
    "local is required": "tree-no-local",
    "unreasonable mode would be reasonable if specified in octal; remember to add a leading zero": "decimal-mode",
    "only one of the following can be set: contents, contents_local": "too-many-systemd-sources",
    "path is required if with_mount_unit is true and format is not swap": "mount-unit-no-path",
    "quadlet name must end in one of: .container, .volume, .network, .kube, .image, .build, .pod, .artifact": "quadlet-bad-extension",
    "template instance quadlets cannot have contents; they link to their template": "quadlet-template-contents",
    "format is required if with_mount_unit is true": "mount-unit-no-format",
    "field ignored in raw mode": "field-elided",
    "skipping validation for the merge/replace ignition config due to an unkown version": "embedded-unknown-version",
    "metadata.name is required": "name-required",
    "machineconfiguration.openshift.io/role label is required": "role-required",
    'must be empty, "default", or "realtime"': "invalid-kernel-type",
    "btrfs is not supported in this spec version": "unsupported-btrfs",
    'format "none" is not supported in this spec version': "unsupported-format-none",
    "file contents source must be data URL in this spec version": "unsupported-file-scheme",
    "appending to files is not supported in this spec version": "unsupported-append",
    "file compression is not supported in this spec version": "unsupported-compression",
    "file HTTP headers are not supported in this spec version": "unsupported-http-headers",
    "special mode bits are not supported in this spec version": "unsupported-special-mode",
    "groups are not supported in this spec version": "unsupported-groups",
    'users other than "core" are not supported in this spec version': "unsupported-user",
    "this section cannot be used for kernel arguments in this spec version; use openshift.kernel_arguments instead": "unsupported-kernel-arguments",
    "directories are not supported in this spec version": "unsupported-directories",
    "links are not supported in this spec version": "unsupported-links",
    "clevis is not supported in this spec version": "unsupported-clevis",
    "kernel argument customization is not supported in this spec version": "unsupported-kernel-arguments",
    "disk customization is not supported in this spec version": "unsupported-disks",
    "filesystem customization is not supported in this spec version": "unsupported-filesystems",
    "luks is not supported in this spec version": "unsupported-luks",
    "raid is not supported in this spec version": "unsupported-raid",
}


def code_for(message: str, default: str = "butane") -> str:
    """The stable code of a message (`unused key x` -> `unused-key`)."""
    if message.startswith("unused key "):
        return "unused-key"
    if message.startswith("fields other than"):
        return "unsupported-user-field"
    return CODES.get(message, default)


@dataclass(frozen=True)
class Problem:
    """One error or warning, in YAML space."""

    severity: str
    path: YPath
    message: str
    line: int | None = None
    col: int | None = None
    code: str = ""

    def format(self) -> str:
        """Butane's line for this entry."""
        at = ""
        if self.line is not None and self.path:
            at = f" at {path_str(self.path)}, line {self.line} col {self.col}"
        elif self.line is not None:
            at = f" at line {self.line} col {self.col}"
        elif self.path:
            at = f" at {path_str(self.path)}"
        return f"{self.severity}{at}: {self.message}"


@dataclass
class Problems:
    """An ordered list of problems; fatal when any is an error."""

    entries: list[Problem] = field(default_factory=list)

    def error(self, path: YPath, message: str, code: str = "") -> None:
        """Add an error."""
        self.entries.append(Problem(ERROR, tuple(path), message, code=code or code_for(message)))

    def warn(self, path: YPath, message: str, code: str = "") -> None:
        """Add a warning."""
        self.entries.append(Problem(WARNING, tuple(path), message, code=code or code_for(message)))

    def extend(self, other: Problems) -> None:
        """Append another list's entries."""
        self.entries.extend(other.entries)

    @property
    def is_fatal(self) -> bool:
        """True when any entry is an error."""
        return any(p.severity == ERROR for p in self.entries)

    def correlate(self, locate: Callable[[YPath], tuple[int, int] | None]) -> None:
        """Attach line:col to entries that have none (Butane's Correlate)."""
        self.entries = [
            p
            if p.line is not None
            else replace(p, line=(pos := locate(p.path) or (None, None))[0], col=pos[1])
            for p in self.entries
        ]

    def format(self) -> str:
        """Everything Butane prints on stderr for these entries (one line each, newline-terminated)."""
        return "".join(p.format() + "\n" for p in self.entries)

    def to_report(self) -> Report:
        """The shared Report form (paths as plain strings/ints)."""
        out = Report()
        for p in self.entries:
            plain = tuple(str(s) if isinstance(s, KeyStep) else s for s in p.path)
            out.entries.append(
                Entry(p.severity, p.code or code_for(p.message), plain, p.message, p.line, p.col)
            )
        return out
