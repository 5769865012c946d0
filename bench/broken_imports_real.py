"""`python/broken-import` on real PyPI packages against a real interpreter — a plain script.

    PYTHONPATH=/work/wt/oracle ASP_DEFINITION_DIR=/work/shared/asp \\
        /work/main/.venv/bin/python bench/broken_imports_real.py \\
        --oracle-python /tmp/oracle-venv/bin/python [--package click==8.1.8 ...] [--sample 25]

The oracle venv holds the packages' dependencies, never the packages themselves (django:
asgiref, sqlparse; the test suites: pytest, hypothesis), e.g.
`python3.11 -m venv /tmp/oracle-venv && /tmp/oracle-venv/bin/pip install asgiref sqlparse
pytest hypothesis` (then `pip uninstall attrs`: hypothesis pulls it in).

Each package's sdist is prepared once as a git repository (`inspect_real.prepared_repo`), cloned
into a temporary directory and driven through one real `asp-host serve`. Edits, one at a time:
deleting a module (every one but `__init__.py`; a seeded sample on big packages), and removing
a top-level `def`/`class` (the AST's line range, decorators included). Each edit's working
change is evaluated at `gate` with comparison `introduced`; its `python/broken-import` findings
are checked against a fresh oracle interpreter (the package's source dirs first on `sys.path`):

* every finding's statement is run in its importer's package context (an import made absolute;
  a use `m.X` as `getattr` on the module): a finding that does not raise is a false positive;
* every module that imported on the unmodified tree is imported again: the innermost frame in the
  tree of an ImportError / AttributeError naming the removed thing is a broken site; one that no
  finding covers is a miss, classified from the statement at that line.

A use `m.X` that runs only later (in a function) is not run by the oracle: the bench finds
those with its own simple scan (module-level imports of the module, no rebinding) and counts one
no finding covers as a miss `deferred m.X`. A finding whose statement raised for another reason
(an optional dependency not installed: psycopg2, GDAL) is listed as inconclusive. An edit whose
own module no longer imports (it used the removed name itself) is left out, and the next
sampled name is tried.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_real import CACHE, prepared_repo, work_tree

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.host_harness import HostProcess

RULE = "python/broken-import"
# spec -> (dirs whose modules are edited, dirs whose modules the oracle imports)
LAYOUTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "click": (("src/click",), ("src/click", "tests")),
    "attrs": (("src/attr", "src/attrs"), ("src/attr", "src/attrs", "tests")),
    "django": (("django",), ("django",)),
}
DEFAULT = ("click==8.1.8", "attrs==25.3.0", "django==5.2.19")

RUNNER = r"""
import importlib, json, os, sys, traceback
job = json.load(sys.stdin)
sys.path[:0] = job["path"]
tree = job["tree"]
def site(exc):
    last = None
    for frame, line in traceback.walk_tb(exc.__traceback__):
        name = frame.f_code.co_filename
        if name.startswith(tree):
            last = [os.path.relpath(name, tree), line]
    return last
def attempt(fn):
    try:
        fn()
        return None
    except BaseException as exc:
        return {"type": type(exc).__name__, "msg": str(exc)[:300], "site": site(exc)}
def run(code):
    def go():
        exec(compile(code, "<finding>", "exec"), {"__name__": "oracle"})
    return attempt(go)
out = {"statements": [run(code) for code in job["statements"]], "modules": {}}
for name in job["modules"]:
    out["modules"][name] = attempt(lambda: importlib.import_module(name))
