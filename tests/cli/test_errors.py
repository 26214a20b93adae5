"""The one table from the packages' exceptions to exit codes (cli/errors.py)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

from cli.errors import EXIT_CODES, InvalidInput, UsageError, exit_code_of
from cli.main import main
from fleet.errors import FleetError
from fleet.store import NotFound, StoreError
from ignition.errors import IgnitionError
from renderer.errors import ClusterDirectoryMissing, ClusterFileInvalid, RendererError, StoreWriteFailed
from server.auth import AuthSettingsError
from server.errors import ServerError
from server.pointer import PointerError
from server.tls import TLSSettingsError

PACKAGE_BASES = {
    "ignition": "ignition.errors.IgnitionError",
    "butane": "butane.errors.ButaneError",
    "fleet": "fleet.errors.FleetError",
    "renderer": "renderer.errors.RendererError",
    "server": "server.errors.ServerError",
    "imagebuild": "imagebuild.errors.ImageBuildError",
    "applier": "applier.errors.ApplyError",
    "cli": "cli.errors.CliError",
}


def _exceptions_defined_in(package: str) -> list[type[BaseException]]:
    found = []
    root = importlib.import_module(package)
    names = [package] + [m.name for m in pkgutil.walk_packages(root.__path__, prefix=f"{package}.")]
    for name in names:
        if name.endswith(".__main__"):  # runs the program when imported
            continue
        module = importlib.import_module(name)
        found += [obj for _, obj in inspect.getmembers(module, inspect.isclass)
                  if issubclass(obj, BaseException) and obj.__module__ == name]
    return found


@pytest.mark.parametrize("package", sorted(PACKAGE_BASES))
def test_every_exception_of_a_package_derives_from_its_one_base(package: str) -> None:
    base_module, _, base_name = PACKAGE_BASES[package].rpartition(".")
    base = getattr(importlib.import_module(base_module), base_name)
    strays = [f"{cls.__module__}.{cls.__qualname__}" for cls in _exceptions_defined_in(package)
              if not issubclass(cls, base)]
    assert strays == []


@pytest.mark.parametrize("name", sorted(EXIT_CODES))
def test_every_listed_class_exists(name: str) -> None:
    module, _, qualname = name.rpartition(".")
    cls = getattr(importlib.import_module(module), qualname)
    assert isinstance(cls, type) and issubclass(cls, BaseException)
    assert EXIT_CODES[name] in (1, 2)


@pytest.mark.parametrize(("exc", "code"), [
    (ClusterFileInvalid([]), 1),
    (ClusterDirectoryMissing("cluster.yaml", "no cluster.yaml"), 2),
    (StoreWriteFailed("pools/x", "store: disk full"), 2),
    (RendererError("x", "y"), 1),
    (NotFound("rendered/x", "not found"), 1),
    (StoreError("rendered/x", "unreadable"), 2),
    (FleetError("x"), 1),
    (IgnitionError("bad"), 1),
    (FileNotFoundError(2, "No such file"), 2),
    (AuthSettingsError("--token-all", "empty"), 2),
    (TLSSettingsError("--cert", "unreadable"), 2),
    (PointerError("--url", "not https"), 1),
    (ServerError("x"), 1),
    (ValueError("not ours"), None),
], ids=["cluster-file-invalid", "directory-missing", "store-write", "renderer-base", "not-found", "store",
        "fleet-base", "ignition-base", "os-error", "auth-settings", "tls-settings", "pointer", "server-base",
        "unlisted"])
def test_exit_code_of(exc: BaseException, code: int | None) -> None:
    assert exit_code_of(exc) == code


def test_cli_errors_keep_their_own_codes() -> None:
    assert UsageError("x").exit_code == 2 and InvalidInput("x").exit_code == 1


@pytest.mark.parametrize(("cluster_yaml", "code"), [(None, 2), ("name: [\n", 1), ("name: 3\n", 1)],
                         ids=["no-cluster-yaml", "yaml-syntax", "name-not-a-string"])
def test_render_exit_codes_come_from_the_table(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               cluster_yaml: str | None, code: int) -> None:
    if cluster_yaml is not None:
        (tmp_path / "cluster.yaml").write_text(cluster_yaml)
    assert main(["render", str(tmp_path)]) == code
    if code:
        assert capsys.readouterr().err.startswith("mco: cluster.yaml: ")
