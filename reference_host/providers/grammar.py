"""Which Python a file is written for, against the grammar this process parses.

`asp-python-check` parses with the interpreter it runs on. A file that interpreter cannot parse
is a syntax error only if the code is meant to run on that Python (or an older one): a project
written for a newer Python (PEP 695 type parameters, PEP 701 f-strings, PEP 758 `except A, B:`,
PEP 750 template strings) would be denied for code that is valid where it runs. Such a file is
reported as not checked instead: never a finding, never an allow.

The target comes, in order, from the check's `targetVersion` setting, from the `requires-python`
floor of the nearest `pyproject.toml` (or `tool.poetry.dependencies.python`), or, when neither is
given, from the construct at the error: a syntax error on a line that only a newer grammar
accepts is taken as that newer Python's code.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

Version = tuple[int, int]
PARSER: Version = (sys.version_info[0], sys.version_info[1])
VERSION_SETTING = re.compile(r"^3\.\d{1,2}$")

# constructs only a newer grammar accepts, tested on a SyntaxError's message or its line
_FSTRING = re.compile(r"^f-string\b")
_TYPE_ALIAS = re.compile(r"^\s*type\s+[A-Za-z_]\w*\s*[\[=]")
_TYPE_PARAMS = re.compile(r"^\s*(?:async\s+def|def|class)\s+[A-Za-z_]\w*\s*\[")
_TEMPLATE = re.compile(r"(?<![\w.'\"])(?:[tT][rR]?|[rR][tT])['\"]")
_EXCEPT_LIST = "multiple exception types must be parenthesized"

_FLOOR_CLAUSE = re.compile(r"^(>=|~=|==|\^|~)\s*(\d+)(?:\.(\d+))?")


@dataclass(frozen=True)
class Written:
    """What a file's syntax error says about the Python it targets: its version, and why."""

    version: Version
    why: str


def parse_version(text: str) -> Version:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def shown(version: Version) -> str:
    return f"{version[0]}.{version[1]}"


def newer_construct(message: str, line: str) -> Written | None:
    """A construct only a grammar newer than this parser's accepts, at a syntax error."""
    found: Written | None = None
    if _FSTRING.match(message):
        found = Written((3, 12), "an f-string that Python 3.12 accepts (PEP 701)")
    elif message == _EXCEPT_LIST:
        found = Written((3, 14), "`except A, B:` without parentheses (PEP 758, Python 3.14)")
    elif _TYPE_ALIAS.match(line) or _TYPE_PARAMS.match(line):
        found = Written((3, 12), "type parameters or a `type` alias (PEP 695, Python 3.12)")
    elif _TEMPLATE.search(line):
        found = Written((3, 14), "a template string (PEP 750, Python 3.14)")
    return found if found is not None and found.version > PARSER else None


def requires_python_floor(pyproject: bytes) -> Version | None:
    """The lowest Python a `pyproject.toml` allows (None: it does not say, or cannot be read)."""
    try:
        data = tomllib.loads(pyproject.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    spec = toml_table(data, "project").get("requires-python")
    if not isinstance(spec, str):
        spec = toml_table(toml_table(toml_table(data, "tool"), "poetry"), "dependencies").get(
            "python"
        )
    if not isinstance(spec, str):
        return None
    floors = []
    for clause in re.split(r"[,|]", spec):
        match = _FLOOR_CLAUSE.match(clause.strip())
        if match is not None and match.group(2) == "3":
            floors.append((3, int(match.group(3) or 0)))
    return min(floors) if floors else None


def toml_table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """A TOML table by key; anything else (absent, a string) reads as empty: a repository's file
    (lint_builtins.py reads its tables the same way)."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def ancestors_pyproject(path: str) -> list[str]:
    """The `pyproject.toml` paths that may govern *path*, nearest first."""
    parts = path.split("/")[:-1]
    return ["/".join([*parts[:depth], "pyproject.toml"]) for depth in range(len(parts), -1, -1)]


class TargetVersions:
    """The Python one evaluation's files are written for. *pyprojects* gives the tree's
    `pyproject.toml` files as the change leaves them (path -> blob, None: deleted; listed once,
    check_reads.py); each is read only when a file under it does not parse, so a clean change
    reads nothing more."""

    def __init__(
        self,
        setting: str | None,
        pyprojects: Callable[[], Awaitable[dict[str, str | None]]],
        read: Callable[[str], Awaitable[bytes | None]],
    ) -> None:
        self._setting = setting
        self._pyprojects = pyprojects
        self._read = read
        self._floors: dict[str, Version | None] = {}  # by blob

    async def unchecked(self, path: str, message: str, line: str) -> str | None:
        """Why *path*'s syntax error is not a finding (its code is for a newer Python than
        this parser reads), or None when the error stands."""
        target, said_by = await self._target(path)
        here = shown(PARSER)
        if target is not None:
            if target <= PARSER:
                return None  # the code says it runs on this grammar: a real syntax error
            why = f"written for Python {shown(target)} ({said_by})"
        else:
            construct = newer_construct(message, line)
            if construct is None:
                return None
            why = f"{construct.why}, which Python {here} cannot parse"
        return f"{path[:200]}: {why}; this check parses Python {here}, so the file is not checked"

    async def _target(self, path: str) -> tuple[Version | None, str]:
        if self._setting is not None:
            return parse_version(self._setting), "the targetVersion setting"
        listed = await self._pyprojects()
        for candidate in ancestors_pyproject(path):
            blob = listed.get(candidate)
            if blob is None:
                continue
            if blob not in self._floors:
                data = await self._read(blob)
                self._floors[blob] = None if data is None else requires_python_floor(data)
            floor = self._floors[blob]
            if floor is not None:
                return floor, f"requires-python in {candidate}"
        return None, ""
