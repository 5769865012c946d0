"""Names a project declares as builtins for its linters, honoured by the Python check.

Some frameworks put names into a module's globals at run time: Salt's loader gives every
execution module `__salt__`, `__opts__`, `__grains__`, ...; a sweep of Salt 3008.5 drew 8,064
`undefined name` errors from them, so every change was denied. flake8 (`builtins`), ruff
(`builtins`) and pylint (`additional-builtins`) let a project declare such names, and their users
expect a checker to honour the declaration as it honours `# noqa`. The check does, unless its
`projectBuiltins` setting is false; its `builtins` setting adds names from the trusted side.

The declarations are read at the repository root (`.flake8`, `setup.cfg`, `tox.ini`,
`pyproject.toml`, `ruff.toml`, `.ruff.toml`, `.pylintrc`, `pylintrc`), only when a file of the
change has an undefined name, once per evaluation.

A project can also put a name into builtins itself, when its package is imported: Salt's
`salt/__init__.py` runs `setattr(builtins, "__salt_system_encoding__", ...)`, and its sdist ships
no lint configuration, so every change to `salt/utils/files.py` was denied on three uses of that
name; `gettext.install()` in a package's `__init__` does the same for `_`. Those names count as
declared too, read from the top-level packages' `__init__.py` files (`pkg/` and `src/pkg/`),
since every module of the package runs them first: `setattr(builtins, "N", ...)`,
`builtins.N = ...`, `__builtins__["N"] = ...` (with `builtins` imported under any name, or Python
2's `__builtin__`), and `gettext.install(...)` (`_`).
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from typing import Any

from reference_host.providers.check_reads import SingleFiles
from reference_host.providers.grammar import toml_table

CONFIG_FILES = (
    ".flake8",
    "setup.cfg",
    "tox.ini",
    "pyproject.toml",
    "ruff.toml",
    ".ruff.toml",
    ".pylintrc",
    "pylintrc",
)
PACKAGE_INITS = ("*/__init__.py", "src/*/__init__.py")  # a top-level package's __init__
_BUILTIN_MODULES = frozenset({"builtins", "__builtin__", "six.moves.builtins"})
_INI_KEYS = (("flake8", "builtins"), ("VARIABLES", "additional-builtins"))
_UNDEFINED = re.compile(r"^undefined name '(.+)'$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def undefined_name(message: str) -> str | None:
    """The name of a pyflakes `undefined name 'X'` message."""
    found = _UNDEFINED.match(message)
    return found.group(1) if found else None


def _names(value: Any) -> set[str]:
    items = re.split(r"[,\s]+", value) if isinstance(value, str) else value
    if not isinstance(items, list):
        return set()
    return {item for item in items if isinstance(item, str) and _NAME.match(item)}


def declared(filename: str, data: bytes) -> set[str]:
    """The builtins one config file declares (nothing when it cannot be read)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return set()
    if filename.endswith(".toml"):
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return set()
        tool = toml_table(doc, "tool") if filename == "pyproject.toml" else {"ruff": doc}
        pylint = toml_table(toml_table(tool, "pylint"), "variables")
        return _names(toml_table(tool, "ruff").get("builtins")) | _names(
            pylint.get("additional-builtins")
        )
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return set()
    found: set[str] = set()
    for section, key in _INI_KEYS:
        for name in (section, section.lower(), f"pylint.{section.lower()}"):
            if parser.has_option(name, key):
                found |= _names(parser.get(name, key))
    return found


def _is_package_init(path: str) -> bool:
    parts = path.split("/")
    return parts[-1] == "__init__.py" and (
        len(parts) == 2 or (len(parts) == 3 and parts[0] == "src")
    )


def _builtin_aliases(tree: ast.Module) -> set[str]:
    """The names the builtins module is bound to in *tree* (`import builtins as b`, ...)."""
    aliases = {"__builtins__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases |= {
                a.asname or a.name
                for a in node.names
                if a.name in _BUILTIN_MODULES and "." not in (a.asname or a.name)
            }
        elif isinstance(node, ast.ImportFrom) and node.module == "six.moves":
            aliases |= {a.asname or a.name for a in node.names if a.name == "builtins"}
    return aliases


def _constant_name(node: ast.expr) -> str | None:
    value = node.value if isinstance(node, ast.Constant) else None
    return value if isinstance(value, str) and _NAME.match(value) else None


def _stored_name(target: ast.expr, aliases: set[str]) -> str | None:
    """N of `builtins.N = ...` or `__builtins__["N"] = ...`."""
    if not isinstance(target, ast.Attribute | ast.Subscript):
        return None
    if not isinstance(target.value, ast.Name) or target.value.id not in aliases:
        return None
    if isinstance(target, ast.Attribute):
        return target.attr if _NAME.match(target.attr) else None
    return _constant_name(target.slice)


def installed(data: bytes) -> set[str]:
    """The names module source *data* puts into builtins (nothing when it does not parse)."""
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return set()
    aliases = _builtin_aliases(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if (
                isinstance(func, ast.Name)
                and func.id == "setattr"
                and len(node.args) >= 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id in aliases
                and (name := _constant_name(node.args[1])) is not None
            ):
                found.add(name)
            elif (
                isinstance(func, ast.Attribute)
                and func.attr == "install"
                and isinstance(func.value, ast.Name)
                and func.value.id == "gettext"
            ):
                found.add("_")  # and the `names=` it lists (ngettext, ...)
                for keyword in node.keywords:
                    if keyword.arg == "names" and isinstance(keyword.value, ast.List | ast.Tuple):
                        found |= {n for e in keyword.value.elts if (n := _constant_name(e))}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {n for t in targets if (n := _stored_name(t, aliases)) is not None}
    return found


class ProjectBuiltins:
    """The builtins the repository declares (its root lint configuration) or installs (its
    top-level packages' `__init__.py`), read once per evaluation and only when asked, from the
    files as the change leaves them (check_reads.py)."""

    def __init__(self, files: SingleFiles) -> None:
        self._files = files
        self._names: set[str] | None = None

    async def names(self) -> set[str]:
        if self._names is None:
            names: set[str] = set()
            configs = await self._files.current(list(CONFIG_FILES), CONFIG_FILES.__contains__)
            for filename, blob in configs.items():
                data = await self._files.read(blob) if blob is not None else None
                if data is not None:
                    names |= declared(filename, data)
            inits = await self._files.current(list(PACKAGE_INITS), _is_package_init)
            for blob in inits.values():
                data = await self._files.read(blob) if blob is not None else None
                if data is not None and (b"builtin" in data or b"gettext" in data):
                    names |= installed(data)  # parsed only when it may install one
            self._names = names
        return self._names