print(json.dumps(out))
"""


@dataclass
class Tally:
    edits: int = 0
    skipped: int = 0
    findings: int = 0
    confirmed: int = 0
    false_positives: list[str] = field(default_factory=list)
    inconclusive: list[str] = field(default_factory=list)  # raised, but not naming the removed
    misses: dict[str, list[str]] = field(default_factory=dict)
    times: list[float] = field(default_factory=list)


def module_name(rel: str, tree: Path) -> tuple[str, str] | None:
    """(sys.path root, dotted name) of a file: its root is the nearest folder without __init__."""
    parts = rel[:-3].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    start = len(parts) - 1
    while start > 0 and (tree / "/".join(parts[:start]) / "__init__.py").is_file():
        start -= 1
    names = parts[start:]
    if not names or not all(p.isidentifier() for p in names):
        return None
    return "/".join(parts[:start]) or ".", ".".join(names)


def oracle(python: str, tree: Path, roots: list[str], modules: list[str], statements: list[str]):
    job = {"path": [str(tree / r) for r in roots], "tree": str(tree) + "/"}
    job.update(modules=modules, statements=statements)
    env = {"PYTHONDONTWRITEBYTECODE": "1", "PATH": "/usr/bin:/bin", "HOME": "/tmp"}
    done = subprocess.run(
        [python, "-c", RUNNER], input=json.dumps(job), capture_output=True, text=True,
        cwd=tempfile.gettempdir(), env=env, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def absolute(stmt: ast.stmt, package: str) -> str:
    """The import *stmt* as run from *package*, made absolute."""
    if isinstance(stmt, ast.ImportFrom) and stmt.level:
        parts = package.split(".")[: len(package.split(".")) - (stmt.level - 1)]
        base = ".".join([*parts, stmt.module] if stmt.module else parts)
        stmt = ast.ImportFrom(module=base, names=stmt.names, level=0)
    return ast.unparse(stmt)


def statement_at(source: str, line: int) -> ast.stmt | None:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt) and node.lineno == line:
            return node
    return None


def check_code(finding: dict[str, Any], tree: Path, package: str) -> str:
    """Python that raises iff *finding* is true."""
    where = finding["location"]
    source = (tree / where["path"]).read_text()
    stmt = statement_at(source, where["range"]["start"]["line"] + 1)
    if isinstance(stmt, ast.Import | ast.ImportFrom):
        return absolute(stmt, package)
    used = re.search(r"'([\w.]+)' is (?:used|imported) from ([\w.]+)", finding["message"])
    if used is None:
        return "raise AssertionError('unrecognised finding')"  # pragma: counted as raising
    name, module = used.group(1).rpartition(".")[2], used.group(2)
    return f"import importlib\ngetattr(importlib.import_module({module!r}), {name!r})"


def classify(tree: Path, rel: str, line: int, removed: str) -> str:
    """Why a broken site was not reported, read from the statement at that line."""
    try:
        stmt = statement_at((tree / rel).read_text(), line)
    except (OSError, SyntaxError):
        return "unreadable"
    if stmt is None:
        return "expression"
    if isinstance(stmt, ast.Import):
        return "import-as" if any(a.asname for a in stmt.names) else "import"
    if isinstance(stmt, ast.ImportFrom):
        return "from-import"
    text = ast.unparse(stmt)
    if "import_module" in text or "__import__" in text:
        return "dynamic"
    if re.search(rf"\.{re.escape(removed)}\b", text):
        return "module-attribute"
    return "other:" + type(stmt).__name__


def deferred_uses(tree: Path, module: str, name: str) -> list[tuple[str, int]]:
    """Lines `a.X` / `pkg.b.X` where `a` is bound only by module-level imports of *module*
    (`import module as a`, `from pkg import b`, `import pkg.b`): the bench's own, simple scan,
    independent of the rule's, for the uses the import-time oracle cannot run."""
    head, _, last = module.rpartition(".")
    found: list[tuple[str, int]] = []
    for file in tree.rglob("*.py"):
        data = file.read_text(errors="replace")
        if f".{name}" not in data or last not in data:
            continue
        try:
            parsed = ast.parse(data)
        except SyntaxError:
            continue
        spelled: dict[str, str] = {}  # local name -> dotted chain it stands for
        for stmt in parsed.body:
            if isinstance(stmt, ast.Import):
                for a in stmt.names:
                    if a.asname and a.name == module:
                        spelled[a.asname] = module
                    elif not a.asname and a.name == module:
                        spelled[module.partition(".")[0]] = module.partition(".")[0]
            elif isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and stmt.module == head:
                for a in stmt.names:
                    if a.name == last:
                        spelled[a.asname or last] = module
        stores = {
            n.id
            for n in ast.walk(parsed)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
        } | {a.arg for a in ast.walk(parsed) if isinstance(a, ast.arg)}
        for node in ast.walk(parsed):
            if not (isinstance(node, ast.Attribute) and node.attr == name):
                continue
            if not isinstance(node.ctx, ast.Load):
                continue
            chain, inner = [], node.value
            while isinstance(inner, ast.Attribute):
                chain.append(inner.attr)
                inner = inner.value
            if not isinstance(inner, ast.Name) or inner.id not in spelled or inner.id in stores:
                continue
            if ".".join([spelled[inner.id], *reversed(chain)]) == module:
                found.append((str(file.relative_to(tree)), node.lineno))
    return found


