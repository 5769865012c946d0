"""The renamed name where the index does not look: inside string literals.

The index's facts hold the code's uses; a string holds a name the program may still read by it:
a forward reference (`-> "HelpFormatter"`, `t.Type["HelpFormatter"]`), a dotted path in settings
(`"django.contrib.auth.hashers.PBKDF2PasswordHasher"`), `getattr(obj, "name")`,
`mock.patch("pkg.mod.name")`, a doctest. Renaming around them would leave code that compiles and
then fails when it runs. So every Python file's strings are read once more:
- a string in an annotation (or `cast`'s first argument, a `TypeVar`'s `bound=`) is a forward
  reference: each name in it that resolves, from the module, to the renamed definition is renamed
  inside the string like any use (when the literal is plain: one line, no escapes, ASCII);
- `__all__` strings are the rename's own business (rename.py);
- any other string that spells the name as an identifier or a component of a dotted path
  (`pkg.mod.name`, `pkg.mod:name`), and any doctest line that uses it, makes the rename
  incomplete, with where: what such a string names cannot be known statically; so does, for a
  class, a string holding `Name(`: a repr built from `__class__.__name__` that a test expects
  (httpx's `"Timeout(timeout=5.0)"`).
Prose that mentions the name among other words is left alone.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from reference_host.providers.editing import split_lines
from reference_host.providers.pyindex.chains import name_chain
from reference_host.providers.pyindex.index import PythonIndex
from reference_host.providers.pyindex.members import STORED
from reference_host.providers.pyindex.spelling import Spelling
from reference_host.providers.pyindex.tokens import Pos

_PATH = re.compile(r"[A-Za-z_][\w.:]*")
_PLAIN = re.compile(r"(?i)(?P<prefix>[ru]?)(?P<quote>'|\")")
_TYPE_CHARS = r"[\w.:\[\], |]*"
_QUOTED = re.compile(r"(?P<q>['\"])(?:\\.|(?!(?P=q)).)*(?P=q)")


@dataclass
class Mentions:
    """What the strings of the files hold: name positions inside forward references to rename,
    and the places (`path:line`) where a string spells the name some other way."""

    sites: dict[str, set[Pos]] = field(default_factory=dict)
    places: list[str] = field(default_factory=list)


def _all_strings(tree: ast.Module) -> set[int]:
    """The ids of the string constants of module-level `__all__` statements (rename.py's)."""
    found: set[int] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            found.update(id(c) for c in ast.walk(node) if isinstance(c, ast.Constant))
    return found


def _parameter_names(tree: ast.Module) -> set[int]:
    """The ids of `pytest.mark.parametrize`'s argument-name strings: they name the test's own
    parameters (click's tests parametrize an `echo` flag), never a definition."""
    return {
        id(node.args[0])
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and node.args
        and (name_chain(node.func) or ())[-1:] == ("parametrize",)
    }


# subscripted names whose arguments are type expressions: a module-level `X = Union[..., "T"]`
# is a type alias whose strings are forward references (httpx's `TimeoutTypes`)
_GENERICS = frozenset(
    {"Union", "Optional", "Type", "type", "List", "list", "Dict", "dict", "Tuple", "tuple"}
    | {"Set", "set", "FrozenSet", "frozenset", "Sequence", "Mapping", "Iterable", "Iterator"}
    | {"Callable", "Generator", "AsyncIterator", "Awaitable", "Coroutine", "MutableMapping"}
)


def _annotation_strings(tree: ast.Module) -> list[ast.Constant]:
    """String constants evaluated as type expressions: in annotations, type aliases, `cast(T,
    ...)`'s first argument and `TypeVar(..., bound=T)` — not inside `Literal[...]`, whose
    strings are values (they are then judged like any other string)."""
    roots: list[ast.expr] = []
    for statement in tree.body:
        value = statement.value if isinstance(statement, ast.Assign) else None
        if isinstance(value, ast.Subscript) and (name_chain(value.value) or ("",))[-1] in _GENERICS:
            roots.append(value)
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            roots += [a.annotation for a in every if a is not None and a.annotation is not None]
            if node.returns is not None:
                roots.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            roots.append(node.annotation)
        elif isinstance(node, ast.Call):
            called = name_chain(node.func) or ()
            if called[-1:] == ("cast",) and node.args:
                roots.append(node.args[0])
            elif called[-1:] == ("TypeVar",):
                roots += [k.value for k in node.keywords if k.arg == "bound"]
    literal = {
        id(c)
        for root in roots
        for sub in ast.walk(root)
        if isinstance(sub, ast.Subscript) and (name_chain(sub.value) or ())[-1:] == ("Literal",)
        for c in ast.walk(sub.slice)
    }
    return [
        c
        for root in roots
        for c in ast.walk(root)
        if isinstance(c, ast.Constant) and isinstance(c.value, str) and id(c) not in literal
    ]


def _spells(content: str, name: str) -> bool:
    """True when *content* is an identifier or a dotted path with *name* as one component."""
    stripped = content.strip()
    return _PATH.fullmatch(stripped) is not None and name in re.split(r"[.:]", stripped)


def _doctest_uses(content: str, name: str, reaches: Callable[[str], bool]) -> bool:
    """True when a doctest line of *content* uses *name* in its code, not inside a string
    literal (httpx's `>>> httpx.request('GET', 'https://httpbin.org/get')` does not use a `get`)
    or a comment: bare, or as an attribute of a prefix *reaches* accepts (`>>> pkg.mod.name()`)."""
    word = re.compile(rf"(?<![\w.]){re.escape(name)}(?!\w)")
    dotted = re.compile(rf"([A-Za-z_][\w.]*)\.{re.escape(name)}(?!\w)")
    for line in content.splitlines():
        code = line.lstrip()
        if code.startswith((">>>", "...")):
            code = _QUOTED.sub("''", code[3:]).partition("#")[0]
            if word.search(code) or any(reaches(m.group(1)) for m in dotted.finditer(code)):
                return True
    return False


def _prefixes(index: PythonIndex, spelling: Spelling) -> Callable[[str], bool]:
    """Which `prefix.` before the name in a doctest may reach the definition: any, for a method
    (`obj.method`: the object is unknown); for a module-level one, a workspace module (`pkg.f`,
    not `client.get` when renaming the module function `get`)."""
    member = "." in spelling.target.partition("::")[2]
    return lambda prefix: member or index.resolve_module(prefix) is not None


def _forward_sites(
    index: PythonIndex, spelling: Spelling, path: str, line: str, node: ast.Constant
) -> list[Pos] | None:
    """The positions of the renamed name inside forward reference *node* (on source line
    *line*); None when the reference cannot be rewritten in place or may name the target in a
    way that cannot be followed."""
    value = node.value
    assert isinstance(value, str)
    if node.end_lineno != node.lineno or node.end_col_offset is None or not value.isascii():
        return None
    raw = line.encode()
    start = len(raw[: node.col_offset].decode("utf-8", "replace"))
    end = len(raw[: node.end_col_offset].decode("utf-8", "replace"))
    segment = line[start:end]
    plain = _PLAIN.match(segment)
    if plain is None:
        return None
    inner, quote = len(plain.group(0)), plain.group("quote")
    if segment[inner:] != value + quote:
        return None  # escapes, implicit concatenation, a triple quote
    try:
        expression = ast.parse(value.strip(), mode="eval")
    except SyntaxError:
        return None
    shift = len(value) - len(value.lstrip())
    found: list[Pos] = []
    for sub in ast.walk(expression):
        if not isinstance(sub, (ast.Name, ast.Attribute)):
            continue
        chain = name_chain(sub)
        if chain is None or chain[-1] != spelling.old:
            continue
        reached, consumed = index.resolve_chain(path, 0, chain)
        if reached is None:
            return None  # its first name is not bound in the module: it may be the target
        if reached != ("def", spelling.target) or consumed != len(chain):
            continue  # another definition of the same name
        if not spelling.use_follows(path, 0, chain[:-1]):
            continue  # read through a binding that keeps the old name
        assert sub.end_col_offset is not None
        found.append((node.lineno - 1, start + inner + shift + sub.end_col_offset - len(chain[-1])))
    return found


def string_mentions(index: PythonIndex, texts: dict[str, str], spelling: Spelling) -> Mentions:
    """The mentions of `spelling.old` in the string literals of *texts* (path -> text)."""
    name, out = spelling.old, Mentions()
    reaches = _prefixes(index, spelling)
    word = rf"(?<!\w){re.escape(name)}(?!\w)"
    found = index.def_fact(spelling.target)
    shown = found is not None and found[1].kind == "class"  # its __name__ shows in reprs
    probe = re.compile(  # a quoted identifier, path or type expression; a doctest line
        rf"(?P<q>['\"]){_TYPE_CHARS}{word}{_TYPE_CHARS}(?P=q)"
        rf"|^[ \t]*(?:>>>|\.\.\.)[^\n]*{word}" + (rf"|['\"][^'\"\n]*{word}\(" if shown else ""),
        re.MULTILINE,
    )
    reprs = re.compile(rf"(?<![\w.]){re.escape(name)}\(")
    for path, text in sorted(texts.items()):
        if name not in text or path not in index.files or probe.search(text) is None:
            continue
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            continue  # rename.py refuses a file that holds the name and does not parse
        lines = split_lines(text)
        exported = _all_strings(tree) | _parameter_names(tree)
        forward = {id(c) for c in _annotation_strings(tree)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
                continue
            if name not in node.value or id(node) in exported:
                continue
            if id(node) in forward:
                sites = _forward_sites(index, spelling, path, lines[node.lineno - 1], node)
                if sites is None:
                    out.places.append(f"{path}:{node.lineno}")
                elif sites:
                    out.sites.setdefault(path, set()).update(sites)
            elif (
                _spells(node.value, name)
                or _doctest_uses(node.value, name, reaches)
                or (shown and reprs.search(node.value))  # `"Timeout(timeout=5.0)"`: a repr
            ):
                out.places.append(f"{path}:{node.lineno}")
    return out


def attribute_stores(texts: dict[str, str], name: str) -> list[str]:
    """`path:line` of each `x.name = ...`, `x.name += ...` or `del x.name` in *texts*: an object
    given the name from outside (a monkeypatch of a module function, as click's test runner does
    with `_compat.should_strip_ansi = ...`, or an instance attribute over a method) keeps the old
    name after a rename, and whoever reads the new one no longer sees it. The index records only
    reads, so the text is searched; a match in a comment or a string is counted too."""
    word = re.escape(name)
    store = re.compile(rf"\.\s*{word}{STORED}|\bdel\b[^\n#]*\.\s*{word}(?!\w)")
    found = []
    for path, text in sorted(texts.items()):
        if name not in text:
            continue
        for match in store.finditer(text):
            found.append(f"{path}:{text.count(chr(10), 0, match.start()) + 1}")
    return found
