"""The package's shape: one exception base, no import cycles between its modules."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import grimp  # (import-linter's graph builder: it reads every import statement, function-level ones too)

import ignition
from ignition.errors import IgnitionError


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(ignition.__path__, "ignition."))


def test_every_exception_of_the_package_is_an_ignition_error() -> None:
    defined = []
    for name in _modules():
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == name and issubclass(cls, BaseException):
                defined.append(cls)
    assert len(defined) >= 10  # (the walk found them: errors.py, dataurl.py, ...)
    assert [c.__qualname__ for c in defined if not issubclass(c, IgnitionError)] == []


def test_no_module_imports_itself_back() -> None:
    graph = grimp.build_graph("ignition", include_external_packages=False)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if graph.chain_exists(importer=imported, imported=module):
                cycles.append((module, imported))
    assert cycles == []