def names_broken(err: dict[str, Any] | None, removed: str) -> bool:
    if err is None or err["type"] not in ("ImportError", "ModuleNotFoundError", "AttributeError"):
        return False
    return re.search(rf"\b{re.escape(removed)}\b", err["msg"]) is not None


def run_package(spec: str, python: str, sample: int, seed: int) -> tuple[Tally, Tally]:
    name = spec.partition("==")[0]
    edited_dirs, imported_dirs = LAYOUTS[name]
    tmp = Path(tempfile.mkdtemp(prefix=f"bi-{name}-"))
    tree = tmp / "repo"
    subprocess.run(["git", "clone", "-q", str(work_tree(prepared_repo(spec, CACHE))), str(tree)])
    files = sorted(
        str(p.relative_to(tree)) for d in imported_dirs for p in (tree / d).rglob("*.py")
    )
    named = {rel: found for rel in files if (found := module_name(rel, tree)) is not None}
    roots = sorted({r for r, _ in named.values()}, key=lambda r: (not r.startswith("src"), r))
    seen: set[str] = set()
    modules = [m for _, m in named.values() if not (m in seen or seen.add(m))]
    base = oracle(python, tree, roots, modules, [])["modules"]
    importable = [m for m in modules if base[m] is None]
    print(f"{spec}: {len(importable)}/{len(modules)} modules import unmodified", file=sys.stderr)
    editable = [
        r
        for r in files
        if r.startswith(edited_dirs) and not r.endswith("__init__.py") and r in named
    ]
    rng = random.Random(seed)
    deletions = editable if len(editable) <= sample else rng.sample(editable, sample)
    defs = [
        (rel, node)
        for rel in editable
        for node in ast.parse((tree / rel).read_text()).body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and named[rel][1] in importable
    ]
    removals = rng.sample(defs, len(defs))  # in order until *sample* edits kept their module
    host = HostProcess(tree, None).start()
    try:
        dele = Tally()
        for rel in deletions:
            (tree / rel).unlink()
            measure(host, tree, python, roots, importable, named, rel, None, dele)
        rem = Tally()
        for rel, node in removals:
            if rem.edits >= sample:
                break
            lines = (tree / rel).read_text().splitlines(keepends=True)
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            del lines[first - 1 : node.end_lineno]
            (tree / rel).write_text("".join(lines))
            measure(host, tree, python, roots, importable, named, rel, node.name, rem)
    finally:
        host.stop()
    return dele, rem


