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
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Awaitable, Callable
from typing import Any

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


class ProjectBuiltins:
    """The builtins the repository's root lint configuration declares, read once per
    evaluation and only when asked. *config_files* gives those files as the change leaves them
    (path -> blob, None: deleted; check_reads.py)."""

    def __init__(
        self,
        config_files: Callable[[], Awaitable[dict[str, str | None]]],
        read: Callable[[str], Awaitable[bytes | None]],
    ) -> None:
        self._config_files = config_files
        self._read = read
        self._names: set[str] | None = None

    async def names(self) -> set[str]:
        if self._names is None:
            names: set[str] = set()
            for filename, blob in (await self._config_files()).items():
                data = await self._read(blob) if blob is not None else None
                if data is not None:
                    names |= declared(filename, data)
            self._names = names
        return self._names
