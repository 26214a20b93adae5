"""Exit codes: the one table from every package's exceptions to `mco`'s exit codes, and the CLI's own errors.

0 success, 1 invalid input or refusal, 2 usage or I/O error. A library exception that reaches cli/main.py is
printed as `mco: <message>` and exits with the code of the nearest class in its hierarchy listed in
EXIT_CODES. Classes are named, not imported, so that `mco` loads no package it does not run.
"""

from __future__ import annotations

EXIT_CODES: dict[str, int] = {
    # renderer/errors.py
    "renderer.errors.ClusterFileInvalid": 1,     # cluster.yaml read and found invalid
    "renderer.errors.ClusterDirectoryMissing": 2,
    "renderer.errors.StoreWriteFailed": 2,
    "renderer.errors.RendererError": 1,
    # fleet/errors.py, fleet/store.py
    "fleet.store.NotFound": 1,                   # a name that is not in the store
    "fleet.store.StoreError": 2,                 # the store cannot be read or written
    "fleet.errors.FleetError": 1,
    # butane/errors.py (a Butane refusal; an IgnitionError too)
    "butane.errors.ButaneError": 1,
    # ignition/errors.py
    "ignition.errors.IgnitionError": 1,
    # imagebuild/errors.py
    "imagebuild.errors.ImageInputError": 1,
    "imagebuild.errors.ImageBuildError": 2,      # a build tool, registry or OCI layout failed
    # server/errors.py and the server's exceptions beside the code that raises them
    "server.auth.AuthSettingsError": 2,          # a token file or CIDR option is unusable
    "server.tls.TLSSettingsError": 2,            # the certificate or key cannot be used
    "server.certs.CertError": 2,                 # certificates cannot be made (a bad flag value: cli maps to 1)
    "server.pointer.PointerError": 1,            # a pointer config input was read and found unusable
    "server.errors.ServerError": 1,
    # applier/errors.py
    "applier.errors.TemporaryError": 2,
    "applier.errors.ApplyError": 1,
    # the standard library: files and sockets
    "builtins.OSError": 2,
}


def exit_code_of(exc: BaseException) -> int | None:
    """The exit code EXIT_CODES gives `exc` (its nearest listed class), or None when none is listed."""
    for cls in type(exc).__mro__:
        code = EXIT_CODES.get(f"{cls.__module__}.{cls.__qualname__}")
        if code is not None:
            return code
    return None


class CliError(Exception):
    """A failure to report on stderr as `mco: <message>` with a chosen exit code."""

    def __init__(self, message: str, exit_code: int = 2) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class UsageError(CliError):
    """Bad flags or unreadable inputs: exit 2."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=2)


class InvalidInput(CliError):
    """The input was read and found invalid: exit 1."""

    def __init__(self, message: str) -> None:
        super().__init__(message, exit_code=1)