def measure(
    host: HostProcess,
    tree: Path,
    python: str,
    roots: list[str],
    importable: list[str],
    named: dict[str, tuple[str, str]],
    rel: str,
    removed_name: str | None,
    tally: Tally,
) -> None:
    """Evaluate the edit in the work tree through the host, check it against the oracle, undo."""
    git = ["git", "-C", str(tree)]
    subprocess.run([*git, "add", "-A"], check=True)
    started = time.perf_counter()
    change = host.call("host/workingChangeset", {})["changeset"]
    params = {"callSite": "gate", "changeset": change, "comparison": "introduced"}
    result = host.call("host/evaluateChangeset", params, timeout=300)
    elapsed = time.perf_counter() - started
    findings = [f["diagnostic"] for f in result["findings"] if f["diagnostic"]["code"] == RULE]
    own = named[rel][1]
    removed = removed_name or own.rpartition(".")[2]
    codes, extra = [], list(roots)
    for finding in findings:
        path = finding["location"]["path"]
        root, mod = module_name(path, tree) or (path.rpartition("/")[0] or ".", "")
        extra += [root] if root not in extra else []
        package = mod if path.endswith("__init__.py") else mod.rpartition(".")[0]
        codes.append(check_code(finding, tree, package))
    modules = [m for m in importable if m != own or removed_name]
    answer = oracle(python, tree, extra, modules, codes)
    subprocess.run([*git, "reset", "-q", "--hard", "HEAD"], check=True)
    if removed_name and answer["modules"].get(own) is not None:
        tally.skipped += 1  # the module used the name itself: undefined-name, not this rule
        return
    tally.edits += 1
    tally.times.append(elapsed)
    tally.findings += len(findings)
    label = f"{rel}:{removed_name}" if removed_name else rel
    covered: set[tuple[str, int]] = set()
    for finding, err in zip(findings, answer["statements"], strict=True):
        where = finding["location"]
        start, end = where["range"]["start"]["line"], where["range"]["end"]["line"]
        covered.update((where["path"], n + 1) for n in range(start, end + 1))
        if names_broken(err, removed):
            tally.confirmed += 1
        elif err is not None:
            tally.inconclusive.append(f"{label} -> {where['path']}:{start + 1}: {err['msg'][:80]}")
        else:
            tally.false_positives.append(f"{label} -> {where['path']}:{start + 1}")
    sites = {
        tuple(err["site"])
        for err in answer["modules"].values()
        if names_broken(err, removed) and err["site"] and err["site"][0] != rel
    }
    for path, line in sorted(sites):
        if (path, line) not in covered:
            kind = classify(tree, path, line, removed)
            tally.misses.setdefault(kind, []).append(f"{label} -> {path}:{line}")
    if removed_name:  # uses `m.X` that run later (in a function): found statically, not run
        for path, line in deferred_uses(tree, own, removed_name):
            if (path, line) not in covered and (path, line) not in sites:
                tally.misses.setdefault("deferred m.X", []).append(f"{label} -> {path}:{line}")


def row(spec: str, kind: str, t: Tally) -> str:
    misses = ", ".join(f"{k} {len(v)}" for k, v in sorted(t.misses.items())) or "0"
    warm = statistics.median(t.times[1:]) if len(t.times) > 1 else float("nan")
    first = t.times[0] if t.times else float("nan")
    return (
        f"| {spec} | {kind} | {t.edits} | {t.findings} | {t.confirmed} | "
        f"{len(t.false_positives)} | {misses} | {first:.2f} / {warm:.2f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", action="append", default=None)
    parser.add_argument("--oracle-python", default="/tmp/oracle-venv/bin/python")
    parser.add_argument("--sample", type=int, default=25)
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    rows = [
        "| package | edits | n | findings | confirmed | false pos. | misses | eval s first / warm |",
        "|---|---|---|---|---|---|---|---|",
    ]
    details: list[str] = []
    for spec in args.package or DEFAULT:
        dele, rem = run_package(spec, args.oracle_python, args.sample, args.seed)
        for kind, tally in (("module deleted", dele), ("name removed", rem)):
            rows.append(row(spec, kind, tally))
            print(rows[-1], file=sys.stderr)
            details += [f"FP {spec}: {fp}" for fp in tally.false_positives]
            details += [f"INCONCLUSIVE {spec}: {x}" for x in tally.inconclusive]
            details += [f"MISS {k} {spec}: {m}" for k, ms in tally.misses.items() for m in ms]
            if tally.skipped:
                details.append(f"{spec} {kind}: {tally.skipped} edit(s) broke their own module")
    print(time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()))
    print("\n".join(rows))
    print("\n".join(details))


if __name__ == "__main__":
    main()
