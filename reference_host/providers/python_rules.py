"""The Python analysis of `asp-python-check`: compiler + pyflakes findings, rule codes, fingerprints.

Codes are `python/<rule>`: `python/syntax-error` (compiler, error), `python/syntax-warning`
(compiler warnings such as invalid escapes, warning), `python/too-many-parameters` (only with
`verify.maxParameters`, warning) and one rule per pyflakes message class, kebab-cased
(`python/undefined-name`, `python/unused-import`, `python/redefined-unused`, ...). Severity: error
for what fails at compile or run time (ERROR_RULES), warning for the rest. Ranges are zero-based
lines and UTF-16 columns. Fingerprints hash rule, path, message with line numbers normalized,
enclosing symbol and occurrence index, never the line itself, so moved code keeps its identity.
"""

from __future__ import annotations

import ast
import inspect
import io
import re
import threading
import tokenize
import warnings
from dataclasses import dataclass
from typing import Any

import pyflakes.messages
from pyflakes.checker import Checker

from asp_protocol.canonical import digest
from reference_host.providers.deep import deeper

SOURCE = "python"
COMPILE_NAME = "<asp-python-check>"
PACKAGE_INIT = "__init__.py"


PYTHON_SUFFIXES = (".py", ".pyi")
PYTHON_GLOBS = ["**/*.py", "**/*.pyi"]


def is_python(path: str) -> bool:
    """A path the Python rules analyse (sources and stubs)."""
    return path.endswith(PYTHON_SUFFIXES)


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


#: pyflakes class -> rule code; a rename only where the issue names the rule differently.
PYFLAKES_RULES: dict[str, str] = {
    name: f"{SOURCE}/{_kebab(name)}"
    for name, cls in inspect.getmembers(pyflakes.messages, inspect.isclass)
    if issubclass(cls, pyflakes.messages.Message) and cls is not pyflakes.messages.Message
}
PYFLAKES_RULES["RedefinedWhileUnused"] = f"{SOURCE}/redefined-unused"
SYNTAX_ERROR = f"{SOURCE}/syntax-error"
SYNTAX_WARNING = f"{SOURCE}/syntax-warning"
TOO_MANY_PARAMETERS = f"{SOURCE}/too-many-parameters"
BROKEN_IMPORT = f"{SOURCE}/broken-import"  # across files: check_imports.py
BROKEN_CALL = f"{SOURCE}/broken-call"  # across files: check_calls.py
ACROSS_FILES = (BROKEN_IMPORT, BROKEN_CALL)
ALL_RULES: tuple[str, ...] = tuple(
    sorted(
        {SYNTAX_ERROR, SYNTAX_WARNING, TOO_MANY_PARAMETERS, *ACROSS_FILES, *PYFLAKES_RULES.values()}
    )
)
#: Errors: the code cannot compile, or raises as soon as the line runs.
ERROR_RULES = frozenset(
    {SYNTAX_ERROR, *ACROSS_FILES}
    | {
        f"{SOURCE}/{_kebab(n)}"
        for n in (
            "UndefinedName",
            "UndefinedLocal",
            "UndefinedExport",
            "DuplicateArgument",
            "ReturnOutsideFunction",
            "YieldOutsideFunction",
            "ContinueOutsideLoop",
            "BreakOutsideLoop",
            "DefaultExceptNotLast",
            "TwoStarredExpressions",
            "TooManyExpressionsInStarredAssignment",
            "LateFutureImport",
            "FutureFeatureNotDefined",
            "ImportStarNotPermitted",
            "InvalidPrintSyntax",
            "ForwardAnnotationSyntaxError",
            "StringDotFormatMissingArgument",
            "StringDotFormatMixingAutomatic",
            "StringDotFormatInvalidFormat",
            "PercentFormatInvalidFormat",
            "PercentFormatMixedPositionalAndNamed",
            "PercentFormatUnsupportedFormatCharacter",
            "PercentFormatPositionalCountMismatch",
            "PercentFormatMissingArgument",
            "PercentFormatExpectedMapping",
            "PercentFormatExpectedSequence",
            "PercentFormatStarRequiresSequence",
        )
    }
)
HELP = {
    SYNTAX_ERROR: "Fix the syntax so the module compiles; nothing else in it can be checked until then.",
    f"{SOURCE}/undefined-name": "Define or import the name before use, or correct its spelling.",
    f"{SOURCE}/unused-import": "Remove the import, or list the name in __all__ if it is re-exported.",
    f"{SOURCE}/redefined-unused": "Remove the earlier unused definition or rename one of the two.",
    TOO_MANY_PARAMETERS: "Group related parameters into an object or split the function.",
    BROKEN_IMPORT: "Restore the module or name, or import it from where it lives now (a rename "
    "plan of asp-python-edit updates the importers for you).",
    BROKEN_CALL: "Pass what the function now takes, or keep the old parameters working (a default, "
    "a keyword-only parameter with a default).",
}
DEFAULT_HELP = "Reported by the compiler or pyflakes; correct the code at this location."


