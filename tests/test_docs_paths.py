"""The newcomer documents name files that exist: every repository path written in backticks in
`docs/*.md` and `CONTRIBUTING.md` (and, in `README.md`, every one that starts at a top-level
directory of the repository), every `module.name` they point at, and every `docs/….md#anchor` the
code and the documents cite. A renamed or moved module then fails here instead of leaving a map
that sends a reader to nothing."""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Where repository paths in the documents point; a short form (`sessions/session.py`) is a path
#: that ends one of the files under these.
TREES = ("asp_protocol", "host_client", "bridge", "reference_host", "tests", "bench", "docs")
TOP_LEVEL = (*TREES, "config", "clients", ".ci")
SKIPPED_DIRS = {"__pycache__", "node_modules", ".venv"}
EXTENSIONS = (".py", ".md", ".json", ".toml", ".mjs")
CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
WORD_EDGES = "()[],;:'\"=!?"
PLACEHOLDERS = set("<>*…{}$")
DOC_ANCHOR = re.compile(r"docs/([a-z0-9_.-]+\.md)#([a-z0-9-]+)")
LINK = re.compile(r"\]\(([^)\s#]+)(?:#([^)\s]*))?\)")


@cache
def repository_files() -> frozenset[str]:
    """Every file and directory under the top-level entries, as repository-relative paths."""
    found: set[str] = set()
    for top in TOP_LEVEL:
        base = ROOT / top
        if not base.exists():
            continue
        found.add(top)
        for path in base.rglob("*"):
            if not SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
                found.add(path.relative_to(ROOT).as_posix())
    return frozenset(found)


def resolve(path: str) -> str | None:
    """The repository path *path* names (itself, or the one file it is the end of), else None."""
    files = repository_files()
    if path in files or (ROOT / path).is_file():
        return path
    ends = [f for f in files if f.endswith("/" + path)]
    return ends[0] if ends else None


def _bound(body: list[ast.stmt], names: set[str]) -> None:
    """Add the names *body* binds at its own level, and those of the classes it defines."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                _bound(node.body, names)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            _bound(node.body, names)


@cache
def top_level_names(module: str) -> frozenset[str]:
    """Names a module binds at top level, and the members of its classes."""
    names: set[str] = set()
    _bound(ast.parse((ROOT / module).read_text(encoding="utf-8")).body, names)
    return frozenset(names)


def is_repository_path(token: str, *, starts_only: bool) -> bool:
    """Whether *token* is written as a path of this repository (not a wire method such as
    `host/status`, a file of the user's repository such as `.asp/asp.json`, or a placeholder)."""
    if token.startswith(("/", ".")) and not token.startswith(".ci/"):
        return False
    if token.split("/", 1)[0] in TOP_LEVEL and ("/" in token or token in TOP_LEVEL):
        return True
    if starts_only or "/" not in token:
        return False
    if token.endswith(EXTENSIONS):
        return True
    # `evaluate/decision.decide`: a name in a module, when the module part is one of ours (a
    # protocol version such as `asp/0.1` has the same shape)
    module, _, name = token.rpartition(".")
    return name.isidentifier() and resolve(module + ".py") is not None


def problem(token: str) -> str | None:
    """Why *token* names nothing in the repository, or None when it names something."""
    path = token.split("#", 1)[0].rstrip("/")
    if resolve(path) is not None:
        return None
    module, dot, attribute = path.rpartition(".")
    found = resolve(module + ".py") if dot and "/" in module else None
    if found is None or not attribute.isidentifier():
        return "no such file or directory"
    if attribute not in top_level_names(found):
        return f"{found} defines no {attribute!r}"
    return None


def wrong_paths(text: str, *, starts_only: bool = False) -> list[str]:
    """`line: token: why` for each backticked repository path in *text* that names nothing."""
    found: list[str] = []
    for span in CODE_SPAN.finditer(text):
        line = text.count("\n", 0, span.start()) + 1
        for word in span.group(1).split():
            token = word.strip(WORD_EDGES).rstrip(".")
            if PLACEHOLDERS.intersection(token) or not token:
                continue
            if is_repository_path(token, starts_only=starts_only):
                why = problem(token)
                if why is not None:
                    found.append(f"{line}: {token}: {why}")
    return found


def headings(document: Path) -> set[str]:
    """GitHub's anchors of a Markdown document's headings."""
    anchors: set[str] = set()
    for line in document.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower().replace("`", "")
            anchors.add(re.sub(r"[^a-z0-9 _-]", "", title).replace(" ", "-"))
    return anchors


DOCUMENTS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "CONTRIBUTING.md"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.name)
def test_every_backticked_repository_path_exists(document: Path) -> None:
    wrong = wrong_paths(document.read_text(encoding="utf-8"))
    assert not wrong, f"{document.name} names what is not in the repository:\n" + "\n".join(wrong)


def test_the_readme_names_only_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    wrong = wrong_paths(readme, starts_only=True)
    assert not wrong, "README.md names what is not in the repository:\n" + "\n".join(wrong)


@pytest.mark.parametrize("document", [*DOCUMENTS, ROOT / "README.md"], ids=lambda p: p.name)
def test_every_relative_link_has_a_target(document: Path) -> None:
    missing = []
    for target, anchor in LINK.findall(document.read_text(encoding="utf-8")):
        path = document.parent / target
        if "://" in target:
            continue
        if not path.exists() or (anchor and anchor not in headings(path)):
            missing.append(f"{target}#{anchor}" if anchor else target)
    assert not missing, f"{document.name} links to nothing: {missing}"


def test_every_cited_docs_anchor_exists() -> None:
    sources = [p for p in repository_files() if p.endswith((".py", ".md"))]
    cited = {
        (name, anchor)
        for source in sources
        if (ROOT / source).is_file() and not source.startswith("tests/")
        for name, anchor in DOC_ANCHOR.findall((ROOT / source).read_text(encoding="utf-8"))
    } | {
        (name, anchor)
        for doc in [*DOCUMENTS, ROOT / "README.md"]
        for name, anchor in DOC_ANCHOR.findall(doc.read_text(encoding="utf-8"))
    }
    assert cited, "the code cites docs/architecture.md#… anchors; none found means a broken scan"
    missing = sorted(
        f"docs/{name}#{anchor}"
        for name, anchor in cited
        if not (ROOT / "docs" / name).is_file() or anchor not in headings(ROOT / "docs" / name)
    )
    assert not missing, f"cited anchors with no heading: {missing}"


def test_a_planted_wrong_path_or_name_is_found() -> None:
    text = (
        "See `reference_host/evaluate/decision.py` (`decide`), `sessions/confine.py`, "
        "`evaluate/envelope.decision_envelope`, `host/status` and `.asp/asp.json`.\n"
        "Then `reference_host/evaluate/verdict.py`, `sessions/jail.py`, "
        "`reference_host/coverage.degrade` and `tests/bridge/`."
    )
    assert wrong_paths(text) == [
        "2: reference_host/evaluate/verdict.py: no such file or directory",
        "2: sessions/jail.py: no such file or directory",
        "2: reference_host/coverage.degrade: reference_host/coverage.py defines no 'degrade'",
    ]
    assert wrong_paths("`tests/test_gone.py`, `shapes.py/x.py`", starts_only=True) == [
        "1: tests/test_gone.py: no such file or directory"
    ]
