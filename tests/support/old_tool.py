"""An "old tool" for migration tests: pyflakes run for real, its messages turned into SARIF 2.1.0
results or ASP-shaped Diagnostics, as an agent's old-tool wrapper would (pyflakes has no SARIF)."""

from __future__ import annotations

import ast
import hashlib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyflakes.api
import pyflakes.checker
import pyflakes.messages

ERROR_RULES = frozenset({"UndefinedName", "SyntaxError", "UndefinedLocal", "UndefinedExport"})


@dataclass(frozen=True)
class OldMessage:
    path: str  # repo-relative, POSIX
    rule: str  # pyflakes message class name, or "SyntaxError"
    line: int  # 1-based, as pyflakes reports
    col: int  # 0-based, as pyflakes reports
    text: str


class _Collect:
    """A pyflakes reporter that keeps message objects instead of printing them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.messages: list[OldMessage] = []

    def _rel(self, filename: str) -> str:
        return Path(filename).resolve().relative_to(self.root.resolve()).as_posix()

    def flake(self, message: pyflakes.messages.Message) -> None:
        self.messages.append(
            OldMessage(
                path=self._rel(message.filename),
                rule=type(message).__name__,
                line=message.lineno,
                col=message.col,
                text=message.message % message.message_args,
            )
        )

    def syntaxError(
        self, filename: str, msg: str, lineno: int, offset: int | None, text: str
    ) -> None:
        col = max((offset or 1) - 1, 0)
        self.messages.append(OldMessage(self._rel(filename), "SyntaxError", lineno, col, msg))

    def unexpectedError(self, filename: str, msg: str) -> None:
        raise AssertionError(f"pyflakes could not read {filename}: {msg}")


def run_pyflakes(root: Path, paths: list[str], *, doctests: bool = False) -> list[OldMessage]:
    """Run pyflakes on *paths* (relative to *root*) and return its messages in file order.

    `doctests=True` is pyflakes' PYFLAKES_DOCTEST mode (names used in doctests are checked too),
    an old-tool setting the ASP Python check provider does not have.
    """
    reporter = _Collect(root)
    with warnings.catch_warnings():  # the file's own compile warnings are not pyflakes findings
        warnings.simplefilter("ignore")
        for rel in paths:
            _check_one(reporter, root / rel, doctests)
    return sorted(reporter.messages, key=lambda m: (m.path, m.line, m.col, m.rule))


def _check_one(reporter: _Collect, path: Path, doctests: bool) -> None:
    if not doctests:
        pyflakes.api.checkPath(str(path), reporter)  # type: ignore[arg-type]
        return
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except SyntaxError as exc:
        reporter.syntaxError(str(path), exc.msg, exc.lineno or 1, exc.offset, exc.text or "")
        return
    for message in pyflakes.checker.Checker(tree, filename=str(path), withDoctest=True).messages:
        reporter.flake(message)


def sarif_results(
    messages: list[OldMessage], *, root: Path | None = None, absolute_uris: bool = False
) -> list[dict[str, Any]]:
    """SARIF 2.1.0 `results`: ruleId = pyflakes class, 1-based line and column."""
    out = []
    for m in messages:
        uri = (root / m.path).resolve().as_uri() if absolute_uris and root else m.path
        out.append(
            {
                "ruleId": m.rule,
                "level": "error" if m.rule in ERROR_RULES else "warning",
                "message": {"text": m.text},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                            "region": {"startLine": m.line, "startColumn": m.col + 1},
                        }
                    }
                ],
            }
        )
    return out


def sarif_log(messages: list[OldMessage], **kwargs: Any) -> dict[str, Any]:
    rules = sorted({m.rule for m in messages})
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "pyflakes",
                        "version": pyflakes.__version__,
                        "rules": [{"id": r} for r in rules],
                    }
                },
                "results": sarif_results(messages, **kwargs),
            }
        ],
    }


def asp_diagnostics(
    messages: list[OldMessage], *, source: str = "pyflakes"
) -> list[dict[str, Any]]:
    """The same messages in ASP Diagnostic shape: code namespaced under the old tool, zero-based range."""
    out = []
    for m in messages:
        key = f"{m.rule}\0{m.path}\0{m.text}".encode()
        out.append(
            {
                "code": f"{source}/{m.rule}",
                "severity": "error" if m.rule in ERROR_RULES else "warning",
                "source": source,
                "message": m.text,
                "location": {
                    "path": m.path,
                    "range": {
                        "start": {"line": m.line - 1, "char": m.col},
                        "end": {"line": m.line - 1, "char": m.col},
                    },
                },
                "fingerprint": "sha256:" + hashlib.sha256(key).hexdigest(),
            }
        )
    return out


# A module with one finding of each kind pyflakes reports (unused imports, an unused variable, an
# undefined name, a redefinition): the old-tool run the migration tests compare against.
PYFLAKES_SAMPLE = """\
import os
import sys, json


def f():
    x = 1
    return undefined_thing


def g():
    pass


def g():
    return sys
"""