@dataclass(frozen=True)
class RawFinding:
    """A finding before it is bound to a path: position-free identity is (code, message, symbol)."""

    code: str
    message: str
    start: tuple[int, int]
    end: tuple[int, int]
    symbol: str
    unparsed_line: str | None = None  # the parser refused the file: this line (grammar.py)


class AnalysisFailed(Exception):
    """The analyser itself could not process the file (pathological nesting, memory)."""


def decode_source(data: bytes) -> tuple[str | None, str]:
    """The text per PEP 263 (coding cookie or UTF-8, BOM allowed), or None and why not."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (SyntaxError, LookupError, UnicodeDecodeError) as exc:
        return None, str(exc)


def _utf16(line: str, chars: int) -> int:
    return len(line[: max(0, chars)].encode("utf-16-le")) // 2


def _byte_col(line: str, byte_col: int) -> int:
    """UTF-16 column of an AST UTF-8 byte offset."""
    return _utf16(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"), 10**9)


class _Symbols:
    """Innermost enclosing def/class qualname per line, from the AST (walked without recursion:
    a long chain `a + b + ...` is as deep as it is long)."""

    def __init__(self, tree: ast.AST | None) -> None:
        self.spans: list[tuple[int, int, str, ast.AST]] = []
        stack: list[tuple[ast.AST, str]] = [] if tree is None else [(tree, "")]
        while stack:
            node, prefix = stack.pop()
            children: list[tuple[ast.AST, str]] = []
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    name = f"{prefix}{child.name}"
                    self.spans.append((child.lineno, child.end_lineno or child.lineno, name, child))
                    children.append((child, name + "."))
                else:
                    children.append((child, prefix))
            stack.extend(reversed(children))

    def at(self, line: int) -> str:
        best = ""
        for start, end, name, _ in self.spans:
            if start <= line <= end and len(name) >= len(best):
                best = name
        return best


def _pyflakes_findings(
    tree: ast.AST, lines: list[str], symbols: _Symbols, package_init: bool
) -> list[RawFinding]:
    found = []
    # pyflakes reads the file name for two rules of a package's `__init__.py`: `__path__` is
    # defined there, and an `__all__` name may be a submodule, not an undefined export
    filename = PACKAGE_INIT if package_init else COMPILE_NAME
    for message in Checker(tree, filename=filename).messages:
        code = PYFLAKES_RULES.get(
            type(message).__name__, f"{SOURCE}/{_kebab(type(message).__name__)}"
        )
        line_text = lines[message.lineno - 1] if 0 < message.lineno <= len(lines) else ""
        start = _byte_col(line_text, message.col)
        end = _utf16(line_text.rstrip(), 10**9)
        name = message.message_args[0] if message.message_args else None
        if isinstance(name, str) and line_text[start:].startswith(name):
            end = start + _utf16(name, 10**9)
        text = message.message % message.message_args
        found.append(
            RawFinding(
                code,
                text,
                (message.lineno - 1, start),
                (message.lineno - 1, max(start, end)),
                symbols.at(message.lineno),
            )
        )
    return found


def _parameter_findings(symbols: _Symbols, lines: list[str], limit: int) -> list[RawFinding]:
    found = []
    classes = {id(node) for *_, node in symbols.spans if isinstance(node, ast.ClassDef)}
    methods = {
        id(item)
        for *_, node in symbols.spans
        if id(node) in classes
        for item in node.body  # type: ignore[attr-defined]
    }
    for _, _, name, node in symbols.spans:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        params = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        if id(node) in methods and params and params[0] in ("self", "cls"):
            params = params[1:]
        if len(params) > limit:
            line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
            start = _byte_col(line, node.col_offset)
            message = f"function {node.name!r} has {len(params)} parameters (maxParameters {limit})"
            found.append(
                RawFinding(
                    TOO_MANY_PARAMETERS,
                    message,
                    (node.lineno - 1, start),
                    (node.lineno - 1, _utf16(line.rstrip(), 10**9)),
                    name,
                )
            )
    return found


_analysis_lock = threading.Lock()


def analyse(
    data: bytes, max_parameters: int | None, package_init: bool = False
) -> list[RawFinding]:
    """Compile and pyflakes one file's bytes (*package_init*: they are a package's
    `__init__.py`); raises AnalysisFailed when the analyser gives up."""
    text, why = decode_source(data)
    if text is None:
        return [RawFinding(SYNTAX_ERROR, f"source cannot be decoded: {why}", (0, 0), (0, 0), "")]
    lines = text.splitlines()
    with _analysis_lock, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            tree = ast.parse(text, COMPILE_NAME)  # compile(..., PyCF_ONLY_AST)
        except SyntaxError as error:
            return [_syntax_finding(error, lines, parse_stage=True)]
        except ValueError as error:  # null bytes
            return [RawFinding(SYNTAX_ERROR, str(error), (0, 0), (0, 0), "")]
        except (RecursionError, MemoryError) as error:
            raise AnalysisFailed(type(error).__name__) from None
        symbols = _Symbols(tree)
        try:
            compile(tree, COMPILE_NAME, "exec", dont_inherit=True)
            late_error = None
        except SyntaxError as error:
            late_error = error
        except (RecursionError, MemoryError, ValueError) as error:
            raise AnalysisFailed(type(error).__name__) from None
        try:
            found = _pyflakes_findings(tree, lines, symbols, package_init)
        except RecursionError:  # real code nests deeper than the default limit: deep.py
            try:
                found = deeper(lambda: _pyflakes_findings(tree, lines, symbols, package_init))
            except RecursionError:
                raise AnalysisFailed("RecursionError") from None
    if late_error is not None and not any(
        f.start[0] == (late_error.lineno or 1) - 1 for f in found
    ):
        found.append(_syntax_finding(late_error, lines, symbols))
    flagged = {f.start[0] for f in found}  # pyflakes explains e.g. `is` with a literal better
    for warning in caught:
        if warning.filename == COMPILE_NAME and issubclass(
            warning.category, SyntaxWarning | DeprecationWarning
        ):
            row = max(0, (warning.lineno or 1) - 1)
            if row in flagged:
                continue
            line = lines[row] if row < len(lines) else ""
            found.append(
                RawFinding(
                    SYNTAX_WARNING,
                    str(warning.message),
                    (row, 0),
                    (row, _utf16(line.rstrip(), 10**9)),
                    symbols.at(row + 1),
                )
            )
    if max_parameters is not None:
        found.extend(_parameter_findings(symbols, lines, max_parameters))
    return sorted(found, key=lambda f: (f.start, f.code, f.message))


def _syntax_finding(
    error: SyntaxError,
    lines: list[str],
    symbols: _Symbols | None = None,
    *,
    parse_stage: bool = False,
) -> RawFinding:
    row = max(0, (error.lineno or 1) - 1)
    line = lines[row] if row < len(lines) else ""
    start = _utf16(line, (error.offset or 1) - 1)
    end_row = max(row, (error.end_lineno or error.lineno or 1) - 1)
    end_line = lines[end_row] if end_row < len(lines) else ""
    if (
        error.end_offset
        and error.end_offset > 0
        and (end_row, error.end_offset - 1) >= (row, error.offset or 1)
    ):
        end = _utf16(end_line, error.end_offset - 1)
    else:
        end_row, end = row, max(start, _utf16(line.rstrip(), 10**9))
    symbol = symbols.at(row + 1) if symbols else ""
    return RawFinding(
        SYNTAX_ERROR,
        error.msg or "invalid syntax",
        (row, start),
        (end_row, end),
        symbol,
        unparsed_line=line[:400] if parse_stage else None,
    )


def normalize_message(message: str) -> str:
    """Line numbers out, whitespace collapsed: what a fingerprint may depend on."""
    return " ".join(re.sub(r"\bline \d+", "line N", message).split())


def bind(findings: list[RawFinding], path: str) -> list[dict[str, Any]]:
    """Diagnostics for *path* with position-resilient fingerprints (occurrence index per identity)."""
    seen: dict[tuple[str, str, str], int] = {}
    out = []
    for finding in findings:
        normalized = normalize_message(finding.message)
        identity = (finding.code, normalized, finding.symbol)
        occurrence = seen.get(identity, 0)
        seen[identity] = occurrence + 1
        out.append(
            {
                "code": finding.code,
                "severity": "error" if finding.code in ERROR_RULES else "warning",
                "source": SOURCE,
                "message": finding.message,
                "location": {
                    "path": path,
                    "range": {
                        "start": {"line": finding.start[0], "char": finding.start[1]},
                        "end": {"line": finding.end[0], "char": finding.end[1]},
                    },
                },
                "fingerprint": digest(
                    {
                        "source": SOURCE,
                        "code": finding.code,
                        "path": path,
                        "message": normalized,
                        "symbol": finding.symbol,
                        "occurrence": occurrence,
                    }
                ),
                "help": HELP.get(finding.code, DEFAULT_HELP),
            }
        )
    return out
