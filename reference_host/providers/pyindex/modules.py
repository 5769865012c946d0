"""Dotted module names from workspace paths: packages, `src/` layouts, test modules."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

TEST_DIRS = frozenset({"tests", "test", "testing"})


def is_python_path(path: str) -> bool:
    return path.endswith(".py")


def is_test_path(path: str) -> bool:
    """pytest's conventions: `test_*.py`, `*_test.py`, or anything under a `tests/` directory."""
    parts = path.split("/")
    name = parts[-1]
    if name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py":
        return True
    return any(part in TEST_DIRS for part in parts[:-1])


@dataclass(frozen=True, slots=True)
class ModuleName:
    """A file's importable names: `primary` is the package-rooted one, `aliases` the longer ones."""

    path: str
    primary: str
    aliases: tuple[str, ...]
    is_package: bool

    @property
    def package(self) -> str:
        """The package relative imports in this file start from."""
        if self.is_package:
            return self.primary
        return self.primary.rpartition(".")[0]


def module_names(paths: Iterable[str]) -> dict[str, ModuleName]:
    """Names for every Python path: walk up while directories hold `__init__.py` (the package root).

    Longer dotted suffixes are kept as aliases, so `tests.support.x` (a namespace package from the
    repository root) and `pkg.mod` under `src/` both resolve.
    """
    python = [p for p in paths if is_python_path(p)]
    package_dirs = {p.rpartition("/")[0] for p in python if p.endswith("/__init__.py")}
    names: dict[str, ModuleName] = {}
    for path in python:
        parts = path[:-3].split("/")
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
            if not parts:
                continue
        # climb while the enclosing directory is a package: that is where the import name starts
        package_start = len(parts) - 1
        while package_start > 0 and "/".join(parts[:package_start]) in package_dirs:
            package_start -= 1
        if not all(part.isidentifier() for part in parts[package_start:]):
            continue
        primary = ".".join(parts[package_start:])
        aliases = []
        for i in range(package_start - 1, -1, -1):
            if not parts[i].isidentifier():
                break
            aliases.append(".".join(parts[i:]))
        names[path] = ModuleName(path, primary, tuple(aliases), is_package)
    return names
